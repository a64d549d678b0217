// Sources (docs/api.md, "Sources"): the tools that send data to Vitals in their own format, each
// with its ingest URL, its counters and its log (the debugger a person reads when data does not
// show up). Admins and write keys manage them; everyone reads them.
import { CustomerParams, Deleted, errorResponses } from '../api/common.ts';
import {
  ACTIVITY_LIMIT,
  activityFields,
  CreateSourceBody,
  logItemFields,
  Source,
  SourceActivity,
  SourceCreated,
  SourceList,
  SourceLogPage,
  SourceLogQuery,
  SourceParams,
  sourceFields,
  UpdateSourceBody,
} from '../api/sources.ts';
import { notFound } from '../domain/errors.ts';
import { newId, randomBase62 } from '../domain/ids.ts';
import type { Store } from '../store/store.ts';
import { createSource, type Fresh, deleteSource as removeSource, updateSource } from '../writes/sources.ts';
import { type App, publicBase, type Routes } from './reply.ts';

interface Deps {
  store: Store;
  now: () => number;
}

/** Secrets the write may need: a key or token, a signature's secret (kept only if used). */
const fresh = (): Fresh => ({ key: randomBase62(32), secret: `whsec_${randomBase62(32)}` });

/** The create and change answers show these once; an Idempotency-Key's replay leaves them out. */
const SHOWN_ONCE = ['write_key', 'signature_secret', 'ingest_url'];

function create(app: App, { store, now }: Deps): void {
  app.post(
    '/sources',
    {
      config: { area: 'account', shownOnce: SHOWN_ONCE },
      schema: {
        tags: ['sources'],
        summary:
          'Connect a tool: a Segment-Spec library, Stripe, or any webhook (its key is shown only in this answer)',
        body: CreateSourceBody,
        response: { 201: SourceCreated, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (req, reply) => {
      const { type, ...input } = req.body;
      const made = await store.run(createSource, req.accountId, newId.source(), type, input, fresh(), now());
      reply.code(201);
      return sourceFields(made.source, publicBase(req), made.shown);
    },
  );
}

function list(app: App, { store }: Deps): void {
  app.get(
    '/sources',
    {
      config: { area: 'account' },
      schema: {
        tags: ['sources'],
        summary: "The account's sources, oldest first, with their counters",
        response: { 200: SourceList, ...errorResponses(401) },
      },
    },
    async (req) => ({
      data: (await store.listSources(req.accountId)).map((s) => sourceFields(s, publicBase(req))),
    }),
  );
}

function read(app: App, { store }: Deps): void {
  app.get(
    '/sources/:source_id',
    {
      config: { area: 'account' },
      schema: {
        tags: ['sources'],
        summary: 'A source, with its counters',
        params: SourceParams,
        response: { 200: Source, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const source = await store.getSource(req.accountId, req.params.source_id);
      if (!source) throw notFound.source(req.params.source_id);
      return sourceFields(source, publicBase(req));
    },
  );
}

function update(app: App, { store, now }: Deps): void {
  app.patch(
    '/sources/:source_id',
    {
      config: { area: 'account' },
      schema: {
        tags: ['sources'],
        summary: "Rename, enable or disable a source, or change its type's settings",
        params: SourceParams,
        body: UpdateSourceBody,
        response: { 200: SourceCreated, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (req) => {
      const made = await store.run(
        updateSource,
        req.accountId,
        req.params.source_id,
        req.body,
        fresh(),
        now(),
      );
      return sourceFields(made.source, publicBase(req), made.shown);
    },
  );
}

function remove(app: App, { store }: Deps): void {
  app.delete(
    '/sources/:source_id',
    {
      config: { area: 'account' },
      schema: {
        tags: ['sources'],
        summary: 'Delete a source with its log; its ingest URL answers 404 from then on',
        params: SourceParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => store.run(removeSource, req.accountId, req.params.source_id),
  );
}

function log(app: App, { store }: Deps): void {
  app.get(
    '/sources/:source_id/log',
    {
      config: { area: 'account' },
      schema: {
        tags: ['sources'],
        summary: "The source's last 1,000 messages, newest first, each with its result and why",
        params: SourceParams,
        querystring: SourceLogQuery,
        response: { 200: SourceLogPage, ...errorResponses(400, 401, 404) },
      },
    },
    async (req) => {
      const { source_id: id } = req.params;
      const [source, page] = await Promise.all([
        store.getSource(req.accountId, id),
        store.sourceLog(req.accountId, id, {
          startingAfter: req.query.starting_after,
          limit: req.query.limit ?? 10,
        }),
      ]);
      if (!source) throw notFound.source(id);
      return { data: page.data.map(logItemFields), has_more: page.hasMore };
    },
  );
}

function activity(app: App, { store }: Deps): void {
  app.get(
    '/customers/:customer_id/source-activity',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['sources'],
        summary:
          "Which sources last sent messages about a customer, and the last that changed it (from the sources' logs)",
        params: CustomerParams,
        response: { 200: SourceActivity, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const { accountId } = req;
      const { customer_id: id } = req.params;
      const [customer, data] = await Promise.all([
        store.getCustomer(accountId, id),
        store.customerSourceActivity(accountId, id, { limit: ACTIVITY_LIMIT }),
      ]);
      if (!customer) throw notFound.customer(id);
      // Most often the last change is among the last messages; else the logs are read again for it.
      const last =
        data.find((e) => e.result === 'applied') ??
        (data.length < ACTIVITY_LIMIT
          ? undefined
          : (await store.customerSourceActivity(accountId, id, { limit: 1, applied: true }))[0]);
      return { data: data.map(activityFields), last_applied: last ? activityFields(last) : null };
    },
  );
}

export const sourcesRoutes =
  (store: Store, now: () => number): Routes =>
  async (app) => {
    const deps = { store, now };
    for (const route of [create, list, read, update, remove, log, activity]) route(app, deps);
  };
