import type { EventType } from '../../domain/events.ts';
import type { Tally } from '../../domain/portfolio.ts';
import { DEFAULT_THRESHOLDS, STATUSES, type Status } from '../../domain/scoring.ts';
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
import type { Connection, Row } from './connection.ts';
import * as portfolio from './portfolio.ts';
import { segmentWhere } from './portfolio.ts';

/** Metadata is parsed only if someone reads it; answers pass the stored JSON text through. */
class StoredCustomer implements CustomerRecord {
  readonly id: string;
  readonly name: string;
  readonly email: string;
  readonly metadataJson: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  #metadata: Record<string, unknown> | undefined;

  constructor(r: Row) {
    this.id = r.id as string;
    this.name = r.name as string;
    this.email = r.email as string;
    this.metadataJson = r.metadata as string;
    this.createdAt = r.created_at as number;
    this.updatedAt = r.updated_at as number;
  }

  get metadata(): Record<string, unknown> {
    this.#metadata ??= JSON.parse(this.metadataJson) as Record<string, unknown>;
    return this.#metadata;
  }
}

export const toCustomer = (r: Row): CustomerRecord => new StoredCustomer(r);

/** A customer that crossed from the writer thread as plain data (its own fields, no metadata getter). */
export const reviveCustomer = (c: CustomerRecord): CustomerRecord =>
  new StoredCustomer({
    id: c.id,
    name: c.name,
    email: c.email,
    metadata: c.metadataJson ?? JSON.stringify(c.metadata),
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  });

export const toScore = (r: Row): ScoreRecord => ({
  customerId: r.customer_id as string,
  score: r.score as number,
  status: statusOf(r.band as number),
  factors: JSON.parse(r.factors as string),
  factorsJson: r.factors as string,
  version: r.version as number,
  updatedAt: r.updated_at as number,
});

const toHistory = (r: Row): HistoryRecord => ({
  version: r.version as number,
  score: r.score as number,
  status: r.status as Status,
  factors: JSON.parse(r.factors as string),
  reason: r.reason as ScoreReason,
  createdAt: r.created_at as number,
});

const toEvent = (r: Row): EventRecord => ({
  id: r.id as string,
  type: r.type as EventType,
  data: JSON.parse(r.data as string),
  createdAt: r.created_at as number,
});

export const toWebhook = (r: Row): WebhookRecord => ({
  id: r.id as string,
  url: r.url as string,
  events: JSON.parse(r.events as string),
  description: (r.description as string | null) ?? null,
  secret: r.secret as string,
  enabled: r.enabled === 1,
  disabledReason: (r.disabled_reason as string | null) ?? null,
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
});

const toAttempt = (r: Row): AttemptRecord => ({
  attempt: r.attempt as number,
  startedAt: r.started_at as number,
  durationMs: r.duration_ms as number,
  statusCode: (r.status_code as number | null) ?? null,
  error: (r.error as string | null) ?? null,
  responseBody: (r.response_body as string | null) ?? null,
});

/** Queries shared by the read connection and the write transaction. */
type ListOptions = {
  startingAfter?: string | undefined;
  search?: string | undefined;
  segment?: Segment | undefined;
  limit: number;
};

/** A customer list page and one row more (has_more): the account, the cursor, the search. */
function customerList(
  accountId: string,
  opts: ListOptions,
  columns: string,
): { sql: string; params: (string | number)[] } {
  const where = ['account_id = ?'];
  const params: (string | number)[] = [accountId];
  if (opts.startingAfter !== undefined) {
    where.push('id > ?');
    params.push(opts.startingAfter);
  }
  if (opts.search !== undefined) {
    // Case-insensitive (for ASCII) substring of the id, name or email; LIKE's wildcards are escaped.
    const pattern = `%${likeEscape(opts.search)}%`;
    where.push("(id LIKE ? ESCAPE '\\' OR name LIKE ? ESCAPE '\\' OR email LIKE ? ESCAPE '\\')");
    params.push(pattern, pattern, pattern);
  }
  const seg = segmentWhere(opts.segment);
  const sql = `SELECT ${columns} FROM customers c WHERE ${where.join(' AND ')}${seg.sql} ORDER BY id LIMIT ?`;
  return { sql, params: [...params, ...seg.params, opts.limit + 1] };
}

const CUSTOMER_COLUMNS = 'id, name, email, metadata, created_at, updated_at';

export class SqliteReader implements Reader {
  protected readonly conn: Connection;

  constructor(conn: Connection) {
    this.conn = conn;
  }

  async getCustomer(accountId: string, id: string): Promise<CustomerRecord | null> {
    const row = this.conn.get(
      'SELECT id, name, email, metadata, created_at, updated_at FROM customers WHERE account_id = ? AND id = ?',
      accountId,
      id,
    );
    return row ? toCustomer(row) : null;
  }

  async listCustomers(accountId: string, opts: ListOptions) {
    const { sql, params } = customerList(accountId, opts, CUSTOMER_COLUMNS);
    return page(this.conn.all(sql, ...params), opts.limit, toCustomer);
  }

  async listCustomersJson(accountId: string, opts: ListOptions): Promise<JsonPage> {
    // The list's hot path: each row's stored API JSON (migration 7), as arrays (no object per
    // row), joined into the page's text. No field is read, formatted or quoted here.
    const { sql, params } = customerList(accountId, opts, 'json');
    const rows = this.conn.arrays(sql, ...params) as [string][];
    const n = Math.min(rows.length, opts.limit);
    let json = '';
    for (let i = 0; i < n; i++) {
      const text = (rows[i] as [string])[0];
      if (text === '') return this.#listCustomersBuilt(accountId, opts); // written by a previous version
      json += i === 0 ? text : `,${text}`;
    }
    return { json, hasMore: rows.length > opts.limit };
  }

  /** The same page built from the fields, for rows whose JSON a previous version left blank. */
  async #listCustomersBuilt(accountId: string, opts: ListOptions): Promise<JsonPage> {
    const records = await this.listCustomers(accountId, opts);
    return { json: records.data.map(customerJson).join(','), hasMore: records.hasMore };
  }

  async getScore(accountId: string, customerId: string): Promise<ScoreRecord | null> {
    const row = this.conn.get(
      'SELECT * FROM health_scores WHERE account_id = ? AND customer_id = ?',
      accountId,
      customerId,
    );
    return row ? toScore(row) : null;
  }

  async listHistory(accountId: string, customerId: string, opts: { before?: number; limit: number }) {
    const rows = this.conn.all(
      `SELECT * FROM score_history WHERE account_id = ? AND customer_id = ? AND version < ?
       ORDER BY version DESC LIMIT ?`,
      accountId,
      customerId,
      opts.before ?? Number.MAX_SAFE_INTEGER,
      opts.limit + 1,
    );
    return page(rows, opts.limit, toHistory);
  }

  async listScores(
    accountId: string,
    opts: { status?: Status | undefined; after?: ScoreCursor | undefined; segment?: Segment; limit: number },
  ) {
    return page(portfolio.listScores(this.conn, accountId, opts), opts.limit, (e) => e);
  }

  async tally(accountId: string, segment?: Segment): Promise<Tally> {
    return portfolio.tally(this.conn, accountId, segment);
  }

  async distribution(accountId: string, bins: number, segment?: Segment): Promise<Tally[]> {
    return portfolio.distribution(this.conn, accountId, bins, segment);
  }

  async tallyBy(accountId: string, key: string, segment?: Segment): Promise<GroupTally[]> {
    return portfolio.tallyBy(this.conn, accountId, key, segment);
  }

  async trendInputs(accountId: string, fromDay: number, segment?: Segment) {
    return portfolio.trendInputs(this.conn, accountId, fromDay, segment);
  }

  async movers(
    accountId: string,
    opts: { since: number; direction: 'down' | 'up'; limit: number; segment?: Segment },
  ): Promise<Mover[]> {
    return portfolio.movers(this.conn, accountId, opts);
  }

  async countScoresByStatus(accountId: string): Promise<Record<Status, number>> {
    const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>;
    for (const r of this.conn.all(
      'SELECT band, COUNT(*) AS n FROM health_scores WHERE account_id = ? GROUP BY band',
      accountId,
    )) {
      counts[statusOf(r.band as number)] = r.n as number;
    }
    return counts;
  }

  async getSettings(accountId: string): Promise<Settings> {
    const r = this.conn.get('SELECT * FROM account_settings WHERE account_id = ?', accountId);
    if (!r)
      return {
        weights: {},
        weightsUpdatedAt: null,
        thresholds: { ...DEFAULT_THRESHOLDS },
        thresholdsUpdatedAt: null,
        drop: null,
        alertsUpdatedAt: null,
      };
    return {
      weights: JSON.parse(r.weights as string),
      weightsUpdatedAt: (r.weights_updated_at as number | null) ?? null,
      thresholds: { healthy: r.healthy as number, at_risk: r.at_risk as number },
      thresholdsUpdatedAt: (r.thresholds_updated_at as number | null) ?? null,
      drop: r.drop_delta === null ? null : { delta: r.drop_delta as number, days: r.drop_days as number },
      alertsUpdatedAt: (r.alerts_updated_at as number | null) ?? null,
    };
  }

  async getEvent(accountId: string, id: string): Promise<EventRecord | null> {
    const row = this.conn.get('SELECT * FROM events WHERE account_id = ? AND id = ?', accountId, id);
    return row ? toEvent(row) : null;
  }

  // One writer at a time (across processes too): seq order is commit order, so the feed is seq.
  async listEvents(
    accountId: string,
    opts: { type?: EventType; startingAfter?: string; endingBefore?: string; limit: number },
  ) {
    const where = ['account_id = ?'];
    const params: (string | number)[] = [accountId];
    if (opts.type) {
      where.push('type = ?');
      params.push(opts.type);
    }
    if (opts.startingAfter !== undefined) {
      where.push('seq < COALESCE((SELECT seq FROM events WHERE account_id = ? AND id = ?), 0)');
      params.push(accountId, opts.startingAfter);
    }
    const forward = opts.endingBefore !== undefined;
    if (forward) {
      where.push('seq > COALESCE((SELECT seq FROM events WHERE account_id = ? AND id = ?), 0)');
      params.push(accountId, opts.endingBefore as string);
    }
    const rows = this.conn.all(
      `SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY seq ${forward ? 'ASC' : 'DESC'} LIMIT ?`,
      ...params,
      opts.limit + 1,
    );
    const result = page(rows, opts.limit, toEvent);
    if (forward) result.data.reverse();
    return result;
  }

  async getWebhook(accountId: string, id: string): Promise<WebhookRecord | null> {
    const row = this.conn.get('SELECT * FROM webhooks WHERE account_id = ? AND id = ?', accountId, id);
    return row ? toWebhook(row) : null;
  }

  async webhookBacklog(accountId: string, id: string, cap: number) {
    const row = this.conn.get(
      `SELECT (SELECT count(*) FROM (SELECT 1 FROM deliveries INDEXED BY deliveries_pending_by_webhook
           WHERE account_id = ?1 AND webhook_id = ?2 AND status = 'pending' LIMIT ?3)) AS pending,
         (SELECT created_at FROM deliveries INDEXED BY deliveries_pending_by_webhook
           WHERE account_id = ?1 AND webhook_id = ?2 AND status = 'pending' ORDER BY created_at LIMIT 1) AS oldest`,
      accountId,
      id,
      cap,
    );
    return { pending: Number(row?.pending ?? 0), oldestAt: (row?.oldest as number | null) ?? null };
  }

  async listWebhooks(accountId: string): Promise<WebhookRecord[]> {
    return this.conn
      .all('SELECT * FROM webhooks WHERE account_id = ? ORDER BY created_at, id', accountId)
      .map(toWebhook);
  }

  #toDelivery(r: Row): DeliveryRecord {
    return {
      id: r.id as string,
      webhookId: r.webhook_id as string,
      eventId: r.event_id as string,
      eventType: r.event_type as EventType,
      status: r.status as DeliveryStatus,
      attemptCount: r.attempts as number,
      nextAttemptAt: (r.next_attempt_at as number | null) ?? null,
      createdAt: r.created_at as number,
      updatedAt: r.updated_at as number,
      attempts: this.conn
        .all('SELECT * FROM delivery_attempts WHERE delivery_id = ? ORDER BY attempt', r.id as string)
        .map(toAttempt),
    };
  }

  async getDelivery(accountId: string, webhookId: string, id: string): Promise<DeliveryRecord | null> {
    const row = this.conn.get(
      `SELECT d.*, e.type AS event_type FROM deliveries d JOIN events e ON e.id = d.event_id
       WHERE d.account_id = ? AND d.webhook_id = ? AND d.id = ?`,
      accountId,
      webhookId,
      id,
    );
    return row ? this.#toDelivery(row) : null;
  }

  async listDeliveries(
    accountId: string,
    webhookId: string,
    opts: { status?: DeliveryStatus; startingAfter?: string; limit: number },
  ): Promise<Page<DeliveryRecord>> {
    const where = ['d.account_id = ?', 'd.webhook_id = ?'];
    const params: (string | number)[] = [accountId, webhookId];
    if (opts.status) {
      where.push('d.status = ?');
      params.push(opts.status);
    }
    if (opts.startingAfter !== undefined) {
      where.push('d.id < ?');
      params.push(opts.startingAfter);
    }
    const rows = this.conn.all(
      `SELECT d.*, e.type AS event_type FROM deliveries d JOIN events e ON e.id = d.event_id
       WHERE ${where.join(' AND ')} ORDER BY d.id DESC LIMIT ?`,
      ...params,
      opts.limit + 1,
    );
    return page(rows, opts.limit, (r) => this.#toDelivery(r));
  }
}
