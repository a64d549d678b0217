// The shared statements' driver on a PostgreSQL pool or transaction (../sql/driver.ts): each
// statement is sent as a named prepared statement, parsed once per connection.
import type { Dialect, Driver, Param, Params, Row } from '../sql/driver.ts';
import { LOCKS, type Queryable } from './connection.ts';
import { fromText, toText, toTextOrNull } from './text.ts';

export const POSTGRES: Dialect = {
  name: 'postgres',
  ilike: 'ILIKE',
  text: toText,
  textOrNull: toTextOrNull,
  fromText,
  keyShare: ' FOR KEY SHARE',
  rowId: 'ctid',
  forUpdate: ' FOR UPDATE',
  inList: (p: Params, ids: readonly string[]) => `= ANY(${p.add(ids)}::text[])`,
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
  customersWithScores:
    'customers c JOIN health_scores s ON s.account_id = c.account_id AND s.customer_id = c.id',
  pendingIndex: '',
};

const PREPARED = { prepare: true };

export const pgDriver = (sql: Queryable): Driver => ({
  ...POSTGRES,
  all: async <R = Row>(text: string, params: readonly Param[]) =>
    (await sql.unsafe(text, params as never[], PREPARED)) as unknown as R[],
  get: async <R = Row>(text: string, params: readonly Param[]) =>
    ((await sql.unsafe(text, params as never[], PREPARED)) as unknown as R[])[0],
  run: async (text: string, params: readonly Param[]) =>
    (await sql.unsafe(text, params as never[], PREPARED)).count,
  // Sent together: the connection pipelines them, one round trip for all.
  async runEach(text: string, rows: readonly (readonly Param[])[]) {
    await Promise.all(rows.map((row) => sql.unsafe(text, row as never[], PREPARED)));
  },
});
