// Accounts and API keys (docs/api.md, "Authentication"): the administration surface of the CLI and
// the authentication lookup, written once. The writes run in a write transaction of their own.
import { newId } from '../domain/ids.ts';
import type { Driver } from './driver.ts';

export interface Account {
  id: string;
  name: string;
  createdAt: number;
}

/** What a key may do (docs/api.md, "Authentication"): `read` answers GET only. */
export type KeyScope = 'read' | 'write';

export interface NewApiKey {
  id: string;
  accountId: string;
  hash: string;
  prefix: string;
  scope: KeyScope;
  createdAt: number;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  accountName: string;
  scope: KeyScope;
  /** The first characters of the key, enough for a person to recognise it. */
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
}

/** Accounts and keys: the administration surface of the CLI and the authentication lookup. */
export interface Keys {
  ensureAccount(name: string, now: number): Promise<Account>;
  /**
   * Adds a key; false when it was not added: its hash exists already, or `onlyIfNone` was given
   * and an active key exists (checked and inserted atomically, so processes starting together
   * on an empty database create one bootstrap key between them).
   */
  insertApiKey(key: NewApiKey, opts?: { onlyIfNone?: boolean }): Promise<boolean>;
  /** The one lookup not scoped by account: it is how a request finds its account. */
  findApiKey(
    hash: string,
  ): Promise<{ keyId: string; accountId: string; scope: KeyScope; prefix: string } | null>;
  listApiKeys(): Promise<ApiKeyRecord[]>;
  countActiveApiKeys(): Promise<number>;
  revokeApiKey(id: string, now: number): Promise<boolean>;
}

/** Every API key with its account's name, oldest first. No parameters. */
export const LIST_API_KEYS = `
  SELECT k.id, k.account_id, a.name AS account_name, k.prefix, k.scope, k.created_at, k.revoked_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id ORDER BY k.created_at, k.id`;

export interface ApiKeyRow {
  id: string;
  account_id: string;
  account_name: string;
  prefix: string;
  scope: KeyScope;
  created_at: number;
  revoked_at: number | null;
}

export const toApiKeyRecord = (r: ApiKeyRow): ApiKeyRecord => ({
  id: r.id,
  accountId: r.account_id,
  accountName: r.account_name,
  prefix: r.prefix,
  scope: r.scope,
  createdAt: r.created_at,
  revokedAt: r.revoked_at ?? null,
});

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

// The reads: a key is looked up by its hash.

export async function findApiKey(db: Driver, hash: string) {
  const row = await db.get(
    'SELECT id, account_id, scope, prefix FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
    [hash],
  );
  return row
    ? {
        keyId: row.id as string,
        accountId: row.account_id as string,
        scope: row.scope as KeyScope,
        prefix: row.prefix as string,
      }
    : null;
}

export async function listApiKeys(db: Driver): Promise<ApiKeyRecord[]> {
  return (await db.all<ApiKeyRow>(LIST_API_KEYS, [])).map(toApiKeyRecord);
}

export async function countActiveApiKeys(db: Driver): Promise<number> {
  const row = await db.get('SELECT COUNT(*) AS n FROM api_keys WHERE revoked_at IS NULL', []);
  return Number(row?.n ?? 0);
}
