// The Store methods both backends answer the same way, as writes: each is one function of a Driver
// exported by name from keys.ts, people.ts, audit.ts, idempotency.ts, retention.ts or mail.ts. A backend
// says only how such a write runs (sql-store.ts, `write` and `atomic`); SQLite sends it to its
// writer thread, which cannot be sent a function: it is sent the function's name and finds it in
// SHARED_WRITES, and runs it in the transaction of the batch it joins (as ./write.ts's writes are
// found in theirs).
import * as audit from './audit.ts';
import type { Driver } from './driver.ts';
import * as idempotency from './idempotency.ts';
import * as keys from './keys.ts';
import * as mail from './mail.ts';
import * as people from './people.ts';
import * as retention from './retention.ts';
import { registry } from './write.ts';

/** A shared write: a function of a Driver, exported by name from one of the modules below. */
export type SharedWrite<A extends unknown[], R> = (db: Driver, ...args: A) => Promise<R>;

/** Every shared write by its name; a name written twice is a mistake caught at start-up. */
export const SHARED_WRITES: ReadonlyMap<string, SharedWrite<unknown[], unknown>> = registry(
  [keys, people, audit, idempotency, retention, mail].flatMap((exports) =>
    Object.values(exports).filter((fn) => typeof fn === 'function'),
  ) as SharedWrite<unknown[], unknown>[],
  'shared writes',
);

/** The name a shared write is sent by; an error for a function that is not one. */
export function nameOf(fn: (...args: never[]) => unknown): string {
  if (SHARED_WRITES.get(fn.name) !== (fn as unknown)) {
    throw new Error(`${fn.name} is not a shared write of src/store/ (shared-writes.ts)`);
  }
  return fn.name;
}

/** The shared write of this name, on the thread that runs it. */
export function findSharedWrite(name: string): SharedWrite<unknown[], unknown> {
  const fn = SHARED_WRITES.get(name);
  if (!fn) throw new Error(`no shared write is named '${name}'`);
  return fn;
}
