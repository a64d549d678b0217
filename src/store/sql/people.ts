// Users, their one-time links, sessions, failed sign-ins and the audit log (docs/people.md): the
// writes, once, as functions of a Driver in a write transaction. SQLite runs them on its writer
// (sql/store.ts names them for the thread); PostgreSQL in a transaction of the pool.
import type { UserRole } from '../../domain/people.ts';
import { auditParams, PEOPLE_SQL as SQL, toUser, type UserRow } from '../people-sql.ts';
import type { AuditEntry, UserRecord } from '../store.ts';
import { type Driver, hasNul } from './driver.ts';

export async function createUser(
  db: Driver,
  user: { id: string; accountId: string; email: string; role: UserRole; createdAt: number },
  link: { tokenHash: string; expiresAt: number },
): Promise<boolean> {
  if (
    (await db.run(SQL.insertUser, [user.id, user.accountId, user.email, user.role, user.createdAt])) !== 1
  ) {
    return false;
  }
  await db.run(SQL.insertLink, [link.tokenHash, user.id, link.expiresAt]);
  return true;
}

export const removeUser = async (db: Driver, email: string) => (await db.run(SQL.removeUser, [email])) === 1;

export const removeAccountUser = async (db: Driver, accountId: string, id: string) =>
  !hasNul(id) && (await db.run(SQL.removeAccountUser, [accountId, id])) === 1;

export async function setUserRole(
  db: Driver,
  accountId: string,
  id: string,
  role: UserRole,
): Promise<UserRecord | null> {
  if (hasNul(id) || (await db.run(SQL.setRole, [accountId, id, role])) !== 1) return null;
  const row = await db.get<UserRow>(SQL.accountUser, [accountId, id]);
  return row ? toUser(row) : null;
}

/** The link's user, with their password set; null when the link is used, expired or unknown. */
export async function redeemSignInLink(
  db: Driver,
  tokenHash: string,
  passwordHash: string,
  now: number,
): Promise<UserRecord | null> {
  const used = await db.get<{ user_id: string }>(SQL.redeemLink, [tokenHash, now]);
  if (!used) return null;
  await db.run(SQL.setPassword, [used.user_id, passwordHash]);
  const row = await db.get<UserRow>(SQL.userById, [used.user_id]);
  return row ? toUser(row) : null;
}

/**
 * Counts a sign-in attempt against the email's window, or answers when the oldest counted one
 * ages out. Atomic: SQLite has one writer; on PostgreSQL the dialect's `lockEmail` serializes the
 * attempts of one email across processes for the transaction.
 */
export async function claimSignInAttempt(
  db: Driver,
  email: string,
  at: number,
  window: { since: number; limit: number },
): Promise<{ claimed: true } | { claimed: false; oldest: number }> {
  if (db.lockEmail) await db.get(db.lockEmail, [email]);
  await db.run(SQL.forgetOldFailures, [email, window.since]);
  const recent = await db.all<{ at: number }>(SQL.recentFailures, [email, window.since, window.limit]);
  if (recent.length >= window.limit) return { claimed: false, oldest: Number(recent.at(-1)?.at) };
  await db.run(SQL.recordFailure, [email, at]);
  return { claimed: true };
}

/** One failure of (email, at) goes: the attempt it counted had the right password. */
export async function releaseSignInAttempt(db: Driver, email: string, at: number): Promise<void> {
  const row = db.rowId;
  await db.run(
    `DELETE FROM sign_in_failures WHERE ${row} = (SELECT ${row} FROM sign_in_failures WHERE email = $1 AND at = $2 LIMIT 1)`,
    [email, at],
  );
}

export const pruneSignInFailures = (db: Driver, before: number) => db.run(SQL.pruneFailures, [before]);

export async function putSession(
  db: Driver,
  idHash: string,
  userId: string,
  data: string,
  expiresAt: number,
) {
  await db.run(SQL.putSession, [idHash, userId, data, expiresAt]);
}

export async function deleteSession(db: Driver, idHash: string) {
  await db.run(SQL.deleteSession, [idHash]);
}

export const pruneAudit = (db: Driver, before: number, limit: number) =>
  db.run(SQL.pruneAudit, [before, limit]);

export async function appendAudit(db: Driver, accountId: string, e: AuditEntry) {
  await db.run(SQL.appendAudit, [...auditParams(accountId, e)]);
}
