// Saved views (docs/api.md, "Saved views"): a signed-in person's named filters and sort of the
// portfolio. A person's own (the route area `own`, domain/people.ts): every role may keep theirs,
// nobody sees another's, and an API key, which is no person, is refused.
import { Deleted, errorResponses } from '../api/common.ts';
import { CreateViewBody, View, ViewParams, ViewsList, viewFields } from '../api/views.ts';
import type { Store } from '../store/store.ts';
import { createView, deleteView } from '../writes/views.ts';
import { signedIn } from './auth-routes.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { type App, type Routes, sendJson } from './reply.ts';

interface Deps {
  store: Store;
  now: () => number;
}

function listViews(app: App, { store }: Deps): void {
  app.get(
    '/views',
    {
      config: { area: 'own' },
      schema: {
        tags: ['people'],
        summary: 'Your saved views of the portfolio, newest first',
        response: { 200: ViewsList, ...errorResponses(401, 403) },
      },
    },
    async (req) => ({ data: (await store.listViews(req.accountId, signedIn(req).id)).map(viewFields) }),
  );
}

function saveView(app: App, { store, now }: Deps): void {
  app.post(
    '/views',
    {
      config: { area: 'own' },
      schema: {
        tags: ['people'],
        summary: "Save the portfolio's filters and sort under a name, for yourself alone",
        body: CreateViewBody,
        response: { 201: View, ...errorResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      const input = { name: req.body.name, query: req.body.query };
      const person = signedIn(req).id;
      const body = await store.run(createView, req.accountId, person, input, claimToAnswer(req), now());
      answeredWithWrite(req);
      return sendJson(reply.code(201), body);
    },
  );
}

function removeView(app: App, { store }: Deps): void {
  app.delete(
    '/views/:view_id',
    {
      config: { area: 'own' },
      schema: {
        tags: ['people'],
        summary: 'Delete one of your saved views',
        params: ViewParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => store.run(deleteView, req.accountId, signedIn(req).id, req.params.view_id),
  );
}

export const viewsRoutes =
  (store: Store, now: () => number): Routes =>
  async (app) => {
    const deps = { store, now };
    for (const route of [listViews, saveView, removeView]) route(app, deps);
  };
