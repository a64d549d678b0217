import type { IdempotencyClaim } from '../store.ts';
import type { Sql } from './connection.ts';

interface ClaimRow {
  fingerprint: string;
  status: number | null;
  body: string | null;
  created_at: number;
}

/** Same rules as the SQLite version; the row lock serializes two requests with one key. */
export async function claimIdempotencyKey(
  pool: Sql,
  accountId: string,
  key: string,
  fingerprint: string,
  now: number,
  opts: { expiresBefore: number; staleBefore: number },
): Promise<IdempotencyClaim> {
  return pool.begin(async (sql) => {
    // Insert-or-lock: a new key is claimed at once; an existing one is locked and judged.
    const inserted = await sql`
      INSERT INTO idempotency_keys (account_id, key, fingerprint, status, body, created_at)
      VALUES (${accountId}, ${key}, ${fingerprint}, NULL, NULL, ${now})
      ON CONFLICT (account_id, key) DO NOTHING RETURNING key`;
    if (inserted.length === 1) return { state: 'new' } as const;
    const [row] = await sql<ClaimRow[]>`
      SELECT fingerprint, status, body, created_at::float8 AS created_at FROM idempotency_keys
      WHERE account_id = ${accountId} AND key = ${key} FOR UPDATE`;
    const abandoned =
      !row ||
      row.created_at < opts.expiresBefore ||
      (row.status === null && row.created_at < opts.staleBefore);
    if (row && !abandoned) {
      if (row.fingerprint !== fingerprint) return { state: 'mismatch' } as const;
      if (row.status === null) return { state: 'in_progress' } as const;
      return { state: 'replay', status: row.status, body: row.body ?? '' } as const;
    }
    await sql`
      INSERT INTO idempotency_keys (account_id, key, fingerprint, status, body, created_at)
      VALUES (${accountId}, ${key}, ${fingerprint}, NULL, NULL, ${now})
      ON CONFLICT (account_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status = NULL, body = NULL,
        created_at = EXCLUDED.created_at`;
    return { state: 'new' } as const;
  });
}
