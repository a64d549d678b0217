// Metrics (docs/api.md, "Metrics"): a customer's raw signals written one call at a time or in a
// batch, and read back newest first. The write runs where the writes run (writes/metrics.ts),
// storing the points and deriving the customer's score again when a rule reads them.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { ApiError, notFound } from '../domain/errors.ts';
import { METRIC_VALUE_MAX } from '../domain/rules.ts';
import { iso, parseInstant } from '../domain/time.ts';
import type { Store } from '../store/store.ts';
import { runOne } from '../store/write.ts';
import { type Entry, refusedJson } from '../writes/batches.ts';
import { applyMetricWrites, type MetricUpdate, metricBatch } from '../writes/metrics.ts';
import { FUTURE_MS } from '../writes/rules.ts';
import { auditEntry } from './audit.ts';
import { BATCH_BODY_LIMIT, MAX_BATCH_ITEMS, refusal } from './batch-schemas.ts';
import { sendJson } from './customers.ts';
import { FactorName } from './health-scores.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { errorResponses, instantOf, Timestamp } from './schemas.ts';
import { itemValidator } from './validation.ts';

const MAX_VALUES = 50;
/** A value's bound, METRIC_VALUE_MAX (±1e15): no aggregate of such values overflows a double. */
const MAX_VALUE = METRIC_VALUE_MAX;

export const MetricValues = Type.Unsafe<Record<string, number>>({
  type: 'object',
  minProperties: 1,
  maxProperties: MAX_VALUES,
  propertyNames: FactorName,
  additionalProperties: { type: 'number', minimum: -MAX_VALUE, maximum: MAX_VALUE },
  description: `Metric name (as for factors) to a number from -1e15 to 1e15; 1-${MAX_VALUES} of them.`,
});
const At = Type.String({
  maxLength: 64,
  description:
    'When the values were measured: ISO 8601 with a time zone; default now; at most 5 minutes ahead.',
});
export const MetricsBody = Type.Object(
  { values: MetricValues, at: Type.Optional(At) },
  { additionalProperties: false },
);
export const MetricItem = Type.Object(
  { customer_id: Type.String({ minLength: 1, maxLength: 255 }), values: MetricValues, at: Type.Optional(At) },
  { additionalProperties: false },
);
export const MetricsBatchBody = Type.Object(
  {
    metrics: Type.Array(Type.Unknown(), {
      minItems: 1,
      maxItems: MAX_BATCH_ITEMS,
      description: '1-1,000 metric writes, applied in order.',
    }),
  },
  { additionalProperties: false },
);
export const MetricsAnswer = Type.Object({
  customer_id: Type.String(),
  at: Timestamp,
  values: Type.Record(Type.String(), Type.Number()),
  health_score: Type.Union([Type.Ref('HealthScore'), Type.Null()]),
});
const MetricsBatchAnswer = Type.Object({
  results: Type.Array(
    Type.Union([
      Type.Object({
        customer_id: Type.String(),
        status: Type.Literal(200),
        at: Timestamp,
        values: Type.Record(Type.String(), Type.Number()),
        health_score: Type.Union([Type.Ref('HealthScore'), Type.Null()]),
      }),
      Type.Object(refusal),
    ]),
  ),
});
export const MetricNameItem = Type.Object({
  name: Type.String(),
  customers: Type.Integer({ description: 'Customers with at least one point of it.' }),
  points: Type.Integer(),
  last_at: Timestamp,
});
export const MetricNamesAnswer = Type.Object({ data: Type.Array(MetricNameItem) });
const MetricPoint = Type.Object({ metric: Type.String(), value: Type.Number(), at: Timestamp });
const IdParams = Type.Object({ customer_id: Type.String() });
export const MetricsQuery = Type.Object(
  {
    metric: Type.Optional(Type.String({ ...FactorName })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
    starting_after: Type.Optional(
      Type.String({ maxLength: 128, description: "The last point of the previous page, as 'metric@at'." }),
    ),
  },
  { additionalProperties: false },
);

const METRIC_NAME = new RegExp(FactorName.pattern);
/** `at` as ms since the epoch: now when absent; 400 (param `param`) unless ISO 8601 and at most 5 minutes ahead. */
export function pointTime(at: string | undefined, now: number, param = 'at'): number {
  if (at === undefined) return now;
  const ms = instantOf(at, param);
  if (ms > now + FUTURE_MS) {
    throw new ApiError(
      'parameter_invalid',
      `'${param}' may be at most 5 minutes ahead of the server's clock.`,
      param,
    );
  }
  return ms;
}

interface Deps {
  store: Store;
  now: () => number;
}

function postMetrics(app: FastifyInstance, { store, now }: Deps): void {
  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof MetricsBody> }>(
    '/customers/:customer_id/metrics',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['metrics'],
        summary: "Record a customer's metric values; the factors rules derive from them follow at once",
        params: IdParams,
        body: MetricsBody,
        response: { 200: MetricsAnswer, ...errorResponses(400, 401, 404, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      // Gathered with the account's other metric writes meanwhile, in one call (../store/write.ts).
      const body = await runOne(
        store,
        applyMetricWrites,
        req.accountId,
        {
          customerId: req.params.customer_id,
          values: req.body.values,
          at: pointTime(req.body.at, now()),
          answer: claimToAnswer(req),
          audit: auditEntry(req, req.params.customer_id, now()),
        },
        now(),
      );
      // The same text the write stored as the Idempotency-Key's answer, if there is a key.
      answeredWithWrite(req);
      return sendJson(reply, body);
    },
  );
}

const checkItem = itemValidator(MetricItem);

function postMetricsBatch(app: FastifyInstance, { store, now }: Deps): void {
  app.post<{ Body: Static<typeof MetricsBatchBody> }>(
    '/metrics/batch',
    {
      bodyLimit: BATCH_BODY_LIMIT,
      config: { area: 'customers' },
      schema: {
        tags: ['metrics'],
        summary: 'Record up to 1,000 metric writes in one transaction',
        body: MetricsBatchBody,
        response: { 200: MetricsBatchAnswer, ...errorResponses(400, 401, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      const clock = now();
      const entries: Entry<MetricUpdate>[] = req.body.metrics.map((raw) => {
        const item = raw as { customer_id?: unknown; values?: Record<string, number>; at?: string };
        const id = typeof item?.customer_id === 'string' ? item.customer_id : null;
        try {
          const refused = checkItem(raw);
          if (refused) throw refused;
          return {
            item: { customerId: id as string, values: item.values ?? {}, at: pointTime(item.at, clock) },
          };
        } catch (error) {
          if (error instanceof ApiError) return { result: refusedJson(id, error) };
          throw error;
        }
      });
      const body = await store.run(metricBatch, req.accountId, entries, claimToAnswer(req), clock);
      answeredWithWrite(req);
      return sendJson(reply, body);
    },
  );
}

function listMetrics(app: FastifyInstance, { store }: Deps): void {
  app.get<{ Params: Static<typeof IdParams>; Querystring: Static<typeof MetricsQuery> }>(
    '/customers/:customer_id/metrics',
    {
      schema: {
        tags: ['metrics'],
        summary: "A customer's metric points, newest first",
        params: IdParams,
        querystring: MetricsQuery,
        response: {
          200: Type.Object({ data: Type.Array(MetricPoint), has_more: Type.Boolean() }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (req) => {
      const id = req.params.customer_id;
      let after: { at: number; metric: string } | undefined;
      if (req.query.starting_after !== undefined) {
        const [metric = '', at = ''] = req.query.starting_after.split('@');
        const ms = parseInstant(at);
        if (!METRIC_NAME.test(metric) || ms === null) {
          throw new ApiError(
            'parameter_invalid',
            "'starting_after' is the last point of the previous page as 'metric@at', such as logins@2026-03-31T12:00:00.000Z.",
            'starting_after',
          );
        }
        after = { at: ms, metric };
      }
      const page = await store.listMetricPoints(req.accountId, id, {
        metric: req.query.metric,
        after,
        limit: req.query.limit ?? 10,
      });
      // Points go with their customer: only an empty page asks whether the customer exists.
      if (page.data.length === 0 && (await store.getCustomer(req.accountId, id)) === null) {
        throw notFound.customer(id);
      }
      return {
        data: page.data.map((p) => ({ metric: p.metric, value: p.value, at: iso(p.at) })),
        has_more: page.hasMore,
      };
    },
  );
}

function listMetricNames(app: FastifyInstance, { store }: Deps): void {
  app.get(
    '/metrics/names',
    {
      schema: {
        tags: ['metrics'],
        summary: "The account's metric names, by name, with their customers, points and newest instant",
        response: { 200: MetricNamesAnswer, ...errorResponses(401) },
      },
    },
    async (req) => ({
      data: (await store.metricNames(req.accountId)).map((n) => ({
        name: n.name,
        customers: n.customers,
        points: n.points,
        last_at: iso(n.lastAt),
      })),
    }),
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [postMetrics, listMetrics, postMetricsBatch, listMetricNames];

export const metricsRoutes =
  (store: Store, now: () => number): FastifyPluginAsync =>
  async (app) => {
    for (const route of ROUTES) route(app, { store, now });
  };
