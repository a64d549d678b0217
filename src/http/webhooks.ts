// The webhook routes, one handler each: the webhook itself here, its deliveries in
// webhook-deliveries.ts, schemas and shaping in ../api/webhooks.ts. docs/api.md, "Webhooks".
import { Type } from 'typebox';
import { Deleted, errorResponses } from '../api/common.ts';
import { BACKLOG_CAP } from '../api/limits.ts';
import {
  CreateBody,
  IdParams,
  RotateBody,
  toWebhook,
  UpdateBody,
  WebhooksList,
  WebhookWithBacklog,
  WebhookWithSecret,
} from '../api/webhooks.ts';
import { iso } from '../domain/time.ts';
import type { Store } from '../store/store.ts';
import { createWebhook, deleteWebhook, rotateWebhookSecret, updateWebhook } from '../writes/webhooks.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { type App, type Routes, sendJson } from './reply.ts';
import { type WebhookDeps, webhookDeps } from './webhook-deps.ts';

const WebhookRef = Type.Ref('Webhook');

function createWebhookRoute(app: App, { store, checkUrl, now }: WebhookDeps): void {
  app.post(
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
      const body = await store.run(createWebhook, req.accountId, req.body, claimToAnswer(req), now());
      answeredWithWrite(req);
      return sendJson(reply.code(201), body);
    },
  );
}

function listWebhooksRoute(app: App, { store, now }: WebhookDeps): void {
  app.get(
    '/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'List webhooks (never with their secrets)',
        response: { 200: WebhooksList, ...errorResponses(401) },
      },
    },
    async (req) => {
      const at = now();
      return { webhooks: (await store.listWebhooks(req.accountId)).map((w) => toWebhook(w, at)) };
    },
  );
}

function getWebhookRoute(app: App, { store, find, now }: WebhookDeps): void {
  app.get(
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
        ...toWebhook(webhook, now()),
        pending: Math.min(backlog.pending, BACKLOG_CAP),
        pending_truncated: backlog.pending > BACKLOG_CAP,
        oldest_pending_at: backlog.oldestAt === null ? null : iso(backlog.oldestAt),
      };
    },
  );
}

function updateWebhookRoute(app: App, { store, checkUrl, now }: WebhookDeps): void {
  app.patch(
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
      const at = now();
      const updated = await store.run(updateWebhook, req.accountId, req.params.webhook_id, req.body, at);
      return toWebhook(updated, at);
    },
  );
}

function deleteWebhookRoute(app: App, { store }: WebhookDeps): void {
  app.delete(
    '/webhooks/:webhook_id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook; its pending deliveries are dropped',
        params: IdParams,
        response: {
          200: Deleted,
          ...errorResponses(400, 401, 404, 413, 415),
        },
      },
    },
    async (req) => store.run(deleteWebhook, req.accountId, req.params.webhook_id),
  );
}

function rotateSecretRoute(app: App, { store, now }: WebhookDeps): void {
  app.post(
    '/webhooks/:webhook_id/rotate-secret',
    {
      schema: {
        tags: ['webhooks'],
        summary:
          'Replace the signing secret, optionally keeping the old one signing beside it for a while; the new one is shown only in this answer',
        params: IdParams,
        body: RotateBody,
        response: { 200: WebhookWithSecret, ...errorResponses(400, 401, 404, 413, 415) },
      },
    },
    async (req, reply) => {
      const overlap = req.body?.expire_previous_in ?? 0;
      const body = await store.run(
        rotateWebhookSecret,
        req.accountId,
        req.params.webhook_id,
        overlap,
        claimToAnswer(req),
        now(),
      );
      answeredWithWrite(req);
      return sendJson(reply, body);
    },
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [
  createWebhookRoute,
  listWebhooksRoute,
  getWebhookRoute,
  updateWebhookRoute,
  deleteWebhookRoute,
  rotateSecretRoute,
];

export const webhooksRoutes =
  (store: Store, opts: { blockPrivate: boolean }, now: () => number): Routes =>
  async (app) => {
    const deps = webhookDeps(store, opts, now);
    for (const route of ROUTES) route(app, deps);
  };
