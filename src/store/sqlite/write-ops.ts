import type { AttemptOutcome, ClaimOptions } from '../store.ts';
import type { Connection } from './connection.ts';
import { MIGRATIONS, type Migration } from './migrations.ts';
import * as queue from './queue.ts';

export const WRITE_OPS = {
  claimDeliveries: (conn: Connection, opts: ClaimOptions) => queue.claimDeliveries(conn, opts),

  recordAttempts: (conn: Connection, outcomes: AttemptOutcome[]) => {
    const now = Date.now();
    for (const outcome of outcomes) queue.recordAttempt(conn, outcome, now);
  },

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
