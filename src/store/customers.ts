// Customers: their records, the reads both backends share, and the role a transaction plays for
// them. Their writes in bulk are each backend's own (sqlite/tx.ts row by row on the one writer,
// postgres/tx.ts one statement per chunk with row locks), and so is the list's stored-JSON fast
// path on SQLite (sqlite/reader.ts).
import { beforeNul, type Dialect, type Driver, hasNul, Params, segmentWhere } from './driver.ts';
import { CUSTOMER_COLUMNS, type Page, page, toCustomer } from './rows.ts';

export interface CustomerRecord {
  id: string;
  name: string;
  email: string;
  metadata: Record<string, unknown>;
  /** The stored JSON text of `metadata`, when the backend has it: answers can use it as is. */
  metadataJson?: string;
  createdAt: number;
  updatedAt: number;
}

/**
 * A segment: the customers whose metadata holds, for every key given, that value (a string
 * metadata value equal to it, or a number or boolean whose JSON text is it). docs/api.md, "Segments".
 */
export type Segment = readonly { key: string; value: string }[];

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
    inserts: readonly CustomerRecord[],
    updates: readonly CustomerRecord[],
  ): Promise<string[]>;
  /** Returns false (and writes nothing) when the id is taken in this account. */
  insertCustomer(accountId: string, customer: CustomerRecord): Promise<boolean>;
  updateCustomer(accountId: string, customer: CustomerRecord): Promise<void>;
  /**
   * Removes the customer with everything that belongs to it, its history's share of the trend
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
