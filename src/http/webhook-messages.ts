// What a webhook source's mapping made of one message, checked as the API checks what it stands
// for (docs/sources.md, "Webhooks"): `customer_id` as a customer's id, `metrics` and `counts` as
// a metric write's values, `customer` as PATCH /api/customers' body, `at` as an instant no more
// than 5 minutes ahead and within the metric retention. A value the API would refuse refuses the
// message, in the API's words; a mapping that gives nothing to apply has the message ignored.
import { Type } from 'typebox';
import { CustomerId } from '../api/common.ts';
import { UpdateBody } from '../api/customers.ts';
import { MetricValues } from '../api/metrics.ts';
import { FUTURE_MS } from '../domain/segment.ts';
import { INSTANT_RULE, parseInstant } from '../domain/time.ts';
import type { MappingOutcome } from '../work/mapping-threads.ts';
import type { CustomerChange, WebhookMessage } from '../writes/webhook-intake.ts';
import { bodyRefusal } from './text-rules.ts';
import { itemValidator } from './validation.ts';

const DAY_MS = 86_400_000;

const checkId = itemValidator(Type.Object({ customer_id: CustomerId }));
const checkResult = itemValidator(
  Type.Object(
    {
      customer_id: CustomerId,
      metrics: Type.Optional(MetricValues),
      counts: Type.Optional(MetricValues),
      customer: Type.Optional(UpdateBody),
    },
    { additionalProperties: false },
  ),
);

export interface Bounds {
  /** When the delivery was received: the instant of a message whose mapping gives no `at`. */
  now: number;
  /** How long metric points are kept (null: no bound); an older message could not be kept. */
  retentionMs: number | null;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** A value given: an empty object, null and undefined are nothing (a mapping's way to skip a field). */
const given = (v: unknown): boolean =>
  v !== undefined && v !== null && v !== '' && !(isObject(v) && Object.keys(v).length === 0);

/** An id as tools send it: a string, or a whole number (Zendesk's and HubSpot's ids are numbers). */
const idOf = (v: unknown): unknown => (typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v);

/** The message's instant, or why it is refused. */
function instantOf(at: unknown, bounds: Bounds): number | string {
  if (!given(at)) return bounds.now;
  const ms = typeof at === 'string' ? parseInstant(at) : null;
  if (ms === null) {
    return `at_invalid: the mapping's at must be ${INSTANT_RULE} (JSONata's $fromMillis() makes one from epoch milliseconds)`;
  }
  if (ms > bounds.now + FUTURE_MS) {
    return `timestamp_in_future: ${new Date(ms).toISOString()} is more than 5 minutes ahead of Vitals' clock`;
  }
  if (bounds.retentionMs !== null && ms < bounds.now - bounds.retentionMs) {
    const days = Math.round(bounds.retentionMs / DAY_MS);
    return `timestamp_too_old: ${new Date(ms).toISOString()} is older than the metrics Vitals keeps (${days} days)`;
  }
  return ms;
}

/** The message the write takes: what the mapping gave, checked, or its refusal. */
export function readOutcome(outcome: MappingOutcome, bounds: Bounds): WebhookMessage {
  const message: WebhookMessage = {
    customerId: null,
    at: bounds.now,
    metrics: {},
    counts: {},
    customer: null,
    decided: null,
  };
  const decide = (result: 'refused' | 'ignored', reason: string): WebhookMessage => ({
    ...message,
    decided: { result, reason },
  });
  if (!outcome.ok) return decide('refused', outcome.reason);
  const v = outcome.values;
  const fields = {
    customer_id: idOf(v.customer_id),
    ...(given(v.metrics) ? { metrics: v.metrics } : {}),
    ...(given(v.counts) ? { counts: v.counts } : {}),
    ...(given(v.customer) ? { customer: v.customer } : {}),
  };
  const something = Object.keys(fields).length > 1;
  if (!given(fields.customer_id)) {
    return something
      ? decide('refused', "customer_id_missing: the mapping's customer_id gave nothing for this message")
      : decide('ignored', 'nothing_to_apply: the mapping gave no customer_id, metrics, counts or customer');
  }
  // The log names the customer when the id is one, whatever else is refused.
  if (!checkId({ customer_id: fields.customer_id })) message.customerId = fields.customer_id as string;
  const refusal = checkResult(fields) ?? bodyRefusal(fields);
  if (refusal) return decide('refused', `${refusal.code}: ${refusal.message}`);
  const at = instantOf(v.at, bounds);
  if (typeof at === 'string') return decide('refused', at);
  if (!something) {
    return decide('ignored', 'nothing_to_apply: the mapping gave no metrics, counts or customer fields');
  }
  message.at = at;
  message.metrics = (fields.metrics ?? {}) as Record<string, number>;
  message.counts = (fields.counts ?? {}) as Record<string, number>;
  message.customer = (fields.customer ?? null) as CustomerChange | null;
  return message;
}
