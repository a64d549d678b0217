// The delivery routes of a webhook (a test event, the delivery log, a retry), one handler each;
// registered by webhooksRoutes (webhooks.ts). docs/api.md, "Deliveries".
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { ApiError, notFound } from '../domain/errors.ts';
import { event, TEST_EVENT_TYPE } from '../domain/events.ts';
import { iso } from '../domain/time.ts';
import { recordAnswer } from './idempotency.ts';
import { errorResponses } from './schemas.ts';
import { DeliveriesQuery, DeliveryParams, IdParams, NoFields, toDelivery } from './webhook-schemas.ts';
import type { WebhookDeps } from './webhooks.ts';

const DeliveryRef = Type.Ref('Delivery');

export function sendTestEvent(app: FastifyInstance, { store }: WebhookDeps): void {
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
        response: { 200: DeliveryRef, ...errorResponses(400, 401, 404, 409, 413, 415) },
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
}

export function listDeliveries(app: FastifyInstance, { store, find }: WebhookDeps): void {
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
}

export function retryDelivery(app: FastifyInstance, { store, find }: WebhookDeps): void {
  app.post<{ Params: Static<typeof DeliveryParams> }>(
    '/webhooks/:webhook_id/deliveries/:delivery_id/retry',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Send a delivery again now (one more attempt)',
        params: DeliveryParams,
        body: NoFields,
        response: { 200: DeliveryRef, ...errorResponses(400, 401, 404, 409, 413, 415) },
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
}
