// What the two backends do alike, written once: statements whose text both run (parameters as
// $1, $2, …: PostgreSQL's own syntax; SQLite's connection turns them into ?1, ?2), and the
// logic around rows that does not depend on the driver.
import type { EventRecord } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import type { ApiKeyRecord } from './store.ts';

/** Every API key with its account's name, oldest first. No parameters. */
export const LIST_API_KEYS = `
  SELECT k.id, k.account_id, a.name AS account_name, k.prefix, k.created_at, k.revoked_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id ORDER BY k.created_at, k.id`;

export interface ApiKeyRow {
  id: string;
  account_id: string;
  account_name: string;
  prefix: string;
  created_at: number;
  revoked_at: number | null;
}

export const toApiKeyRecord = (r: ApiKeyRow): ApiKeyRecord => ({
  id: r.id,
  accountId: r.account_id,
  accountName: r.account_name,
  prefix: r.prefix,
  createdAt: r.created_at,
  revokedAt: r.revoked_at ?? null,
});

/**
 * Removing a webhook ($1 account, $2 webhook), in this order: its deliveries' attempts, its
 * deliveries, the webhook (its subscriptions go with it, ON DELETE CASCADE). The last one's
 * count says whether there was a webhook.
 */
export const DELETE_WEBHOOK = [
  `DELETE FROM delivery_attempts WHERE delivery_id IN
     (SELECT id FROM deliveries WHERE account_id = $1 AND webhook_id = $2)`,
  'DELETE FROM deliveries WHERE account_id = $1 AND webhook_id = $2',
  'DELETE FROM webhooks WHERE account_id = $1 AND id = $2',
] as const;

/** The enabled webhooks subscribed to each event type, from (event_type, webhook_id) rows. */
export function subscribersByType(rows: Iterable<Record<string, unknown>>): Map<string, string[]> {
  const subscribers = new Map<string, string[]>();
  for (const r of rows) {
    const list = subscribers.get(r.event_type as string);
    if (list) list.push(r.webhook_id as string);
    else subscribers.set(r.event_type as string, [r.webhook_id as string]);
  }
  return subscribers;
}

export interface NewDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  at: number;
}

/** One pending delivery per event and subscribed webhook (the outbox), in event order. */
export function deliveriesFor(
  events: readonly EventRecord[],
  subscribers: Map<string, string[]>,
): NewDelivery[] {
  const deliveries: NewDelivery[] = [];
  for (const e of events) {
    for (const webhookId of subscribers.get(e.type) ?? []) {
      deliveries.push({ id: newId.delivery(), webhookId, eventId: e.id, at: e.createdAt });
    }
  }
  return deliveries;
}
