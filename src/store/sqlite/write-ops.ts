import { migrationFailed, schemaNewer } from '../migration-errors.ts';
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

/**
 * Brings the schema up to date, one migration per `BEGIN IMMEDIATE` transaction: SQLite's write
 * lock is the migration lock, and the version is read again under it, so processes starting at
 * once apply each migration once. A migration that fails is rolled back whole and named
 * (../migration-errors.ts); a schema newer than MIGRATIONS is refused. Returns the version.
 * Runs before anything else.
 */
export function migrate(conn: Connection): number {
  const db = conn.db;
  const latest = MIGRATIONS.length;
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  for (;;) {
    db.exec('BEGIN IMMEDIATE');
    let version = 0;
    try {
      const applied = schemaVersion(conn);
      if (applied > latest) throw schemaNewer(applied, latest);
      if (applied === latest) {
        db.exec('COMMIT');
        return latest;
      }
      version = applied + 1;
      const step = MIGRATIONS[version - 1] as Migration;
      if (typeof step === 'string') db.exec(step);
      else step(db);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
        version,
        Date.now(),
      );
      db.exec('COMMIT');
    } catch (err) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw version === 0 ? err : migrationFailed(version, latest, err);
    }
  }
}

/** The newest migration applied (0 for a database without the table). */
export function schemaVersion(conn: Connection): number {
  const table = conn.get(
    "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
  );
  if (!table) return 0;
  return Number(conn.get('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations')?.v);
}
