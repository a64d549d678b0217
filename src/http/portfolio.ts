// The portfolio over time and by segment: the summary (grouped by a metadata key), the score
// distribution, the trend of the last N days and the biggest movers. docs/api.md, "Segments, trends and movers".
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { DAY_MS, dayOf, figures, trend } from '../domain/portfolio.ts';
import { round6, STATUSES } from '../domain/scoring.ts';
import type { GroupTally, Store } from '../store/store.ts';
import { errorResponses } from './schemas.ts';
import { segmentOf, segmentParams } from './segments.ts';

const Counts = Type.Object({ healthy: Type.Integer(), at_risk: Type.Integer(), critical: Type.Integer() });
const Average = Type.Union([Type.Number(), Type.Null()], {
  description: 'The mean health score to 6 places; null when there is none.',
});

/** Groups listed at most: a key with more values than this is an id, not a segment. */
export const MAX_GROUPS = 1000;

export const SummaryQuery = Type.Object(
  {
    group_by: Type.Optional(
      Type.String({
        pattern: '^metadata\\.[^\\u0000]{1,64}$',
        description: 'metadata.KEY: the figures per value of that metadata key too, worst average first.',
      }),
    ),
  },
  { additionalProperties: false, ...segmentParams },
);
const Group = Type.Object({
  value: Type.Union(
    [
      Type.String(),
      Type.Number(),
      Type.Boolean(),
      Type.Null(),
      // Open: the serializer drops properties a schema does not list, and a closed {} emptied every object.
      Type.Object({}, { additionalProperties: true }),
      Type.Array(Type.Unknown()),
    ],
    { description: 'The metadata value as stored; null for customers without the key.' },
  ),
  total: Type.Integer(),
  counts: Counts,
  average: Type.Number(),
});
export const SummaryAnswer = Type.Object({
  total: Type.Integer(),
  counts: Counts,
  average: Average,
  groups: Type.Optional(Type.Array(Group)),
  groups_truncated: Type.Optional(
    Type.Boolean({
      description: `True when the key has more than ${MAX_GROUPS} values: the worst are listed.`,
    }),
  ),
});

export const DistributionQuery = Type.Object(
  {
    bins: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: 20,
        description: '1-100 equal bins of [0, 1]: 20 (the default) are 0.05 wide.',
      }),
    ),
  },
  { additionalProperties: false, ...segmentParams },
);
export const DistributionAnswer = Type.Object({
  total: Type.Integer({
    description: 'Every current score of the account (or the segment): the bins add up to it.',
  }),
  bins: Type.Array(
    Type.Object({
      from: Type.Number({ description: 'The bin holds the scores from `from` (included)…' }),
      to: Type.Number({ description: '…up to `to` (excluded; the last bin holds 1 too).' }),
      total: Type.Integer(),
      counts: Counts,
      average: Average,
    }),
    { description: 'Lowest first, `bins` of them, empty bins included.' },
  ),
});

export const TrendQuery = Type.Object(
  { days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, default: 30, description: '1-365.' })) },
  { additionalProperties: false, ...segmentParams },
);
export const TrendAnswer = Type.Object({
  data: Type.Array(
    Type.Object({
      date: Type.String({
        description: 'YYYY-MM-DD (UTC): the portfolio as it stood at the end of this day.',
      }),
      total: Type.Integer(),
      counts: Counts,
      average: Average,
    }),
  ),
});

export const MoversQuery = Type.Object(
  {
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 7, description: '1-90.' })),
    direction: Type.Optional(Type.Enum(['down', 'up'], { default: 'down' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: '1-100.' })),
  },
  { additionalProperties: false, ...segmentParams },
);
export const MoversAnswer = Type.Object({
  data: Type.Array(
    Type.Object({
      customer_id: Type.String(),
      name: Type.String(),
      health_score: Type.Number(),
      status: Type.Enum(STATUSES),
      baseline_score: Type.Number({
        description: 'The score as it stood `days` ago (or its first score since).',
      }),
      change: Type.Number({ description: 'health_score − baseline_score, to 6 places.' }),
    }),
  ),
});

interface Deps {
  store: Store;
  now: () => number;
}

/** Worst average first; equal averages by value (as JSON text), customers without the key last. */
function groupsJson(groups: GroupTally[]) {
  const listed = groups.map((g) => ({ text: g.value, ...figures(g) }));
  listed.sort(
    (a, b) =>
      (a.average as number) - (b.average as number) ||
      (a.text === null ? 1 : b.text === null ? -1 : a.text < b.text ? -1 : a.text > b.text ? 1 : 0),
  );
  return listed.slice(0, MAX_GROUPS).map(({ text, total, counts, average }) => ({
    value: text === null ? null : JSON.parse(text),
    total,
    counts,
    average: average as number,
  }));
}

function summary(app: FastifyInstance, { store }: Deps): void {
  app.get<{ Querystring: Static<typeof SummaryQuery> }>(
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
      const segment = segmentOf(req.query);
      const all = figures(await store.tally(req.accountId, segment));
      const groupBy = req.query.group_by;
      if (groupBy === undefined) return all;
      const groups = await store.tallyBy(req.accountId, groupBy.slice('metadata.'.length), segment);
      return { ...all, groups: groupsJson(groups), groups_truncated: groups.length > MAX_GROUPS };
    },
  );
}

function distribution(app: FastifyInstance, { store }: Deps): void {
  app.get<{ Querystring: Static<typeof DistributionQuery> }>(
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
      const tallies = await store.distribution(req.accountId, bins, segmentOf(req.query));
      const listed = tallies.map((t, i) => ({
        from: round6(i / bins),
        to: round6((i + 1) / bins),
        ...figures(t),
      }));
      return { total: listed.reduce((n, b) => n + b.total, 0), bins: listed };
    },
  );
}

function trendRoute(app: FastifyInstance, { store, now }: Deps): void {
  app.get<{ Querystring: Static<typeof TrendQuery> }>(
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
      const segment = segmentOf(req.query);
      const days = req.query.days ?? 30;
      const today = dayOf(now());
      const firstDay = today - days + 1;
      // The first day's own changes are not needed: its end is the rest taken from now.
      const inputs = await store.trendInputs(req.accountId, firstDay + 1, segment);
      return { data: trend(inputs.now, inputs.days, today, days) };
    },
  );
}

function moversRoute(app: FastifyInstance, { store, now }: Deps): void {
  app.get<{ Querystring: Static<typeof MoversQuery> }>(
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
        segment: segmentOf(req.query),
      });
      return {
        data: movers.map((m) => ({
          customer_id: m.customerId,
          name: m.name,
          health_score: m.score,
          status: m.status,
          baseline_score: m.baseline,
          change: round6(m.score - m.baseline),
        })),
      };
    },
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [summary, distribution, trendRoute, moversRoute];

export const portfolioRoutes =
  (store: Store, now: () => number): FastifyPluginAsync =>
  async (app) => {
    for (const route of ROUTES) route(app, { store, now });
  };
