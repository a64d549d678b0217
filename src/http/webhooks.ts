// The webhook routes, one handler each: the webhook itself here, its deliveries in
// webhook-deliveries.ts, schemas and shaping in webhook-schemas.ts. docs/api.md, "Webhooks".
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { ApiError, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { iso, nextTimestamp } from '../domain/time.ts';
import type { Store, WebhookRecord } from '../store/store.ts';
import { urlRefusal } from '../webhooks/url-guard.ts';
import { recordAnswer } from './idempotency.ts';
import { errorResponses } from './schemas.ts';
import { listDeliveries, retryDelivery, sendTestEvent } from './webhook-deliveries.ts';
import {
  BACKLOG_CAP,
  CreateBody,
  IdParams,
  NoFields,
  toWebhook,
  UpdateBody,
  WebhookWithBacklog,
  WebhookWithSecret,
} from './webhook-schemas.ts';

export interface WebhookDeps {
  store: Store;
  /** Throws 400 parameter_invalid (param url) for a URL the webhook may not have. */
  checkUrl: (url: string) => void;
  /** The webhook, or 404 webhook_not_found. */
  find: (accountId: string, id: string) => Promise<WebhookRecord>;
}

const WebhookRef = Type.Ref('Webhook');

function createWebhook(app: FastifyInstance, { store, checkUrl }: WebhookDeps): void {
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
}

function listWebhooks(app: FastifyInstance, { store }: WebhookDeps): void {
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
}

function getWebhook(app: FastifyInstance, { store, find }: WebhookDeps): void {
  app.get<{ Params: Static<typeof IdParams> }>(
    '/webhooks/:webhook_id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Retrieve a webhook (without its secret), with its backlog of unfinished deliveries',
        params: IdParams,
        response: { 200: WebhookWithBacklog, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const webhook = await find(req.accountId, req.params.webhook_id);
      // One more than the cap tells "more than the cap" from "exactly the cap".
      const backlog = await store.webhookBacklog(req.accountId, webhook.id, BACKLOG_CAP + 1);
      return {
        ...toWebhook(webhook),
        pending: Math.min(backlog.pending, BACKLOG_CAP),
        pending_truncated: backlog.pending > BACKLOG_CAP,
        oldest_pending_at: backlog.oldestAt === null ? null : iso(backlog.oldestAt),
      };
    },
  );
}

function updateWebhook(app: FastifyInstance, { store, checkUrl }: WebhookDeps): void {
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
}

function deleteWebhook(app: FastifyInstance, { store }: WebhookDeps): void {
  app.delete<{ Params: Static<typeof IdParams> }>(
    '/webhooks/:webhook_id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook; its pending deliveries are dropped',
        params: IdParams,
        response: {
          200: Type.Object({ id: Type.String(), deleted: Type.Boolean() }),
          ...errorResponses(400, 401, 404, 413, 415),
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
}

function rotateSecret(app: FastifyInstance, { store }: WebhookDeps): void {
  app.post<{ Params: Static<typeof IdParams> }>(
    '/webhooks/:webhook_id/rotate-secret',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Replace the signing secret; the new one is shown only in this answer',
        params: IdParams,
        body: NoFields,
        response: { 200: WebhookWithSecret, ...errorResponses(400, 401, 404, 413, 415) },
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
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [
  createWebhook,
  listWebhooks,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  rotateSecret,
  sendTestEvent,
  listDeliveries,
  retryDelivery,
];

export const webhooksRoutes =
  (store: Store, opts: { blockPrivate: boolean }): FastifyPluginAsync =>
  async (app) => {
    const deps: WebhookDeps = {
      store,
      checkUrl: (url) => {
        const refusal = urlRefusal(url, opts.blockPrivate);
        if (refusal) throw new ApiError('parameter_invalid', `'url' ${refusal}.`, 'url');
      },
      find: async (accountId, id) => {
        const webhook = await store.getWebhook(accountId, id);
        if (!webhook) throw notFound.webhook(id);
        return webhook;
      },
    };
    for (const route of ROUTES) route(app, deps);
  };
