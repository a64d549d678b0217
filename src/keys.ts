// Accounts and API keys as the CLI and start-up manage them.
import { hashApiKey, newId } from './domain/ids.ts';
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
