// The seam between the statements both backends share and the two databases (docs/development.md,
// "The store"). A shared statement is written once, as portable SQL text with PostgreSQL's $1, $2
// placeholders, and run through a Driver: SQLite's (sqlite/driver.ts) prepares it once per
// connection with the placeholders renumbered, PostgreSQL's (postgres/driver.ts) sends it as a
// prepared statement. The few places where the two dialects spell a thing differently are the
// Dialect's members, never an `if` in a query's caller.

import type { Segment } from './customers.ts';

export type Row = Record<string, unknown>;
/** A statement's parameter; an object only as the dialect's `json` gives it. */
export type Param = string | number | boolean | null | object;

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** The case-insensitive (for ASCII) LIKE: SQLite's LIKE is, PostgreSQL's is ILIKE. */
  readonly ilike: 'LIKE' | 'ILIKE';
  /** Free text as it is stored (PostgreSQL's text cannot hold a NUL: postgres/text.ts). */
  text(s: string): string;
  textOrNull(s: string | null): string | null;
  /** Free text as it was given, from the text stored. */
  fromText(s: string): string;
  /** A value for a JSON column: SQLite stores the text; PostgreSQL's driver encodes the value itself. */
  json(value: unknown): Param;
  /** A value for a boolean column: SQLite has 0 and 1. */
  bool(value: boolean): Param;
  /** The column that names a row of a table without a key: SQLite's rowid, PostgreSQL's ctid. */
  readonly rowId: string;
  /** A statement that takes a lock on an email ($1) for the transaction, where one is needed. */
  readonly lockEmail: string | null;
  /** A statement that makes processes adding the first API key wait for each other, where needed. */
  readonly bootstrapLock: string | null;
  /** Appended to a read of a row the transaction will change: PostgreSQL's FOR UPDATE. */
  readonly forUpdate: string;
  /** Appended to a read of rows to claim: PostgreSQL's FOR UPDATE SKIP LOCKED (rows another transaction holds are left out). */
  readonly skipLocked: string;
  /** `IN (…)` of many ids as one parameter: a JSON array on SQLite, an array on PostgreSQL. */
  inList(p: Params, ids: readonly string[]): string;
  /**
   * The rows `select` reads for each of many ids, as one query: `select` is given the condition
   * for its id column. On PostgreSQL each id probes the index by itself (a LATERAL join): a
   * prepared statement's generic plan for `= ANY($n)` may otherwise filter every row of a table
   * the planner has no statistics of yet against the whole list (docs/development.md, "The store").
   */
  perId(p: Params, ids: readonly string[], select: (match: string) => string): string;
  /** The given ids as a table `ids` of one column `id`, for a FROM clause. */
  ids(p: Params, ids: readonly string[]): string;
  /**
   * For each of many ids, the one row `select` reads for it (a probe: `… ORDER BY … LIMIT 1`, given
   * the columns to read and the id to match), as rows of `customer_id` and those columns. An id
   * with no such row has none (PostgreSQL) or nulls (SQLite). On PostgreSQL each id probes once
   * for all the columns (a LATERAL join); SQLite, which has no LATERAL, probes once per column, a
   * scalar subquery each.
   */
  probePerId(
    p: Params,
    ids: readonly string[],
    columns: readonly string[],
    select: (columns: string, id: string) => string,
  ): string;
  /** A statement answering `got`: whether this transaction may prune events now (one process at a time). */
  readonly tryRetentionLock: string | null;
  /** Appended to a read of a row that a foreign key will point at: PostgreSQL's FOR KEY SHARE. */
  readonly keyShare: string;
  /**
   * True where customer `c`'s metadata has `key` with the value `value`: a string compared as
   * text, a number or boolean as its JSON text, anything else (an object, an array) never equal.
   */
  metadataIs(p: Params, key: string, value: string): string;
  /** Customer `c`'s metadata value at `key`, as JSON text (NULL when absent). */
  metadataJson(p: Params, key: string): string;
  /**
   * Customers' metadata.stripe_customer_id as text, spelled exactly as migration 31's index
   * customers_by_stripe_customer has it (a planner uses an expression index only for its own text).
   */
  readonly stripeCustomerId: string;
  /** Customers `c` joined to their scores `s`, walked in the customers' order. */
  readonly customersWithScores: string;
  /** After `FROM deliveries`: the index of pending deliveries by webhook, where the planner must be told. */
  readonly pendingIndex: string;
}

export interface Driver extends Dialect {
  all<R = Row>(sql: string, params: readonly Param[]): Promise<R[]>;
  get<R = Row>(sql: string, params: readonly Param[]): Promise<R | undefined>;
  /** Answers how many rows the statement changed. */
  run(sql: string, params: readonly Param[]): Promise<number>;
  /**
   * The statement once for each row of parameters, in order. `columns`, each parameter's type,
   * lets PostgreSQL take an `INSERT … VALUES ($1, …, $n) …` as one prepared statement over arrays
   * (unnest) instead of a statement with every row's placeholders, parsed and planned anew.
   */
  runEach(sql: string, rows: readonly (readonly Param[])[], columns: readonly ColumnType[]): Promise<void>;
  /**
   * `fn` with its statements on one connection: from PostgreSQL's pool, one reserved for it, so
   * reads sent together (Promise.all) are pipelined on it and hold one connection instead of one
   * each (a customer's timeline reads eight sources at once); a transaction's driver, and SQLite's,
   * are already one connection and give themselves.
   */
  oneConnection<T>(fn: (db: Driver) => Promise<T>): Promise<T>;
}

/** A parameter's type for runEach (PostgreSQL's name for it). */
export type ColumnType = 'text' | 'int8' | 'float8';

/** A statement's parameters as it is written: `p.add(v)` is the placeholder that binds `v`. */
export class Params {
  readonly list: Param[] = [];

  constructor(...first: Param[]) {
    for (const v of first) this.list.push(v);
  }

  add(value: Param): string {
    this.list.push(value);
    return `$${this.list.length}`;
  }
}

/**
 * The segment's book conditions on customers `c` (each a condition text), `add` giving the
 * placeholder that binds a value: one list for every dialect and placeholder style.
 */
export function bookConditions(
  segment: Segment | undefined,
  add: (value: string | number) => string,
): string[] {
  const where: string[] = [];
  if (segment === undefined) return where;
  // lower(owner) is what customers_by_owner holds (migration 24).
  if (segment.owner === null) where.push('c.owner IS NULL');
  else if (segment.owner !== undefined) where.push(`lower(c.owner) = lower(${add(segment.owner)})`);
  if (segment.renewalAfter !== undefined) where.push(`c.renewal_at >= ${add(segment.renewalAfter)}`);
  if (segment.renewalBefore !== undefined) where.push(`c.renewal_at < ${add(segment.renewalBefore)}`);
  if (segment.parentId !== undefined) where.push(`c.parent_id = ${add(segment.parentId)}`);
  if (segment.lifecycle !== undefined) where.push(`c.lifecycle = ${add(segment.lifecycle)}`);
  return where;
}

/** The segment's conditions on customers `c`, each ` AND …`. */
export const segmentWhere = (d: Dialect, p: Params, segment: Segment | undefined): string =>
  [
    ...(segment?.metadata ?? []).map(({ key, value }) => d.metadataIs(p, key, value)),
    ...bookConditions(segment, (v) => p.add(v)),
  ]
    .map((c) => ` AND ${c}`)
    .join('');

/** JSON a driver hands back as text (SQLite) or already parsed (PostgreSQL's json columns). */
export const parsed = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

/**
 * No stored id holds a NUL (the API refuses control characters in ids, and PostgreSQL could not
 * keep one), so a lookup by such an id finds nothing, without asking the database.
 */
export const hasNul = (s: string): boolean => s.includes('\0');

/**
 * As a bound on stored ids (none of which hold a NUL), `s` orders like its part before the first
 * NUL: id > s exactly when id > that prefix, and id < s exactly when id <= it.
 */
export const beforeNul = (s: string): string => {
  const i = s.indexOf('\0');
  return i === -1 ? s : s.slice(0, i);
};
