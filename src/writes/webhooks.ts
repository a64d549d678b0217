// A webhook's writes, one rule each, for its routes (http/webhooks.ts, http/webhook-deliveries.ts):
// a new webhook and its secret, a change (a person switching it off or on clears the reason
// Vitals gave), a new secret, a test event, a retry. Stamped with the caller's `now`, and each
// sent whole with store.run (docs/architecture.md, "A write"); the POSTs' writes build their
// answer's text and store it for the request's Idempotency-Key. docs/webhooks.md.
import { deliveryJson, webhookWithSecretJson } from '../api/webhooks.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { event, type SubscribableEventType, TEST_EVENT_TYPE, type WebhookFormat } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import { iso, nextTimestamp } from '../domain/time.ts';
import type { Tx, WebhookRecord } from '../store/store.ts';
import { write } from '../store/write.ts';
import { type Claim, recordAnswer } from './answers.ts';

export interface WebhookChange {
  url?: string | undefined;
  events?: SubscribableEventType[] | undefined;
  /** null clears it. */
  description?: string | null | undefined;
  format?: WebhookFormat | undefined;
  enabled?: boolean | undefined;
}

/**
 * POST /api/webhooks: a new webhook with a new secret; the answer's text (201), the secret in it,
 * stored so for the request's Idempotency-Key (a replay answers it again: docs/api.md, "Idempotency keys").
 */
export const createWebhook = write(async function createWebhook(
  tx: Tx,
  accountId: string,
  input: {
    url: string;
    events: SubscribableEventType[];
    description?: string | undefined;
    format?: WebhookFormat | undefined;
  },
  claim: Claim,
  now: number,
): Promise<string> {
  const webhook: WebhookRecord = {
    id: newId.webhook(),
    url: input.url,
    events: input.events,
    description: input.description ?? null,
    format: input.format ?? 'standard',
    secret: newId.webhookSecret(),
    previousSecret: null,
    previousSecretExpiresAt: null,
    enabled: true,
    disabledReason: null,
    createdAt: now,
    updatedAt: now,
  };
  await tx.insertWebhook(accountId, webhook);
  const body = webhookWithSecretJson(webhook, now);
  await recordAnswer(tx, accountId, claim, body, 201);
  return body;
});

/** The webhook, or 404 webhook_not_found. */
async function current(tx: Tx, accountId: string, id: string): Promise<WebhookRecord> {
  const webhook = await tx.getWebhook(accountId, id);
  if (!webhook) throw notFound.webhook(id);
  return webhook;
}

/**
 * PATCH /api/webhooks/:id: applies the fields given; a person switching it off or on clears the
 * reason Vitals switched it off. 404 webhook_not_found.
 */
export const updateWebhook = write(async function updateWebhook(
  tx: Tx,
  accountId: string,
  id: string,
  change: WebhookChange,
  now: number,
): Promise<WebhookRecord> {
  const before = await current(tx, accountId, id);
  const enabled = change.enabled ?? before.enabled;
  const next: WebhookRecord = {
    ...before,
    url: change.url ?? before.url,
    events: change.events ?? before.events,
    description: change.description === undefined ? before.description : change.description,
    format: change.format ?? before.format,
    enabled,
    disabledReason: enabled ? null : change.enabled === false ? null : before.disabledReason,
    updatedAt: nextTimestamp(now, before.updatedAt),
  };
  await tx.updateWebhook(accountId, next);
  return next;
});

/**
 * POST /api/webhooks/:id/rotate-secret: a new signing secret; later deliveries are signed with it. With an overlap the secret it replaces
 * signs beside it for `expirePreviousIn` seconds more (docs/webhooks.md, "Rotating the secret"):
 * one previous secret is kept, so the one an earlier rotation kept stops now. With none (0, the
 * default) the replaced secret stops at once. The answer's text, with the new secret, stored so
 * for the request's Idempotency-Key. 404 webhook_not_found.
 */
export const rotateWebhookSecret = write(async function rotateWebhookSecret(
  tx: Tx,
  accountId: string,
  id: string,
  expirePreviousIn: number,
  claim: Claim,
  now: number,
): Promise<string> {
  const before = await current(tx, accountId, id);
  const overlap = expirePreviousIn > 0;
  const next: WebhookRecord = {
    ...before,
    secret: newId.webhookSecret(),
    previousSecret: overlap ? before.secret : null,
    previousSecretExpiresAt: overlap ? now + expirePreviousIn * 1000 : null,
    updatedAt: nextTimestamp(now, before.updatedAt),
  };
  await tx.updateWebhook(accountId, next);
  const body = webhookWithSecretJson(next, now);
  await recordAnswer(tx, accountId, claim, body);
  return body;
});

/** DELETE /api/webhooks/:id: deletes the webhook with its pending deliveries; 404 webhook_not_found. */
export const deleteWebhook = write(async function deleteWebhook(
  tx: Tx,
  accountId: string,
  id: string,
): Promise<{ id: string; deleted: true }> {
  if (!(await tx.deleteWebhook(accountId, id))) throw notFound.webhook(id);
  return { id, deleted: true };
});

/**
 * POST /api/webhooks/:id/test: one webhook.test event for this webhook alone, whatever it
 * subscribes to; its delivery's text, stored for the request's Idempotency-Key. 409 if it is disabled.
 */
export const sendTestEvent = write(async function sendTestEvent(
  tx: Tx,
  accountId: string,
  id: string,
  claim: Claim,
  now: number,
): Promise<string> {
  const webhook = await current(tx, accountId, id);
  if (!webhook.enabled) {
    throw new ApiError(
      'webhook_disabled',
      'This webhook is disabled; enable it (PATCH enabled: true) to send it a test event.',
    );
  }
  const test = event(TEST_EVENT_TYPE, { webhook_id: id, sent_at: iso(now) }, now);
  const created = await tx.insertDirectEvent(accountId, id, test);
  const delivery = created && (await tx.getDelivery(accountId, id, created));
  if (!delivery) throw notFound.webhook(id);
  const body = deliveryJson(delivery);
  await recordAnswer(tx, accountId, claim, body);
  return body;
});

/**
 * POST /api/webhooks/:id/deliveries/:delivery_id/retry: makes the delivery due now for one more
 * attempt; its text, stored for the request's Idempotency-Key. 409 while an attempt is in flight.
 */
export const retryDelivery = write(async function retryDelivery(
  tx: Tx,
  accountId: string,
  webhookId: string,
  deliveryId: string,
  claim: Claim,
  now: number,
): Promise<string> {
  const retried = await tx.retryDelivery(accountId, webhookId, deliveryId, now);
  const delivery = await tx.getDelivery(accountId, webhookId, deliveryId);
  if (!delivery) {
    throw new ApiError('delivery_not_found', `No delivery with id '${deliveryId}' on this webhook.`);
  }
  if (!retried) {
    throw new ApiError(
      'delivery_in_progress',
      'An attempt of this delivery is in flight; retry once it has finished.',
    );
  }
  const body = deliveryJson(delivery);
  await recordAnswer(tx, accountId, claim, body);
  return body;
});
