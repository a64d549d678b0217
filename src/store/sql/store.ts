// The Store methods both backends answer the same way, written once: each is one shared write of
// keys.ts, people.ts or idempotency.ts. A backend says only how such a write runs (`write`), and
// for the few that must be atomic across statements, in a transaction of its own (`atomic`):
// PostgreSQL runs the one on the pool and the other in BEGIN … COMMIT; SQLite sends either to its
// writer thread, which finds the function again by its module and name (`locate`) and runs it in
// the transaction of the batch it joins.
import type {
  Account,
  AuditEntry,
  IdempotencyClaim,
  NewApiKey,
  PruneBatch,
  Store,
  UserRecord,
} from '../store.ts';
import type { Driver } from './driver.ts';
import * as idempotency from './idempotency.ts';
import * as keys from './keys.ts';
import * as metrics from './metrics.ts';
import * as people from './people.ts';
import { SqlReader } from './reader.ts';

/** A shared write: a function of a Driver, exported by name from one of this folder's modules. */
export type SharedWrite<A extends unknown[], R> = (db: Driver, ...args: A) => Promise<R>;

const LOCATIONS = new Map<unknown, { module: string; name: string }>();
/** The same, the other way: `module#name` to the function (every module is loaded already). */
const BY_LOCATION = new Map<string, SharedWrite<unknown[], unknown>>();
for (const [path, exports] of [
  ['./keys.ts', keys],
  ['./people.ts', people],
  ['./idempotency.ts', idempotency],
  ['./metrics.ts', metrics],
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
  if (!found) throw new Error(`${fn.name} is not a write of src/store/sql/`);
  return found;
}

/** locate() undone, on the thread that runs the write: a lookup, since this module loaded them all. */
export function findSharedWrite(module: string, name: string): SharedWrite<unknown[], unknown> {
  const fn = BY_LOCATION.get(`${module}#${name}`);
  if (!fn) throw new Error(`${module} exports no shared write named '${name}'`);
  return fn;
}

export abstract class SqlStore extends SqlReader {
  /** One shared write, committed on its own. */
  protected abstract write<A extends unknown[], R>(fn: SharedWrite<A, R>, ...args: A): Promise<R>;
  /** One shared write of several statements, in a transaction of its own. */
  protected abstract atomic<A extends unknown[], R>(fn: SharedWrite<A, R>, ...args: A): Promise<R>;

  ensureAccount(name: string, now: number): Promise<Account> {
    return this.write(keys.ensureAccount, name, now);
  }

  /** Checked and inserted in one transaction: processes starting together create one bootstrap key. */
  insertApiKey(key: NewApiKey, opts: { onlyIfNone?: boolean } = {}): Promise<boolean> {
    return this.atomic(keys.insertApiKey, key, opts.onlyIfNone ?? false);
  }

  revokeApiKey(id: string, now: number): Promise<boolean> {
    return this.write(keys.revokeApiKey, id, now);
  }

  createUser(...args: Parameters<Store['createUser']>): Promise<boolean> {
    return this.atomic(people.createUser, ...args);
  }

  setUserRole(accountId: string, id: string, role: UserRecord['role']): Promise<UserRecord | null> {
    return this.write(people.setUserRole, accountId, id, role);
  }

  removeAccountUser(accountId: string, id: string): Promise<boolean> {
    return this.write(people.removeAccountUser, accountId, id);
  }

  removeUser(email: string): Promise<boolean> {
    return this.write(people.removeUser, email);
  }

  redeemSignInLink(tokenHash: string, passwordHash: string, now: number): Promise<UserRecord | null> {
    return this.atomic(people.redeemSignInLink, tokenHash, passwordHash, now);
  }

  /** Serialized per email: SQLite's single writer, PostgreSQL's transaction-scoped advisory lock. */
  claimSignInAttempt(email: string, at: number, window: { since: number; limit: number }) {
    return this.atomic(people.claimSignInAttempt, email, at, window);
  }

  releaseSignInAttempt(email: string, at: number): Promise<void> {
    return this.write(people.releaseSignInAttempt, email, at);
  }

  pruneSignInFailures(before: number): Promise<number> {
    return this.write(people.pruneSignInFailures, before);
  }

  putSession(idHash: string, userId: string, data: string, expiresAt: number): Promise<void> {
    return this.write(people.putSession, idHash, userId, data, expiresAt);
  }

  deleteSession(idHash: string): Promise<void> {
    return this.write(people.deleteSession, idHash);
  }

  pruneMetricPoints(before: number, limit: number): Promise<number> {
    return this.write(metrics.pruneMetricPoints, before, limit);
  }

  pruneAudit(before: number, limit: number): Promise<number> {
    return this.write(people.pruneAudit, before, limit);
  }

  appendAudit(accountId: string, entry: AuditEntry): Promise<void> {
    return this.write(people.appendAudit, accountId, entry);
  }

  claimIdempotencyKey(...args: Parameters<Store['claimIdempotencyKey']>): Promise<IdempotencyClaim> {
    return this.atomic(idempotency.claimIdempotencyKey, ...args);
  }

  completeIdempotencyKey(accountId: string, key: string, status: number, body: string): Promise<void> {
    return this.write(idempotency.completeIdempotencyKey, accountId, key, status, body);
  }

  releaseIdempotencyKey(accountId: string, key: string): Promise<void> {
    return this.write(idempotency.releaseIdempotencyKey, accountId, key);
  }

  pruneIdempotencyKeys(before: number): Promise<number> {
    return this.write(idempotency.pruneIdempotencyKeys, before);
  }

  pruneEvents(before: number, opts: { after: number; limit: number }): Promise<PruneBatch> {
    return this.atomic(idempotency.pruneEvents, before, opts);
  }
}
