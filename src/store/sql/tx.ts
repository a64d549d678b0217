// The writes both backends share, written once over a Driver (driver.ts). A backend's
// transaction class extends this with what it writes its own way: scores and customers in bulk
// (SQLite statement by statement on its one writer, PostgreSQL in one statement per chunk, with
// row locks) and events with their deliveries.
import type { DropRule } from '../../domain/alerts.ts';
import { newId } from '../../domain/ids.ts';
import type { FactorRule } from '../../domain/rules.ts';
import type { Thresholds, Weights } from '../../domain/scoring.ts';
import { auditParams, PEOPLE_SQL } from '../people-sql.ts';
import { DELETE_WEBHOOK } from '../shared.ts';
import type {
  AuditEntry,
  CustomerRecord,
  EventRecord,
  MetricPointRecord,
  OutcomeRecord,
  ScoreReason,
  ScoreRecord,
  Tx,
  WebhookRecord,
} from '../store.ts';
import { hasNul } from './driver.ts';
import * as metrics from './metrics.ts';
import * as outcomes from './outcomes.ts';
import { SqlReader } from './reader.ts';
import { SCORE_COLUMNS, toScore } from './rows.ts';

const INSERT_EVENT =
  'INSERT INTO events (id, account_id, type, data, created_at) VALUES ($1, $2, $3, $4, $5)';
const INSERT_DELIVERY = `INSERT INTO deliveries (id, account_id, webhook_id, event_id, status, attempts,
  next_attempt_at, created_at, updated_at) VALUES ($1, $2, $3, $4, 'pending', 0, $5, $5, $5)`;

/** An account-settings column set, inserted or updated in place. */
const putSettings = (columns: string[]) =>
  `INSERT INTO account_settings (account_id, ${columns.join(', ')})
   VALUES ($1, ${columns.map((_, i) => `$${i + 2}`).join(', ')})
   ON CONFLICT (account_id) DO UPDATE SET ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}`;

const PUT_WEIGHTS = putSettings(['weights', 'weights_updated_at']);
const PUT_THRESHOLDS = putSettings(['healthy', 'at_risk', 'thresholds_updated_at']);
const PUT_ALERTS = putSettings(['drop_delta', 'drop_days', 'alerts_updated_at']);

export abstract class SqlTx extends SqlReader implements Tx {
  /** Set when this transaction made deliveries due; the store wakes dispatchers at the commit. */
  deliveriesDue = false;

  /**
   * Before a read it will act on, or a change: the account's lock (docs/postgresql.md). SQLite has
   * one writer at a time, and nothing to lock. Sent, not waited for: a method sends its statements
   * when called, in the order of the calls (docs/postgresql.md, "Round trips of a write").
   */
  protected lockAccount(_accountId: string, _mode: 'shared' | 'exclusive'): void {}

  abstract scoresForUpdate(
    accountId: string,
    customerIds: readonly string[],
  ): Promise<Map<string, ScoreRecord | null>>;
  abstract customersForUpdate(
    accountId: string,
    ids: readonly string[],
  ): Promise<Map<string, CustomerRecord>>;
  abstract saveCustomers(
    accountId: string,
    inserts: readonly CustomerRecord[],
    updates: readonly CustomerRecord[],
  ): Promise<string[]>;
  abstract insertCustomer(accountId: string, customer: CustomerRecord): Promise<boolean>;
  abstract updateCustomer(accountId: string, customer: CustomerRecord): Promise<void>;
  abstract deleteCustomer(accountId: string, id: string): Promise<boolean>;
  abstract writeScores(accountId: string, scores: ScoreRecord[], reason: ScoreReason): Promise<void>;
  abstract dropWatch(...args: Parameters<Tx['dropWatch']>): ReturnType<Tx['dropWatch']>;
  abstract insertEvents(accountId: string, events: EventRecord[]): Promise<void>;

  async recordDropAlerts(accountId: string, alerts: readonly { customerId: string; at: number }[]) {
    await this.db.runEach(
      `INSERT INTO drop_alerts (account_id, customer_id, alerted_at) VALUES ($1, $2, $3)
       ON CONFLICT (account_id, customer_id) DO UPDATE SET alerted_at = excluded.alerted_at`,
      alerts.map((a) => [accountId, a.customerId, a.at]),
      ['text', 'text', 'int8'],
    );
  }

  async putAlerts(accountId: string, drop: DropRule | null, now: number): Promise<void> {
    this.lockAccount(accountId, 'exclusive');
    await this.db.run(PUT_ALERTS, [accountId, drop?.delta ?? null, drop?.days ?? null, now]);
  }

  async putWeights(accountId: string, weights: Weights, now: number): Promise<void> {
    this.lockAccount(accountId, 'exclusive');
    await this.db.run(PUT_WEIGHTS, [accountId, this.db.json(weights), now]);
  }

  async putFactorRule(accountId: string, rule: FactorRule): Promise<void> {
    // As a weights change: every score of the account is recomputed in this transaction.
    this.lockAccount(accountId, 'exclusive');
    await metrics.putFactorRule(this.db, accountId, rule);
  }

  async deleteFactorRule(accountId: string, factor: string): Promise<boolean> {
    this.lockAccount(accountId, 'exclusive');
    return metrics.deleteFactorRule(this.db, accountId, factor);
  }

  async setRederiveDue(
    accountId: string,
    due: readonly { customerId: string; at: number | null }[],
    opts?: { earlierOnly?: boolean },
  ) {
    await metrics.setRederiveDue(this.db, accountId, due, opts?.earlierOnly ?? false);
  }

  async claimRederiveDue(accountId: string, customerIds: readonly string[], now: number) {
    this.lockAccount(accountId, 'shared');
    return metrics.claimRederiveDue(this.db, accountId, customerIds, now);
  }

  async insertOutcomes(accountId: string, list: readonly OutcomeRecord[]): Promise<void> {
    this.lockAccount(accountId, 'shared');
    await outcomes.insertOutcomes(this.db, accountId, list);
  }

  async deleteOutcome(accountId: string, customerId: string, id: string): Promise<boolean> {
    this.lockAccount(accountId, 'shared');
    return outcomes.deleteOutcome(this.db, accountId, customerId, id);
  }

  async insertMetricPoints(accountId: string, points: readonly MetricPointRecord[]): Promise<void> {
    this.lockAccount(accountId, 'shared');
    await metrics.insertMetricPoints(this.db, accountId, points);
  }

  async putThresholds(accountId: string, t: Thresholds, now: number): Promise<void> {
    this.lockAccount(accountId, 'exclusive');
    await this.db.run(PUT_THRESHOLDS, [accountId, t.healthy, t.at_risk, now]);
  }

  async scoresAfter(accountId: string, after: string | null, limit: number): Promise<ScoreRecord[]> {
    this.lockAccount(accountId, 'shared');
    const rows = await this.db.all(
      `SELECT ${SCORE_COLUMNS} FROM health_scores WHERE account_id = $1 AND customer_id > $2
       ORDER BY customer_id LIMIT $3`,
      [accountId, after ?? '', limit],
    );
    return rows.map(toScore);
  }

  async insertDirectEvent(accountId: string, webhookId: string, e: EventRecord): Promise<string | null> {
    // KEY SHARE on PostgreSQL (what the delivery's foreign key takes anyway), taken now: a delete
    // of the webhook running at this moment is waited for.
    const found = await this.db.get(
      `SELECT 1 AS found FROM webhooks WHERE account_id = $1 AND id = $2${this.db.keyShare}`,
      [accountId, webhookId],
    );
    if (!found) return null;
    const id = newId.delivery();
    await this.db.run(INSERT_EVENT, [e.id, accountId, e.type, this.db.json(e.data), e.createdAt]);
    await this.db.run(INSERT_DELIVERY, [id, accountId, webhookId, e.id, e.createdAt]);
    this.deliveriesDue = true;
    return id;
  }

  async insertWebhook(accountId: string, w: WebhookRecord): Promise<void> {
    await this.db.run(
      `INSERT INTO webhooks (account_id, id, url, events, description, secret, enabled, disabled_reason,
         updated_at, previous_secret, previous_secret_expires_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [...this.#webhookParams(accountId, w), w.createdAt],
    );
    await this.#subscribe(accountId, w);
  }

  async updateWebhook(accountId: string, w: WebhookRecord): Promise<void> {
    await this.db.run(
      `UPDATE webhooks SET url = $3, events = $4, description = $5, secret = $6, enabled = $7,
         disabled_reason = $8, updated_at = $9, previous_secret = $10, previous_secret_expires_at = $11
       WHERE account_id = $1 AND id = $2`,
      this.#webhookParams(accountId, w),
    );
    await this.db.run('DELETE FROM webhook_subscriptions WHERE account_id = $1 AND webhook_id = $2', [
      accountId,
      w.id,
    ]);
    await this.#subscribe(accountId, w);
    // Switching a webhook back on resumes the deliveries it had pending.
    if (w.enabled) this.deliveriesDue = true;
  }

  /** A webhook's columns as insert and update bind them: $1 … $11. */
  #webhookParams(accountId: string, w: WebhookRecord) {
    const { text, textOrNull, json, bool } = this.db;
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
    ];
  }

  async #subscribe(accountId: string, w: WebhookRecord): Promise<void> {
    await this.db.runEach(
      'INSERT INTO webhook_subscriptions (account_id, event_type, webhook_id) VALUES ($1, $2, $3)',
      w.events.map((type) => [accountId, type, w.id]),
      ['text', 'text', 'text'],
    );
  }

  async deleteWebhook(accountId: string, id: string): Promise<boolean> {
    if (hasNul(id)) return false;
    let deleted = 0;
    for (const sql of DELETE_WEBHOOK) deleted = await this.db.run(sql, [accountId, id]);
    return deleted === 1;
  }

  async retryDelivery(accountId: string, webhookId: string, id: string, now: number): Promise<boolean> {
    if (hasNul(webhookId) || hasNul(id)) return false;
    const changed = await this.db.run(
      `UPDATE deliveries SET status = 'pending', next_attempt_at = $4, updated_at = $4
       WHERE account_id = $1 AND webhook_id = $2 AND id = $3
         AND NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_id = $3 AND l.until > $4)`,
      [accountId, webhookId, id, now],
    );
    if (changed === 1) this.deliveriesDue = true;
    return changed === 1;
  }

  async appendAudits(accountId: string, entries: readonly AuditEntry[]): Promise<void> {
    await this.db.runEach(
      PEOPLE_SQL.appendAudit,
      entries.map((e) => [...auditParams(accountId, e)]),
      ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'int8', 'text'],
    );
  }

  async recordIdempotentAnswer(
    accountId: string,
    key: string,
    claimedAt: number,
    answer: { status: number; body: string },
  ): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE idempotency_keys SET status = $4, body = $5
       WHERE account_id = $1 AND key = $2 AND created_at = $3 AND status IS NULL`,
      [accountId, key, claimedAt, answer.status, answer.body],
    );
    return changed === 1;
  }
}
