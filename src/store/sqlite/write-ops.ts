// The SQLite store's writes that are not Tx methods, as plain functions of the write connection,
// by name: they run wherever the write connection lives (on the writer thread, or in the main
// thread for an in-memory database), inside a transaction the group commit has begun.
import { newId } from '../../domain/ids.ts';
import * as idempotency from '../sql/idempotency.ts';
import type { Account, AttemptOutcome, ClaimOptions, NewApiKey } from '../store.ts';
import type { Connection } from './connection.ts';
import { on } from './driver.ts';
import { MIGRATIONS, type Migration } from './migrations.ts';
import { PEOPLE_WRITE_OPS } from './people.ts';
import * as queue from './queue.ts';

export const WRITE_OPS = {
  ...PEOPLE_WRITE_OPS,

  ensureAccount(conn: Connection, name: string, now: number): Account {
    const found = conn.get('SELECT * FROM accounts WHERE name = ?', name);
    if (found) return { id: found.id as string, name, createdAt: found.created_at as number };
    const account = { id: newId.account(), name, createdAt: now };
    conn.run('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)', account.id, name, now);
    return account;
  },

  insertApiKey(conn: Connection, key: NewApiKey, onlyIfNone: boolean): boolean {
    if (onlyIfNone && conn.get('SELECT 1 AS found FROM api_keys WHERE revoked_at IS NULL')) return false;
    return (
      conn.run(
        'INSERT INTO api_keys (id, account_id, key_hash, prefix, scope, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key_hash) DO NOTHING',
        key.id,
        key.accountId,
        key.hash,
        key.prefix,
        key.scope,
        key.createdAt,
      ) === 1
    );
  },

  revokeApiKey(conn: Connection, id: string, now: number): boolean {
    return conn.run('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', now, id) === 1;
  },

  claimDeliveries: (conn: Connection, opts: ClaimOptions) => queue.claimDeliveries(conn, opts),

  recordAttempts: (conn: Connection, outcomes: AttemptOutcome[]) => {
    const now = Date.now();
    for (const outcome of outcomes) queue.recordAttempt(conn, outcome, now);
  },

  claimIdempotencyKey: on(idempotency.claimIdempotencyKey),
  completeIdempotencyKey: on(idempotency.completeIdempotencyKey),
  releaseIdempotencyKey: on(idempotency.releaseIdempotencyKey),
  pruneIdempotencyKeys: on(idempotency.pruneIdempotencyKeys),
  pruneEvents: on(idempotency.pruneEvents),

  /** PRAGMA synchronous as this connection has it (0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA). */
  synchronous: (conn: Connection) => Number(conn.get('PRAGMA synchronous')?.synchronous),
};

export type WriteOps = typeof WRITE_OPS;
export type WriteOpName = keyof WriteOps;
/** The arguments of an op after the connection. */
export type OpArgs<K extends WriteOpName> = WriteOps[K] extends (
  conn: Connection,
  ...args: infer A
) => unknown
  ? A
  : never;
export type OpResult<K extends WriteOpName> = Awaited<ReturnType<WriteOps[K]>>;

/** Brings the schema up to date in a transaction of its own; returns the version. Runs before anything else. */
export function migrate(conn: Connection): number {
  const db = conn.db;
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  db.exec('BEGIN IMMEDIATE');
  try {
    const row = db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as {
      v: number;
    };
    for (let v = row.v + 1; v <= MIGRATIONS.length; v++) {
      const step = MIGRATIONS[v - 1] as Migration;
      if (typeof step === 'string') db.exec(step);
      else step(db);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(v, Date.now());
    }
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
  return MIGRATIONS.length;
}
