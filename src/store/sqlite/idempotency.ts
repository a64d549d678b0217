import type { IdempotencyClaim } from '../store.ts';
import type { Connection } from './connection.ts';

export function claimIdempotencyKey(
  conn: Connection,
  accountId: string,
  key: string,
  fingerprint: string,
  now: number,
  opts: { expiresBefore: number; staleBefore: number },
): IdempotencyClaim {
  const row = conn.get('SELECT * FROM idempotency_keys WHERE account_id = ? AND key = ?', accountId, key);
  const abandoned =
    row &&
    (Number(row.created_at) < opts.expiresBefore ||
      (row.status === null && Number(row.created_at) < opts.staleBefore));
  if (row && !abandoned) {
    if (row.fingerprint !== fingerprint) return { state: 'mismatch' };
    if (row.status === null) return { state: 'in_progress' };
    return { state: 'replay', status: Number(row.status), body: row.body as string };
  }
  conn.run(
    `INSERT INTO idempotency_keys (account_id, key, fingerprint, status, body, created_at) VALUES (?, ?, ?, NULL, NULL, ?)
     ON CONFLICT (account_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = NULL, body = NULL,
       created_at = excluded.created_at`,
    accountId,
    key,
    fingerprint,
    now,
  );
  return { state: 'new' };
}
