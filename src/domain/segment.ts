// The Segment Spec intake (docs/sources.md, "Segment"): what Vitals reads of a `track`, `group`,
// `identify`, `page`, `screen` or `alias` message sent by a Segment-Spec library (Segment's,
// RudderStack's, Jitsu's), and the rest ignored (`_metadata`, `channel`, `integrations`,
// `context.library`, …). Pure: a message becomes plain data a write can take to another thread.
import { parseInstant } from './time.ts';

/** The largest `/v1/batch` body, decompressed (Segment's own limit). */
export const BATCH_MAX_BYTES = 500 * 1024;
/** The largest message: a single-message route's body, or one message of a batch. */
export const MESSAGE_MAX_BYTES = 32 * 1024;
/** How far ahead of the clock a message's instant may be. */
export const FUTURE_MS = 5 * 60_000;
const DAY_MS = 86_400_000;

export const SEGMENT_TYPES = ['track', 'identify', 'group', 'page', 'screen', 'alias'] as const;
export type SegmentType = (typeof SEGMENT_TYPES)[number];

/** The traits a trusted group sets on the customer itself; every other trait goes to its metadata. */
export const BOOK_TRAITS = ['name', 'email', 'owner', 'arr', 'renewal_at'] as const;
/** A metadata key only a trusted source may set: the Stripe intake finds customers by it. */
export const PROTECTED_METADATA = ['stripe_customer_id'] as const;

/** A message as the write takes it: what Vitals reads of it, or its refusal already decided. */
export interface SegmentMessage {
  /** The Segment type (`track`, …); what the log shows as its kind. */
  kind: string;
  messageId: string | null;
  /** When it happened (ms), within the bounds the route checked. */
  at: number;
  userId: string | null;
  /** group: its groupId; track and identify: context.groupId. */
  groupId: string | null;
  /** track: the event's name. */
  event: string | null;
  /** group: the customer change its traits make. */
  change: GroupChange | null;
  /** Decided before the write (too large, malformed, out of time): logged as refused. */
  refused: string | null;
}

/** A group's traits as a customer change: the book fields given, the other traits as metadata. */
export interface GroupChange {
  fields: Partial<Record<(typeof BOOK_TRAITS)[number], unknown>>;
  metadata: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** An id as libraries send it: a string, or a number some send for a database id. */
function idOf(v: unknown): string | null {
  if (typeof v === 'string') return v === '' ? null : v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
}

/** The traits split into the customer's own fields and its metadata. */
export function groupChange(traits: Record<string, unknown>): GroupChange {
  const fields: GroupChange['fields'] = {};
  const metadata: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(traits)) {
    if ((BOOK_TRAITS as readonly string[]).includes(key)) fields[key as (typeof BOOK_TRAITS)[number]] = value;
    else metadata[key] = value;
  }
  return { fields, metadata };
}

export interface Bounds {
  now: number;
  /** How long metric points are kept (null: no bound); an older message could not be kept. */
  retentionMs: number | null;
}

/**
 * One message of a request: `type` the route's (null on /v1/batch: the message's own), `size` its
 * JSON's bytes when part of a batch (a single route's body was bounded as it was read).
 */
export function readMessage(
  raw: unknown,
  type: SegmentType | null,
  bounds: Bounds,
  size?: number,
): SegmentMessage {
  const m = isObject(raw) ? raw : {};
  const kind = type ?? (typeof m.type === 'string' && m.type !== '' ? m.type.slice(0, 32) : 'unknown');
  const context = isObject(m.context) ? m.context : {};
  const message: SegmentMessage = {
    kind,
    messageId: idOf(m.messageId),
    at: bounds.now,
    userId: idOf(m.userId),
    groupId: idOf(kind === 'group' ? m.groupId : context.groupId),
    event: typeof m.event === 'string' ? m.event : null,
    change: null,
    refused: null,
  };
  const refuse = (reason: string) => ({ ...message, refused: reason });
  if (size !== undefined && size > MESSAGE_MAX_BYTES) {
    return refuse(`message_too_large: ${size} bytes; a message may have at most ${MESSAGE_MAX_BYTES}`);
  }
  if (!isObject(raw)) return refuse('message_invalid: a message is a JSON object');
  if (!(SEGMENT_TYPES as readonly string[]).includes(kind)) {
    return refuse(`type_invalid: '${kind}' is not a Segment message type (${SEGMENT_TYPES.join(', ')})`);
  }
  for (const field of ['timestamp', 'originalTimestamp'] as const) {
    const given = m[field];
    if (given === undefined || given === null) continue;
    const at = typeof given === 'string' ? parseInstant(given) : null;
    if (at === null) {
      return refuse(`timestamp_invalid: '${field}' must be an ISO 8601 date and time with a time zone`);
    }
    message.at = at;
    break;
  }
  if (message.at > bounds.now + FUTURE_MS) {
    return refuse(
      `timestamp_in_future: ${new Date(message.at).toISOString()} is more than 5 minutes ahead of Vitals' clock`,
    );
  }
  if (bounds.retentionMs !== null && message.at < bounds.now - bounds.retentionMs) {
    const days = Math.round(bounds.retentionMs / DAY_MS);
    return refuse(
      `timestamp_too_old: ${new Date(message.at).toISOString()} is older than the metrics Vitals keeps (${days} days)`,
    );
  }
  if (kind === 'group') {
    if (message.groupId === null) return refuse("group_id_missing: a group message needs its 'groupId'");
    if (m.traits !== undefined && m.traits !== null && !isObject(m.traits)) {
      return refuse("traits_invalid: 'traits' must be an object");
    }
    message.change = groupChange(isObject(m.traits) ? m.traits : {});
  }
  if (kind === 'track' && (message.event === null || message.event === '')) {
    return refuse("event_missing: a track message needs its 'event' name");
  }
  return message;
}

/** The instant a day's count is kept at: 00:00:00.000Z of the message's UTC day. */
export const dayOf = (at: number): number => Math.floor(at / DAY_MS) * DAY_MS;
