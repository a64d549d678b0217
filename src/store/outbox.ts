// The events and the outbox (docs/webhooks.md): an event commits with the change that caused it,
// and so does one pending delivery per enabled webhook subscribed to its type; the dispatchers
// then claim those deliveries (DeliveryQueue). Written once here: the records, the roles, the
// test event and what both backends' bulk event writes share. Each backend's own: the events
// feed's order (sqlite/reader.ts, postgres/reader.ts), its bulk insert of events
// (sqlite/tx.ts, postgres/tx.ts) and its queue's claim (sqlite/queue.ts, postgres/queue.ts).
import type { EventRecord, EventType, WebhookFormat } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import { type Driver, hasNul } from './driver.ts';
import { type Page, toEvent } from './rows.ts';
import type { AttemptRecord } from './webhooks.ts';

export type { EventRecord };

/** A delivery a dispatcher has leased, with everything it needs to send it. */
export interface ClaimedDelivery {
  id: string;
  accountId: string;
  webhookId: string;
  eventId: string;
  eventType: EventType;
  /** The event's data as stored JSON text, so every attempt sends the same bytes. */
  data: string;
  url: string;
  /** The shape of the body: `{type, data}`, or Slack's incoming-webhook JSON (src/webhooks/slack.ts). */
  format: WebhookFormat;
  secret: string;
  /** The replaced secret and when it stops signing (the sender compares with the send time). */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  /** The number of the attempt about to be made (1 for the first). */
  attempt: number;
}

export interface AttemptOutcome extends AttemptRecord {
  deliveryId: string;
  accountId: string;
  webhookId: string;
  /** Lease holder: a dispatcher whose lease was taken over records the attempt but leaves the state alone. */
  owner: string;
  /** Next state of the delivery: retry at `nextAttemptAt`, or a final status. */
  next: { status: 'pending'; at: number } | { status: 'succeeded' } | { status: 'failed' };
  /** A 410 Gone switches the webhook off. */
  disableWebhook: boolean;
}

export interface ClaimOptions {
  owner: string;
  now: number;
  leaseUntil: number;
  /** The most deliveries this claim leases (the caller's free slots). */
  limit: number;
  /**
   * The most deliveries of one webhook in flight at once over every dispatcher: `byWebhook[id]`,
   * else `default`. Plain data: it may cross to the writer thread.
   */
  perWebhook: { default: number; byWebhook?: Record<string, number> };
  /** The most deliveries of one account in flight at once over every dispatcher. */
  perAccount: number;
  /** Round-robin goes on after this account, and within an account after its webhook served last. */
  after?: { account?: string; webhooks?: Record<string, string> };
}

/** Pending deliveries of one account (the /metrics backlog). */
export interface AccountBacklog {
  accountId: string;
  pending: number;
  /** created_at of its oldest pending delivery. */
  oldestAt: number;
}

/** What dispatchers need; these work across accounts, each row carrying its own. */
export interface DeliveryQueue {
  /**
   * Leases up to `limit` due deliveries of enabled webhooks to `owner` until `leaseUntil`, oldest
   * due first within a webhook, shared round-robin across accounts and then webhooks
   * (src/webhooks/fair-share.ts) so that no account or webhook has more in flight than its limit over every
   * dispatcher (a lease not yet run out is in flight; one that has run out, its dispatcher gone,
   * can be taken over). Claims are atomic against each other, across processes too.
   */
  claimDeliveries(opts: ClaimOptions): Promise<ClaimedDelivery[]>;
  recordAttempt(outcome: AttemptOutcome): Promise<void>;
  /** Several attempts' outcomes in one transaction (the dispatcher's group commit); as recordAttempt each. */
  recordAttempts(outcomes: AttemptOutcome[]): Promise<void>;
  /**
   * The earliest time after `after` at which a pending delivery falls due, or null. (What is
   * due already waits for a free slot; a lease that runs out is found by the dispatchers' poll.)
   */
  nextDueAt(after: number): Promise<number | null>;
  /** Pending deliveries per account with any, and the oldest one's creation time. */
  backlogByAccount(): Promise<AccountBacklog[]>;
  /** Calls `listener` after a commit that made deliveries due; returns an unsubscribe function. */
  onDeliveriesDue(listener: () => void): () => void;
}

export interface EventReads {
  getEvent(accountId: string, id: string): Promise<EventRecord | null>;
  /**
   * Newest first, in the feed's order. `startingAfter` (an event id): the events just older than
   * it; `endingBefore`: the `limit` events just newer than it (still newest first; `hasMore` when
   * still newer ones follow). The order never puts a later commit before an earlier one where a
   * reader could see it (docs/api.md, "Events"): a follower misses nothing.
   */
  listEvents(
    accountId: string,
    opts: { type?: EventType; startingAfter?: string; endingBefore?: string; limit: number },
  ): Promise<Page<EventRecord>>;
}

export interface EventWrites {
  /**
   * The outbox: events commit with the change that caused them, and so does one pending
   * delivery per enabled webhook subscribed to the event's type.
   */
  insertEvents(accountId: string, events: EventRecord[]): Promise<void>;
  /**
   * Writes `event` with one pending delivery to `webhookId` alone, whatever its subscriptions
   * (the test event); returns the delivery's id, or null when there is no such webhook.
   */
  insertDirectEvent(accountId: string, webhookId: string, event: EventRecord): Promise<string | null>;
}

export async function getEvent(db: Driver, accountId: string, id: string): Promise<EventRecord | null> {
  if (hasNul(id)) return null;
  const row = await db.get(
    'SELECT id, type, data, created_at FROM events WHERE account_id = $1 AND id = $2',
    [accountId, id],
  );
  return row ? toEvent(row) : null;
}

const INSERT_EVENT =
  'INSERT INTO events (id, account_id, type, data, created_at) VALUES ($1, $2, $3, $4, $5)';
const INSERT_DELIVERY = `INSERT INTO deliveries (id, account_id, webhook_id, event_id, status, attempts,
  next_attempt_at, created_at, updated_at) VALUES ($1, $2, $3, $4, 'pending', 0, $5, $5, $5)`;

/** The test event with its one delivery; the delivery's id, or null when there is no such webhook. */
export async function insertDirectEvent(
  db: Driver,
  accountId: string,
  webhookId: string,
  e: EventRecord,
): Promise<string | null> {
  // KEY SHARE on PostgreSQL (what the delivery's foreign key takes anyway), taken now: a delete
  // of the webhook running at this moment is waited for.
  const found = await db.get(
    `SELECT 1 AS found FROM webhooks WHERE account_id = $1 AND id = $2${db.keyShare}`,
    [accountId, webhookId],
  );
  if (!found) return null;
  const id = newId.delivery();
  await db.run(INSERT_EVENT, [e.id, accountId, e.type, db.json(e.data), e.createdAt]);
  await db.run(INSERT_DELIVERY, [id, accountId, webhookId, e.id, e.createdAt]);
  return id;
}

/** The enabled webhooks subscribed to each event type, from (event_type, webhook_id) rows. */
export function subscribersByType(rows: Iterable<Record<string, unknown>>): Map<string, string[]> {
  const subscribers = new Map<string, string[]>();
  for (const r of rows) {
    const list = subscribers.get(r.event_type as string);
    if (list) list.push(r.webhook_id as string);
    else subscribers.set(r.event_type as string, [r.webhook_id as string]);
  }
  return subscribers;
}

export interface NewDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  at: number;
}

/** One pending delivery per event and subscribed webhook (the outbox), in event order. */
export function deliveriesFor(
  events: readonly EventRecord[],
  subscribers: Map<string, string[]>,
): NewDelivery[] {
  const deliveries: NewDelivery[] = [];
  for (const e of events) {
    for (const webhookId of subscribers.get(e.type) ?? []) {
      deliveries.push({ id: newId.delivery(), webhookId, eventId: e.id, at: e.createdAt });
    }
  }
  return deliveries;
}

/** Counted over the partial index of pending deliveries (named where the planner must be told). */
export async function backlogByAccount(db: Driver): Promise<AccountBacklog[]> {
  const rows = await db.all(
    `SELECT account_id, count(*) AS pending, MIN(created_at) AS oldest_at
     FROM deliveries ${db.pendingIndex}
     WHERE status = 'pending' GROUP BY account_id`,
    [],
  );
  return rows.map((r) => ({
    accountId: r.account_id as string,
    pending: Number(r.pending),
    oldestAt: Number(r.oldest_at),
  }));
}
