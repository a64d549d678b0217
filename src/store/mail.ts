// Mail to people (docs/operations.md, "Mail"), written once for both backends: the outbox a write
// puts a mail in, in its own transaction, the senders' claims of what is due, and the daily
// digest's claim of a (person, day). A mail is never sent inside a write: the write stores it,
// and the sender job (src/mail/sender-job.ts) sends it after the commit, retrying with backoff.
// The senders' claim, record and prune are shared writes (shared-writes.ts); the rest runs in a
// write of src/writes/mail.ts.

import { type Driver, hasNul, Params, type Row } from './driver.ts';
import type { Digest } from './people.ts';
import { statusOf } from './rows.ts';
import { SETTINGS_REASONS_SQL } from './scores.ts';

export type MailKind = 'task_assigned' | 'digest';

/** A mail as a write stores it: to whom, of which kind, and what it tells (rendered when sent). */
export interface NewMail {
  id: string;
  kind: MailKind;
  recipient: string;
  data: object;
  createdAt: number;
}

/** A mail a sender has leased, to send now. */
export interface ClaimedMail {
  id: string;
  accountId: string;
  kind: MailKind;
  recipient: string;
  data: unknown;
  /** Attempts made before this one. */
  attempts: number;
  createdAt: number;
}

/** An attempt's end: sent, due again at `at`, or given up. Only the lease holder's counts. */
export interface MailOutcome {
  id: string;
  owner: string;
  attempt: number;
  next: { status: 'pending'; at: number } | { status: 'sent' } | { status: 'failed' };
  error: string | null;
  at: number;
}

/** What one person's daily digest tells (docs/operations.md, "Mail"). */
export interface DigestContent {
  critical: { customerId: string; name: string; score: number; at: number }[];
  dropped: { customerId: string; name: string; score: number | null; at: number }[];
  renewals: { customerId: string; name: string; renewalAt: number; status: string | null }[];
  tasks: { id: string; customerId: string; customerName: string; title: string; dueAt: number }[];
}

/** At most this many lines in each part of a digest. */
export const DIGEST_LIST_MAX = 50;

/** In a write's transaction: who may get mail, the outbox, and the digest's claim. */
export interface MailWrites {
  /** Of these emails (lower-cased), the account's people: email → user id. */
  accountMembers(accountId: string, emails: readonly string[]): Promise<Map<string, string>>;
  /** The names of these customers of the account (those that exist). */
  customerNames(accountId: string, ids: readonly string[]): Promise<Map<string, string>>;
  insertMails(accountId: string, mails: readonly NewMail[]): Promise<void>;
  /** The person's email and digest choice, when they are of the account. */
  digestUser(accountId: string, userId: string): Promise<{ email: string; digest: Digest } | null>;
  /** Claims the person's digest of `day` (YYYY-MM-DD, UTC); false when it was claimed already. */
  claimDigest(accountId: string, userId: string, day: string, now: number): Promise<boolean>;
  /** What the digest of the person with this email tells at `now`, looking back to `since`. */
  digestContent(accountId: string, email: string, since: number, now: number): Promise<DigestContent>;
}

/** The senders' side, across accounts. */
export interface MailQueue {
  /**
   * Leases up to `limit` due mails to `owner` until `leaseUntil` (their next_attempt_at moves
   * there, so a sender that dies leaves them due again). Atomic against other claims, across
   * processes too: PostgreSQL skips the rows another claim holds, SQLite has one writer.
   */
  claimMails(opts: { owner: string; now: number; leaseUntil: number; limit: number }): Promise<ClaimedMail[]>;
  /** Records an attempt's end, unless the lease was taken over meanwhile. */
  recordMail(outcome: MailOutcome): Promise<void>;
  /** Removes finished mails and digest claims older than `before`; answers how many went. */
  pruneMails(before: number): Promise<number>;
  /** Sets the person's digest choice; false when the account has no such user. */
  setDigest(accountId: string, userId: string, digest: Digest): Promise<boolean>;
  /** People who chose the daily digest and whose digest of `day` nobody has claimed yet. */
  digestsDue(day: string, limit: number): Promise<{ accountId: string; userId: string }[]>;
}

const DAY_DIGEST_WINDOW_MS = 86_400_000;

// The writes' side (MailWrites).

export async function accountMembers(
  db: Driver,
  accountId: string,
  emails: readonly string[],
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const wanted = emails.filter((e) => !hasNul(e));
  if (wanted.length === 0) return found;
  const p = new Params(accountId);
  const rows = await db.all<{ id: string; email: string }>(
    `SELECT id, email FROM users WHERE account_id = $1 AND email ${db.inList(p, wanted)}`,
    p.list,
  );
  for (const r of rows) found.set(r.email, r.id);
  return found;
}

export async function customerNames(
  db: Driver,
  accountId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  if (ids.length === 0) return names;
  const p = new Params(accountId);
  const rows = await db.all<{ id: string; name: string }>(
    `SELECT id, name FROM customers WHERE account_id = $1 AND id ${db.inList(p, ids)}`,
    p.list,
  );
  for (const r of rows) names.set(r.id, db.fromText(r.name));
  return names;
}

export async function insertMails(db: Driver, accountId: string, mails: readonly NewMail[]): Promise<void> {
  if (mails.length === 0) return;
  await db.runEach(
    `INSERT INTO mail_outbox (id, account_id, kind, recipient, data, status, attempts, next_attempt_at,
       created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    mails.map((m) => {
      const at = m.createdAt;
      return [m.id, accountId, m.kind, m.recipient, JSON.stringify(m.data), 'pending', 0, at, at, at];
    }),
    ['text', 'text', 'text', 'text', 'text', 'text', 'int8', 'int8', 'int8', 'int8'],
  );
}

export async function digestUser(db: Driver, accountId: string, userId: string) {
  if (hasNul(userId)) return null;
  const row = await db.get<{ email: string; digest: Digest }>(
    'SELECT email, digest FROM users WHERE account_id = $1 AND id = $2',
    [accountId, userId],
  );
  return row ?? null;
}

export async function claimDigest(
  db: Driver,
  accountId: string,
  userId: string,
  day: string,
  now: number,
): Promise<boolean> {
  const claimed = await db.run(
    `INSERT INTO mail_digests (user_id, day, account_id, claimed_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING`,
    [userId, day, accountId, now],
  );
  return claimed === 1;
}

/** The person's active customers (owner, compared as customers_by_owner holds it: lower-cased). */
const OWNED = `c.account_id = $1 AND lower(c.owner) = $2 AND c.lifecycle = 'active'`;

/**
 * Versions inside the window that entered critical: not caused by settings or a backfill (as the
 * playbooks' triggers, docs/playbooks.md), and the version before them was not critical.
 */
const ENTERED_CRITICAL = `
  SELECT c.id, c.name, h.score, h.created_at AS at FROM customers c
  JOIN score_history h ON h.account_id = c.account_id AND h.customer_id = c.id
  WHERE ${OWNED} AND h.created_at > $3 AND h.created_at <= $4 AND h.status = 'critical'
    AND h.reason NOT IN (${SETTINGS_REASONS_SQL})
    AND COALESCE((SELECT p.status FROM score_history p
      WHERE p.account_id = h.account_id AND p.customer_id = h.customer_id AND p.version < h.version
      ORDER BY p.version DESC LIMIT 1), '') <> 'critical'
  ORDER BY h.created_at DESC, c.id LIMIT $5`;

const DROPPED = `
  SELECT c.id, c.name, s.score, a.alerted_at AS at FROM drop_alerts a
  JOIN customers c ON c.account_id = a.account_id AND c.id = a.customer_id
  LEFT JOIN health_scores s ON s.account_id = c.account_id AND s.customer_id = c.id
  WHERE ${OWNED} AND a.alerted_at > $3 AND a.alerted_at <= $4
  ORDER BY a.alerted_at DESC, c.id LIMIT $5`;

const RENEWALS = `
  SELECT c.id, c.name, c.renewal_at, s.band FROM customers c
  LEFT JOIN health_scores s ON s.account_id = c.account_id AND s.customer_id = c.id
  WHERE ${OWNED} AND c.renewal_at >= $3 AND c.renewal_at <= $4
  ORDER BY c.renewal_at, c.id LIMIT $5`;

/** Open tasks of theirs due by $3 (overdue ones too), not snoozed at $4; in inbox order (`sort` is due_at). */
const TASKS_DUE = `
  SELECT t.id, t.customer_id, c.name, t.title, t.due_at FROM tasks t
  JOIN customers c ON c.account_id = t.account_id AND c.id = t.customer_id
  WHERE t.account_id = $1 AND t.assignee_key = $2 AND t.status = 'open' AND t.sort <= $3
    AND (t.snoozed_until IS NULL OR t.snoozed_until <= $4)
  ORDER BY t.sort, t.id LIMIT $5`;

const RENEWALS_WITHIN_MS = 30 * DAY_DIGEST_WINDOW_MS;

/** Newest first, one line per customer (its latest). */
function onePerCustomer<T extends { customerId: string }>(list: T[]): T[] {
  const seen = new Set<string>();
  return list.filter((x) => !seen.has(x.customerId) && seen.add(x.customerId));
}

export async function digestContent(
  db: Driver,
  accountId: string,
  email: string,
  since: number,
  now: number,
): Promise<DigestContent> {
  const key = email.toLowerCase();
  const max = DIGEST_LIST_MAX;
  const [critical, dropped, renewals, tasks] = await Promise.all([
    db.all(ENTERED_CRITICAL, [accountId, key, since, now, max * 4]),
    db.all(DROPPED, [accountId, key, since, now, max]),
    db.all(RENEWALS, [accountId, key, now, now + RENEWALS_WITHIN_MS, max]),
    db.all(TASKS_DUE, [accountId, key, now + DAY_DIGEST_WINDOW_MS, now, max]),
  ]);
  const name = (r: Row) => db.fromText(r.name as string);
  return {
    critical: onePerCustomer(
      critical.map((r) => ({
        customerId: r.id as string,
        name: name(r),
        score: Number(r.score),
        at: Number(r.at),
      })),
    ).slice(0, max),
    dropped: dropped.map((r) => ({
      customerId: r.id as string,
      name: name(r),
      score: r.score == null ? null : Number(r.score),
      at: Number(r.at),
    })),
    renewals: renewals.map((r) => ({
      customerId: r.id as string,
      name: name(r),
      renewalAt: Number(r.renewal_at),
      status: r.band == null ? null : statusOf(Number(r.band)),
    })),
    tasks: tasks.map((r) => ({
      id: r.id as string,
      customerId: r.customer_id as string,
      customerName: name(r),
      title: db.fromText(r.title as string),
      dueAt: Number(r.due_at),
    })),
  };
}

// The senders' side (MailQueue): shared writes, and one read.

export async function claimMails(
  db: Driver,
  opts: { owner: string; now: number; leaseUntil: number; limit: number },
): Promise<ClaimedMail[]> {
  const rows = await db.all(
    `UPDATE mail_outbox SET next_attempt_at = $2, lease_owner = $3
     WHERE id IN (SELECT id FROM mail_outbox WHERE status = 'pending' AND next_attempt_at <= $1
       ORDER BY next_attempt_at LIMIT $4${db.skipLocked})
     RETURNING id, account_id, kind, recipient, data, attempts, created_at`,
    [opts.now, opts.leaseUntil, opts.owner, opts.limit],
  );
  return rows
    .map((r) => ({
      id: r.id as string,
      accountId: r.account_id as string,
      kind: r.kind as MailKind,
      recipient: r.recipient as string,
      data: JSON.parse(r.data as string) as unknown,
      attempts: Number(r.attempts),
      createdAt: Number(r.created_at),
    }))
    .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
}

export async function recordMail(db: Driver, o: MailOutcome): Promise<void> {
  await db.run(
    `UPDATE mail_outbox SET status = $3, attempts = $4, next_attempt_at = $5, last_error = $6,
       updated_at = $7, lease_owner = NULL
     WHERE id = $1 AND lease_owner = $2 AND status = 'pending'`,
    [
      o.id,
      o.owner,
      o.next.status,
      o.attempt,
      o.next.status === 'pending' ? o.next.at : null,
      o.error === null ? null : db.text(o.error.slice(0, 500)),
      o.at,
    ],
  );
}

export async function pruneMails(db: Driver, before: number): Promise<number> {
  const mails = await db.run("DELETE FROM mail_outbox WHERE status <> 'pending' AND updated_at < $1", [
    before,
  ]);
  const claims = await db.run('DELETE FROM mail_digests WHERE claimed_at < $1', [before]);
  return mails + claims;
}

export async function setDigest(db: Driver, accountId: string, userId: string, digest: Digest) {
  if (hasNul(userId)) return false;
  const changed = await db.run('UPDATE users SET digest = $3 WHERE account_id = $1 AND id = $2', [
    accountId,
    userId,
    digest,
  ]);
  return changed === 1;
}

export async function digestsDue(db: Driver, day: string, limit: number) {
  const rows = await db.all<{ account_id: string; id: string }>(
    `SELECT u.account_id, u.id FROM users u WHERE u.digest = 'daily'
       AND NOT EXISTS (SELECT 1 FROM mail_digests d WHERE d.user_id = u.id AND d.day = $1)
     ORDER BY u.id LIMIT $2`,
    [day, limit],
  );
  return rows.map((r) => ({ accountId: r.account_id, userId: r.id }));
}
