// Group commit for SQLite. Every write runs on one connection, one after another; the
// transactions that queue up while one batch runs share the next BEGIN … COMMIT, each inside
// its own SAVEPOINT. With synchronous=FULL that is one fsync per batch instead of one per
// request, and a failing transaction rolls back alone. Nobody is answered before the COMMIT
// that holds their writes has returned.
import type { DatabaseSync } from 'node:sqlite';
import { setImmediate } from 'node:timers/promises';

/** Enough to amortize the fsync; small enough that no batch holds the write lock for long. */
const MAX_BATCH = 256;

interface Job<C> {
  run: (context: C) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<C> {
  readonly #db: DatabaseSync;
  readonly #context: C;
  /** Called once per batch: before its first job, and after its COMMIT. */
  readonly #committed: (context: C) => void;
  readonly #begin: (context: C) => void;
  /** What a job that rolls back must not leave behind in the context (e.g. a wake-up flag). */
  readonly #save: (context: C) => unknown;
  readonly #restore: (context: C, saved: unknown) => void;
  #pending: Job<C>[] = [];
  #draining: Promise<void> | undefined;

  constructor(
    db: DatabaseSync,
    context: C,
    hooks: {
      begin: (c: C) => void;
      committed: (c: C) => void;
      save: (c: C) => unknown;
      restore: (c: C, saved: unknown) => void;
    },
  ) {
    this.#db = db;
    this.#context = context;
    this.#begin = hooks.begin;
    this.#committed = hooks.committed;
    this.#save = hooks.save;
    this.#restore = hooks.restore;
  }

  run<T>(fn: (context: C) => Promise<T>): Promise<T> {
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
      // node:sqlite is synchronous, so without this yield the requests that arrived meanwhile
      // (their I/O callbacks) would never get to queue up: let them run, then take them all.
      await setImmediate();
      const batch = this.#pending.splice(0, MAX_BATCH);
      try {
        await this.#commit(batch);
      } catch (error) {
        // Not expected (#commit answers its jobs); if it happens, nobody is left waiting.
        for (const job of batch) job.reject(error);
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
  async #commit(batch: Job<C>[]): Promise<void> {
    const db = this.#db;
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      for (const job of batch) job.reject(error);
      return;
    }
    this.#begin(this.#context);
    const done: { job: Job<C>; value: unknown }[] = [];
    let lost: TransactionLost | undefined;
    let next = 0;
    while (next < batch.length && lost === undefined) {
      const job = batch[next++] as Job<C>;
      const saved = this.#save(this.#context);
      try {
        db.exec('SAVEPOINT job');
      } catch (error) {
        lost = new TransactionLost(error);
        next--; // this job did not run: it is answered with the rest
        break;
      }
      let value: unknown;
      try {
        value = await job.run(this.#context);
      } catch (error) {
        this.#restore(this.#context, saved);
        job.reject(error);
        if (!db.isTransaction) lost = new TransactionLost(error);
        else if (!tryExec(db, 'ROLLBACK TO job') || !tryExec(db, 'RELEASE job'))
          lost = new TransactionLost(error);
        continue;
      }
      if (!db.isTransaction || !tryExec(db, 'RELEASE job')) {
        // The job's work was undone with the transaction (it swallowed the statement's error).
        lost = new TransactionLost(undefined);
        job.reject(lost);
        continue;
      }
      done.push({ job, value });
    }
    if (lost === undefined) {
      try {
        db.exec('COMMIT');
        this.#committed(this.#context);
        for (const { job, value } of done) job.resolve(value);
        return;
      } catch (error) {
        lost = new TransactionLost(error);
      }
    }
    if (db.isTransaction) tryExec(db, 'ROLLBACK');
    for (const { job } of done) job.reject(lost);
    for (const job of batch.slice(next)) job.reject(lost);
  }
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

function tryExec(db: DatabaseSync, sql: string): boolean {
  try {
    db.exec(sql);
    return true;
  } catch {
    return false;
  }
}
