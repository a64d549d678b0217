// Sources (docs/api.md, "Sources"): the schemas of /api/sources and a source as the API writes it.
import { Type } from 'typebox';
import { SOURCE_TYPES, type SourceLogEntry } from '../domain/sources.ts';
import { iso } from '../domain/time.ts';
import type { SourceActivityEntry, SourceRecord } from '../store/store.ts';
import { Limit, Timestamp } from './common.ts';
import { FactorName } from './limits.ts';

export const SOURCE_NAME_MAX = 100;
/** An event renamed or ignored by a Segment source: at most this many, each name this long. */
export const EVENTS_MAX = 200;
export const EVENT_NAME_MAX = 200;
/** A webhook mapping's expression may be this long. */
export const EXPRESSION_MAX = 2000;

const Name = Type.String({ minLength: 1, maxLength: SOURCE_NAME_MAX });
const Trusted = Type.Boolean({
  description:
    'segment: a server-side key, whose messages may create customers and set their name, email, owner, ARR and renewal. Default false.',
});
const Events = Type.Unsafe<Record<string, string | null>>({
  type: 'object',
  maxProperties: EVENTS_MAX,
  propertyNames: { minLength: 1, maxLength: EVENT_NAME_MAX },
  additionalProperties: { anyOf: [{ type: 'string', ...FactorName }, { type: 'null' }] },
  description: 'segment: an event name to the metric it counts into, or null to ignore the event.',
});
const SigningSecret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/=]{8,200}$',
  description: "stripe: the endpoint's signing secret as Stripe shows it (whsec_…); never answered.",
});
const Expression = Type.String({ minLength: 1, maxLength: EXPRESSION_MAX });
export const Mapping = Type.Object(
  {
    customer_id: Expression,
    at: Type.Optional(Expression),
    metrics: Type.Optional(Expression),
    counts: Type.Optional(Expression),
    customer: Type.Optional(Expression),
  },
  {
    additionalProperties: false,
    description: 'webhook: JSONata expressions over {body, headers} (docs/sources.md, "Webhooks").',
  },
);
const SignatureIn = Type.Object(
  {
    header: Type.String({ pattern: '^[A-Za-z0-9-]{1,100}$' }),
    secret: Type.Optional(Type.String({ minLength: 16, maxLength: 200 })),
    encoding: Type.Union([Type.Literal('hex'), Type.Literal('base64')]),
    prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  },
  {
    additionalProperties: false,
    description:
      'webhook: an HMAC-SHA256 of the raw body in this header; the secret is generated (and shown once) when not given.',
  },
);
const SignatureOut = Type.Object({
  header: Type.String(),
  encoding: Type.String(),
  prefix: Type.Union([Type.String(), Type.Null()]),
});

export const CreateSourceBody = Type.Object(
  {
    type: Type.Enum(SOURCE_TYPES),
    name: Name,
    trusted: Type.Optional(Trusted),
    events: Type.Optional(Events),
    signing_secret: Type.Optional(SigningSecret),
    mapping: Type.Optional(Mapping),
    signature: Type.Optional(SignatureIn),
  },
  { additionalProperties: false },
);
export const UpdateSourceBody = Type.Object(
  {
    name: Type.Optional(Name),
    enabled: Type.Optional(Type.Boolean()),
    trusted: Type.Optional(Trusted),
    events: Type.Optional(Events),
    signing_secret: Type.Optional(SigningSecret),
    mapping: Type.Optional(Mapping),
    signature: Type.Optional(Type.Union([SignatureIn, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);
export const SourceParams = Type.Object({ source_id: Type.String() });
export const SourceLogQuery = Type.Object(
  { limit: Type.Optional(Limit), starting_after: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

const Stats = Type.Object({
  received: Type.Integer(),
  applied: Type.Integer(),
  ignored: Type.Integer(),
  refused: Type.Integer(),
  last_received_at: Type.Union([Timestamp, Type.Null()]),
});

const SourceFields = {
  id: Type.String({ description: '`src_` and a time-ordered random part.' }),
  type: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  ingest_url: Type.String({
    description: 'Where the tool sends: its key or token is in it only in the answer that created it.',
  }),
  trusted: Type.Optional(Type.Boolean()),
  events: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]))),
  mapping: Type.Optional(Type.Record(Type.String(), Type.String())),
  signature: Type.Optional(Type.Union([SignatureOut, Type.Null()])),
  stats: Stats,
  created_at: Timestamp,
  updated_at: Timestamp,
};
export const Source = Type.Object(SourceFields);
export const SourceCreated = Type.Object({
  ...SourceFields,
  // An Idempotency-Key's replay of a create leaves out what it showed once, the URL with its token too.
  ingest_url: Type.Optional(SourceFields.ingest_url),
  write_key: Type.Optional(
    Type.String({ description: 'segment: sk_…, the write key, shown only in this answer (kept as a hash).' }),
  ),
  signature_secret: Type.Optional(
    Type.String({
      description: "webhook: the signature's secret Vitals generated, shown only in this answer.",
    }),
  ),
});
export const SourceList = Type.Object({ data: Type.Array(Source) });

export const SourceLogItem = Type.Object({
  id: Type.String(),
  received_at: Timestamp,
  kind: Type.String(),
  customer_id: Type.Union([Type.String(), Type.Null()]),
  result: Type.Union([Type.Literal('applied'), Type.Literal('ignored'), Type.Literal('refused')]),
  reason: Type.Union([Type.String(), Type.Null()]),
});
export const SourceLogPage = Type.Object({ data: Type.Array(SourceLogItem), has_more: Type.Boolean() });

/** How many of a customer's latest source messages GET /api/customers/{id}/source-activity answers. */
export const ACTIVITY_LIMIT = 10;

const ActivityItem = Type.Object({
  id: Type.String({ description: "The message's id in its source's log." }),
  source_id: Type.String(),
  source_name: Type.String(),
  kind: Type.String(),
  result: SourceLogItem.properties.result,
  reason: Type.Union([Type.String(), Type.Null()]),
  received_at: Timestamp,
});
export const SourceActivity = Type.Object({
  data: Type.Array(ActivityItem, {
    description: `The customer's last ${ACTIVITY_LIMIT} messages in its sources' logs, newest first, whatever their result.`,
  }),
  last_applied: Type.Union([ActivityItem, Type.Null()], {
    description:
      'The newest message that changed the customer (result applied), older than those of `data` or not; null when the logs hold none.',
  }),
});

/** Where a source's tool sends, under `base` (the public address): `secret` only in the create answer. */
export function ingestUrl(
  base: string,
  s: Pick<SourceRecord, 'id' | 'type' | 'config'>,
  token?: string,
): string {
  if (s.type === 'segment') return `${base}/v1/batch`;
  if (s.type === 'stripe') return `${base}/ingest/stripe/${s.id}`;
  const signed = s.config.type === 'webhook' && s.config.webhook.signature !== null;
  if (signed) return `${base}/ingest/webhook/${s.id}`;
  return `${base}/ingest/webhook/${s.id}/${token ?? '…'}`;
}

/** The source as the API answers it (`extra`: what the create answer alone shows). */
export function sourceFields(
  s: SourceRecord,
  base: string,
  extra: { token?: string; writeKey?: string; signatureSecret?: string } = {},
) {
  const c = s.config;
  return {
    id: s.id,
    type: s.type,
    name: s.name,
    enabled: s.enabled,
    ingest_url: ingestUrl(base, s, extra.token),
    ...(c.type === 'segment' ? { trusted: c.segment.trusted, events: c.segment.events } : {}),
    ...(c.type === 'webhook'
      ? { mapping: { ...c.webhook.mapping }, signature: c.webhook.signature && { ...c.webhook.signature } }
      : {}),
    stats: {
      received: s.stats.received,
      applied: s.stats.applied,
      ignored: s.stats.ignored,
      refused: s.stats.refused,
      last_received_at: s.stats.lastReceivedAt === null ? null : iso(s.stats.lastReceivedAt),
    },
    created_at: iso(s.createdAt),
    updated_at: iso(s.updatedAt),
    ...(extra.writeKey ? { write_key: extra.writeKey } : {}),
    ...(extra.signatureSecret ? { signature_secret: extra.signatureSecret } : {}),
  };
}

export const logItemFields = (e: SourceLogEntry) => ({
  id: e.id,
  received_at: iso(e.receivedAt),
  kind: e.kind,
  customer_id: e.customerId,
  result: e.result,
  reason: e.reason,
});

export const activityFields = (e: SourceActivityEntry) => ({
  id: e.id,
  source_id: e.sourceId,
  source_name: e.sourceName,
  kind: e.kind,
  result: e.result,
  reason: e.reason,
  received_at: iso(e.receivedAt),
});
