// The portfolio over time and by segment: the summary (grouped by a metadata key), the score
// distribution, the trend of the last N days and the biggest movers. docs/api.md, "Segments, trends and movers".
import { errorResponses } from '../api/common.ts';
import { MAX_GROUPS } from '../api/limits.ts';
import {
  DistributionAnswer,
  DistributionQuery,
  MoversAnswer,
  MoversQuery,
  SummaryAnswer,
  SummaryQuery,
  TrendAnswer,
  TrendQuery,
} from '../api/portfolio.ts';
import { arrFigures, DAY_MS, dayOf, figures, trend } from '../domain/portfolio.ts';
import { round6 } from '../domain/scoring.ts';
import type { GroupTally, Store } from '../store/store.ts';
import type { App, Routes } from './reply.ts';
import { segmentOf } from './segments.ts';

interface Deps {
  store: Store;
  now: () => number;
}

/** Worst average first; equal averages by value (as JSON text), customers without the key last. */
function groupsJson(groups: GroupTally[]) {
  const listed = groups.map((g) => ({ text: g.value, ...figures(g), arr: arrFigures(g).arr }));
  listed.sort(
    (a, b) =>
      (a.average as number) - (b.average as number) ||
      (a.text === null ? 1 : b.text === null ? -1 : a.text < b.text ? -1 : a.text > b.text ? 1 : 0),
  );
  return listed.slice(0, MAX_GROUPS).map(({ text, total, counts, average, arr }) => ({
    value: text === null ? null : JSON.parse(text),
    total,
    counts,
    average: average as number,
    arr,
  }));
}

function summary(app: App, { store }: Deps): void {
  app.get(
    '/health-scores/summary',
    {
      schema: {
        tags: ['health scores'],
        summary:
          'How many customers are in each status band, with their average; optionally per metadata value',
        querystring: SummaryQuery,
        response: { 200: SummaryAnswer, ...errorResponses(400, 401) },
      },
    },
    async (req) => {
      const segment = segmentOf(req, 'active');
      const tally = await store.tally(req.accountId, segment);
      const all = { ...figures(tally), ...arrFigures(tally) };
      const groupBy = req.query.group_by;
      if (groupBy === undefined) return all;
      const by = groupBy === 'owner' ? 'owner' : { metadata: groupBy.slice('metadata.'.length) };
      const groups = await store.tallyBy(req.accountId, by, segment);
      return { ...all, groups: groupsJson(groups), groups_truncated: groups.length > MAX_GROUPS };
    },
  );
}

function distribution(app: App, { store }: Deps): void {
  app.get(
    '/health-scores/distribution',
    {
      schema: {
        tags: ['health scores'],
        summary:
          'How many current scores fall in each of N equal bins of [0, 1], counted over every customer',
        querystring: DistributionQuery,
        response: { 200: DistributionAnswer, ...errorResponses(400, 401) },
      },
    },
    async (req) => {
      const bins = req.query.bins ?? 20;
      const tallies = await store.distribution(req.accountId, bins, segmentOf(req, 'active'));
      const listed = tallies.map((t, i) => ({
        from: round6(i / bins),
        to: round6((i + 1) / bins),
        ...figures(t),
      }));
      return { total: listed.reduce((n, b) => n + b.total, 0), bins: listed };
    },
  );
}

function trendRoute(app: App, { store, now }: Deps): void {
  app.get(
    '/health-scores/trend',
    {
      schema: {
        tags: ['health scores'],
        summary: 'The portfolio at the end of each of the last N UTC days (today so far), oldest first',
        querystring: TrendQuery,
        response: { 200: TrendAnswer, ...errorResponses(400, 401) },
      },
    },
    async (req) => {
      const segment = segmentOf(req, 'active');
      const days = req.query.days ?? 30;
      const today = dayOf(now());
      const firstDay = today - days + 1;
      // The first day's own changes are not needed: its end is the rest taken from now.
      const inputs = await store.trendInputs(req.accountId, firstDay + 1, segment);
      return { data: trend(inputs.now, inputs.days, today, days) };
    },
  );
}

function moversRoute(app: App, { store, now }: Deps): void {
  app.get(
    '/health-scores/movers',
    {
      schema: {
        tags: ['health scores'],
        summary: 'The customers whose score fell (or rose) most over the last N days',
        querystring: MoversQuery,
        response: { 200: MoversAnswer, ...errorResponses(400, 401) },
      },
    },
    async (req) => {
      const movers = await store.movers(req.accountId, {
        since: now() - (req.query.days ?? 7) * DAY_MS,
        direction: req.query.direction ?? 'down',
        limit: req.query.limit ?? 10,
        segment: segmentOf(req, 'active'),
      });
      return {
        data: movers.map((m) => ({
          customer_id: m.customerId,
          name: m.name,
          health_score: m.score,
          status: m.status,
          baseline_score: m.baseline,
          change: round6(m.change),
        })),
      };
    },
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [summary, distribution, trendRoute, moversRoute];

export const portfolioRoutes =
  (store: Store, now: () => number): Routes =>
  async (app) => {
    for (const route of ROUTES) route(app, { store, now });
  };
