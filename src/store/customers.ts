// Customers: their records, the reads both backends share, and the role a transaction plays for
// them. Their writes in bulk are each backend's own (sqlite/tx.ts row by row on the one writer,
// postgres/tx.ts one statement per chunk with row locks), and so is the list's stored-JSON fast
// path on SQLite (sqlite/reader.ts).
import type { Lifecycle } from '../domain/customers.ts';
import type { Status } from '../domain/scoring.ts';
import { beforeNul, type Dialect, type Driver, hasNul, Params, segmentWhere } from './driver.ts';
import { CUSTOMER_COLUMNS, type Page, page, statusOf, toCustomer } from './rows.ts';

export interface CustomerRecord {
  id: string;
  name: string;
  email: string;
  /** The book fields (docs/api.md, "Customers"): ARR in integer cents, the renewal in epoch ms. */
  owner: string | null;
  arrCents: number | null;
  renewalAt: number | null;
  lifecycle: Lifecycle;
  parentId: string | null;
  metadata: Record<string, unknown>;
  /** The stored JSON text of `metadata`, when the backend has it: answers can use it as is. */
  metadataJson?: string;
  createdAt: number;
  updatedAt: number;
}

/** The book fields (docs/api.md, "Customers"). */
export type BookKeys = 'owner' | 'arrCents' | 'renewalAt' | 'lifecycle' | 'parentId';

/**
 * A customer as the store writes it: the book fields may be left out (then unset: null, lifecycle
 * active), as tools that seed customers leave them.
 */
export type CustomerWrite = Omit<CustomerRecord, BookKeys> & Partial<Pick<CustomerRecord, BookKeys>>;

/** The customer with every book field, the missing ones unset. */
export const withBook = (c: CustomerWrite): CustomerRecord => ({
  id: c.id,
  name: c.name,
  email: c.email,
  owner: c.owner ?? null,
  arrCents: c.arrCents ?? null,
  renewalAt: c.renewalAt ?? null,
  lifecycle: c.lifecycle ?? 'active',
  parentId: c.parentId ?? null,
  metadata: c.metadata,
  ...(c.metadataJson === undefined ? {} : { metadataJson: c.metadataJson }),
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
});

/**
 * A segment (docs/api.md, "Segments, trends and movers"): the customers whose metadata holds, for
 * every key given, that value (a string metadata value equal to it, or a number or boolean whose
 * JSON text is it), and whose book fields pass every filter given, all ANDed.
 */
export interface Segment {
  readonly metadata: readonly { key: string; value: string }[];
  /** An owner's email, compared ignoring case; null: customers without an owner. */
  readonly owner?: string | null;
  /** The renewal in [renewalAfter, renewalBefore) (epoch ms); customers without one never match. */
  readonly renewalAfter?: number;
  readonly renewalBefore?: number;
  /** The direct children of this customer. */
  readonly parentId?: string;
  /** Absent: every lifecycle. */
  readonly lifecycle?: Lifecycle;
}

/** True when the segment holds every customer (no condition at all). */
export const isWhole = (segment: Segment | undefined): boolean =>
  segment === undefined ||
  (segment.metadata.length === 0 &&
    segment.owner === undefined &&
    segment.renewalAfter === undefined &&
    segment.renewalBefore === undefined &&
    segment.parentId === undefined &&
    segment.lifecycle === undefined);

/** A page as JSON text: `json` is the items, comma-separated (no brackets). */
export interface JsonPage {
  json: string;
  hasMore: boolean;
}

export interface CustomerReads {
  getCustomer(accountId: string, id: string): Promise<CustomerRecord | null>;
  /**
   * Customers by id ascending, byte-wise; `startingAfter` is an exclusive lower bound; `search`
   * keeps those whose id, name or email contains it, ignoring case.
   */
  listCustomers(
    accountId: string,
    opts: { startingAfter?: string; search?: string; segment?: Segment; limit: number },
  ): Promise<Page<CustomerRecord>>;
  /** The customer as the API sends it (src/api/customers.ts), or null when there is none. */
  getCustomerJson(accountId: string, id: string): Promise<string | null>;
  /** listCustomers' page as the API sends each customer (src/api/customers.ts), ready to wrap. */
  listCustomersJson(
    accountId: string,
    opts: {
      startingAfter?: string | undefined;
      search?: string | undefined;
      segment?: Segment | undefined;
      limit: number;
    },
  ): Promise<JsonPage>;
  /** customerSubtree below: the customer and its descendants, for its rollup; null when there is none. */
  customerSubtree(accountId: string, id: string, maxDepth: number): Promise<SubtreeMember[] | null>;
}

export interface CustomerWrites {
  /**
   * The customers with these ids that exist, locked for this transaction as `getCustomer` locks
   * one: it is how a batch of customer upserts reads.
   */
  customersForUpdate(accountId: string, ids: readonly string[]): Promise<Map<string, CustomerRecord>>;
  /**
   * Inserts and updates many customers at once (a batch's final state of each). Returns the
   * ids of `inserts` that were taken meanwhile (another writer created them since the read):
   * those are not written, and the caller must not commit as if they were.
   */
  saveCustomers(
    accountId: string,
    inserts: readonly CustomerWrite[],
    updates: readonly CustomerWrite[],
  ): Promise<string[]>;
  /**
   * Before a change of a customer's parent, ahead of any other read of the account: where writers
   * run side by side (PostgreSQL), the account's lock taken exclusively, so two changes never check
   * the tree at once and together make a cycle (docs/api.md, "Customers").
   */
  lockCustomerTree(accountId: string): void;
  /** The parent of each of these customers that exists (null: a root). */
  customerParents(accountId: string, ids: readonly string[]): Promise<Map<string, string | null>>;
  /** The customers whose parent is one of these. */
  customerChildren(accountId: string, parentIds: readonly string[]): Promise<string[]>;
  /** Returns false (and writes nothing) when the id is taken in this account. */
  insertCustomer(accountId: string, customer: CustomerWrite): Promise<boolean>;
  updateCustomer(accountId: string, customer: CustomerWrite): Promise<void>;
  /**
   * Removes the customer with everything that belongs to it (its children stay, the caller having
   * cleared their parent_id first), its history's share of the trend
   * rollup too; false when there was none.
   */
  deleteCustomer(accountId: string, id: string): Promise<boolean>;
}

/** Escapes LIKE's wildcards (and the escape character itself) for `LIKE … ESCAPE '\'`. */
export const likeEscape = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export type ListOptions = {
  startingAfter?: string | undefined;
  search?: string | undefined;
  segment?: Segment | undefined;
  limit: number;
};

/** A customer list page and one row more (has_more): the account, the cursor, the search, the segment. */
export function customerList(d: Dialect, accountId: string, opts: ListOptions, columns: string) {
  const p = new Params(accountId);
  let where = 'account_id = $1';
  if (opts.startingAfter !== undefined) where += ` AND id > ${p.add(beforeNul(opts.startingAfter))}`;
  if (opts.search !== undefined) {
    // Case-insensitive (for ASCII) substring of the id, name or email; LIKE's wildcards are escaped.
    const pattern = p.add(`%${likeEscape(opts.search)}%`);
    const like = (column: string) => `${column} ${d.ilike} ${pattern} ESCAPE '\\'`;
    where += ` AND (${like('id')} OR ${like('name')} OR ${like('email')})`;
  }
  where += segmentWhere(d, p, opts.segment);
  const sql = `SELECT ${columns} FROM customers c WHERE ${where} ORDER BY id LIMIT ${p.add(opts.limit + 1)}`;
  return { sql, params: p.list };
}

export async function getCustomer(db: Driver, accountId: string, id: string): Promise<CustomerRecord | null> {
  if (hasNul(id)) return null;
  const row = await db.get(`SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE account_id = $1 AND id = $2`, [
    accountId,
    id,
  ]);
  return row ? toCustomer(row, db.fromText) : null;
}

export async function listCustomers(
  db: Driver,
  accountId: string,
  opts: ListOptions,
): Promise<Page<CustomerRecord>> {
  const { sql, params } = customerList(db, accountId, opts, CUSTOMER_COLUMNS);
  return page(await db.all(sql, params), opts.limit, (r) => toCustomer(r, db.fromText));
}

export async function customerParents(
  db: Driver,
  accountId: string,
  ids: readonly string[],
): Promise<Map<string, string | null>> {
  const wanted = ids.filter((id) => !hasNul(id));
  const found = new Map<string, string | null>();
  if (wanted.length === 0) return found;
  const p = new Params(accountId);
  const rows = await db.all<{ id: string; parent_id: string | null }>(
    `SELECT id, parent_id FROM customers WHERE account_id = $1 AND id ${db.inList(p, wanted)}`,
    p.list,
  );
  for (const r of rows) found.set(r.id, r.parent_id ?? null);
  return found;
}

export async function customerChildren(
  db: Driver,
  accountId: string,
  parentIds: readonly string[],
): Promise<string[]> {
  const wanted = parentIds.filter((id) => !hasNul(id));
  if (wanted.length === 0) return [];
  const p = new Params(accountId);
  // customers_by_parent (migration 25) finds them.
  const rows = await db.all<{ id: string }>(
    `SELECT id FROM customers WHERE account_id = $1 AND parent_id ${db.inList(p, wanted)} ORDER BY id`,
    p.list,
  );
  return rows.map((r) => r.id);
}

/** A customer of a subtree: its depth below the top, its ARR and its current score (docs/api.md, "Customers"). */
export interface SubtreeMember {
  id: string;
  /** 0 for the customer asked about, 1 for its children, and so on. */
  depth: number;
  arrCents: number | null;
  /** The current score and its stored status (capped by gates, pinned by overrides); null when unscored. */
  score: number | null;
  status: Status | null;
}

/**
 * The customer and every customer below it, by id; null when the account has no such customer.
 * One recursive query, scoped by the account at every step, so another account's customer with
 * the same id is never followed; `maxDepth` bounds the walk (the writes keep chains within it, the
 * bound is a guard: docs/api.md, "Customers").
 */
export async function customerSubtree(
  db: Driver,
  accountId: string,
  id: string,
  maxDepth: number,
): Promise<SubtreeMember[] | null> {
  if (hasNul(id)) return null;
  // customers_by_parent (migration 25) finds each level's children.
  const rows = await db.all(
    `WITH RECURSIVE tree (id, depth) AS (
       SELECT id, 0 FROM customers WHERE account_id = $1 AND id = $2
       UNION ALL
       SELECT c.id, tree.depth + 1 FROM tree
         JOIN customers c ON c.account_id = $1 AND c.parent_id = tree.id
       WHERE tree.depth < $3
     )
     SELECT tree.id, tree.depth, c.arr_cents, s.score, s.band FROM tree
       JOIN customers c ON c.account_id = $1 AND c.id = tree.id
       LEFT JOIN health_scores s ON s.account_id = $1 AND s.customer_id = tree.id
     ORDER BY tree.id`,
    [accountId, id, maxDepth],
  );
  if (rows.length === 0) return null;
  return rows.map((r) => ({
    id: r.id as string,
    depth: Number(r.depth),
    arrCents: r.arr_cents == null ? null : Number(r.arr_cents),
    score: r.score == null ? null : Number(r.score),
    status: r.band == null ? null : statusOf(Number(r.band)),
  }));
}
