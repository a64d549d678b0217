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
    this.#draining ??= this.#drain().finally(() => {
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
    const db = this.#db;
    while (this.#pending.length > 0) {
      // node:sqlite is synchronous, so without this yield the requests that arrived meanwhile
      // (their I/O callbacks) would never get to queue up: let them run, then take them all.
      await setImmediate();
      const batch = this.#pending.splice(0, MAX_BATCH);
      const done: { job: Job<C>; value: unknown }[] = [];
      try {
        db.exec('BEGIN IMMEDIATE');
      } catch (error) {
        for (const job of batch) job.reject(error);
        continue;
      }
      this.#begin(this.#context);
      for (const job of batch) {
        db.exec('SAVEPOINT job');
        const saved = this.#save(this.#context);
        try {
          const value = await job.run(this.#context);
          db.exec('RELEASE job');
          done.push({ job, value });
        } catch (error) {
          db.exec('ROLLBACK TO job');
          db.exec('RELEASE job');
          this.#restore(this.#context, saved);
          job.reject(error);
        }
      }
      try {
        db.exec('COMMIT');
      } catch (error) {
        if (db.isTransaction) db.exec('ROLLBACK');
        for (const { job } of done) job.reject(error);
        continue;
      }
      this.#committed(this.#context);
      for (const { job, value } of done) job.resolve(value);
    }
  }
}
