// Metrics (docs/api.md, "Metrics"): a customer's raw signals written one call at a time or in a
// batch, and read back newest first. The write runs where the writes run (writes/metrics.ts),
// storing the points and deriving the customer's score again when a rule reads them.
import { errorResponses, CustomerParams as IdParams } from '../api/common.ts';
import { BATCH_BODY_LIMIT, FACTOR_NAME } from '../api/limits.ts';
import {
  MetricItem,
  MetricNamesAnswer,
  MetricPointsPage,
  MetricsAnswer,
  MetricsBatchAnswer,
  MetricsBatchBody,
  MetricsBody,
  MetricsQuery,
  toMetricName,
  toMetricPoint,
} from '../api/metrics.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { parseInstant } from '../domain/time.ts';
import type { Store } from '../store/store.ts';
import { onlyRecord } from '../store/write.ts';
import { type Entry, refusedJson } from '../writes/batches.ts';
import { applyMetricWrites, type MetricUpdate, metricBatch } from '../writes/metrics.ts';
import { FUTURE_MS } from '../writes/rules.ts';
import { auditEntry } from './audit.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { instantOf } from './instants.ts';
import { type App, type Routes, sendJson } from './reply.ts';
import { itemValidator } from './validation.ts';

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

function postMetrics(app: App, { store, now }: Deps): void {
  app.post(
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
      const body = onlyRecord(
        await store.run(
          applyMetricWrites,
          req.accountId,
          [
            {
              customerId: req.params.customer_id,
              values: req.body.values,
              at: pointTime(req.body.at, now()),
              answer: claimToAnswer(req),
              audit: auditEntry(req, req.params.customer_id, now()),
            },
          ],
          now(),
        ),
      );
      // The same text the write stored as the Idempotency-Key's answer, if there is a key.
      answeredWithWrite(req);
      return sendJson(reply, body);
    },
  );
}

const checkItem = itemValidator(MetricItem);

function postMetricsBatch(app: App, { store, now }: Deps): void {
  app.post(
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

function listMetrics(app: App, { store }: Deps): void {
  app.get(
    '/customers/:customer_id/metrics',
    {
      schema: {
        tags: ['metrics'],
        summary: "A customer's metric points, newest first",
        params: IdParams,
        querystring: MetricsQuery,
        response: {
          200: MetricPointsPage,
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
        if (!FACTOR_NAME.test(metric) || ms === null) {
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
        data: page.data.map(toMetricPoint),
        has_more: page.hasMore,
      };
    },
  );
}

function listMetricNames(app: App, { store }: Deps): void {
  app.get(
    '/metrics/names',
    {
      schema: {
        tags: ['metrics'],
        summary: "The account's metric names, by name, with their customers, points and newest instant",
        response: { 200: MetricNamesAnswer, ...errorResponses(401) },
      },
    },
    async (req) => ({ data: (await store.metricNames(req.accountId)).map(toMetricName) }),
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [postMetrics, listMetrics, postMetricsBatch, listMetricNames];

export const metricsRoutes =
  (store: Store, now: () => number): Routes =>
  async (app) => {
    for (const route of ROUTES) route(app, { store, now });
  };
