// Idempotency-Key claims (docs/api.md, "Idempotency keys") and event retention (docs/operations.md,
// "Event retention"): writes, once, as functions of a Driver in a write transaction of their own.
import { oldestEvents } from '../prune.ts';
import type { IdempotencyClaim, PruneBatch } from '../store.ts';
import { type Driver, Params } from './driver.ts';

const RECLAIM = `INSERT INTO idempotency_keys (account_id, key, fingerprint, status, body, created_at)
  VALUES ($1, $2, $3, NULL, NULL, $4)
  ON CONFLICT (account_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = NULL, body = NULL,
    created_at = excluded.created_at`;

/**
 * Insert-or-lock: a new key is claimed at once; an existing one is locked (PostgreSQL; SQLite has
 * one writer) and judged: the same request's answer replayed, another request's refused, an
 * abandoned or expired claim taken over.
 */
export async function claimIdempotencyKey(
  db: Driver,
  accountId: string,
  key: string,
  fingerprint: string,
  now: number,
  opts: { expiresBefore: number; staleBefore: number },
): Promise<IdempotencyClaim> {
  const inserted = await db.run(
    `INSERT INTO idempotency_keys (account_id, key, fingerprint, status, body, created_at)
     VALUES ($1, $2, $3, NULL, NULL, $4) ON CONFLICT (account_id, key) DO NOTHING`,
    [accountId, key, fingerprint, now],
  );
  if (inserted === 1) return { state: 'new' };
  const row = await db.get(
    `SELECT fingerprint, status, body, created_at FROM idempotency_keys
     WHERE account_id = $1 AND key = $2${db.forUpdate}`,
    [accountId, key],
  );
  const createdAt = Number(row?.created_at);
  const abandoned =
    !row || createdAt < opts.expiresBefore || (row.status === null && createdAt < opts.staleBefore);
  if (row && !abandoned) {
    if (row.fingerprint !== fingerprint) return { state: 'mismatch' };
    if (row.status === null) return { state: 'in_progress' };
    return { state: 'replay', status: Number(row.status), body: (row.body as string | null) ?? '' };
  }
  await db.run(RECLAIM, [accountId, key, fingerprint, now]);
  return { state: 'new' };
}

export async function completeIdempotencyKey(
  db: Driver,
  accountId: string,
  key: string,
  status: number,
  body: string,
) {
  await db.run('UPDATE idempotency_keys SET status = $3, body = $4 WHERE account_id = $1 AND key = $2', [
    accountId,
    key,
    status,
    body,
  ]);
}

export async function releaseIdempotencyKey(db: Driver, accountId: string, key: string) {
  await db.run('DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND status IS NULL', [
    accountId,
    key,
  ]);
}

export const pruneIdempotencyKeys = (db: Driver, before: number) =>
  db.run('DELETE FROM idempotency_keys WHERE created_at < $1', [before]);

/**
 * One batch of event retention: the events before `before` among the next `limit` after `after`,
 * with their finished deliveries (attempts go with them, ON DELETE CASCADE); an event with a
 * delivery still pending stays. With several processes on one database one prunes at a time: a
 * process that finds the dialect's lock taken ends its walk (the holder is doing the work).
 */
export async function pruneEvents(
  db: Driver,
  before: number,
  opts: { after: number; limit: number },
): Promise<PruneBatch> {
  if (db.tryRetentionLock && !(await db.get(db.tryRetentionLock, []))?.got) {
    return { events: 0, deliveries: 0, next: null };
  }
  const rows = await db.all<{ seq: number | string; id: string; created_at: number }>(
    'SELECT seq, id, created_at FROM events WHERE seq > $1 ORDER BY seq LIMIT $2',
    [opts.after, opts.limit],
  );
  const old = oldestEvents(rows, before, opts);
  if (old.ids.length === 0) return { events: 0, deliveries: 0, next: null };
  const p = new Params();
  const ids = db.inList(p, old.ids);
  // On PostgreSQL a delivery being retried right now is either seen as pending here (and kept),
  // or waited for and then skipped by the status check (READ COMMITTED re-checks a row it waited on).
  const deliveries = await db.run(
    `DELETE FROM deliveries WHERE event_id ${ids} AND status <> 'pending'`,
    p.list,
  );
  const events = await db.run(
    `DELETE FROM events WHERE id ${ids} AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id)`,
    p.list,
  );
  return { events, deliveries, next: old.next };
}
