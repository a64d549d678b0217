// Accounts, API keys and dashboard users as the CLI and start-up manage them.
import { hashApiKey, newId } from './domain/ids.ts';
import { hashToken, newToken, normalizeEmail, SIGN_IN_LINK_MS, type UserRole } from './domain/people.ts';
import type { KeyScope, Store } from './store/store.ts';

export const DEFAULT_ACCOUNT = 'default';

export async function createApiKey(
  store: Store,
  accountName: string,
  key = newId.apiKey(),
  opts: { onlyIfNone?: boolean; scope?: KeyScope } = {},
) {
  const account = await store.ensureAccount(accountName, Date.now());
  const id = newId.apiKeyId();
  const scope = opts.scope ?? 'write';
  const created = await store.insertApiKey(
    {
      id,
      accountId: account.id,
      hash: hashApiKey(key),
      prefix: key.slice(0, 7),
      scope,
      createdAt: Date.now(),
    },
    { onlyIfNone: opts.onlyIfNone ?? false },
  );
  return { id, key, account, scope, created };
}

/**
 * VITALS_API_KEY, when set, exists for the default account (a key revoked earlier stays revoked).
 * Without it, a database with no usable key gets one generated, returned here to be shown once.
 */
export async function bootstrapKeys(store: Store, apiKey: string | undefined): Promise<string | null> {
  await store.ensureAccount(DEFAULT_ACCOUNT, Date.now());
  if (apiKey) {
    await createApiKey(store, DEFAULT_ACCOUNT, apiKey);
    return null;
  }
  // Checked and added in one step: processes starting together on an empty database make one key.
  const first = await createApiKey(store, DEFAULT_ACCOUNT, undefined, { onlyIfNone: true });
  return first.created ? first.key : null;
}

/**
 * A dashboard user of the account (made if new) with a one-time link's token (24 hours), or
 * null when the email is taken (docs/people.md). The token is shown once and kept as a hash.
 */
export async function createUser(
  store: Store,
  opts: { email: string; accountName: string; role: UserRole },
  now: number = Date.now(),
): Promise<{ id: string; token: string } | null> {
  const account = await store.ensureAccount(opts.accountName, now);
  return addUser(store, account.id, opts.email, opts.role, now);
}

/** A user of an existing account with their one-time link's token, or null when the email is taken. */
export async function addUser(
  store: Store,
  accountId: string,
  email: string,
  role: UserRole,
  now: number,
): Promise<{ id: string; token: string } | null> {
  const id = newId.user();
  const token = newToken();
  const created = await store.createUser(
    { id, accountId, email: normalizeEmail(email), role, createdAt: now },
    { tokenHash: hashToken(token), expiresAt: now + SIGN_IN_LINK_MS },
  );
  return created ? { id, token } : null;
}
