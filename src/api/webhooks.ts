// Webhooks and their deliveries (docs/api.md, "Webhooks" and "Deliveries"): the schemas, and a
// webhook and a delivery as the API writes them.
import { Type } from 'typebox';
import { SUBSCRIBABLE_EVENT_TYPES, WEBHOOK_FORMATS, type WebhookFormat } from '../domain/events.ts';
import { iso } from '../domain/time.ts';
import { Limit, oneOf, Timestamp } from './common.ts';
import { BACKLOG_CAP, MAX_OVERLAP_SECONDS, MAX_URL_LENGTH } from './limits.ts';

// An enum (not a union of literals) so that a wrong type is answered with the list of valid ones.
export const EventTypes = Type.Array(Type.Enum(SUBSCRIBABLE_EVENT_TYPES), {
  minItems: 1,
  maxItems: SUBSCRIBABLE_EVENT_TYPES.length,
  uniqueItems: true,
  description: `Event types to receive: ${SUBSCRIBABLE_EVENT_TYPES.join(', ')}.`,
});
const Url = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description: 'Absolute http or https URL.',
});
const Description = Type.String({ maxLength: 1024 });
const Format = oneOf(WEBHOOK_FORMATS, {
  description:
    'The body of its deliveries: standard, {"type", "data"}; slack, Slack\'s incoming-webhook JSON ({"text", "blocks"}, one readable line per event).',
});

export const Webhook = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Type.Union([Type.String(), Type.Null()]),
    format: Format,
    enabled: Type.Boolean(),
    disabled_reason: Type.Union([Type.String(), Type.Null()]),
    previous_secret_expires_at: Type.Union([Timestamp, Type.Null()], {
      description:
        'Until when the secret replaced by the last rotation still signs beside the current one; null when it no longer does.',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Webhook' },
);
/** One webhook as GET /api/webhooks/{id} answers it: with its backlog (docs/webhooks.md, "Backlog"). */
export const WebhookWithBacklog = Type.Object({
  ...Webhook.properties,
  pending: Type.Integer({
    minimum: 0,
    description: `Deliveries not yet finished (due, retrying or in flight), counted up to ${BACKLOG_CAP}.`,
  }),
  pending_truncated: Type.Boolean({
    description: `true when more than ${BACKLOG_CAP} are pending: pending then says ${BACKLOG_CAP}.`,
  }),
  oldest_pending_at: Type.Union([Timestamp, Type.Null()], {
    description:
      "When the oldest of them was made (its event's time: its age is now minus this); null when none is pending.",
  }),
});
export const WebhookWithSecret = Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'whsec_…: shown only when created or rotated.' }),
});

export const Attempt = Type.Object({
  attempt: Type.Integer(),
  started_at: Timestamp,
  duration_ms: Type.Integer(),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  response_body: Type.Union([Type.String(), Type.Null()], { description: 'The first 1 KiB of the answer.' }),
});
export const Delivery = Type.Object(
  {
    id: Type.String(),
    webhook_id: Type.String(),
    event_id: Type.String(),
    event_type: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
    attempt_count: Type.Integer(),
    next_attempt_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
    attempts: Type.Array(Attempt),
  },
  { $id: 'Delivery' },
);

export const CreateBody = Type.Object(
  { url: Url, events: EventTypes, description: Type.Optional(Description), format: Type.Optional(Format) },
  { additionalProperties: false },
);
export const UpdateBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(EventTypes),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    format: Type.Optional(Format),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
/** For POSTs that take no fields: no body, `{}` or `null`; any field is 400 parameter_unknown. */
export const NoFields = Type.Unsafe<Record<string, never> | null>({
  type: ['object', 'null'],
  additionalProperties: false,
  description: 'No fields: send no body, or {}.',
});
/**
 * Rotate-secret's body: no body, `{}`, `null`, or `expire_previous_in` (docs/webhooks.md, "Rotating
 * the secret"). Typed by hand, since a TypeBox object cannot also be null.
 */
export const RotateBody = Type.Unsafe<{ expire_previous_in?: number } | null>({
  type: ['object', 'null'],
  properties: {
    expire_previous_in: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_OVERLAP_SECONDS,
      description:
        'Seconds the replaced secret keeps signing beside the new one (default 0: it stops at once).',
    },
  },
  additionalProperties: false,
  description: 'Optional: send no body, {}, or {"expire_previous_in": seconds}.',
});
export const IdParams = Type.Object({ webhook_id: Type.String() });
export const DeliveryParams = Type.Object({ webhook_id: Type.String(), delivery_id: Type.String() });
export const DeliveriesQuery = Type.Object(
  {
    status: Type.Optional(Type.Enum(['pending', 'succeeded', 'failed'])),
    limit: Type.Optional(Limit),
    starting_after: Type.Optional(Type.String({ maxLength: 64, description: 'A delivery id.' })),
  },
  { additionalProperties: false },
);

export const WebhookSchemas = [Webhook, Delivery];

/** What the API writes of a webhook (the store's WebhookRecord has it; never its secrets). */
export interface WebhookFields {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  format: WebhookFormat;
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: number;
  updatedAt: number;
}

/** What the API writes of a delivery (the store's DeliveryRecord has it). */
export interface DeliveryFields {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attemptCount: number;
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
  attempts: {
    attempt: number;
    startedAt: number;
    durationMs: number;
    statusCode: number | null;
    error: string | null;
    responseBody: string | null;
  }[];
}

/** The webhook's JSON at `now`: never a secret; an overlap that has ended shows as none. */
export const toWebhook = (w: WebhookFields, now: number) => ({
  id: w.id,
  url: w.url,
  events: w.events,
  description: w.description,
  format: w.format,
  enabled: w.enabled,
  disabled_reason: w.disabledReason,
  previous_secret_expires_at:
    w.previousSecret !== null && w.previousSecretExpiresAt !== null && w.previousSecretExpiresAt > now
      ? iso(w.previousSecretExpiresAt)
      : null,
  created_at: iso(w.createdAt),
  updated_at: iso(w.updatedAt),
});

export const toDelivery = (d: DeliveryFields) => ({
  id: d.id,
  webhook_id: d.webhookId,
  event_id: d.eventId,
  event_type: d.eventType,
  status: d.status,
  attempt_count: d.attemptCount,
  next_attempt_at: d.status === 'pending' && d.nextAttemptAt !== null ? iso(d.nextAttemptAt) : null,
  created_at: iso(d.createdAt),
  updated_at: iso(d.updatedAt),
  attempts: d.attempts.map((a) => ({
    attempt: a.attempt,
    started_at: iso(a.startedAt),
    duration_ms: a.durationMs,
    status_code: a.statusCode,
    error: a.error,
    response_body: a.responseBody,
  })),
});
/**
 * A webhook with its secret (WebhookWithSecret), as JSON text: the answer of create and
 * rotate-secret, which their writes store for an Idempotency-Key where they run, without the
 * reply's serializer. The shaped object's keys are the schema's, in its order, and its values
 * strings, booleans, null and arrays of strings, which JSON.stringify writes as the serializer
 * does: test/http/webhook-json.test.ts proves it byte for byte (docs/api.md, "Idempotency keys").
 */
export const webhookWithSecretJson = (w: WebhookFields & { secret: string }, now: number): string =>
  JSON.stringify({ ...toWebhook(w, now), secret: w.secret });

/** A delivery (Delivery) as JSON text, for the same reason; its integers are integers. Proven alike. */
export const deliveryJson = (d: DeliveryFields): string => JSON.stringify(toDelivery(d));

export const WebhooksList = Type.Object({ webhooks: Type.Array(Type.Ref('Webhook')) });
export const DeliveriesPage = Type.Object({
  data: Type.Array(Type.Ref('Delivery')),
  has_more: Type.Boolean(),
});
