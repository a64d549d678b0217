// Accounts and API keys (docs/api.md, "Authentication"): the writes, once, as functions of a
// Driver in a write transaction of their own.
import { newId } from '../../domain/ids.ts';
import type { Account, NewApiKey } from '../store.ts';
import type { Driver } from './driver.ts';

/** The account of this name, created if there is none (two processes at once find the same one). */
export async function ensureAccount(db: Driver, name: string, now: number): Promise<Account> {
  const account = { id: newId.account(), name, createdAt: now };
  await db.run(
    'INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
    [account.id, name, now],
  );
  const row = await db.get('SELECT id, created_at FROM accounts WHERE name = $1', [name]);
  if (!row) throw new Error(`account '${name}' vanished while it was being created`);
  return { id: row.id as string, name, createdAt: Number(row.created_at) };
}

/**
 * Adds the key; with `onlyIfNone`, only if no key is active. Processes starting together queue
 * on the dialect's bootstrap lock (SQLite's one writer is one already): the first adds the key,
 * the others find it.
 */
export async function insertApiKey(db: Driver, key: NewApiKey, onlyIfNone: boolean): Promise<boolean> {
  if (onlyIfNone) {
    if (db.bootstrapLock) await db.get(db.bootstrapLock, []);
    if (await db.get('SELECT 1 AS found FROM api_keys WHERE revoked_at IS NULL LIMIT 1', [])) return false;
  }
  const inserted = await db.run(
    `INSERT INTO api_keys (id, account_id, key_hash, prefix, scope, created_at) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (key_hash) DO NOTHING`,
    [key.id, key.accountId, key.hash, key.prefix, key.scope, key.createdAt],
  );
  return inserted === 1;
}

export const revokeApiKey = async (db: Driver, id: string, now: number) =>
  (await db.run('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [now, id])) === 1;
