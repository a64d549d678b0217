// Users, links, sessions and failed sign-ins on SQLite (../people-sql.ts has the statements):
// the writes run where the write connection lives (write-ops.ts), the reads on the caller's.
import type { UserRole } from '../../domain/people.ts';
import { page } from '../page.ts';
import {
  type AuditRow,
  auditParams,
  type SessionRow,
  PEOPLE_SQL as SQL,
  toAudit,
  toSession,
  toUser,
  type UserRow,
} from '../people-sql.ts';
import type { AuditEntry, UserRecord } from '../store.ts';
import { type Connection, numbered } from './connection.ts';

const q = (sql: string) => numbered(sql);

export const PEOPLE_WRITE_OPS = {
  createUser(
    conn: Connection,
    user: { id: string; accountId: string; email: string; role: UserRole; createdAt: number },
    link: { tokenHash: string; expiresAt: number },
  ): boolean {
    if (conn.run(q(SQL.insertUser), user.id, user.accountId, user.email, user.role, user.createdAt) !== 1) {
      return false;
    }
    conn.run(q(SQL.insertLink), link.tokenHash, user.id, link.expiresAt);
    return true;
  },

  removeUser: (conn: Connection, email: string) => conn.run(q(SQL.removeUser), email) === 1,

  removeAccountUser: (conn: Connection, accountId: string, id: string) =>
    conn.run(q(SQL.removeAccountUser), accountId, id) === 1,

  setUserRole(conn: Connection, accountId: string, id: string, role: UserRole): UserRecord | null {
    if (conn.run(q(SQL.setRole), accountId, id, role) !== 1) return null;
    return getUser(conn, accountId, id);
  },

  redeemSignInLink(
    conn: Connection,
    tokenHash: string,
    passwordHash: string,
    now: number,
  ): UserRecord | null {
    const used = conn.get(q(SQL.redeemLink), tokenHash, now);
    if (!used) return null;
    conn.run(q(SQL.setPassword), used.user_id as string, passwordHash);
    const row = conn.get(q(SQL.userById), used.user_id as string);
    return row ? toUser(row as unknown as UserRow) : null;
  },

  /** Atomic as every write here is: one writer connection, inside its transaction. */
  claimSignInAttempt(
    conn: Connection,
    email: string,
    at: number,
    window: { since: number; limit: number },
  ): { claimed: true } | { claimed: false; oldest: number } {
    conn.run(q(SQL.forgetOldFailures), email, window.since);
    const recent = conn.all(q(SQL.recentFailures), email, window.since, window.limit);
    if (recent.length >= window.limit) return { claimed: false, oldest: recent.at(-1)?.at as number };
    conn.run(q(SQL.recordFailure), email, at);
    return { claimed: true };
  },

  releaseSignInAttempt: (conn: Connection, email: string, at: number) => {
    conn.run(
      'DELETE FROM sign_in_failures WHERE rowid = (SELECT rowid FROM sign_in_failures WHERE email = ? AND at = ? LIMIT 1)',
      email,
      at,
    );
  },

  pruneSignInFailures: (conn: Connection, before: number) => conn.run(q(SQL.pruneFailures), before),

  putSession: (conn: Connection, idHash: string, userId: string, data: string, expiresAt: number) => {
    conn.run(q(SQL.putSession), idHash, userId, data, expiresAt);
  },

  deleteSession: (conn: Connection, idHash: string) => {
    conn.run(q(SQL.deleteSession), idHash);
  },

  pruneAudit: (conn: Connection, before: number, limit: number) => conn.run(q(SQL.pruneAudit), before, limit),

  appendAudit: (conn: Connection, accountId: string, e: AuditEntry) => {
    conn.run(q(SQL.appendAudit), ...auditParams(accountId, e));
  },
};

export const listUsers = (conn: Connection, accountId?: string): UserRecord[] =>
  (accountId === undefined ? conn.all(q(SQL.listUsers)) : conn.all(q(SQL.accountUsers), accountId)).map((r) =>
    toUser(r as unknown as UserRow),
  );

export function getUser(conn: Connection, accountId: string, id: string): UserRecord | null {
  const row = conn.get(q(SQL.accountUser), accountId, id);
  return row ? toUser(row as unknown as UserRow) : null;
}

export function findSignInLink(conn: Connection, tokenHash: string, now: number): UserRecord | null {
  const row = conn.get(q(SQL.linkUser), tokenHash, now);
  return row ? toUser(row as unknown as UserRow) : null;
}

export function findUserByEmail(conn: Connection, email: string) {
  const row = conn.get(q(SQL.userByEmail), email);
  return row
    ? { ...toUser(row as unknown as UserRow), passwordHash: (row.password_hash as string | null) ?? null }
    : null;
}

export function getSession(conn: Connection, idHash: string, now: number) {
  const row = conn.get(q(SQL.getSession), idHash, now);
  return row ? toSession(row as unknown as SessionRow) : null;
}

export function listAudit(
  conn: Connection,
  accountId: string,
  opts: { startingAfter?: string | undefined; limit: number },
) {
  const rows = conn.all(q(SQL.listAudit), accountId, opts.startingAfter ?? '', opts.limit + 1);
  return page(rows as unknown as AuditRow[], opts.limit, toAudit);
}
