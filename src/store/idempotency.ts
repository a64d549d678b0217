// Idempotency-Key claims (docs/api.md, "Idempotency keys"): writes, once, as functions of a
// Driver, claimed in a write transaction of their own and answered inside the operation's.
import type { Driver } from './driver.ts';

/** The outcome of presenting an Idempotency-Key (Stripe semantics). */
export type IdempotencyClaim =
  | { state: 'new' }
  | { state: 'replay'; status: number; body: string }
  | { state: 'mismatch' }
  | { state: 'in_progress' };

/**
 * Idempotency keys: claimed before the operation runs, answered inside its transaction
 * (Tx.recordIdempotentAnswer) when it writes, or afterwards here when it wrote nothing.
 */
export interface IdempotencyStore {
  /**
   * Claims `key` for a request with this fingerprint, unless a live claim exists. A claim older
   * than `expiresBefore` is forgotten; one still in progress since before `staleBefore`
   * (its process died) may be claimed again.
   */
  claimIdempotencyKey(
    accountId: string,
    key: string,
    fingerprint: string,
    now: number,
    opts: { expiresBefore: number; staleBefore: number },
  ): Promise<IdempotencyClaim>;
  completeIdempotencyKey(accountId: string, key: string, status: number, body: string): Promise<void>;
  /** Forgets a claim whose request failed on our side, so that a retry runs again. */
  releaseIdempotencyKey(accountId: string, key: string): Promise<void>;
  /** Removes claims created before `before`; returns how many. */
  pruneIdempotencyKeys(before: number): Promise<number>;
}

export interface IdempotencyWrites {
  /**
   * Stores the answer to an Idempotency-Key with the writes it answers, so that no crash can
   * leave the writes committed and the key unanswered (docs/api.md, "Idempotency keys"). False,
   * writing nothing, when the claim made at `claimedAt` is no longer there: a retry took it
   * over as stale, and this transaction must not commit.
   */
  recordIdempotentAnswer(
    accountId: string,
    key: string,
    claimedAt: number,
    answer: { status: number; body: string },
  ): Promise<boolean>;
}

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

export async function recordIdempotentAnswer(
  db: Driver,
  accountId: string,
  key: string,
  claimedAt: number,
  answer: { status: number; body: string },
): Promise<boolean> {
  const changed = await db.run(
    `UPDATE idempotency_keys SET status = $4, body = $5
     WHERE account_id = $1 AND key = $2 AND created_at = $3 AND status IS NULL`,
    [accountId, key, claimedAt, answer.status, answer.body],
  );
  return changed === 1;
}
