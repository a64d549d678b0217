// A write: a transaction that runs whole where the writes run, referenced by value
// (`store.run(applyWeights, accountId, …)`). On PostgreSQL it is a transaction like any other; on
// SQLite it is one message to the writer thread, which cannot be sent a function: it is sent the
// write's name, and the thread finds the function in the registry of every write,
// src/writes/index.ts, which it imports like any module. A heavy write (a rescore of a whole
// account, its preview, a batch of the rescore job) keeps a CPU busy for seconds; PostgreSQL runs
// it the same way on a thread of its own (postgres/heavy-writes.ts), so that the requests the main
// thread answers meanwhile do not wait behind it. docs/architecture.md, "A write".
import type { Tx, Write } from './store.ts';

export type { Write };

export interface WriteOptions {
  /** It reads and computes over many customers (see above); default false. */
  heavy?: boolean;
}

/** `fn` as a Write, known by its name (fn.name), which the registry holds once. */
export function write<A extends unknown[], R>(
  fn: (tx: Tx, ...args: A) => Promise<R>,
  options: WriteOptions = {},
): Write<A, R> {
  return Object.assign(fn, { heavy: options.heavy === true });
}

/** Writes by name: what a thread that runs writes looks them up in. */
export type WriteRegistry = ReadonlyMap<string, Write<unknown[], unknown>>;

/** The registry of these writes; two writes of one name are a mistake caught at start-up. */
export function registry(writes: Iterable<Write<never[], unknown>>): Map<string, Write<unknown[], unknown>> {
  const byName = new Map<string, Write<unknown[], unknown>>();
  for (const w of writes) {
    if (byName.has(w.name)) throw new Error(`two writes are named '${w.name}'`);
    byName.set(w.name, w as unknown as Write<unknown[], unknown>);
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
