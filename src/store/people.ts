// People who sign in to the dashboard (docs/people.md): users, their one-time sign-in links,
// sessions and failed sign-ins, written once for both backends. Sign-in goes by email, across
// accounts. The writes run in a write transaction of their own: SQLite's on its writer thread
// (shared-writes.ts names them for it), PostgreSQL's on the pool. The audit log is audit.ts.
import type { UserRole } from '../domain/people.ts';
import { type Driver, hasNul } from './driver.ts';

/** A person who signs in to the dashboard (docs/people.md). */
export interface UserRecord {
  id: string;
  accountId: string;
  accountName: string;
  email: string;
  role: UserRole;
  /** False until the person has used their one-time link. */
  hasPassword: boolean;
  /** Whether they get the daily digest by mail (docs/operations.md, "Mail"). */
  digest: Digest;
  createdAt: number;
}

export type Digest = 'daily' | 'off';

/** A signed-in person's session: its data (the CSRF secret) and when it ends unless used. */
export interface SessionRecord {
  user: UserRecord;
  data: string;
  expiresAt: number;
}

/** Users, their links, sessions and failed sign-ins. Sign-in goes by email, across accounts. */
export interface People {
  /** Adds the user with a one-time link; false (and nothing written) when the email is taken. */
  createUser(
    user: { id: string; accountId: string; email: string; role: UserRole; createdAt: number },
    link: { tokenHash: string; expiresAt: number },
  ): Promise<boolean>;
  /** Every account's users (the CLI), or one account's, by email. */
  listUsers(accountId?: string): Promise<UserRecord[]>;
  /** One user of the account, or null. */
  getUser(accountId: string, id: string): Promise<UserRecord | null>;
  /** The user with this role; null when the account has no such user. */
  setUserRole(accountId: string, id: string, role: UserRole): Promise<UserRecord | null>;
  /** Removes the account's user; their sessions and links go with them. */
  removeAccountUser(accountId: string, id: string): Promise<boolean>;
  /** With the stored password hash (null before the link is used), for signing in. */
  findUserByEmail(email: string): Promise<(UserRecord & { passwordHash: string | null }) | null>;
  /** Removes the user; their sessions and links go with them. */
  removeUser(email: string): Promise<boolean>;
  /** The user a live link is for (the link stays unused), or null when it is unknown, used or expired. */
  findSignInLink(tokenHash: string, now: number): Promise<UserRecord | null>;
  /** Uses a live link once: sets the password; the user, or null when the link is unknown, used or expired. */
  redeemSignInLink(tokenHash: string, passwordHash: string, now: number): Promise<UserRecord | null>;
  /**
   * Check-and-count in one atomic step (docs/people.md, "Signing in"): when this email has fewer than
   * `limit` failures after `since`, records one at `at` (the attempt counts as failed until
   * released) and answers claimed; otherwise records nothing and answers when the `limit`-th
   * newest failure was. Atomic across processes: of any burst, at most `limit` are claimed.
   */
  claimSignInAttempt(
    email: string,
    at: number,
    window: { since: number; limit: number },
  ): Promise<{ claimed: true } | { claimed: false; oldest: number }>;
  /** The attempt claimed at `at` had the right password: it was no failure. */
  releaseSignInAttempt(email: string, at: number): Promise<void>;
  /** Forgets every failure at or before `before` (the retention job); answers how many. */
  pruneSignInFailures(before: number): Promise<number>;
  putSession(idHash: string, userId: string, data: string, expiresAt: number): Promise<void>;
  /** A live session (expiring after `now`) with its user as the user is now. */
  getSession(idHash: string, now: number): Promise<SessionRecord | null>;
  deleteSession(idHash: string): Promise<void>;
}

const USER_COLUMNS = `u.id, u.account_id, a.name AS account_name, u.email, u.role,
  (u.password_hash IS NOT NULL) AS has_password, u.digest, u.created_at`;

const SQL = {
  insertUser: `INSERT INTO users (id, account_id, email, role, created_at) VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (email) DO NOTHING`,
  insertLink: 'INSERT INTO sign_in_links (token_hash, user_id, expires_at) VALUES ($1, $2, $3)',
  listUsers: `SELECT ${USER_COLUMNS} FROM users u JOIN accounts a ON a.id = u.account_id ORDER BY a.name, u.email`,
  accountUsers: `SELECT ${USER_COLUMNS} FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.account_id = $1
    ORDER BY u.email`,
  removeAccountUser: 'DELETE FROM users WHERE account_id = $1 AND id = $2',
  setRole: `UPDATE users SET role = $3 WHERE account_id = $1 AND id = $2`,
  accountUser: `SELECT ${USER_COLUMNS} FROM users u JOIN accounts a ON a.id = u.account_id
    WHERE u.account_id = $1 AND u.id = $2`,
  userByEmail: `SELECT ${USER_COLUMNS}, u.password_hash FROM users u JOIN accounts a ON a.id = u.account_id
    WHERE u.email = $1`,
  userById: `SELECT ${USER_COLUMNS} FROM users u JOIN accounts a ON a.id = u.account_id WHERE u.id = $1`,
  removeUser: 'DELETE FROM users WHERE email = $1',
  /** The link's user, once: the link is marked used by the same statement. */
  redeemLink: `UPDATE sign_in_links SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
    RETURNING user_id`,
  /** Who a live link is for, without using it. */
  linkUser: `SELECT ${USER_COLUMNS} FROM sign_in_links l JOIN users u ON u.id = l.user_id
    JOIN accounts a ON a.id = u.account_id WHERE l.token_hash = $1 AND l.used_at IS NULL AND l.expires_at > $2`,
  setPassword: 'UPDATE users SET password_hash = $2 WHERE id = $1',
  /** This email's failures (and claims) after $2, newest first: the $3th is the one the lock waits on. */
  recentFailures: 'SELECT at FROM sign_in_failures WHERE email = $1 AND at > $2 ORDER BY at DESC LIMIT $3',
  recordFailure: 'INSERT INTO sign_in_failures (email, at) VALUES ($1, $2)',
  forgetOldFailures: 'DELETE FROM sign_in_failures WHERE email = $1 AND at <= $2',
  pruneFailures: 'DELETE FROM sign_in_failures WHERE at <= $1',
  putSession: `INSERT INTO sessions (id_hash, user_id, data, expires_at) VALUES ($1, $2, $3, $4)
    ON CONFLICT (id_hash) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at`,
  /** A live session with its user as the user is now (a removed user has none). */
  getSession: `SELECT s.data, s.expires_at AS session_expires_at, ${USER_COLUMNS} FROM sessions s JOIN users u ON u.id = s.user_id
    JOIN accounts a ON a.id = u.account_id WHERE s.id_hash = $1 AND s.expires_at > $2`,
  deleteSession: 'DELETE FROM sessions WHERE id_hash = $1',
  pruneSessions: 'DELETE FROM sessions WHERE expires_at <= $1',
} as const;

interface UserRow {
  id: string;
  account_id: string;
  account_name: string;
  email: string;
  role: UserRole;
  has_password: boolean | number;
  digest: Digest;
  created_at: number;
}

const toUser = (r: UserRow): UserRecord => ({
  id: r.id,
  accountId: r.account_id,
  accountName: r.account_name,
  email: r.email,
  role: r.role,
  hasPassword: Boolean(r.has_password),
  digest: r.digest,
  createdAt: Number(r.created_at),
});

type SessionRow = UserRow & { data: string; session_expires_at: number | string };

const toSession = (r: SessionRow): SessionRecord => ({
  user: toUser(r),
  data: r.data,
  expiresAt: Number(r.session_expires_at),
});

// The reads.

export async function listUsers(db: Driver, accountId?: string): Promise<UserRecord[]> {
  const rows =
    accountId === undefined
      ? await db.all<UserRow>(SQL.listUsers, [])
      : await db.all<UserRow>(SQL.accountUsers, [accountId]);
  return rows.map(toUser);
}

export async function getUser(db: Driver, accountId: string, id: string): Promise<UserRecord | null> {
  if (hasNul(id)) return null;
  const row = await db.get<UserRow>(SQL.accountUser, [accountId, id]);
  return row ? toUser(row) : null;
}

export async function findSignInLink(db: Driver, tokenHash: string, now: number): Promise<UserRecord | null> {
  const row = await db.get<UserRow>(SQL.linkUser, [tokenHash, now]);
  return row ? toUser(row) : null;
}

export async function findUserByEmail(db: Driver, email: string) {
  if (hasNul(email)) return null;
  const row = await db.get<UserRow & { password_hash: string | null }>(SQL.userByEmail, [email]);
  return row ? { ...toUser(row), passwordHash: row.password_hash ?? null } : null;
}

export async function getSession(db: Driver, idHash: string, now: number): Promise<SessionRecord | null> {
  const row = await db.get<SessionRow>(SQL.getSession, [idHash, now]);
  return row ? toSession(row) : null;
}

// The writes.

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
