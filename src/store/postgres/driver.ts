// The shared statements' driver on a PostgreSQL pool or transaction (../driver.ts): each
// statement is sent as a named prepared statement, parsed once per connection.
import type { ColumnType, Dialect, Driver, Param, Params, Row } from '../driver.ts';
import { LOCKS, type Queryable, type Sql } from './connection.ts';
import { fromText, pgArray, toText, toTextOrNull } from './text.ts';

export const POSTGRES: Dialect = {
  name: 'postgres',
  ilike: 'ILIKE',
  text: toText,
  textOrNull: toTextOrNull,
  fromText,
  keyShare: ' FOR KEY SHARE',
  rowId: 'ctid',
  forUpdate: ' FOR UPDATE',
  skipLocked: ' FOR UPDATE SKIP LOCKED',
  inList: (p: Params, ids: readonly string[]) => `= ANY(${p.add(pgArray(ids))}::text[])`,
  // OFFSET 0 keeps the subquery from being flattened into a join the planner may hash.
  perId: (p: Params, ids: readonly string[], select: (match: string) => string) =>
    `SELECT q.* FROM unnest(${p.add(pgArray(ids))}::text[]) AS ids(id) CROSS JOIN LATERAL (${select('= ids.id')} OFFSET 0) q`,
  ids: (p: Params, ids: readonly string[]) => `unnest(${p.add(pgArray(ids))}::text[]) AS ids(id)`,
  probePerId: (p: Params, ids: readonly string[], columns: readonly string[], select) =>
    `SELECT ids.id AS customer_id, q.* FROM unnest(${p.add(pgArray(ids))}::text[]) AS ids(id)
     CROSS JOIN LATERAL (${select(columns.join(', '), 'ids.id')}) q`,
  bootstrapLock: `SELECT pg_advisory_xact_lock(${LOCKS.bootstrap})`,
  tryRetentionLock: `SELECT pg_try_advisory_xact_lock(${LOCKS.retention}) AS got`,
  lockEmail: "SELECT pg_advisory_xact_lock(hashtextextended('sign-in:' || $1, 0))",
  json: (value) => value as Param,
  bool: (value) => value,
  metadataIs(p: Params, key: string, value: string) {
    const at = p.add(key);
    return `(CASE json_typeof(c.metadata -> ${at}) WHEN 'string' THEN c.metadata ->> ${at}
      WHEN 'number' THEN (c.metadata -> ${at})::text WHEN 'boolean' THEN (c.metadata -> ${at})::text END)
      = ${p.add(value)}`;
  },
  metadataJson: (p: Params, key: string) => `(c.metadata -> ${p.add(key)})::text`,
  // json's ->> fails on a document holding \u0000 anywhere (it cannot be text): such metadata has none.
  stripeCustomerId:
    "(CASE WHEN strpos(metadata::text, '\\u0000') = 0 THEN metadata ->> 'stripe_customer_id' END)",
  customersWithScores:
    'customers c JOIN health_scores s ON s.account_id = c.account_id AND s.customer_id = c.id',
  pendingIndex: '',
};

const PREPARED = { prepare: true };

/**
 * `INSERT … VALUES (tuple) …` split around its one tuple: `into` (up to VALUES), the tuple's text
 * between its parentheses, and `tail`; null when the text is not such an insert, or when a
 * placeholder lies outside the tuple (the rewrite below gives the tuple's alone their arrays).
 */
function valuesInsert(text: string): { into: string; tuple: string; tail: string } | null {
  const match = /^(\s*INSERT\s[\s\S]*?\b)VALUES\s*\(([^()]*)\)([\s\S]*)$/i.exec(text);
  if (!match) return null;
  const [, into, tuple, tail] = match as unknown as [string, string, string, string];
  return /\$\d/.test(into) || /\$\d/.test(tail) ? null : { into, tuple, tail };
}

/**
 * `INSERT … VALUES ($1, …, $n) …`, its tuple exactly those placeholders in order, as an insert of
 * the rows of n arrays, one per column (`$k::type[]`, unnested); null when the text is not such an
 * insert. Its text is the same for any number of rows, so it is prepared once per connection: at
 * 500 rows of 3 columns it takes 5.4 ms against 7.4-9.1 ms as 1,500 placeholders.
 */
function unnested(text: string, columns: readonly ColumnType[]): string | null {
  const insert = valuesInsert(text);
  const inOrder = columns.map((_, i) => `$${i + 1}`).join(',');
  if (!insert || insert.tuple.replace(/\s+/g, '') !== inOrder) return null;
  const arrays = columns.map((type, i) => `$${i + 1}::${type}[]`).join(', ');
  return `${insert.into}SELECT * FROM unnest(${arrays})${insert.tail}`;
}

export const pgDriver = (sql: Queryable): Driver => ({
  ...POSTGRES,
  async oneConnection(fn) {
    // A transaction (or a reserved connection) has no reserve: it is one connection already.
    if (!('reserve' in sql)) return fn(this);
    const reserved = await (sql as Sql).reserve();
    try {
      return await fn(pgDriver(reserved));
    } finally {
      reserved.release();
    }
  },
  all: async <R = Row>(text: string, params: readonly Param[]) =>
    (await sql.unsafe(text, params as never[], PREPARED)) as unknown as R[],
  get: async <R = Row>(text: string, params: readonly Param[]) =>
    ((await sql.unsafe(text, params as never[], PREPARED)) as unknown as R[])[0],
  run: async (text: string, params: readonly Param[]) =>
    (await sql.unsafe(text, params as never[], PREPARED)).count,
  // An INSERT of many rows is one prepared statement over arrays (unnested); anything else is
  // sent row by row together, which the connection pipelines: one round trip for all. Never a
  // VALUES list: its text changes with the rows, so it is not prepared, and in a transaction
  // postgres.js then runs every later statement one round trip each (docs/postgresql.md, "Round
  // trips of a write"). Hence the columns' types, which every caller gives.
  async runEach(text: string, rows: readonly (readonly Param[])[], columns: readonly ColumnType[]) {
    if (rows.length === 0) return;
    const arrays = rows.length > 1 ? unnested(text, columns) : null;
    if (arrays) {
      const params = columns.map((_, k) => pgArray(rows.map((row) => row[k] as string | number | null)));
      await sql.unsafe(arrays, params, PREPARED);
      return;
    }
    await Promise.all(rows.map((row) => sql.unsafe(text, row as never[], PREPARED)));
  },
});
