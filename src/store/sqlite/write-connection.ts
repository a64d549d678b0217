// The one SQLite connection that writes, as the group commit drives it: begin a batch, a
// savepoint per job, commit (group-commit.ts), on the thread that holds it.
import type { DatabaseSync } from 'node:sqlite';
import type { Connection } from './connection.ts';
import { SqliteTx } from './tx.ts';
import { type OpArgs, type OpResult, WRITE_OPS, type WriteOpName } from './write-ops.ts';

/**
 * The batch's transaction was rolled back as a whole, taking this job's writes (or its chance
 * to run) with it; nothing of it is stored. `cause`: SQLite's error, when there was one.
 * Retrying is right: the next batch starts afresh. Reported as the database being unavailable.
 */
export class TransactionLost extends Error {
  readonly code = 'SQLITE_TRANSACTION_LOST';
  constructor(cause: unknown) {
    super('The write transaction was rolled back; nothing of this write was stored.', { cause });
    this.name = 'TransactionLost';
  }
}

/** The statements, run on this thread. */
export class DirectWriter {
  readonly conn: Connection;
  readonly tx: SqliteTx;
  readonly #db: DatabaseSync;
  /** deliveriesDue before the running job: what undoing the job restores. */
  #saved = false;

  constructor(conn: Connection) {
    this.conn = conn;
    this.#db = conn.db;
    this.tx = new SqliteTx(conn);
  }

  /** BEGIN IMMEDIATE: a new batch. */
  begin(): void {
    this.#db.exec('BEGIN IMMEDIATE');
    this.tx.deliveriesDue = false;
  }

  /** A savepoint for the next job. */
  savepoint(): void {
    this.#db.exec('SAVEPOINT job');
    this.#saved = this.tx.deliveriesDue;
  }

  /** Keeps the job's work; false when the transaction is gone (SQLite rolled it back). */
  release(): boolean {
    return this.#db.isTransaction && this.#try('RELEASE job');
  }

  /** Undoes the job's work; false when the transaction is gone. */
  rollbackTo(): boolean {
    this.tx.deliveriesDue = this.#saved;
    return this.#db.isTransaction && this.#try('ROLLBACK TO job') && this.#try('RELEASE job');
  }

  /** COMMIT; true when the batch made deliveries due. On failure it rolls back and throws. */
  commit(): boolean {
    try {
      this.#db.exec('COMMIT');
    } catch (error) {
      this.rollback();
      throw error;
    }
    return this.tx.deliveriesDue;
  }

  /** Rolls back the batch, if one is open. */
  rollback(): void {
    if (this.#db.isTransaction) this.#try('ROLLBACK');
  }

  /** A store write that is not a Tx method (write-ops.ts), inside the open batch. */
  async op<K extends WriteOpName>(name: K, ...args: OpArgs<K>): Promise<OpResult<K>> {
    const fn = WRITE_OPS[name] as (conn: Connection, ...a: unknown[]) => OpResult<K> | Promise<OpResult<K>>;
    return fn(this.conn, ...args);
  }

  #try(sql: string): boolean {
    try {
      this.#db.exec(sql);
      return true;
    } catch {
      return false;
    }
  }
}
