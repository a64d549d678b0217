// The delivery routes of a webhook (a test event, the delivery log, a retry), one handler each;
// registered after the webhook's own (webhooks.ts). docs/api.md, "Deliveries".
import { Type } from 'typebox';
import { errorResponses } from '../api/common.ts';
import {
  DeliveriesPage,
  DeliveriesQuery,
  DeliveryParams,
  IdParams,
  NoFields,
  toDelivery,
} from '../api/webhooks.ts';
import type { Store } from '../store/store.ts';
import { retryDelivery, sendTestEvent } from '../writes/webhooks.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { type App, type Routes, sendJson } from './reply.ts';
import { type WebhookDeps, webhookDeps } from './webhook-deps.ts';

const DeliveryRef = Type.Ref('Delivery');

function sendTestEventRoute(app: App, { store, now }: WebhookDeps): void {
  app.post(
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
      const body = await store.run(
        sendTestEvent,
        req.accountId,
        req.params.webhook_id,
        claimToAnswer(req),
        now(),
      );
      answeredWithWrite(req);
      return sendJson(reply, body);
    },
  );
}

function listDeliveriesRoute(app: App, { store, find }: WebhookDeps): void {
  app.get(
    '/webhooks/:webhook_id/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Deliveries of a webhook with their attempts, newest first',
        params: IdParams,
        querystring: DeliveriesQuery,
        response: {
          200: DeliveriesPage,
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

function retryDeliveryRoute(app: App, { store, find, now }: WebhookDeps): void {
  app.post(
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
      const claim = claimToAnswer(req);
      const body = await store.run(retryDelivery, req.accountId, webhook_id, delivery_id, claim, now());
      answeredWithWrite(req);
      return sendJson(reply, body);
    },
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [sendTestEventRoute, listDeliveriesRoute, retryDeliveryRoute];

export const webhookDeliveriesRoutes =
  (store: Store, opts: { blockPrivate: boolean }, now: () => number): Routes =>
  async (app) => {
    const deps = webhookDeps(store, opts, now);
    for (const route of ROUTES) route(app, deps);
  };
