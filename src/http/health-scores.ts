// Health scores (docs/api.md, "Health scores"): parse, send the score write (store.run, gathered
// by the backend: ../store/write.ts) or read the store, answer in the shapes of ../api/health-scores.ts.
import { Type } from 'typebox';
import { errorResponses, CustomerParams as IdParams } from '../api/common.ts';
import {
  HistoryPage,
  HistoryQuery,
  healthScoreJson,
  PatchBody,
  PortfolioPage,
  PortfolioQuery,
  portfolioPageJson,
  ScoreBody,
  toHistoryEntry,
} from '../api/health-scores.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { gatesOf, type ScoreRecord } from '../domain/health.ts';
import { STATUSES } from '../domain/scoring.ts';
import type { ScoreCursor, Store } from '../store/store.ts';
import { onlyRecord } from '../store/write.ts';
import { applyFactorUpdates } from '../writes/factor-updates.ts';
import { scoreAsOf } from '../writes/overrides.ts';
import { auditEntry } from './audit.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { type App, type Routes, sendJson } from './reply.ts';
import { segmentOf } from './segments.ts';

const encodeCursor = (s: ScoreRecord) =>
  Buffer.from(JSON.stringify([s.status, s.score, s.customerId])).toString('base64url');

function decodeCursor(cursor: string): ScoreCursor {
  try {
    const [status, score, customerId] = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    if (STATUSES.includes(status) && typeof score === 'number' && typeof customerId === 'string') {
      return { status, score, customerId };
    }
  } catch {}
  throw new ApiError(
    'parameter_invalid',
    "'cursor' must be a next_cursor returned by this endpoint.",
    'cursor',
  );
}

interface Deps {
  store: Store;
  now: () => number;
}

const HealthScoreRef = Type.Ref('HealthScore');

/**
 * POST replaces a customer's factors, PATCH merges into them (null removes one): one write,
 * gathered with the account's other updates meanwhile, in one call (../store/write.ts).
 */
function factorsRoute(merge: boolean) {
  return (app: App, { store, now }: Deps): void => {
    app.route({
      method: merge ? 'PATCH' : 'POST',
      url: '/customers/:customer_id/health-score',
      config: { area: 'customers' },
      schema: {
        tags: ['health scores'],
        summary: merge
          ? 'Merge factors into the current set (null removes one) and recompute'
          : "Replace a customer's factors and recompute its health score",
        params: IdParams,
        body: merge ? PatchBody : ScoreBody,
        response: { 200: HealthScoreRef, ...errorResponses(400, 401, 404, 413, 415) },
      },
      handler: async (req, reply) => {
        const item = {
          customerId: req.params.customer_id,
          factors: req.body.factors,
          merge,
          // Only a POST is idempotent by key (./idempotency.ts).
          answer: merge ? undefined : claimToAnswer(req),
          audit: auditEntry(req, req.params.customer_id, now()),
        };
        const record = onlyRecord(await store.run(applyFactorUpdates, req.accountId, [item], now()));
        // The same text the write stored as the Idempotency-Key's answer, if there is a key.
        if (!merge) answeredWithWrite(req);
        return sendJson(reply, healthScoreJson(record));
      },
    });
  };
}

function getScore(app: App, { store, now }: Deps): void {
  app.get(
    '/customers/:customer_id/health-score',
    {
      schema: {
        tags: ['health scores'],
        summary: "Retrieve a customer's current health score",
        params: IdParams,
        response: { 200: HealthScoreRef, ...errorResponses(401, 404) },
      },
    },
    async (req, reply) => {
      const { customer_id } = req.params;
      // The rules' gates say which cap the stored status (gated_by); read beside the score.
      const [score, rules] = await Promise.all([
        store.getScore(req.accountId, customer_id),
        store.listFactorRules(req.accountId),
      ]);
      // Built by hand, as POST's answer is (../api/health-scores.ts): the schema serializer would test which
      // branch of `override` (an object or null) each answer takes.
      if (score) {
        const shown = await scoreAsOf(store, req.accountId, score, now());
        return sendJson(reply, healthScoreJson(shown, gatesOf(rules)));
      }
      if (!(await store.getCustomer(req.accountId, customer_id))) throw notFound.customer(customer_id);
      throw notFound.healthScore(customer_id);
    },
  );
}

function listHistory(app: App, { store }: Deps): void {
  app.get(
    '/customers/:customer_id/health-score/history',
    {
      schema: {
        tags: ['health scores'],
        summary: "A customer's score changes, newest first",
        params: IdParams,
        querystring: HistoryQuery,
        response: {
          200: HistoryPage,
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (req) => {
      const { customer_id } = req.params;
      if (!(await store.getCustomer(req.accountId, customer_id))) throw notFound.customer(customer_id);
      const page = await store.listHistory(req.accountId, customer_id, {
        limit: req.query.limit ?? 10,
        before: req.query.starting_after,
      });
      return { data: page.data.map(toHistoryEntry), has_more: page.hasMore };
    },
  );
}

function listScores(app: App, { store }: Deps): void {
  app.get(
    '/health-scores',
    {
      schema: {
        tags: ['health scores'],
        summary: 'Current scores of the account, lowest first, optionally of one status band',
        querystring: PortfolioQuery,
        response: {
          200: PortfolioPage,
          ...errorResponses(400, 401),
        },
      },
    },
    async (req, reply) => {
      const after = req.query.cursor === undefined ? undefined : decodeCursor(req.query.cursor);
      const [page, rules] = await Promise.all([
        store.listScores(req.accountId, {
          status: req.query.status,
          after,
          limit: req.query.limit ?? 10,
          segment: segmentOf(req.query),
        }),
        store.listFactorRules(req.accountId),
      ]);
      const last = page.data.at(-1);
      // By hand, as GET's answer (../api/health-scores.ts).
      const cursor = page.hasMore && last ? encodeCursor(last) : null;
      return sendJson(reply, portfolioPageJson(page.data, gatesOf(rules), page.hasMore, cursor));
    },
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [factorsRoute(false), factorsRoute(true), getScore, listHistory, listScores];

export const healthScoresRoutes =
  (store: Store, now: () => number): Routes =>
  async (app) => {
    const deps: Deps = { store, now };
    for (const route of ROUTES) route(app, deps);
  };
