// The delivery routes of a webhook (a test event, the delivery log, a retry), one handler each;
// registered by webhooksRoutes (webhooks.ts). docs/api.md, "Deliveries".
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { retryDelivery, sendTestEvent } from '../writes/webhooks.ts';
import { recordAnswer } from './idempotency.ts';
import { errorResponses } from './schemas.ts';
import type { WebhookDeps } from './webhook-schemas.ts';
import { DeliveriesQuery, DeliveryParams, IdParams, NoFields, toDelivery } from './webhook-schemas.ts';

const DeliveryRef = Type.Ref('Delivery');

export function sendTestEventRoute(app: FastifyInstance, { store, now }: WebhookDeps): void {
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
    async (req, reply) =>
      store.transaction(async (tx) => {
        const delivery = await sendTestEvent(tx, req.accountId, req.params.webhook_id, now());
        const answer = toDelivery(delivery);
        await recordAnswer(tx, req, reply, 200, answer);
        return answer;
      }),
  );
}

export function listDeliveriesRoute(app: FastifyInstance, { store, find }: WebhookDeps): void {
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

export function retryDeliveryRoute(app: FastifyInstance, { store, find, now }: WebhookDeps): void {
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
        const delivery = await retryDelivery(tx, req.accountId, webhook_id, delivery_id, now());
        const answer = toDelivery(delivery);
        await recordAnswer(tx, req, reply, 200, answer);
        return answer;
      });
    },
  );
}
