// A write: a transaction that runs whole where the writes run, referenced by value
// (`store.run(applyWeights, accountId, …)`). On PostgreSQL it is a transaction like any other; on
// SQLite it is one message to the writer thread, which cannot be sent a function: it is sent the
// write's name, and the thread finds the function in the registry of every write,
// src/writes/index.ts, which it imports like any module. A heavy write (a rescore of a whole
// account, its preview, a batch of the rescore job) keeps a CPU busy for seconds; PostgreSQL runs
// it the same way on a thread of its own (postgres/heavy-writes.ts), so that the requests the main
// thread answers meanwhile do not wait behind it. docs/architecture.md, "A write".
//
// A batched write (a score update, a single metric write) takes many items of one account and
// answers one result per item. Sent with one item per request, it is gathered by the backend with
// the account's other items that arrive while one of its batches is being written, and written in
// one call: SQLite's group commit gathers them on the writer thread (sqlite/group-commit.ts),
// PostgreSQL's store before its transaction (postgres/batches.ts). That is the one batching layer;
// docs/architecture.md, "A write".
import type { ApiError } from '../domain/errors.ts';
import type { Tx, Write } from './store.ts';

export type { Write };

export interface WriteOptions {
  /** It reads and computes over many customers (see above); default false. */
  heavy?: boolean;
  /** Its items may be gathered with the account's others (see above); default false. */
  batched?: boolean;
}

/** `fn` as a Write, known by its name (fn.name), which the registry holds once. */
export function write<A extends unknown[], R>(
  fn: (tx: Tx, ...args: A) => Promise<R>,
  options: WriteOptions = {},
): Write<A, R> {
  return Object.assign(fn, { heavy: options.heavy === true, batched: options.batched === true });
}

/** One item's outcome in a batched write: its result, or the refusal it would have got alone. */
export type ItemResult<O> = { ok: true; record: O } | { ok: false; error: ApiError };

/** A write whose items may be gathered: (accountId, items, now) → one result per item, in order. */
export type BatchedWrite<I, O> = Write<[string, readonly I[], number], ItemResult<O>[]>;

/**
 * The one item's record of a batched write sent with one item (a request's score update, gathered
 * by the backend with the account's others); thrown, the error it was refused with.
 */
export function onlyRecord<O>(results: readonly ItemResult<O>[]): O {
  const [result] = results;
  if (!result) throw new Error('a batched write gave no result for its item');
  if (!result.ok) throw result.error;
  return result.record;
}

/** The arguments of a batched write, as they cross to the thread that gathers them. */
export type BatchedArgs = [accountId: string, items: readonly unknown[], now: number];

/**
 * Batches of items in one call, split again: `runs` the arguments of several calls of one batched
 * write for one account, in arrival order; the gathered call's arguments (the items in order, at
 * the latest `now`), and a function that splits its results back into one array per call.
 */
export function gather(runs: readonly BatchedArgs[]): {
  args: BatchedArgs;
  split: (results: readonly unknown[]) => unknown[][];
} {
  const first = runs[0] as BatchedArgs;
  const items = runs.flatMap((r) => r[1]);
  const now = Math.max(...runs.map((r) => r[2]));
  return {
    args: [first[0], items, now],
    split: (results) => {
      let at = 0;
      return runs.map((r) => {
        const part = results.slice(at, at + r[1].length);
        at += r[1].length;
        return part;
      });
    },
  };
}

/** Writes by name: what a thread that runs writes looks them up in. */
export type WriteRegistry = ReadonlyMap<string, Write<unknown[], unknown>>;

/**
 * These functions by their name, as a thread is sent them (these writes, or the store's shared
 * writes); two of one name are a mistake caught at start-up.
 */
export function registry<F extends { name: string }>(fns: Iterable<F>, kind = 'writes'): Map<string, F> {
  const byName = new Map<string, F>();
  for (const fn of fns) {
    if (byName.has(fn.name)) throw new Error(`two ${kind} are named '${fn.name}'`);
    byName.set(fn.name, fn);
  }
  return byName;
}

/**
 * A thread's registry: every write of src/writes/, and the writes `modules` export (the tests'
 * own writes, which a store is given by its `writeModules` option; production passes none).
 */
export async function threadRegistry(
  base: WriteRegistry,
  modules: readonly string[] = [],
): Promise<WriteRegistry> {
  if (modules.length === 0) return base;
  const all = [...base.values()];
  for (const module of modules) {
    const exports = (await import(module)) as Record<string, unknown>;
    for (const value of Object.values(exports)) {
      if (typeof value === 'function' && typeof (value as Partial<Write<[], unknown>>).heavy === 'boolean') {
        all.push(value as Write<unknown[], unknown>);
      }
    }
  }
  return registry(all);
}

/** The write of this name; an error if there is none. */
export function findWrite(writes: WriteRegistry, name: string): Write<unknown[], unknown> {
  const found = writes.get(name);
  if (!found) throw new Error(`no write is named '${name}'`);
  return found;
}
