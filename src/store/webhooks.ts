// Webhooks and their deliveries (docs/webhooks.md): the records, the reads a person makes of them
// and the writes of a webhook, written once for both backends. The events and the outbox that
// makes deliveries, and the dispatchers' queue, are outbox.ts.
import type { EventType, SubscribableEventType, WebhookFormat } from '../domain/events.ts';
import { beforeNul, type Driver, hasNul, Params, type Row } from './driver.ts';
import { type Page, toAttempt, toWebhook } from './rows.ts';

export interface WebhookRecord {
  id: string;
  url: string;
  events: SubscribableEventType[];
  description: string | null;
  /** The shape of its bodies: `{type, data}`, or Slack's incoming-webhook JSON. */
  format: WebhookFormat;
  secret: string;
  /**
   * The secret a rotation with an overlap replaced: it signs beside `secret` until
   * `previousSecretExpiresAt` (docs/webhooks.md, "Rotating the secret"); both null when none.
   */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  enabled: boolean;
  /** Why Vitals switched it off (a 410 from the receiver); null when a person did, or it is on. */
  disabledReason: string | null;
  createdAt: number;
  updatedAt: number;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface AttemptRecord {
  attempt: number;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  /** The first 1 KiB of the receiver's answer. */
  responseBody: string | null;
}

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: EventType;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
  attempts: AttemptRecord[];
}

export interface WebhookReads {
  getWebhook(accountId: string, id: string): Promise<WebhookRecord | null>;
  /**
   * The webhook's deliveries not yet finished, counted up to `cap` (a backlog of a million costs what
   * `cap` rows do), and when the oldest of them was made (null: none).
   */
  webhookBacklog(
    accountId: string,
    id: string,
    cap: number,
  ): Promise<{ pending: number; oldestAt: number | null }>;
  /** Oldest first. */
  listWebhooks(accountId: string): Promise<WebhookRecord[]>;
  getDelivery(accountId: string, webhookId: string, id: string): Promise<DeliveryRecord | null>;
  /** Newest first; `startingAfter` is a delivery id. */
  listDeliveries(
    accountId: string,
    webhookId: string,
    opts: { status?: DeliveryStatus; startingAfter?: string; limit: number },
  ): Promise<Page<DeliveryRecord>>;
}

export interface WebhookWrites {
  insertWebhook(accountId: string, webhook: WebhookRecord): Promise<void>;
  updateWebhook(accountId: string, webhook: WebhookRecord): Promise<void>;
  /** Removes the webhook and its deliveries; false when there was none. */
  deleteWebhook(accountId: string, id: string): Promise<boolean>;
  /**
   * Makes a delivery due now (one more attempt); false when there is no such delivery or an
   * attempt of it is in flight (its result would overwrite the retry).
   */
  retryDelivery(accountId: string, webhookId: string, id: string, now: number): Promise<boolean>;
}

export async function getWebhook(db: Driver, accountId: string, id: string): Promise<WebhookRecord | null> {
  if (hasNul(id)) return null;
  const row = await db.get('SELECT * FROM webhooks WHERE account_id = $1 AND id = $2', [accountId, id]);
  return row ? toWebhook(row, db.fromText) : null;
}

export async function webhookBacklog(db: Driver, accountId: string, id: string, cap: number) {
  if (hasNul(id)) return { pending: 0, oldestAt: null };
  const pending = `FROM deliveries ${db.pendingIndex}
    WHERE account_id = $1 AND webhook_id = $2 AND status = 'pending'`;
  const row = await db.get(
    `SELECT (SELECT count(*) FROM (SELECT 1 ${pending} LIMIT $3) p) AS pending,
      (SELECT created_at ${pending} ORDER BY created_at LIMIT 1) AS oldest`,
    [accountId, id, cap],
  );
  return { pending: Number(row?.pending ?? 0), oldestAt: row?.oldest == null ? null : Number(row.oldest) };
}

export async function listWebhooks(db: Driver, accountId: string): Promise<WebhookRecord[]> {
  const rows = await db.all('SELECT * FROM webhooks WHERE account_id = $1 ORDER BY created_at, id', [
    accountId,
  ]);
  return rows.map((r) => toWebhook(r, db.fromText));
}

const DELIVERY_COLUMNS = `d.id, d.webhook_id, d.event_id, e.type AS event_type, d.status, d.attempts,
  d.next_attempt_at, d.created_at, d.updated_at`;

/** One query for the attempts of a whole page of deliveries. */
async function withAttempts(db: Driver, rows: readonly Row[]): Promise<DeliveryRecord[]> {
  const attempts = new Map<string, AttemptRecord[]>();
  if (rows.length > 0) {
    const p = new Params();
    const ids = rows.map((r) => p.add(r.id as string)).join(', ');
    const found = await db.all(
      `SELECT * FROM delivery_attempts WHERE delivery_id IN (${ids}) ORDER BY delivery_id, attempt`,
      p.list,
    );
    for (const a of found) {
      const id = a.delivery_id as string;
      const list = attempts.get(id) ?? [];
      list.push(toAttempt(a, db.fromText));
      attempts.set(id, list);
    }
  }
  return rows.map((r) => ({
    id: r.id as string,
    webhookId: r.webhook_id as string,
    eventId: r.event_id as string,
    eventType: r.event_type as EventType,
    status: r.status as DeliveryStatus,
    attemptCount: r.attempts as number,
    nextAttemptAt: (r.next_attempt_at as number | null) ?? null,
    createdAt: r.created_at as number,
    updatedAt: r.updated_at as number,
    attempts: attempts.get(r.id as string) ?? [],
  }));
}

export async function getDelivery(
  db: Driver,
  accountId: string,
  webhookId: string,
  id: string,
): Promise<DeliveryRecord | null> {
  if (hasNul(webhookId) || hasNul(id)) return null;
  const rows = await db.all(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id
     WHERE d.account_id = $1 AND d.webhook_id = $2 AND d.id = $3`,
    [accountId, webhookId, id],
  );
  const [delivery] = await withAttempts(db, rows);
  return delivery ?? null;
}

export async function listDeliveries(
  db: Driver,
  accountId: string,
  webhookId: string,
  opts: { status?: DeliveryStatus; startingAfter?: string; limit: number },
): Promise<Page<DeliveryRecord>> {
  if (hasNul(webhookId)) return { data: [], hasMore: false };
  const p = new Params(accountId, webhookId);
  let where = 'd.account_id = $1 AND d.webhook_id = $2';
  if (opts.status) where += ` AND d.status = ${p.add(opts.status)}`;
  const after = opts.startingAfter;
  if (after !== undefined)
    where += hasNul(after) ? ` AND d.id <= ${p.add(beforeNul(after))}` : ` AND d.id < ${p.add(after)}`;
  const rows = await db.all(
    `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id
     WHERE ${where} ORDER BY d.id DESC LIMIT ${p.add(opts.limit + 1)}`,
    p.list,
  );
  const data = await withAttempts(db, rows.slice(0, opts.limit));
  return { data, hasMore: rows.length > opts.limit };
}

export async function insertWebhook(db: Driver, accountId: string, w: WebhookRecord): Promise<void> {
  await db.run(
    `INSERT INTO webhooks (account_id, id, url, events, description, secret, enabled, disabled_reason,
       updated_at, previous_secret, previous_secret_expires_at, format, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [...webhookParams(db, accountId, w), w.createdAt],
  );
  await subscribe(db, accountId, w);
}

export async function updateWebhook(db: Driver, accountId: string, w: WebhookRecord): Promise<void> {
  await db.run(
    `UPDATE webhooks SET url = $3, events = $4, description = $5, secret = $6, enabled = $7,
       disabled_reason = $8, updated_at = $9, previous_secret = $10, previous_secret_expires_at = $11,
       format = $12
     WHERE account_id = $1 AND id = $2`,
    webhookParams(db, accountId, w),
  );
  await db.run('DELETE FROM webhook_subscriptions WHERE account_id = $1 AND webhook_id = $2', [
    accountId,
    w.id,
  ]);
  await subscribe(db, accountId, w);
}

/** A webhook's columns as insert and update bind them: $1 … $12. */
function webhookParams(db: Driver, accountId: string, w: WebhookRecord) {
  const { text, textOrNull, json, bool } = db;
  return [
    accountId,
    w.id,
    text(w.url),
    json(w.events),
    textOrNull(w.description),
    w.secret,
    bool(w.enabled),
    textOrNull(w.disabledReason),
    w.updatedAt,
    w.previousSecret,
    w.previousSecretExpiresAt,
    w.format,
  ];
}

async function subscribe(db: Driver, accountId: string, w: WebhookRecord): Promise<void> {
  await db.runEach(
    'INSERT INTO webhook_subscriptions (account_id, event_type, webhook_id) VALUES ($1, $2, $3)',
    w.events.map((type) => [accountId, type, w.id]),
    ['text', 'text', 'text'],
  );
}

/**
 * Removing a webhook ($1 account, $2 webhook), in this order: its deliveries' attempts, its
 * deliveries, the webhook (its subscriptions go with it, ON DELETE CASCADE). The last one's
 * count says whether there was a webhook.
 */
const DELETE_WEBHOOK = [
  `DELETE FROM delivery_attempts WHERE delivery_id IN
     (SELECT id FROM deliveries WHERE account_id = $1 AND webhook_id = $2)`,
  'DELETE FROM deliveries WHERE account_id = $1 AND webhook_id = $2',
  'DELETE FROM delivery_leases WHERE account_id = $1 AND webhook_id = $2',
  'DELETE FROM webhooks WHERE account_id = $1 AND id = $2',
] as const;

export async function deleteWebhook(db: Driver, accountId: string, id: string): Promise<boolean> {
  if (hasNul(id)) return false;
  let deleted = 0;
  for (const sql of DELETE_WEBHOOK) deleted = await db.run(sql, [accountId, id]);
  return deleted === 1;
}

/** Makes the delivery due at `now` unless an attempt of it is in flight; true when it did. */
export async function retryDelivery(
  db: Driver,
  accountId: string,
  webhookId: string,
  id: string,
  now: number,
): Promise<boolean> {
  if (hasNul(webhookId) || hasNul(id)) return false;
  const changed = await db.run(
    `UPDATE deliveries SET status = 'pending', next_attempt_at = $4, updated_at = $4
     WHERE account_id = $1 AND webhook_id = $2 AND id = $3
       AND NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_id = $3 AND l.until > $4)`,
    [accountId, webhookId, id, now],
  );
  return changed === 1;
}
