// Group commit for SQLite. Every write runs on one connection, one after another; the
// transactions that queue up while one batch runs share the next BEGIN … COMMIT, each inside
// its own SAVEPOINT. With synchronous=FULL that is one fsync per batch instead of one per
// request, and a failing transaction rolls back alone. Nobody is answered before the COMMIT
// that holds their writes has returned. It runs on the thread that holds the write connection
// (local-writer.ts: the writer thread for a file), so the requests that queue up meanwhile
// arrive as messages and form the next batch.
import { setImmediate } from 'node:timers/promises';
import type { Tx } from '../store.ts';
import { TransactionLost, type WriteConnection } from './write-connection.ts';

export { TransactionLost } from './write-connection.ts';

/** Enough to amortize the fsync; small enough that no batch holds the write lock for long. */
const MAX_BATCH = 256;

interface Job {
  run: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit {
  readonly #writer: WriteConnection;
  /** After each COMMIT: whether the batch made deliveries due. */
  readonly #committed: (deliveriesDue: boolean) => void;
  /** Housekeeping between two batches, once the last one's answers have gone (a checkpoint). */
  readonly #between: (() => void) | undefined;
  #pending: Job[] = [];
  #draining: Promise<void> | undefined;

  constructor(writer: WriteConnection, committed: (deliveriesDue: boolean) => void, between?: () => void) {
    this.#writer = writer;
    this.#committed = committed;
    this.#between = between;
  }

  run<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ run: fn, resolve: resolve as (v: unknown) => void, reject });
      this.#start();
    });
  }

  #start(): void {
    this.#draining ??= this.#drain()
      // #drain answers every job itself and does not throw; should it ever, the process
      // must not die of an unhandled rejection for it.
      .catch(() => {})
      .finally(() => {
        this.#draining = undefined;
        // A job queued between the drain's last look and this callback must not wait forever.
        if (this.#pending.length > 0) this.#start();
      });
  }

  /** Resolves when everything queued so far has been committed or rolled back. */
  async idle(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      // Let the requests that arrived meanwhile (their I/O callbacks) queue up, then take them all.
      await setImmediate();
      const batch = this.#pending.splice(0, MAX_BATCH);
      try {
        await this.#commit(batch);
      } catch (error) {
        // Not expected (#commit answers its jobs); if it happens, nobody is left waiting.
        for (const job of batch) job.reject(error);
      }
      if (this.#between) {
        // A turn of the event loop first: the batch's answers (promise callbacks) go out before it.
        await setImmediate();
        this.#between();
      }
    }
  }

  /**
   * One batch: BEGIN, each job in its own SAVEPOINT, COMMIT. A job that throws rolls back to
   * its savepoint and gets its own error. When SQLite has rolled back the whole transaction
   * itself (disk full, an I/O error, RAISE(ROLLBACK)), the jobs that ran before are undone too
   * and those after cannot run in it: they are all answered with TransactionLost, which the API
   * answers as a 503 (docs/operations.md, "When a write cannot be committed"). A job is answered
   * at most once, and the connection is left outside any transaction for the next batch.
   */
  async #commit(batch: Job[]): Promise<void> {
    const writer = this.#writer;
    try {
      await writer.begin();
    } catch (error) {
      for (const job of batch) job.reject(error);
      return;
    }
    const done: { job: Job; value: unknown }[] = [];
    let lost: TransactionLost | undefined;
    let next = 0;
    while (next < batch.length && lost === undefined) {
      const job = batch[next++] as Job;
      try {
        await writer.savepoint();
      } catch (error) {
        lost = new TransactionLost(error);
        next--; // this job did not run: it is answered with the rest
        break;
      }
      let value: unknown;
      try {
        value = await job.run(writer.tx);
      } catch (error) {
        job.reject(error);
        if (!(await writer.rollbackTo())) lost = new TransactionLost(error);
        continue;
      }
      if (!(await writer.release())) {
        // The job's work was undone with the transaction (it swallowed the statement's error).
        lost = new TransactionLost(undefined);
        job.reject(lost);
        continue;
      }
      done.push({ job, value });
    }
    if (lost === undefined) {
      let due = false;
      try {
        due = await writer.commit();
      } catch (error) {
        lost = new TransactionLost(error);
      }
      if (lost === undefined) {
        for (const { job, value } of done) job.resolve(value);
        this.#committed(due);
        return;
      }
    } else {
      await writer.rollback();
    }
    for (const { job } of done) job.reject(lost);
    for (const job of batch.slice(next)) job.reject(lost);
  }
}
