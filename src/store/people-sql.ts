// Users, their one-time sign-in links, sessions and failed sign-ins (docs/people.md), as
// statements both backends run ($1, $2, … : SQLite's connection numbers them), and their rows.
import type { UserRole } from '../domain/people.ts';
import type { AuditEntry, SessionRecord, UserRecord } from './store.ts';

const USER_COLUMNS = `u.id, u.account_id, a.name AS account_name, u.email, u.role,
  (u.password_hash IS NOT NULL) AS has_password, u.created_at`;

export const PEOPLE_SQL = {
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
  appendAudit: `INSERT INTO audit_log (account_id, id, actor_type, actor_id, actor_label, action, object_id, at, request_id)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  /** Up to $2 entries older than $1, any account: retention's batch. */
  pruneAudit: `DELETE FROM audit_log WHERE (account_id, id) IN
    (SELECT account_id, id FROM audit_log WHERE at < $1 LIMIT $2)`,
  /** Newest first; $2 an exclusive upper bound on the id ('' for none), $3 the limit. */
  listAudit: `SELECT id, actor_type, actor_id, actor_label, action, object_id, at, request_id FROM audit_log
    WHERE account_id = $1 AND ($2 = '' OR id < $2) ORDER BY id DESC LIMIT $3`,
} as const;

export interface UserRow {
  id: string;
  account_id: string;
  account_name: string;
  email: string;
  role: UserRole;
  has_password: boolean | number;
  created_at: number;
}

export const toUser = (r: UserRow): UserRecord => ({
  id: r.id,
  accountId: r.account_id,
  accountName: r.account_name,
  email: r.email,
  role: r.role,
  hasPassword: Boolean(r.has_password),
  createdAt: Number(r.created_at),
});

export type SessionRow = UserRow & { data: string; session_expires_at: number | string };

export const toSession = (r: SessionRow): SessionRecord => ({
  user: toUser(r),
  data: r.data,
  expiresAt: Number(r.session_expires_at),
});

export interface AuditRow {
  id: string;
  actor_type: 'key' | 'user';
  actor_id: string;
  actor_label: string;
  action: string;
  object_id: string | null;
  at: number;
  request_id: string;
}

export const toAudit = (r: AuditRow): AuditEntry => ({
  id: r.id,
  actor: { type: r.actor_type, id: r.actor_id, label: r.actor_label },
  action: r.action,
  objectId: r.object_id ?? null,
  at: Number(r.at),
  requestId: r.request_id,
});

/** appendAudit's parameters, in order. */
export const auditParams = (accountId: string, e: AuditEntry) =>
  [
    accountId,
    e.id,
    e.actor.type,
    e.actor.id,
    e.actor.label,
    e.action,
    e.objectId,
    e.at,
    e.requestId,
  ] as const;
