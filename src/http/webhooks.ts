import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { ApiError, notFound } from '../domain/errors.ts';
import { event, SUBSCRIBABLE_EVENT_TYPES, TEST_EVENT_TYPE } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import { iso, nextTimestamp } from '../domain/time.ts';
import type { DeliveryRecord, Store, WebhookRecord } from '../store/store.ts';
import { MAX_URL_LENGTH, urlRefusal } from '../webhooks/url-guard.ts';
import { recordAnswer } from './idempotency.ts';
import { errorResponses, Limit, Timestamp } from './schemas.ts';

// An enum (not a union of literals) so that a wrong type is answered with the list of valid ones.
const EventTypes = Type.Array(Type.Enum(SUBSCRIBABLE_EVENT_TYPES), {
  minItems: 1,
  maxItems: SUBSCRIBABLE_EVENT_TYPES.length,
  uniqueItems: true,
  description: `Event types to receive: ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}.`,
});
const Url = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description: 'Absolute http or https URL.',
});
const Description = Type.String({ maxLength: 1024 });

const Webhook = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Type.Union([Type.String(), Type.Null()]),
    enabled: Type.Boolean(),
    disabled_reason: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Webhook' },
);
const WebhookWithSecret = Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'whsec_…: shown only when created or rotated.' }),
});

const Attempt = Type.Object({
  attempt: Type.Integer(),
  started_at: Timestamp,
  duration_ms: Type.Integer(),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  response_body: Type.Union([Type.String(), Type.Null()], { description: 'The first 1 KiB of the answer.' }),
});
const Delivery = Type.Object(
  {
    id: Type.String(),
    webhook_id: Type.String(),
    event_id: Type.String(),
    event_type: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
    attempt_count: Type.Integer(),
    next_attempt_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
    attempts: Type.Array(Attempt),
  },
  { $id: 'Delivery' },
);

const CreateBody = Type.Object(
  { url: Url, events: EventTypes, description: Type.Optional(Description) },
  { additionalProperties: false },
);
const UpdateBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(EventTypes),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
/** For POSTs that take no fields: no body, `{}` or `null`; any field is 400 parameter_unknown. */
const NoFields = Type.Unsafe<Record<string, never> | null>({
  type: ['object', 'null'],
  additionalProperties: false,
  description: 'No fields: send no body, or {}.',
});
const IdParams = Type.Object({ webhook_id: Type.String() });
const DeliveryParams = Type.Object({ webhook_id: Type.String(), delivery_id: Type.String() });
const DeliveriesQuery = Type.Object(
  {
    status: Type.Optional(Type.Enum(['pending', 'succeeded', 'failed'])),
    limit: Type.Optional(Limit),
    starting_after: Type.Optional(Type.String({ maxLength: 64, description: 'A delivery id.' })),
  },
  { additionalProperties: false },
);

export const WebhookSchemas = [Webhook, Delivery];

const toWebhook = (w: WebhookRecord) => ({
  id: w.id,
  url: w.url,
  events: w.events,
  description: w.description,
  enabled: w.enabled,
  disabled_reason: w.disabledReason,
  created_at: iso(w.createdAt),
  updated_at: iso(w.updatedAt),
});

const toDelivery = (d: DeliveryRecord) => ({
  id: d.id,
  webhook_id: d.webhookId,
  event_id: d.eventId,
  event_type: d.eventType,
  status: d.status,
  attempt_count: d.attemptCount,
  next_attempt_at: d.status === 'pending' && d.nextAttemptAt !== null ? iso(d.nextAttemptAt) : null,
  created_at: iso(d.createdAt),
  updated_at: iso(d.updatedAt),
  attempts: d.attempts.map((a) => ({
    attempt: a.attempt,
    started_at: iso(a.startedAt),
    duration_ms: a.durationMs,
    status_code: a.statusCode,
    error: a.error,
    response_body: a.responseBody,
  })),
});

export const webhooksRoutes =
  (store: Store, opts: { blockPrivate: boolean }): FastifyPluginAsync =>
  async (app) => {
    const WebhookRef = Type.Ref('Webhook');
    const DeliveryRef = Type.Ref('Delivery');

    const checkUrl = (url: string) => {
      const refusal = urlRefusal(url, opts.blockPrivate);
      if (refusal) throw new ApiError('parameter_invalid', `'url' ${refusal}.`, 'url');
    };
    const find = async (accountId: string, id: string) => {
      const webhook = await store.getWebhook(accountId, id);
      if (!webhook) throw notFound.webhook(id);
      return webhook;
    };

    app.post<{ Body: Static<typeof CreateBody> }>(
      '/webhooks',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Subscribe an endpoint to events (the secret is shown only in this answer)',
          body: CreateBody,
          response: { 201: WebhookWithSecret, ...errorResponses(400, 401, 413, 415) },
        },
      },
      async (req, reply) => {
        checkUrl(req.body.url);
        const now = Date.now();
        const webhook: WebhookRecord = {
          id: newId.webhook(),
          url: req.body.url,
          events: req.body.events,
          description: req.body.description ?? null,
          secret: newId.webhookSecret(),
          enabled: true,
          disabledReason: null,
          createdAt: now,
          updatedAt: now,
        };
        const answer = { ...toWebhook(webhook), secret: webhook.secret };
        await store.transaction(async (tx) => {
          await tx.insertWebhook(req.accountId, webhook);
          await recordAnswer(tx, req, reply, 201, answer);
        });
        return reply.code(201).send(answer);
      },
    );

    app.get(
      '/webhooks',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'List webhooks (never with their secrets)',
          response: { 200: Type.Object({ webhooks: Type.Array(WebhookRef) }), ...errorResponses(401) },
        },
      },
      async (req) => ({ webhooks: (await store.listWebhooks(req.accountId)).map(toWebhook) }),
    );

    app.get<{ Params: Static<typeof IdParams> }>(
      '/webhooks/:webhook_id',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Retrieve a webhook (without its secret)',
          params: IdParams,
          response: { 200: WebhookRef, ...errorResponses(401, 404) },
        },
      },
      async (req) => toWebhook(await find(req.accountId, req.params.webhook_id)),
    );

    app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof UpdateBody> }>(
      '/webhooks/:webhook_id',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Change url, events, description, or switch it on or off',
          params: IdParams,
          body: UpdateBody,
          response: { 200: WebhookRef, ...errorResponses(400, 401, 404, 413, 415) },
        },
      },
      async (req) => {
        if (req.body.url !== undefined) checkUrl(req.body.url);
        const updated = await store.transaction(async (tx) => {
          const current = await tx.getWebhook(req.accountId, req.params.webhook_id);
          if (!current) throw notFound.webhook(req.params.webhook_id);
          const enabled = req.body.enabled ?? current.enabled;
          const next: WebhookRecord = {
            ...current,
            url: req.body.url ?? current.url,
            events: req.body.events ?? current.events,
            description: req.body.description === undefined ? current.description : req.body.description,
            enabled,
            disabledReason: enabled ? null : req.body.enabled === false ? null : current.disabledReason,
            updatedAt: nextTimestamp(Date.now(), current.updatedAt),
          };
          await tx.updateWebhook(req.accountId, next);
          return next;
        });
        return toWebhook(updated);
      },
    );

    app.delete<{ Params: Static<typeof IdParams> }>(
      '/webhooks/:webhook_id',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Delete a webhook; its pending deliveries are dropped',
          params: IdParams,
          response: {
            200: Type.Object({ id: Type.String(), deleted: Type.Boolean() }),
            ...errorResponses(401, 404),
          },
        },
      },
      async (req) => {
        const id = req.params.webhook_id;
        const deleted = await store.transaction((tx) => tx.deleteWebhook(req.accountId, id));
        if (!deleted) throw notFound.webhook(id);
        return { id, deleted: true };
      },
    );

    app.post<{ Params: Static<typeof IdParams> }>(
      '/webhooks/:webhook_id/rotate-secret',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Replace the signing secret; the new one is shown only in this answer',
          params: IdParams,
          body: NoFields,
          response: { 200: WebhookWithSecret, ...errorResponses(400, 401, 404, 415) },
        },
      },
      async (req, reply) =>
        store.transaction(async (tx) => {
          const current = await tx.getWebhook(req.accountId, req.params.webhook_id);
          if (!current) throw notFound.webhook(req.params.webhook_id);
          const next = {
            ...current,
            secret: newId.webhookSecret(),
            updatedAt: nextTimestamp(Date.now(), current.updatedAt),
          };
          await tx.updateWebhook(req.accountId, next);
          const answer = { ...toWebhook(next), secret: next.secret };
          await recordAnswer(tx, req, reply, 200, answer);
          return answer;
        }),
    );

    app.post<{ Params: Static<typeof IdParams> }>(
      '/webhooks/:webhook_id/test',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Send one webhook.test event to this webhook alone, through the normal delivery path',
          description:
            'The event (data `{webhook_id, sent_at}`) goes to this webhook whatever its subscriptions, signed, logged and retried like any other; the answer is its delivery.',
          params: IdParams,
          body: NoFields,
          response: { 200: DeliveryRef, ...errorResponses(400, 401, 404, 409, 415) },
        },
      },
      async (req, reply) => {
        const id = req.params.webhook_id;
        return store.transaction(async (tx) => {
          const webhook = await tx.getWebhook(req.accountId, id);
          if (!webhook) throw notFound.webhook(id);
          if (!webhook.enabled) {
            throw new ApiError(
              'webhook_disabled',
              'This webhook is disabled; enable it (PATCH enabled: true) to send it a test event.',
            );
          }
          const now = Date.now();
          const test = event(TEST_EVENT_TYPE, { webhook_id: id, sent_at: iso(now) }, now);
          const created = await tx.insertDirectEvent(req.accountId, id, test);
          const delivery = created && (await tx.getDelivery(req.accountId, id, created));
          if (!delivery) throw notFound.webhook(id);
          const answer = toDelivery(delivery);
          await recordAnswer(tx, req, reply, 200, answer);
          return answer;
        });
      },
    );

    app.get<{ Params: Static<typeof IdParams>; Querystring: Static<typeof DeliveriesQuery> }>(
      '/webhooks/:webhook_id/deliveries',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Deliveries of a webhook with their attempts, newest first',
          params: IdParams,
          querystring: DeliveriesQuery,
          response: {
            200: Type.Object({ data: Type.Array(DeliveryRef), has_more: Type.Boolean() }),
            ...errorResponses(400, 401, 404),
          },
        },
      },
      async (req) => {
        const webhook = await find(req.accountId, req.params.webhook_id);
        const page = await store.listDeliveries(req.accountId, webhook.id, {
          status: req.query.status,
          startingAfter: req.query.starting_after,
          limit: req.query.limit ?? 10,
        });
        return { data: page.data.map(toDelivery), has_more: page.hasMore };
      },
    );

    app.post<{ Params: Static<typeof DeliveryParams> }>(
      '/webhooks/:webhook_id/deliveries/:delivery_id/retry',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Send a delivery again now (one more attempt)',
          params: DeliveryParams,
          body: NoFields,
          response: { 200: DeliveryRef, ...errorResponses(400, 401, 404, 409, 415) },
        },
      },
      async (req, reply) => {
        const { webhook_id, delivery_id } = req.params;
        await find(req.accountId, webhook_id);
        return store.transaction(async (tx) => {
          const retried = await tx.retryDelivery(req.accountId, webhook_id, delivery_id, Date.now());
          const delivery = await tx.getDelivery(req.accountId, webhook_id, delivery_id);
          if (!delivery) {
            throw new ApiError('delivery_not_found', `No delivery with id '${delivery_id}' on this webhook.`);
          }
          if (!retried) {
            throw new ApiError(
              'delivery_in_progress',
              'An attempt of this delivery is in flight; retry once it has finished.',
            );
          }
          const answer = toDelivery(delivery);
          await recordAnswer(tx, req, reply, 200, answer);
          return answer;
        });
      },
    );
  };
