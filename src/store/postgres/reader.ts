import type { EventType, SubscribableEventType } from '../../domain/events.ts';
import type { Tally } from '../../domain/portfolio.ts';
import {
  DEFAULT_THRESHOLDS,
  type Factors,
  STATUSES,
  type Status,
  type Weights,
} from '../../domain/scoring.ts';
import { statusOf } from '../bands.ts';
import { customerJson } from '../customer-json.ts';
import { likeEscape } from '../like.ts';
import { page } from '../page.ts';
import type {
  AttemptRecord,
  CustomerRecord,
  DeliveryRecord,
  DeliveryStatus,
  EventRecord,
  GroupTally,
  HistoryRecord,
  JsonPage,
  Mover,
  Page,
  Reader,
  ScoreCursor,
  ScoreReason,
  ScoreRecord,
  Segment,
  Settings,
  WebhookRecord,
} from '../store.ts';
import type { Queryable } from './connection.ts';
import * as portfolio from './portfolio.ts';
import { beforeNul, fromText, fromTextOrNull, hasNul } from './text.ts';

// Rows as the driver returns them: bigint columns arrive as numbers (see connection.ts), json
// columns already parsed (JSON.parse of the stored text, so key order is the order written).

/** Selected with `metadata::text`, so the stored JSON text comes back unparsed. */
export interface CustomerRow {
  id: string;
  name: string;
  email: string;
  metadata: string;
  created_at: number;
  updated_at: number;
}

export interface ScoreRow {
  customer_id: string;
  score: number;
  band: number;
  factors: Factors;
  version: number;
  updated_at: number;
}

interface HistoryRow {
  version: number;
  score: number;
  status: Status;
  factors: Factors;
  reason: ScoreReason;
  created_at: number;
}

interface EventRow {
  id: string;
  type: EventType;
  data: Record<string, unknown>;
  created_at: number;
}

export interface WebhookRow {
  id: string;
  url: string;
  events: SubscribableEventType[];
  description: string | null;
  secret: string;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: number;
  updated_at: number;
}

interface DeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: EventType;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number | null;
  created_at: number;
  updated_at: number;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: number;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
}

export interface SettingsRow {
  weights: Weights;
  weights_updated_at: number | null;
  healthy: number;
  at_risk: number;
  thresholds_updated_at: number | null;
  drop_delta: number | null;
  drop_days: number | null;
  alerts_updated_at: number | null;
}

/** The columns of SettingsRow. */
export const SETTINGS_COLUMNS =
  'weights, weights_updated_at, healthy, at_risk, thresholds_updated_at, drop_delta, drop_days, alerts_updated_at';

/** Metadata is parsed only if someone reads it; answers pass the stored JSON text through. */
export const toCustomer = (r: CustomerRow): CustomerRecord => {
  const metadataJson = r.metadata;
  let metadata: Record<string, unknown> | undefined;
  return {
    id: r.id,
    name: fromText(r.name),
    email: fromText(r.email),
    get metadata() {
      metadata ??= JSON.parse(metadataJson) as Record<string, unknown>;
      return metadata;
    },
    metadataJson,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
};

export const toScore = (r: ScoreRow): ScoreRecord => ({
  customerId: r.customer_id,
  score: r.score,
  status: statusOf(r.band),
  factors: r.factors,
  version: r.version,
  updatedAt: r.updated_at,
});

const toHistory = (r: HistoryRow): HistoryRecord => ({
  version: r.version,
  score: r.score,
  status: r.status,
  factors: r.factors,
  reason: r.reason,
  createdAt: r.created_at,
});

const toEvent = (r: EventRow): EventRecord => ({
  id: r.id,
  type: r.type,
  data: r.data,
  createdAt: r.created_at,
});

export const toWebhook = (r: WebhookRow): WebhookRecord => ({
  id: r.id,
  url: fromText(r.url),
  events: r.events,
  description: fromTextOrNull(r.description),
  secret: r.secret,
  enabled: r.enabled,
  disabledReason: fromTextOrNull(r.disabled_reason),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toAttempt = (r: AttemptRow): AttemptRecord => ({
  attempt: r.attempt,
  startedAt: r.started_at,
  durationMs: r.duration_ms,
  statusCode: r.status_code,
  error: fromTextOrNull(r.error),
  responseBody: fromTextOrNull(r.response_body),
});

export const toSettings = (r: SettingsRow | undefined): Settings =>
  r
    ? {
        weights: r.weights,
        weightsUpdatedAt: r.weights_updated_at,
        thresholds: { healthy: r.healthy, at_risk: r.at_risk },
        thresholdsUpdatedAt: r.thresholds_updated_at,
        drop: r.drop_delta === null ? null : { delta: r.drop_delta, days: r.drop_days as number },
        alertsUpdatedAt: r.alerts_updated_at,
      }
    : {
        weights: {},
        weightsUpdatedAt: null,
        thresholds: { ...DEFAULT_THRESHOLDS },
        thresholdsUpdatedAt: null,
        drop: null,
        alertsUpdatedAt: null,
      };

/**
 * Queries shared by the pool and a transaction. Every id column is COLLATE "C", so comparisons
 * and ORDER BY are byte-wise like SQLite's BINARY, whatever the database's locale. Free text goes
 * through text.ts (a NUL would not fit in PostgreSQL text); so do ids from outside, before they
 * reach the server.
 */
export class PgReader implements Reader {
  protected readonly sql: Queryable;

  constructor(sql: Queryable) {
    this.sql = sql;
  }

  async getCustomer(accountId: string, id: string): Promise<CustomerRecord | null> {
    if (hasNul(id)) return null;
    const [row] = await this.sql<CustomerRow[]>`
      SELECT id, name, email, metadata::text AS metadata, created_at, updated_at FROM customers
      WHERE account_id = ${accountId} AND id = ${id}`;
    return row ? toCustomer(row) : null;
  }

  async listCustomers(
    accountId: string,
    opts: { startingAfter?: string; search?: string; segment?: Segment; limit: number },
  ) {
    const pattern = opts.search === undefined ? undefined : `%${likeEscape(opts.search)}%`;
    const rows = await this.sql<CustomerRow[]>`
      SELECT id, name, email, metadata::text AS metadata, created_at, updated_at FROM customers c
      WHERE account_id = ${accountId}
        ${opts.startingAfter === undefined ? this.sql`` : this.sql`AND id > ${beforeNul(opts.startingAfter)}`}
        ${pattern === undefined ? this.sql`` : this.sql`AND (id ILIKE ${pattern} OR name ILIKE ${pattern} OR email ILIKE ${pattern})`}
        ${portfolio.segmentWhere(this.sql, opts.segment)}
      ORDER BY id LIMIT ${opts.limit + 1}`;
    return page(rows, opts.limit, toCustomer);
  }

  async listCustomersJson(
    accountId: string,
    opts: { startingAfter?: string; search?: string; segment?: Segment; limit: number },
  ): Promise<JsonPage> {
    const page = await this.listCustomers(accountId, opts);
    return { json: page.data.map(customerJson).join(','), hasMore: page.hasMore };
  }

  async getScore(accountId: string, customerId: string): Promise<ScoreRecord | null> {
    if (hasNul(customerId)) return null;
    const [row] = await this.sql<ScoreRow[]>`
      SELECT customer_id, score, band, factors, version, updated_at FROM health_scores
      WHERE account_id = ${accountId} AND customer_id = ${customerId}`;
    return row ? toScore(row) : null;
  }

  async listHistory(accountId: string, customerId: string, opts: { before?: number; limit: number }) {
    if (hasNul(customerId)) return { data: [], hasMore: false };
    const rows = await this.sql<HistoryRow[]>`
      SELECT version, score, status, factors, reason, created_at FROM score_history
      WHERE account_id = ${accountId} AND customer_id = ${customerId}
        ${opts.before === undefined ? this.sql`` : this.sql`AND version < ${opts.before}`}
      ORDER BY version DESC LIMIT ${opts.limit + 1}`;
    return page(rows, opts.limit, toHistory);
  }

  async listScores(
    accountId: string,
    opts: { status?: Status | undefined; after?: ScoreCursor | undefined; segment?: Segment; limit: number },
  ) {
    return page(await portfolio.listScores(this.sql, accountId, opts), opts.limit, (e) => e);
  }

  tally(accountId: string, segment?: Segment): Promise<Tally> {
    return portfolio.tally(this.sql, accountId, segment);
  }

  distribution(accountId: string, bins: number, segment?: Segment): Promise<Tally[]> {
    return portfolio.distribution(this.sql, accountId, bins, segment);
  }

  tallyBy(accountId: string, key: string, segment?: Segment): Promise<GroupTally[]> {
    return portfolio.tallyBy(this.sql, accountId, key, segment);
  }

  trendInputs(accountId: string, fromDay: number, segment?: Segment) {
    return portfolio.trendInputs(this.sql, accountId, fromDay, segment);
  }

  movers(
    accountId: string,
    opts: { since: number; direction: 'down' | 'up'; limit: number; segment?: Segment },
  ): Promise<Mover[]> {
    return portfolio.movers(this.sql, accountId, opts);
  }

  async countScoresByStatus(accountId: string): Promise<Record<Status, number>> {
    const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>;
    const rows = await this.sql<{ band: number; n: number }[]>`
      SELECT band, COUNT(*) AS n FROM health_scores WHERE account_id = ${accountId} GROUP BY band`;
    for (const r of rows) counts[statusOf(r.band)] = r.n;
    return counts;
  }

  async getSettings(accountId: string): Promise<Settings> {
    const [row] = await this.sql<SettingsRow[]>`
      SELECT ${this.sql.unsafe(SETTINGS_COLUMNS)} FROM account_settings WHERE account_id = ${accountId}`;
    return toSettings(row);
  }

  async getEvent(accountId: string, id: string): Promise<EventRecord | null> {
    if (hasNul(id)) return null;
    const [row] = await this.sql<EventRow[]>`
      SELECT id, type, data, created_at FROM events WHERE account_id = ${accountId} AND id = ${id}`;
    return row ? toEvent(row) : null;
  }

  /**
   * The feed is ordered by (writing transaction's id, seq) and shows only events of transactions
   * below the horizon: the oldest transaction id still running in this database (or, with none
   * running, the next to be handed out). Every transaction below it has ended, so nothing can
   * later appear before an event already shown (docs/api.md, "Events"). The horizon is read in a
   * statement of its own, before the events: a transaction that ended in between is then visible.
   */
  async listEvents(
    accountId: string,
    opts: { type?: EventType; startingAfter?: string; endingBefore?: string; limit: number },
  ) {
    // No event has such an id, and an unknown id starts an empty page.
    for (const id of [opts.startingAfter, opts.endingBefore]) {
      if (id !== undefined && hasNul(id)) return { data: [], hasMore: false };
    }
    // backend_xid is 32-bit: it takes the epoch of the 64-bit snapshot xmax r; running ids lie
    // within 2^31 of r (as every live id does), which settles an epoch boundary in between.
    const [h] = await this.sql<{ horizon: string }[]>`
      SELECT GREATEST(0, COALESCE(min(CASE WHEN x > r + 2147483648 THEN x - 4294967296
                               WHEN x < r - 2147483648 THEN x + 4294967296 ELSE x END), r))::text AS horizon
      FROM (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS r) s
      LEFT JOIN LATERAL (
        SELECT ((r >> 32) << 32) | backend_xid::text::bigint AS x
        FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL
      ) running ON true
      GROUP BY r`;
    const horizon = h?.horizon as string;
    const position = (id: string) =>
      this.sql`(SELECT xid, seq FROM events WHERE account_id = ${accountId} AND id = ${id})`;
    const forward = opts.endingBefore !== undefined;
    const rows = await this.sql<EventRow[]>`
      SELECT id, type, data, created_at FROM events
      WHERE account_id = ${accountId} AND xid < ${horizon}::xid8
        ${opts.type ? this.sql`AND type = ${opts.type}` : this.sql``}
        ${opts.startingAfter === undefined ? this.sql`` : this.sql`AND (xid, seq) < ${position(opts.startingAfter)}`}
        ${forward ? this.sql`AND (xid, seq) > ${position(opts.endingBefore as string)}` : this.sql``}
      ORDER BY ${forward ? this.sql`xid ASC, seq ASC` : this.sql`xid DESC, seq DESC`}
      LIMIT ${opts.limit + 1}`;
    const result = page(rows, opts.limit, toEvent);
    if (forward) result.data.reverse();
    return result;
  }

  async getWebhook(accountId: string, id: string): Promise<WebhookRecord | null> {
    if (hasNul(id)) return null;
    const [row] = await this.sql<WebhookRow[]>`
      SELECT * FROM webhooks WHERE account_id = ${accountId} AND id = ${id}`;
    return row ? toWebhook(row) : null;
  }

  async webhookBacklog(accountId: string, id: string, cap: number) {
    if (hasNul(id)) return { pending: 0, oldestAt: null };
    const [row] = await this.sql<{ pending: string; oldest: string | null }[]>`
      SELECT (SELECT count(*) FROM (SELECT 1 FROM deliveries
          WHERE account_id = ${accountId} AND webhook_id = ${id} AND status = 'pending' LIMIT ${cap}) p) AS pending,
        (SELECT created_at FROM deliveries
          WHERE account_id = ${accountId} AND webhook_id = ${id} AND status = 'pending' ORDER BY created_at LIMIT 1) AS oldest`;
    return { pending: Number(row?.pending ?? 0), oldestAt: row?.oldest == null ? null : Number(row.oldest) };
  }

  async listWebhooks(accountId: string): Promise<WebhookRecord[]> {
    const rows = await this.sql<WebhookRow[]>`
      SELECT * FROM webhooks WHERE account_id = ${accountId} ORDER BY created_at, id`;
    return rows.map(toWebhook);
  }

  /** One query for the attempts of a whole page of deliveries. */
  async #withAttempts(rows: readonly DeliveryRow[]): Promise<DeliveryRecord[]> {
    const attempts = new Map<string, AttemptRecord[]>();
    if (rows.length > 0) {
      const found = await this.sql<AttemptRow[]>`
        SELECT * FROM delivery_attempts WHERE delivery_id = ANY(${rows.map((r) => r.id)}::text[])
        ORDER BY delivery_id, attempt`;
      for (const a of found) {
        const list = attempts.get(a.delivery_id) ?? [];
        list.push(toAttempt(a));
        attempts.set(a.delivery_id, list);
      }
    }
    return rows.map((r) => ({
      id: r.id,
      webhookId: r.webhook_id,
      eventId: r.event_id,
      eventType: r.event_type,
      status: r.status,
      attemptCount: r.attempts,
      nextAttemptAt: r.next_attempt_at,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      attempts: attempts.get(r.id) ?? [],
    }));
  }

  async getDelivery(accountId: string, webhookId: string, id: string): Promise<DeliveryRecord | null> {
    if (hasNul(webhookId) || hasNul(id)) return null;
    const rows = await this.sql<DeliveryRow[]>`
      SELECT d.id, d.webhook_id, d.event_id, e.type AS event_type, d.status, d.attempts, d.next_attempt_at,
        d.created_at, d.updated_at
      FROM deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.account_id = ${accountId} AND d.webhook_id = ${webhookId} AND d.id = ${id}`;
    const [delivery] = await this.#withAttempts(rows);
    return delivery ?? null;
  }

  async listDeliveries(
    accountId: string,
    webhookId: string,
    opts: { status?: DeliveryStatus; startingAfter?: string; limit: number },
  ): Promise<Page<DeliveryRecord>> {
    if (hasNul(webhookId)) return { data: [], hasMore: false };
    const after = opts.startingAfter;
    const rows = await this.sql<DeliveryRow[]>`
      SELECT d.id, d.webhook_id, d.event_id, e.type AS event_type, d.status, d.attempts, d.next_attempt_at,
        d.created_at, d.updated_at
      FROM deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.account_id = ${accountId} AND d.webhook_id = ${webhookId}
        ${opts.status ? this.sql`AND d.status = ${opts.status}` : this.sql``}
        ${
          after === undefined
            ? this.sql``
            : hasNul(after)
              ? this.sql`AND d.id <= ${beforeNul(after)}`
              : this.sql`AND d.id < ${after}`
        }
      ORDER BY d.id DESC LIMIT ${opts.limit + 1}`;
    const data = await this.#withAttempts(rows.slice(0, opts.limit));
    return { data, hasMore: rows.length > opts.limit };
  }
}
