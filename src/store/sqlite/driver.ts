// The shared statements' driver on a SQLite connection (../driver.ts). node:sqlite is
// synchronous: each call has finished when its promise is made.
import type { SQLInputValue } from 'node:sqlite';
import type { Dialect, Driver, Param, Params, Row } from '../driver.ts';
import type { Connection } from './connection.ts';

/** A JSON path to one key of an object, however the key is spelled. */
const path = (key: string) => `$.${JSON.stringify(key)}`;
/** The ids as one parameter, a JSON array: `IN (…)` of them, and a table `ids` of one column `id`. */
const inIds = (p: Params, ids: readonly string[]) =>
  `IN (SELECT value FROM json_each(${p.add(JSON.stringify(ids))}))`;
const idsTable = (p: Params, ids: readonly string[]) =>
  `(SELECT value AS id FROM json_each(${p.add(JSON.stringify(ids))})) AS ids`;

export const SQLITE: Dialect = {
  name: 'sqlite',
  ilike: 'LIKE',
  text: (s) => s,
  textOrNull: (s) => s,
  fromText: (s) => s,
  keyShare: '',
  rowId: 'rowid',
  forUpdate: '',
  skipLocked: '',
  inList: inIds,
  perId: (p: Params, ids: readonly string[], select: (match: string) => string) => select(inIds(p, ids)),
  ids: idsTable,
  probePerId: (p: Params, ids: readonly string[], columns: readonly string[], select) =>
    `SELECT ids.id AS customer_id, ${columns.map((c) => `(${select(c, 'ids.id')}) AS ${c}`).join(', ')}
     FROM ${idsTable(p, ids)}`,
  tryRetentionLock: null,
  bootstrapLock: null,
  lockEmail: null,
  json: (value) => JSON.stringify(value),
  bool: (value) => (value ? 1 : 0),
  metadataIs(p: Params, key: string, value: string) {
    const at = p.add(path(key));
    return `(CASE json_type(c.metadata, ${at}) WHEN 'text' THEN c.metadata ->> ${at}
      WHEN 'integer' THEN c.metadata -> ${at} WHEN 'real' THEN c.metadata -> ${at}
      WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' END) = ${p.add(value)}`;
  },
  metadataJson: (p: Params, key: string) => `c.metadata -> ${p.add(path(key))}`,
  stripeCustomerId: "(metadata ->> '$.stripe_customer_id')",
  // CROSS JOIN keeps the customers outer: reading them in order and looking each score up costs
  // half of the other way round.
  customersWithScores:
    'customers c CROSS JOIN health_scores s ON s.account_id = c.account_id AND s.customer_id = c.id',
  pendingIndex: 'INDEXED BY deliveries_pending_by_webhook',
};

const sqliteDriver = (conn: Connection): Driver => ({
  ...SQLITE,
  oneConnection(fn) {
    return fn(this);
  },
  all: async <R = Row>(sql: string, params: readonly Param[]) =>
    conn.all(sql, ...(params as SQLInputValue[])) as R[],
  get: async <R = Row>(sql: string, params: readonly Param[]) =>
    conn.get(sql, ...(params as SQLInputValue[])) as R | undefined,
  run: async (sql: string, params: readonly Param[]) => conn.run(sql, ...(params as SQLInputValue[])),
  // The column types are PostgreSQL's concern: a prepared statement runs once per row here.
  async runEach(sql: string, rows: readonly (readonly Param[])[]) {
    if (rows.length === 0) return;
    const statement = conn.statement(sql);
    for (const row of rows) statement.run(...(row as SQLInputValue[]));
  },
});

const drivers = new WeakMap<Connection, Driver>();

/** The connection's driver, made once. */
export function driverOf(conn: Connection): Driver {
  let driver = drivers.get(conn);
  if (!driver) {
    driver = sqliteDriver(conn);
    drivers.set(conn, driver);
  }
  return driver;
}

/** A shared write (a function of a Driver) as a function of the write connection. */
export const on =
  <A extends unknown[], R>(fn: (db: Driver, ...args: A) => R) =>
  (conn: Connection, ...args: A): R =>
    fn(driverOf(conn), ...args);
