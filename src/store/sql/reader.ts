// The reads both backends share, written once over a Driver (driver.ts). What stays per backend:
// the events feed's order (commit order is a sequence on SQLite, a transaction-id horizon on
// PostgreSQL) and the portfolio's aggregates (*/portfolio.ts), plus each backend's fast paths.

import { customerJson } from '../../api/customers.ts';
import type { EventType } from '../../domain/events.ts';
import type { Tally } from '../../domain/portfolio.ts';
import type { FactorRule } from '../../domain/rules.ts';
import { STATUSES, type Status } from '../../domain/scoring.ts';
import { statusOf } from '../bands.ts';
import { likeEscape } from '../like.ts';
import { page } from '../page.ts';
import {
  type AuditRow,
  PEOPLE_SQL,
  type SessionRow,
  toAudit,
  toSession,
  toUser,
  type UserRow,
} from '../people-sql.ts';
import { type ApiKeyRow, LIST_API_KEYS, toApiKeyRecord } from '../shared.ts';
import type {
  ApiKeyRecord,
  AttemptRecord,
  CustomerRecord,
  DeliveryRecord,
  DeliveryStatus,
  EventRecord,
  GroupTally,
  JsonPage,
  KeyScope,
  MetricPointRecord,
  Mover,
  Page,
  Reader,
  ScoreCursor,
  ScoreRecord,
  Segment,
  Settings,
  UserRecord,
  WebhookRecord,
} from '../store.ts';
import { beforeNul, type Dialect, type Driver, hasNul, Params, type Row, segmentWhere } from './driver.ts';
import * as metrics from './metrics.ts';
import * as outcomes from './outcomes.ts';
import * as portfolio from './portfolio.ts';
import {
  CUSTOMER_COLUMNS,
  EXPLAINED_COLUMNS,
  SCORE_COLUMNS,
  SETTINGS_COLUMNS,
  toAttempt,
  toCustomer,
  toEvent,
  toExplained,
  toHistory,
  toScore,
  toSettings,
  toWebhook,
} from './rows.ts';

export type ListOptions = {
  startingAfter?: string | undefined;
  search?: string | undefined;
  segment?: Segment | undefined;
  limit: number;
};

/** A customer list page and one row more (has_more): the account, the cursor, the search, the segment. */
export function customerList(d: Dialect, accountId: string, opts: ListOptions, columns: string) {
  const p = new Params(accountId);
  let where = 'account_id = $1';
  if (opts.startingAfter !== undefined) where += ` AND id > ${p.add(beforeNul(opts.startingAfter))}`;
  if (opts.search !== undefined) {
    // Case-insensitive (for ASCII) substring of the id, name or email; LIKE's wildcards are escaped.
    const pattern = p.add(`%${likeEscape(opts.search)}%`);
    const like = (column: string) => `${column} ${d.ilike} ${pattern} ESCAPE '\\'`;
    where += ` AND (${like('id')} OR ${like('name')} OR ${like('email')})`;
  }
  where += segmentWhere(d, p, opts.segment);
  const sql = `SELECT ${columns} FROM customers c WHERE ${where} ORDER BY id LIMIT ${p.add(opts.limit + 1)}`;
  return { sql, params: p.list };
}

const DELIVERY_COLUMNS = `d.id, d.webhook_id, d.event_id, e.type AS event_type, d.status, d.attempts,
  d.next_attempt_at, d.created_at, d.updated_at`;

/**
 * The reads each backend makes its own way, tuned to its planner: the portfolio's list and its
 * movers (sqlite/portfolio.ts, postgres/portfolio.ts) and the events feed's order (a sequence on SQLite, a transaction-id horizon on
 * PostgreSQL); and, where a backend has one, a faster customer list page.
 */
export type NativeReads = Pick<Reader, 'listScores' | 'movers' | 'listEvents'> & {
  /** The customer as the API sends it, when it is stored so (null: no such customer); undefined to build it here. */
  getCustomerJson?(accountId: string, id: string): string | null | undefined;
  /** The page as the API sends it, when every row has its JSON stored; null to build it here. */
  listCustomersJson?(accountId: string, opts: ListOptions): JsonPage | null;
};

export class SqlReader implements Reader {
  protected readonly db: Driver;
  protected readonly native: NativeReads;

  constructor(db: Driver, native: NativeReads) {
    this.db = db;
    this.native = native;
  }

  async getCustomer(accountId: string, id: string): Promise<CustomerRecord | null> {
    if (hasNul(id)) return null;
    const row = await this.db.get(
      `SELECT ${CUSTOMER_COLUMNS} FROM customers WHERE account_id = $1 AND id = $2`,
      [accountId, id],
    );
    return row ? toCustomer(row, this.db.fromText) : null;
  }

  async getCustomerJson(accountId: string, id: string): Promise<string | null> {
    const fast = this.native.getCustomerJson?.(accountId, id);
    if (fast !== undefined) return fast;
    const customer = await this.getCustomer(accountId, id);
    return customer ? customerJson(customer) : null;
  }

  async listCustomers(accountId: string, opts: ListOptions) {
    const { sql, params } = customerList(this.db, accountId, opts, CUSTOMER_COLUMNS);
    return page(await this.db.all(sql, params), opts.limit, (r) => toCustomer(r, this.db.fromText));
  }

  async listCustomersJson(accountId: string, opts: ListOptions): Promise<JsonPage> {
    const fast = this.native.listCustomersJson?.(accountId, opts);
    if (fast) return fast;
    const records = await this.listCustomers(accountId, opts);
    return { json: records.data.map(customerJson).join(','), hasMore: records.hasMore };
  }

  async getScore(accountId: string, customerId: string): Promise<ScoreRecord | null> {
    if (hasNul(customerId)) return null;
    const row = await this.db.get(
      `SELECT ${SCORE_COLUMNS} FROM health_scores WHERE account_id = $1 AND customer_id = $2`,
      [accountId, customerId],
    );
    return row ? toScore(row) : null;
  }

  async listHistory(accountId: string, customerId: string, opts: { before?: number; limit: number }) {
    if (hasNul(customerId)) return { data: [], hasMore: false };
    const p = new Params(accountId, customerId);
    const before = opts.before === undefined ? '' : ` AND version < ${p.add(opts.before)}`;
    const rows = await this.db.all(
      `SELECT version, score, status, factors, reason, created_at FROM score_history
       WHERE account_id = $1 AND customer_id = $2${before} ORDER BY version DESC LIMIT ${p.add(opts.limit + 1)}`,
      p.list,
    );
    return page(rows, opts.limit, toHistory);
  }

  async explainedVersions(accountId: string, customerId: string, versions: readonly number[]) {
    if (hasNul(customerId) || versions.length === 0) return [];
    const p = new Params(accountId, customerId);
    const rows = await this.db.all(
      `SELECT ${EXPLAINED_COLUMNS} FROM score_history
       WHERE account_id = $1 AND customer_id = $2 AND version IN (${versions.map((v) => p.add(v)).join(', ')})`,
      p.list,
    );
    return rows.map(toExplained);
  }

  listScores(
    accountId: string,
    opts: { status?: Status | undefined; after?: ScoreCursor | undefined; segment?: Segment; limit: number },
  ) {
    return this.native.listScores(accountId, opts);
  }

  tally(accountId: string, segment?: Segment): Promise<Tally> {
    return portfolio.tally(this.db, accountId, segment);
  }

  distribution(accountId: string, bins: number, segment?: Segment): Promise<Tally[]> {
    return portfolio.distribution(this.db, accountId, bins, segment);
  }

  tallyBy(accountId: string, key: string, segment?: Segment): Promise<GroupTally[]> {
    return portfolio.tallyBy(this.db, accountId, key, segment);
  }

  trendInputs(accountId: string, fromDay: number, segment?: Segment) {
    return portfolio.trendInputs(this.db, accountId, fromDay, segment);
  }

  movers(
    accountId: string,
    opts: { since: number; direction: 'down' | 'up'; limit: number; segment?: Segment },
  ): Promise<Mover[]> {
    return this.native.movers(accountId, opts);
  }

  listEvents(
    accountId: string,
    opts: { type?: EventType; startingAfter?: string; endingBefore?: string; limit: number },
  ): Promise<Page<EventRecord>> {
    return this.native.listEvents(accountId, opts);
  }

  async countScoresByStatus(accountId: string): Promise<Record<Status, number>> {
    const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>;
    const rows = await this.db.all(
      'SELECT band, COUNT(*) AS n FROM health_scores WHERE account_id = $1 GROUP BY band',
      [accountId],
    );
    for (const r of rows) counts[statusOf(r.band as number)] = Number(r.n);
    return counts;
  }

  async getSettings(accountId: string): Promise<Settings> {
    return toSettings(
      await this.db.get(`SELECT ${SETTINGS_COLUMNS} FROM account_settings WHERE account_id = $1`, [
        accountId,
      ]),
    );
  }

  listFactorRules(accountId: string): Promise<FactorRule[]> {
    return metrics.listFactorRules(this.db, accountId);
  }

  getOutcome(...args: Parameters<Reader['getOutcome']>): ReturnType<Reader['getOutcome']> {
    return outcomes.getOutcome(this.db, ...args);
  }

  listOutcomes(...args: Parameters<Reader['listOutcomes']>): ReturnType<Reader['listOutcomes']> {
    return outcomes.listOutcomes(this.db, ...args);
  }

  judgedOutcomes(...args: Parameters<Reader['judgedOutcomes']>): ReturnType<Reader['judgedOutcomes']> {
    return outcomes.judgedOutcomes(this.db, ...args);
  }

  metricNames(accountId: string): ReturnType<Reader['metricNames']> {
    return metrics.metricNames(this.db, accountId);
  }

  listMetricPoints(...args: Parameters<Reader['listMetricPoints']>): Promise<Page<MetricPointRecord>> {
    return metrics.listMetricPoints(this.db, ...args);
  }

  rederiveTargets(...args: Parameters<Reader['rederiveTargets']>): ReturnType<Reader['rederiveTargets']> {
    return metrics.rederiveTargets(this.db, ...args);
  }

  dueForRederive(...args: Parameters<Reader['dueForRederive']>): ReturnType<Reader['dueForRederive']> {
    return metrics.dueForRederive(this.db, ...args);
  }

  metricSummaries(...args: Parameters<Reader['metricSummaries']>): ReturnType<Reader['metricSummaries']> {
    return metrics.metricSummaries(this.db, ...args);
  }

  async getEvent(accountId: string, id: string): Promise<EventRecord | null> {
    if (hasNul(id)) return null;
    const row = await this.db.get(
      'SELECT id, type, data, created_at FROM events WHERE account_id = $1 AND id = $2',
      [accountId, id],
    );
    return row ? toEvent(row) : null;
  }

  async getWebhook(accountId: string, id: string): Promise<WebhookRecord | null> {
    if (hasNul(id)) return null;
    const row = await this.db.get('SELECT * FROM webhooks WHERE account_id = $1 AND id = $2', [
      accountId,
      id,
    ]);
    return row ? toWebhook(row, this.db.fromText) : null;
  }

  async webhookBacklog(accountId: string, id: string, cap: number) {
    if (hasNul(id)) return { pending: 0, oldestAt: null };
    const pending = `FROM deliveries ${this.db.pendingIndex}
      WHERE account_id = $1 AND webhook_id = $2 AND status = 'pending'`;
    const row = await this.db.get(
      `SELECT (SELECT count(*) FROM (SELECT 1 ${pending} LIMIT $3) p) AS pending,
        (SELECT created_at ${pending} ORDER BY created_at LIMIT 1) AS oldest`,
      [accountId, id, cap],
    );
    return { pending: Number(row?.pending ?? 0), oldestAt: row?.oldest == null ? null : Number(row.oldest) };
  }

  async listWebhooks(accountId: string): Promise<WebhookRecord[]> {
    const rows = await this.db.all('SELECT * FROM webhooks WHERE account_id = $1 ORDER BY created_at, id', [
      accountId,
    ]);
    return rows.map((r) => toWebhook(r, this.db.fromText));
  }

  /** One query for the attempts of a whole page of deliveries. */
  async #withAttempts(rows: readonly Row[]): Promise<DeliveryRecord[]> {
    const attempts = new Map<string, AttemptRecord[]>();
    if (rows.length > 0) {
      const p = new Params();
      const ids = rows.map((r) => p.add(r.id as string)).join(', ');
      const found = await this.db.all(
        `SELECT * FROM delivery_attempts WHERE delivery_id IN (${ids}) ORDER BY delivery_id, attempt`,
        p.list,
      );
      for (const a of found) {
        const id = a.delivery_id as string;
        const list = attempts.get(id) ?? [];
        list.push(toAttempt(a, this.db.fromText));
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

  async getDelivery(accountId: string, webhookId: string, id: string): Promise<DeliveryRecord | null> {
    if (hasNul(webhookId) || hasNul(id)) return null;
    const rows = await this.db.all(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id
       WHERE d.account_id = $1 AND d.webhook_id = $2 AND d.id = $3`,
      [accountId, webhookId, id],
    );
    const [delivery] = await this.#withAttempts(rows);
    return delivery ?? null;
  }

  async listDeliveries(
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
    const rows = await this.db.all(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id
       WHERE ${where} ORDER BY d.id DESC LIMIT ${p.add(opts.limit + 1)}`,
      p.list,
    );
    const data = await this.#withAttempts(rows.slice(0, opts.limit));
    return { data, hasMore: rows.length > opts.limit };
  }

  // People (docs/people.md). Sign-in goes by email, across accounts.

  async listUsers(accountId?: string): Promise<UserRecord[]> {
    const rows =
      accountId === undefined
        ? await this.db.all<UserRow>(PEOPLE_SQL.listUsers, [])
        : await this.db.all<UserRow>(PEOPLE_SQL.accountUsers, [accountId]);
    return rows.map(toUser);
  }

  async getUser(accountId: string, id: string): Promise<UserRecord | null> {
    if (hasNul(id)) return null;
    const row = await this.db.get<UserRow>(PEOPLE_SQL.accountUser, [accountId, id]);
    return row ? toUser(row) : null;
  }

  async findSignInLink(tokenHash: string, now: number): Promise<UserRecord | null> {
    const row = await this.db.get<UserRow>(PEOPLE_SQL.linkUser, [tokenHash, now]);
    return row ? toUser(row) : null;
  }

  async findUserByEmail(email: string) {
    if (hasNul(email)) return null;
    const row = await this.db.get<UserRow & { password_hash: string | null }>(PEOPLE_SQL.userByEmail, [
      email,
    ]);
    return row ? { ...toUser(row), passwordHash: row.password_hash ?? null } : null;
  }

  async getSession(idHash: string, now: number) {
    const row = await this.db.get<SessionRow>(PEOPLE_SQL.getSession, [idHash, now]);
    return row ? toSession(row) : null;
  }

  async listAudit(accountId: string, opts: { startingAfter?: string | undefined; limit: number }) {
    if (opts.startingAfter !== undefined && hasNul(opts.startingAfter)) return { data: [], hasMore: false };
    const rows = await this.db.all<AuditRow>(PEOPLE_SQL.listAudit, [
      accountId,
      opts.startingAfter ?? '',
      opts.limit + 1,
    ]);
    return page(rows, opts.limit, toAudit);
  }

  // API keys (docs/api.md, "Authentication"): looked up by their hash.

  async findApiKey(hash: string) {
    const row = await this.db.get(
      'SELECT id, account_id, scope, prefix FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
      [hash],
    );
    return row
      ? {
          keyId: row.id as string,
          accountId: row.account_id as string,
          scope: row.scope as KeyScope,
          prefix: row.prefix as string,
        }
      : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    return (await this.db.all<ApiKeyRow>(LIST_API_KEYS, [])).map(toApiKeyRecord);
  }

  async countActiveApiKeys(): Promise<number> {
    const row = await this.db.get('SELECT COUNT(*) AS n FROM api_keys WHERE revoked_at IS NULL', []);
    return Number(row?.n ?? 0);
  }
}
