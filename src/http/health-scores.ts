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
import { gatesOf } from '../domain/health.ts';
import type { PortfolioSort } from '../domain/portfolio.ts';
import { STATUSES } from '../domain/scoring.ts';
import type { BookCursor, PortfolioEntry, ScoreCursor, Store } from '../store/store.ts';
import { onlyRecord } from '../store/write.ts';
import { applyFactorUpdates } from '../writes/factor-updates.ts';
import { scoreAsOf } from '../writes/overrides.ts';
import { auditEntry } from './audit.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { type App, type Routes, sendJson } from './reply.ts';
import { segmentOf } from './segments.ts';

/**
 * The next page's cursor, opaque (docs/api.md, "Health scores"): the last entry's place in the
 * list's order, with the order it was made for (the band's order alone: its first item is a status).
 */
function encodeCursor(sort: PortfolioSort, e: PortfolioEntry): string {
  const place =
    sort === 'score'
      ? [e.status, e.score, e.customerId]
      : [sort, sort === '-arr' ? e.arrCents : e.renewalAt, e.customerId];
  return Buffer.from(JSON.stringify(place)).toString('base64url');
}

/** The place a cursor holds, for `sort`; 400 (param `cursor`) unless one this list made for that sort. */
function decodeCursor(cursor: string, sort: PortfolioSort): ScoreCursor | BookCursor {
  let made: PortfolioSort | undefined;
  try {
    const [first, value, customerId] = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    if (typeof customerId === 'string') {
      if (STATUSES.includes(first) && typeof value === 'number') {
        made = 'score';
        if (sort === 'score') return { status: first, score: value, customerId };
      } else if (
        (first === '-arr' || first === 'renewal_at') &&
        (value === null || Number.isSafeInteger(value))
      ) {
        made = first;
        if (sort === first) return { value, customerId };
      }
    }
  } catch {}
  throw new ApiError(
    'parameter_invalid',
    made === undefined
      ? "'cursor' must be a next_cursor returned by this endpoint."
      : `'cursor' was made for sort=${made}, not sort=${sort}: page on with the sort it came from.`,
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
      const sort = req.query.sort ?? 'score';
      const after = req.query.cursor === undefined ? undefined : decodeCursor(req.query.cursor, sort);
      const [page, rules] = await Promise.all([
        store.listScores(req.accountId, {
          status: req.query.status,
          sort,
          after,
          limit: req.query.limit ?? 10,
          // Churned customers have left the portfolio unless asked for (docs/api.md).
          segment: segmentOf(req, 'active'),
        }),
        store.listFactorRules(req.accountId),
      ]);
      const last = page.data.at(-1);
      // By hand, as GET's answer (../api/health-scores.ts).
      const cursor = page.hasMore && last ? encodeCursor(sort, last) : null;
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
