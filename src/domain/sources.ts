// Sources (docs/sources.md): tools that send data to Vitals in their own format — a Segment-Spec
// library, Stripe, any tool's webhook. What a source is, how its messages are judged, and the names
// Vitals gives what they carry. Pure.

export const SOURCE_TYPES = ['segment', 'stripe', 'webhook'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** The most sources an account may have (docs/api.md, "Sources"). */
export const MAX_SOURCES = 20;
/** Messages a source's log keeps, newest first: the debugger's reach. */
export const SOURCE_LOG_KEEP = 1000;
/** How long a Segment `messageId` or a Stripe event id is remembered, so a retry applies once. */
export const DEDUPE_MS = 7 * 86_400_000;

export type SourceResult = 'applied' | 'ignored' | 'refused';

/** What a source counts of the messages it received. */
export interface SourceStats {
  received: number;
  applied: number;
  ignored: number;
  refused: number;
  lastReceivedAt: number | null;
}

export const emptyStats = (): SourceStats => ({
  received: 0,
  applied: 0,
  ignored: 0,
  refused: 0,
  lastReceivedAt: null,
});

/** What one message came to, before it is logged: its log entry without the id, the instant and the kind. */
export interface MessageOutcome {
  result: SourceResult;
  customerId: string | null;
  reason: string | null;
  /**
   * What an applied message changed of its customer, in words, for the customer's timeline
   * (docs/api.md, "Timeline"); absent when it changed nothing of the customer (an identify).
   */
  summary?: string;
}

export const refused = (customerId: string | null, reason: string): MessageOutcome => ({
  result: 'refused',
  customerId,
  reason,
});
export const ignored = (customerId: string | null, reason: string): MessageOutcome => ({
  result: 'ignored',
  customerId,
  reason,
});

/** One message as the source's log keeps it. */
export interface SourceLogEntry {
  id: string;
  receivedAt: number;
  /** The Segment type (`track`, `group`, …), the Stripe event type, or `webhook`. */
  kind: string;
  customerId: string | null;
  result: SourceResult;
  /** Why, in words a person understands (`customer_not_found: …`); null when applied plainly. */
  reason: string | null;
}

/** A Segment source's settings (docs/sources.md, "Segment"). */
export interface SegmentConfig {
  /** Only a trusted source (a server-side key) creates customers and sets their name, email, owner, ARR, renewal. */
  trusted: boolean;
  /** An event's metric, by event name: another name, or null to ignore the event. */
  events: Record<string, string | null>;
}

/** A webhook source's mapping: JSONata expressions over `{body, headers}` (docs/sources.md, "Webhooks"). */
export interface WebhookMapping {
  customer_id: string;
  at?: string;
  metrics?: string;
  counts?: string;
  customer?: string;
}

/** How a webhook source authenticates its deliveries: an HMAC of the raw body in a header. */
export interface WebhookSignature {
  header: string;
  encoding: 'hex' | 'base64';
  prefix: string | null;
}

export interface WebhookConfig {
  mapping: WebhookMapping;
  /** null: the ingest URL carries a token instead. */
  signature: WebhookSignature | null;
}

export type SourceConfig =
  | { type: 'segment'; segment: SegmentConfig }
  | { type: 'stripe' }
  | { type: 'webhook'; webhook: WebhookConfig };

/** The longest metric name (docs/scoring.md, "Factors from metrics"). */
const METRIC_MAX = 64;

/**
 * The metric a `track` event counts into (docs/sources.md): the event lowercased, each run of
 * characters outside [a-z0-9] replaced by `_`, trimmed of `_`, prefixed `event_` unless it then
 * starts with a letter, and cut so that the whole name is at most 64 characters. null: the event
 * has no letter or digit (refused: `event_name_invalid`).
 */
export function metricOfEvent(event: string): string | null {
  const base = event
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (base === '') return null;
  const named = /^[a-z]/.test(base) ? base : `event_${base}`;
  return named.slice(0, METRIC_MAX).replace(/_+$/, '');
}
