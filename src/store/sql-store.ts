// The Store over a Driver, for both backends: the reads of SqlReader and the methods every
// backend answers the same way, each one shared write (shared-writes.ts). A backend says only how
// such a write runs (`write`), and for the few that must be atomic across statements, in a
// transaction of its own (`atomic`): PostgreSQL runs the one on the pool and the other in
// BEGIN … COMMIT; SQLite sends either to its writer thread, which runs it in the transaction of
// the batch it joins.
import * as audit from './audit.ts';
import * as idempotency from './idempotency.ts';
import * as keys from './keys.ts';
import * as mail from './mail.ts';
import * as people from './people.ts';
import * as retention from './retention.ts';
import type { SharedWrite } from './shared-writes.ts';
import { SqlReader } from './sql-reader.ts';
import type {
  Account,
  ApiKeyRecord,
  AuditEntry,
  ClaimedMail,
  Digest,
  IdempotencyClaim,
  MailOutcome,
  NewApiKey,
  Page,
  PruneBatch,
  Store,
  UserRecord,
} from './store.ts';

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
    return this.write(retention.pruneMetricPoints, before, limit);
  }

  pruneSourceActivity(before: number, limit: number): Promise<number> {
    return this.write(retention.pruneSourceActivity, before, limit);
  }

  pruneAudit(before: number, limit: number): Promise<number> {
    return this.write(audit.pruneAudit, before, limit);
  }

  appendAudit(accountId: string, entry: AuditEntry): Promise<void> {
    return this.write(audit.appendAudit, accountId, entry);
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

  // The mail senders' queue (mail.ts): one statement each, so PostgreSQL runs them on the pool.

  claimMails(opts: Parameters<Store['claimMails']>[0]): Promise<ClaimedMail[]> {
    return this.write(mail.claimMails, opts);
  }

  recordMail(outcome: MailOutcome): Promise<void> {
    return this.write(mail.recordMail, outcome);
  }

  pruneMails(before: number): Promise<number> {
    return this.atomic(mail.pruneMails, before);
  }

  setDigest(accountId: string, userId: string, digest: Digest): Promise<boolean> {
    return this.write(mail.setDigest, accountId, userId, digest);
  }

  digestsDue(day: string, limit: number) {
    return mail.digestsDue(this.db, day, limit);
  }

  pruneEvents(before: number, opts: { after: number; limit: number }): Promise<PruneBatch> {
    return this.atomic(retention.pruneEvents, before, opts);
  }

  // The reads of people, keys and the audit log: the Store's alone (a transaction has none).

  listUsers(accountId?: string): Promise<UserRecord[]> {
    return people.listUsers(this.db, accountId);
  }

  getUser(accountId: string, id: string): Promise<UserRecord | null> {
    return people.getUser(this.db, accountId, id);
  }

  findSignInLink(tokenHash: string, now: number): Promise<UserRecord | null> {
    return people.findSignInLink(this.db, tokenHash, now);
  }

  findUserByEmail(email: string) {
    return people.findUserByEmail(this.db, email);
  }

  getSession(idHash: string, now: number) {
    return people.getSession(this.db, idHash, now);
  }

  listAudit(
    accountId: string,
    opts: { startingAfter?: string | undefined; limit: number },
  ): Promise<Page<AuditEntry>> {
    return audit.listAudit(this.db, accountId, opts);
  }

  findApiKey(hash: string) {
    return keys.findApiKey(this.db, hash);
  }

  listApiKeys(): Promise<ApiKeyRecord[]> {
    return keys.listApiKeys(this.db);
  }

  countActiveApiKeys(): Promise<number> {
    return keys.countActiveApiKeys(this.db);
  }
}
