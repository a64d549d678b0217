// Metrics (docs/api.md, "Metrics"): the schemas, and a metric write's answer as the API writes it.
import { Type } from 'typebox';
import type { ScoreRecord } from '../domain/health.ts';
import { METRIC_VALUE_MAX } from '../domain/rules.ts';
import { iso } from '../domain/time.ts';
import { batchItems, refusal } from './batch.ts';
import { ItemCustomerId, Timestamp } from './common.ts';
import { healthScoreJson } from './health-scores.ts';
import { FactorName, MAX_VALUES } from './limits.ts';

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
  { customer_id: ItemCustomerId, values: MetricValues, at: Type.Optional(At) },
  { additionalProperties: false },
);
export const MetricsBatchBody = Type.Object(
  { metrics: batchItems('1-1,000 metric writes, applied in order.') },
  { additionalProperties: false },
);
export const MetricsAnswer = Type.Object({
  customer_id: Type.String(),
  at: Timestamp,
  values: Type.Record(Type.String(), Type.Number()),
  health_score: Type.Union([Type.Ref('HealthScore'), Type.Null()]),
});
export const MetricsBatchAnswer = Type.Object({
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
export const MetricPointsPage = Type.Object({ data: Type.Array(MetricPoint), has_more: Type.Boolean() });
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

/** What the API writes of a metric write (the writes' MetricUpdate has it). */
export interface MetricWriteFields {
  customerId: string;
  values: Record<string, number>;
  at: number;
}

/**
 * The answer of a metric write, as JSON text (the route sends it; an Idempotency-Key replays it);
 * a batch's result carries its status after the customer's id.
 */
export const metricAnswerJson = (item: MetricWriteFields, record: ScoreRecord | null, status = ''): string =>
  `{"customer_id":${JSON.stringify(item.customerId)},${status}"at":"${iso(item.at)}","values":${JSON.stringify(item.values)},"health_score":${record ? healthScoreJson(record) : 'null'}}`;

/** A metric point as the API answers it. */
export const toMetricPoint = (p: { metric: string; value: number; at: number }) => ({
  metric: p.metric,
  value: p.value,
  at: iso(p.at),
});

/** One of the account's metric names as the API answers it. */
export const toMetricName = (n: { name: string; customers: number; points: number; lastAt: number }) => ({
  name: n.name,
  customers: n.customers,
  points: n.points,
  last_at: iso(n.lastAt),
});
