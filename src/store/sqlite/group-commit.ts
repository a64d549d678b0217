// Group commit for SQLite. Every write runs on one connection, one after another; the
// transactions that queue up while one batch runs share the next BEGIN … COMMIT, each inside
// its own SAVEPOINT. With synchronous=FULL that is one fsync per batch instead of one per
// request, and a failing transaction rolls back alone. Nobody is answered before the COMMIT
// that holds their writes has returned. It runs on the thread that holds the write connection:
// the writer thread for a file (writer-thread.ts), so the requests that queue up meanwhile
// arrive as messages and form the next batch; the store's own thread for ':memory:'.
import { setImmediate } from 'node:timers/promises';
import type { SharedWrite } from '../shared-writes.ts';
import type { Tx } from '../store.ts';
import { type BatchedArgs, gather, type Write } from '../write.ts';
import { driverOf } from './driver.ts';
import { type DirectWriter, TransactionLost } from './write-connection.ts';
import { migrate, type OpArgs, type OpResult, WRITE_OPS, type WriteOpName } from './write-ops.ts';

export { TransactionLost } from './write-connection.ts';

/** Enough to amortize the fsync; small enough that no batch holds the write lock for long. */
const MAX_BATCH = 256;

interface Job {
  run: (tx: Tx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** A batched write's call (../write.ts): adjacent calls of one write and account run as one. */
  batched?: { name: string; args: BatchedArgs; write: (tx: Tx, ...args: BatchedArgs) => Promise<unknown[]> };
}

/** What running one step of a batch in its savepoint came to. */
type Step =
  | { ok: true; value: unknown }
  | { ok: false; error: unknown }
  /** `error`: what the step threw when it took the transaction with it (its own answer). */
  | { lost: TransactionLost; error?: unknown };

/** The batch as it runs: a job alone, or adjacent calls of one batched write and account together. */
function unitsOf(batch: readonly Job[]): Job[][] {
  const units: Job[][] = [];
  for (const job of batch) {
    const last = units.at(-1);
    const head = last?.[0]?.batched;
    if (last && head && job.batched?.name === head.name && job.batched.args[0] === head.args[0])
      last.push(job);
    else units.push([job]);
  }
  return units;
}

export class GroupCommit {
  readonly #writer: DirectWriter;
  /** After each COMMIT: whether the batch made deliveries due. */
  readonly #committed: (deliveriesDue: boolean) => void;
  /** Housekeeping between two batches, once the last one's answers have gone (a checkpoint). */
  readonly #between: (() => void) | undefined;
  /** Told the write's name and item count of each call of a batched write (the batch-size metrics). */
  readonly #onBatch: (write: string, size: number) => void;
  #pending: Job[] = [];
  #draining: Promise<void> | undefined;

  constructor(
    writer: DirectWriter,
    committed: (deliveriesDue: boolean) => void,
    opts: {
      between?: (() => void) | undefined;
      onBatch?: ((write: string, size: number) => void) | undefined;
    } = {},
  ) {
    this.#writer = writer;
    this.#committed = committed;
    this.#between = opts.between;
    this.#onBatch = opts.onBatch ?? (() => {});
  }

  run<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ run: fn, resolve: resolve as (v: unknown) => void, reject });
      this.#start();
    });
  }

  /** A batched write's call: gathered with the adjacent calls of the same write and account. */
  runBatched<I, R>(
    write: Write<[string, readonly I[], number], R[]>,
    args: [string, readonly I[], number],
  ): Promise<R[]> {
    return new Promise<R[]>((resolve, reject) => {
      this.#pending.push({
        run: (tx) => write(tx, ...args),
        resolve: resolve as (v: unknown) => void,
        reject,
        batched: { name: write.name, args, write: write as never },
      });
      this.#start();
    });
  }

  /** A write (../write.ts), committed with the batch it joins; a batched one gathered with its kind. */
  job<A extends unknown[], R>(write: Write<A, R>, ...args: A): Promise<R> {
    if (write.batched) return this.runBatched(write as never, args as never) as Promise<R>;
    return this.run((tx) => write(tx, ...args));
  }

  /** A shared write (../shared-writes.ts) on the write connection, committed with the batch it joins. */
  shared<A extends unknown[], R>(fn: SharedWrite<A, R>, ...args: A): Promise<R> {
    return this.run(() => fn(driverOf(this.#writer.conn), ...args));
  }

  /** A store write of write-ops.ts, committed with the batch it joins. */
  op<K extends WriteOpName>(name: K, ...args: OpArgs<K>): Promise<OpResult<K>> {
    return this.run(() => this.#writer.op(name, ...args));
  }

  async migrate(): Promise<number> {
    return migrate(this.#writer.conn);
  }

  async synchronous(): Promise<number> {
    return WRITE_OPS.synchronous(this.#writer.conn);
  }

  /** Waits for what is queued, then closes the connection. */
  async close(): Promise<void> {
    await this.idle();
    this.#writer.conn.db.close();
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
   * One step in its own SAVEPOINT. A step that throws rolls back to its savepoint. When SQLite has
   * rolled back the whole transaction itself (disk full, an I/O error, RAISE(ROLLBACK)), the
   * steps that ran before are undone too and those after cannot run in it: `lost`.
   */
  async #step(run: (tx: Tx) => Promise<unknown>): Promise<Step> {
    const writer = this.#writer;
    try {
      await writer.savepoint();
    } catch (error) {
      return { lost: new TransactionLost(error) };
    }
    let value: unknown;
    try {
      value = await run(writer.tx);
    } catch (error) {
      if (!(await writer.rollbackTo())) return { lost: new TransactionLost(error), error };
      return { ok: false, error };
    }
    // False: the step's work was undone with the transaction (it swallowed the statement's error).
    if (!(await writer.release())) return { lost: new TransactionLost(undefined) };
    return { ok: true, value };
  }

  /**
   * One batch: BEGIN, each job (or gathered calls of a batched write) in its own SAVEPOINT, COMMIT.
   * A job that throws gets its own error; gathered calls that throw run again one by one, so that
   * one cannot fail the rest. When the transaction is lost, every job not yet refused is answered
   * with TransactionLost, which the API answers as a 503 (docs/operations.md, "When a write cannot
   * be committed"). A job is answered at most once, and the connection is left outside any
   * transaction for the next batch.
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
    /** Jobs neither refused nor done yet. */
    const open = new Set(batch);
    let lost: TransactionLost | undefined;
    /** The unit's jobs get their step's outcome; a lost transaction answers the rest at the end. */
    const settle = (unit: readonly Job[], step: Step, values?: readonly unknown[]) => {
      if ('lost' in step) lost = step.lost;
      if ('ok' in step && step.ok) {
        for (const [i, job] of unit.entries()) done.push({ job, value: values ? values[i] : step.value });
      } else if ('error' in step) {
        // The step's own error, as it would have had alone (the full disk it hit, say).
        for (const job of unit) {
          job.reject(step.error);
          open.delete(job);
        }
      }
    };
    const alone = async (job: Job) => {
      if (job.batched) this.#onBatch(job.batched.name, job.batched.args[1].length);
      settle([job], await this.#step(job.run));
    };
    for (const unit of unitsOf(batch)) {
      if (lost !== undefined) break;
      const head = unit[0] as Job;
      if (unit.length === 1 || !head.batched) {
        await alone(head);
        continue;
      }
      const { write, name } = head.batched;
      const { args, split } = gather(unit.map((j) => (j.batched as NonNullable<Job['batched']>).args));
      this.#onBatch(name, args[1].length);
      const step = await this.#step((tx) => write(tx, ...args));
      if ('ok' in step && !step.ok) {
        // One item the database would not take fails the call: each runs again alone, so that
        // one cannot fail the rest (as it would alone).
        for (const job of unit) if (lost === undefined) await alone(job);
      } else settle(unit, step, 'ok' in step ? split(step.value as unknown[]) : undefined);
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
    for (const job of open) job.reject(lost);
  }
}
