// A write: a transaction that runs whole where the writes run, referenced by value
// (`store.run(applyWeights, accountId, …)`). On PostgreSQL it is a transaction like any other; on
// SQLite it is one message to the writer thread, which cannot be sent a function: it imports the
// write's module (`module`, the import.meta.url of the file that exports it under its own name)
// and calls the export, with the arguments as plain data. A heavy write (a rescore of a whole
// account, its preview, a batch of the rescore job) keeps a CPU busy for seconds; PostgreSQL runs
// it the same way on a thread of its own (postgres/heavy-writes.ts), so that the requests the main
// thread answers meanwhile do not wait behind it. docs/development.md, "The store".
import type { Tx, Write } from './store.ts';

export type { Write };

export interface WriteOptions {
  /** It reads and computes over many customers (see above); default false. */
  heavy?: boolean;
}

/** `fn`, exported from `module` under its own name (fn.name), as a Write. */
export function write<A extends unknown[], R>(
  module: string,
  fn: (tx: Tx, ...args: A) => Promise<R>,
  options: WriteOptions = {},
): Write<A, R> {
  return Object.assign(fn, { module, heavy: options.heavy === true });
}

const found = new Map<string, Promise<Write<unknown[], unknown>>>();

/** The write `module` exports under `name`, as the SQLite writer thread finds it; an error if there is none. */
export function findWrite(module: string, name: string): Promise<Write<unknown[], unknown>> {
  const key = `${module}#${name}`;
  let write = found.get(key);
  if (!write) {
    write = import(module).then((exports: Record<string, unknown>) => {
      const fn = exports[name];
      if (typeof fn !== 'function' || (fn as Partial<Write<[], unknown>>).module !== module) {
        found.delete(key);
        throw new Error(`${module} exports no write named '${name}'`);
      }
      return fn as Write<unknown[], unknown>;
    });
    found.set(key, write);
  }
  return write;
}
