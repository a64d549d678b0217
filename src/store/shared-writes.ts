// The Store methods both backends answer the same way, as writes: each is one function of a Driver
// exported by name from keys.ts, people.ts, audit.ts, idempotency.ts or retention.ts. A backend
// says only how such a write runs (sql-store.ts, `write` and `atomic`); SQLite sends it to its
// writer thread, which cannot be sent a function: it finds the function again by its module and
// name (`locate` here, `findSharedWrite` there) and runs it in the transaction of the batch it joins.
import * as audit from './audit.ts';
import type { Driver } from './driver.ts';
import * as idempotency from './idempotency.ts';
import * as keys from './keys.ts';
import * as people from './people.ts';
import * as retention from './retention.ts';

/** A shared write: a function of a Driver, exported by name from one of the modules below. */
export type SharedWrite<A extends unknown[], R> = (db: Driver, ...args: A) => Promise<R>;

const LOCATIONS = new Map<unknown, { module: string; name: string }>();
/** The same, the other way: `module#name` to the function (every module is loaded already). */
const BY_LOCATION = new Map<string, SharedWrite<unknown[], unknown>>();
for (const [path, exports] of [
  ['./keys.ts', keys],
  ['./people.ts', people],
  ['./audit.ts', audit],
  ['./idempotency.ts', idempotency],
  ['./retention.ts', retention],
] as const) {
  const module = import.meta.resolve(path);
  for (const [name, fn] of Object.entries(exports)) {
    if (typeof fn !== 'function') continue;
    LOCATIONS.set(fn, { module, name });
    BY_LOCATION.set(`${module}#${name}`, fn as SharedWrite<unknown[], unknown>);
  }
}

/** Where a shared write is exported, for a thread that must import it to run it. */
export function locate(fn: (...args: never[]) => unknown): { module: string; name: string } {
  const found = LOCATIONS.get(fn);
  if (!found) throw new Error(`${fn.name} is not a shared write of src/store/ (shared-writes.ts)`);
  return found;
}

/** locate() undone, on the thread that runs the write: a lookup, since this module loaded them all. */
export function findSharedWrite(module: string, name: string): SharedWrite<unknown[], unknown> {
  const fn = BY_LOCATION.get(`${module}#${name}`);
  if (!fn) throw new Error(`${module} exports no shared write named '${name}'`);
  return fn;
}
