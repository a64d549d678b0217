// The one SQLite connection that writes, as the group commit drives it: begin a batch, a
// savepoint per job, commit. An interface, so that the connection may live elsewhere than the
// thread that gathers the batches; DirectWriter runs the statements right here.
import type { DatabaseSync } from 'node:sqlite';
import type { Tx } from '../store.ts';
import type { Connection } from './connection.ts';
import { SqliteTx } from './tx.ts';
import { type OpArgs, type OpResult, WRITE_OPS, type WriteOpName } from './write-ops.ts';

export interface WriteConnection {
  /** What the jobs of a batch write through. */
  readonly tx: Tx;
  /** BEGIN IMMEDIATE: a new batch. */
  begin(): Promise<void> | void;
  /** A savepoint for the next job. */
  savepoint(): Promise<void> | void;
  /** Keeps the job's work; false when the transaction is gone (SQLite rolled it back). */
  release(): Promise<boolean> | boolean;
  /** Undoes the job's work; false when the transaction is gone. */
  rollbackTo(): Promise<boolean> | boolean;
  /** COMMIT; true when the batch made deliveries due. On failure it rolls back and throws. */
  commit(): Promise<boolean> | boolean;
  /** Rolls back the batch, if one is open. */
  rollback(): Promise<void> | void;
  /** A store write that is not a Tx method (write-ops.ts), inside the open batch. */
  op<K extends WriteOpName>(name: K, ...args: OpArgs<K>): Promise<OpResult<K>>;
}

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
export class DirectWriter implements WriteConnection {
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

  begin(): void {
    this.#db.exec('BEGIN IMMEDIATE');
    this.tx.deliveriesDue = false;
  }

  savepoint(): void {
    this.#db.exec('SAVEPOINT job');
    this.#saved = this.tx.deliveriesDue;
  }

  release(): boolean {
    return this.#db.isTransaction && this.#try('RELEASE job');
  }

  rollbackTo(): boolean {
    this.tx.deliveriesDue = this.#saved;
    return this.#db.isTransaction && this.#try('ROLLBACK TO job') && this.#try('RELEASE job');
  }

  commit(): boolean {
    try {
      this.#db.exec('COMMIT');
    } catch (error) {
      this.rollback();
      throw error;
    }
    return this.tx.deliveriesDue;
  }

  rollback(): void {
    if (this.#db.isTransaction) this.#try('ROLLBACK');
  }

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
