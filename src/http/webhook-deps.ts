// What the webhook routes (webhooks.ts, webhook-deliveries.ts) are given: the store, the clock,
// the URL check and the lookup that answers 404.
import { ApiError, notFound } from '../domain/errors.ts';
import type { Store, WebhookRecord } from '../store/store.ts';
import { urlRefusal } from '../webhooks/url-guard.ts';

export interface WebhookDeps {
  store: Store;
  /** The clock writes are stamped with. */
  now: () => number;
  /** Throws 400 parameter_invalid (param url) for a URL the webhook may not have. */
  checkUrl: (url: string) => void;
  /** The webhook, or 404 webhook_not_found. */
  find: (accountId: string, id: string) => Promise<WebhookRecord>;
}

export const webhookDeps = (
  store: Store,
  opts: { blockPrivate: boolean },
  now: () => number,
): WebhookDeps => ({
  store,
  now,
  checkUrl: (url) => {
    const refusal = urlRefusal(url, opts.blockPrivate);
    if (refusal) throw new ApiError('parameter_invalid', `'url' ${refusal}.`, 'url');
  },
  find: async (accountId, id) => {
    const webhook = await store.getWebhook(accountId, id);
    if (!webhook) throw notFound.webhook(id);
    return webhook;
  },
});
