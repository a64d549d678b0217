import type { DropRule } from '../../domain/alerts.ts';
import { newId } from '../../domain/ids.ts';
import type { Thresholds, Weights } from '../../domain/scoring.ts';
import { bandOf } from '../bands.ts';
import {
  ADD_TO_DAY,
  DELETE_WEBHOOK,
  deliveriesFor,
  historyToDays,
  microsOf,
  subscribersByType,
} from '../shared.ts';
import { hasNul, type Row } from '../sql/driver.ts';
import { SqlReader } from '../sql/reader.ts';
import { SETTINGS_COLUMNS, toCustomer, toScore, toSettings, toWebhook } from '../sql/rows.ts';
import type {
  AuditEntry,
  CustomerRecord,
  EventRecord,
  ScoreReason,
  ScoreRecord,
  Settings,
  Tx,
  WebhookRecord,
} from '../store.ts';
import { LOCKS, type Queryable } from './connection.ts';
import { pgDriver } from './driver.ts';
import * as portfolio from './portfolio.ts';
import { pgReads } from './reader.ts';
import { fromText, toText, toTextOrNull } from './text.ts';

/**
 * The rollup row a connection adds to: writers of one account on different connections add to
 * different rows of the day, so they do not wait on each other's commits (readers add the slots up).
 */
const SLOT = 'pg_backend_pid() % 16';

/** A band's count change in writeScores' rollup: +1 for the new band, -1 for the one it left. */
const bandDelta = (band: number) =>
  `SUM(CASE WHEN i.band = ${band} THEN 1 ELSE 0 END - CASE WHEN p.band = ${band} THEN 1 ELSE 0 END)`;

/** deleteCustomer's share of the rollup ($1 account, $2 customer). */
const UNDO_HISTORY = historyToDays({
  where: 'account_id = $1 AND customer_id = $2',
  sign: '-1',
  slot: SLOT,
});

/** Rows per statement in bulk writes: large enough to amortise round trips, small enough to stream. */
const CHUNK = 5000;

function* chunks<T>(items: readonly T[]): Generator<readonly T[]> {
  for (let i = 0; i < items.length; i += CHUNK) yield items.slice(i, i + CHUNK);
}

/**
 * The write side, on the connection of one `sql.begin`. SQLite has one writer at a time;
 * PostgreSQL has many, so the reads a caller makes before writing take locks:
 *
 * - a customer or webhook read in a transaction locks the row (callers read it to change it,
 *   and two first scores of one customer must not both be version 1);
 * - everything touching an account's customers, scores or settings first takes the account's
 *   lock shared; a settings change takes it exclusively, so a score computed with the old
 *   weights never commits after the recomputation that should have covered it.
 *
 * The account lock comes before any row lock, so waits run one way only. A settings change asks
 * for it exclusively first of all (`getSettings(…, { forUpdate: true })`): going from shared to
 * exclusive in one transaction could deadlock with another doing the same (PostgreSQL would
 * then abort one of them).
 */
export class PgTx extends SqlReader implements Tx {
  readonly sql: Queryable;

  constructor(sql: Queryable) {
    super(pgDriver(sql), pgReads(sql));
    this.sql = sql;
  }

  /** Set when this transaction made deliveries due; the store NOTIFYs before it commits. */
  deliveriesDue = false;
  readonly #locked = new Map<string, 'shared' | 'exclusive'>();

  async #lockAccount(accountId: string, mode: 'shared' | 'exclusive'): Promise<void> {
    const held = this.#locked.get(accountId);
    if (held === 'exclusive' || held === mode) return;
    this.#locked.set(accountId, mode);
    if (mode === 'shared') {
      await this.sql`SELECT pg_advisory_xact_lock_shared(${LOCKS.account}, hashtext(${accountId}))`;
    } else {
      await this.sql`SELECT pg_advisory_xact_lock(${LOCKS.account}, hashtext(${accountId}))`;
    }
  }

  override async getCustomer(accountId: string, id: string): Promise<CustomerRecord | null> {
    await this.#lockAccount(accountId, 'shared');
    if (hasNul(id)) return null;
    const [row] = await this.sql<Row[]>`
      SELECT id, name, email, metadata::text AS metadata, created_at, updated_at FROM customers
      WHERE account_id = ${accountId} AND id = ${id} FOR NO KEY UPDATE`;
    return row ? toCustomer(row, fromText) : null;
  }

  async scoresForUpdate(accountId: string, customerIds: readonly string[]) {
    await this.#lockAccount(accountId, 'shared');
    const found = new Map<string, ScoreRecord | null>();
    const ids = customerIds.filter((id) => !hasNul(id));
    if (ids.length === 0) return found;
    // ORDER BY id: every batch locks its customers in the same order, so two batches in two
    // processes wait for each other instead of deadlocking. The scores are read by a second
    // statement (sent in the same round trip): under READ COMMITTED it sees what the writers
    // the lock waited for have committed, where a join in the locking statement would not.
    const [locked, scores] = await Promise.all([
      this.sql<{ id: string }[]>`
        SELECT id FROM customers WHERE account_id = ${accountId} AND id = ANY(${ids}::text[])
        ORDER BY id FOR NO KEY UPDATE`,
      this.sql<Row[]>`
        SELECT customer_id, score, band, factors, version, updated_at FROM health_scores
        WHERE account_id = ${accountId} AND customer_id = ANY(${ids}::text[])`,
    ]);
    const byId = new Map(scores.map((r) => [r.customer_id, r]));
    for (const { id } of locked) {
      const row = byId.get(id);
      found.set(id, row ? toScore(row) : null);
    }
    return found;
  }

  override async getScore(accountId: string, customerId: string) {
    await this.#lockAccount(accountId, 'shared');
    return super.getScore(accountId, customerId);
  }

  /** `forUpdate`: the caller is about to change the settings (and recompute every score). */
  override async getSettings(accountId: string, opts?: { forUpdate?: boolean }): Promise<Settings> {
    await this.#lockAccount(accountId, opts?.forUpdate ? 'exclusive' : 'shared');
    const [row] = await this.sql<Row[]>`
      SELECT ${this.sql.unsafe(SETTINGS_COLUMNS)} FROM account_settings WHERE account_id = ${accountId}`;
    return toSettings(row);
  }

  override async getWebhook(accountId: string, id: string): Promise<WebhookRecord | null> {
    if (hasNul(id)) return null;
    const [row] = await this.sql<Row[]>`
      SELECT * FROM webhooks WHERE account_id = ${accountId} AND id = ${id} FOR NO KEY UPDATE`;
    return row ? toWebhook(row, fromText) : null;
  }

  async customersForUpdate(accountId: string, ids: readonly string[]) {
    await this.#lockAccount(accountId, 'shared');
    const found = new Map<string, CustomerRecord>();
    const wanted = ids.filter((id) => !hasNul(id));
    if (wanted.length === 0) return found;
    // ORDER BY id: every batch locks its customers in one order, so two batches wait rather than deadlock.
    const rows = await this.sql<Row[]>`
      SELECT id, name, email, metadata::text AS metadata, created_at, updated_at FROM customers
      WHERE account_id = ${accountId} AND id = ANY(${wanted}::text[])
      ORDER BY id FOR NO KEY UPDATE`;
    for (const row of rows) found.set(row.id as string, toCustomer(row, fromText));
    return found;
  }

  async saveCustomers(
    accountId: string,
    inserts: readonly CustomerRecord[],
    updates: readonly CustomerRecord[],
  ) {
    await this.#lockAccount(accountId, 'shared');
    const columns = (part: readonly CustomerRecord[]) => ({
      id: part.map((c) => c.id),
      name: part.map((c) => toText(c.name)),
      email: part.map((c) => toText(c.email)),
      metadata: part.map((c) => c.metadataJson ?? JSON.stringify(c.metadata)),
      createdAt: part.map((c) => c.createdAt),
      updatedAt: part.map((c) => c.updatedAt),
    });
    const taken: string[] = [];
    for (const part of chunks(inserts)) {
      const { id, name, email, metadata, createdAt, updatedAt } = columns(part);
      const rows = await this.sql<{ id: string }[]>`
        INSERT INTO customers (account_id, id, name, email, metadata, created_at, updated_at)
        SELECT ${accountId}, id, name, email, metadata::json, created_at, updated_at
        FROM unnest(${id}::text[], ${name}::text[], ${email}::text[], ${metadata}::text[],
          ${createdAt}::int8[], ${updatedAt}::int8[]) AS t(id, name, email, metadata, created_at, updated_at)
        ON CONFLICT DO NOTHING RETURNING id`;
      const inserted = new Set(rows.map((r) => r.id));
      for (const c of part) if (!inserted.has(c.id)) taken.push(c.id);
    }
    for (const part of chunks(updates)) {
      const { id, name, email, metadata, updatedAt } = columns(part);
      await this.sql`
        UPDATE customers c SET name = t.name, email = t.email, metadata = t.metadata::json,
          updated_at = t.updated_at
        FROM unnest(${id}::text[], ${name}::text[], ${email}::text[], ${metadata}::text[],
          ${updatedAt}::int8[]) AS t(id, name, email, metadata, updated_at)
        WHERE c.account_id = ${accountId} AND c.id = t.id`;
    }
    return taken;
  }

  async insertCustomer(accountId: string, c: CustomerRecord): Promise<boolean> {
    await this.#lockAccount(accountId, 'shared');
    const result = await this.sql`
      INSERT INTO customers (account_id, id, name, email, metadata, created_at, updated_at)
      VALUES (${accountId}, ${c.id}, ${toText(c.name)}, ${toText(c.email)}, ${JSON.stringify(c.metadata)}::text::json,
        ${c.createdAt}, ${c.updatedAt})
      ON CONFLICT DO NOTHING`;
    return result.count === 1;
  }

  async updateCustomer(accountId: string, c: CustomerRecord): Promise<void> {
    await this.#lockAccount(accountId, 'shared');
    if (hasNul(c.id)) return;
    await this.sql`
      UPDATE customers SET name = ${toText(c.name)}, email = ${toText(c.email)},
        metadata = ${JSON.stringify(c.metadata)}::text::json, updated_at = ${c.updatedAt}
      WHERE account_id = ${accountId} AND id = ${c.id}`;
  }

  async deleteCustomer(accountId: string, id: string): Promise<boolean> {
    await this.#lockAccount(accountId, 'shared');
    if (hasNul(id)) return false;
    // The customer's row first, as a score write locks it: then its history leaves the rollup.
    const [found] = await this.sql`
      SELECT 1 FROM customers WHERE account_id = ${accountId} AND id = ${id} FOR UPDATE`;
    if (!found) return false;
    await this.sql.unsafe(UNDO_HISTORY, [accountId, id]);
    const result = await this.sql`DELETE FROM customers WHERE account_id = ${accountId} AND id = ${id}`;
    return result.count === 1;
  }

  async writeScores(accountId: string, scores: ScoreRecord[], reason: ScoreReason): Promise<void> {
    await this.#lockAccount(accountId, 'shared');
    // Version 1 is a customer's first score; every later version replaces an existing row.
    // One statement per chunk: the new rows, the changed rows and their history.
    for (const part of chunks(scores)) {
      await this.sql`
        WITH input AS (
          SELECT * FROM unnest(
            ${part.map((s) => s.customerId)}::text[],
            ${part.map((s) => s.score)}::float8[],
            ${part.map((s) => bandOf(s.status))}::int2[],
            ${part.map((s) => s.status)}::text[],
            ${part.map((s) => JSON.stringify(s.factors))}::text[],
            ${part.map((s) => s.version)}::int4[],
            ${part.map((s) => s.updatedAt)}::int8[]
          ) AS t(customer_id, score, band, status, factors, version, updated_at)
        ), inserted AS (
          INSERT INTO health_scores (account_id, customer_id, score, band, factors, version, updated_at)
          SELECT ${accountId}, customer_id, score, band, factors::json, version, updated_at
          FROM input WHERE version = 1
        ), previous AS (
          SELECT h.customer_id, h.score, h.band FROM health_scores h
          WHERE h.account_id = ${accountId}
            AND h.customer_id IN (SELECT customer_id FROM input WHERE version <> 1)
        ), updated AS (
          UPDATE health_scores h SET score = i.score, band = i.band, factors = i.factors::json,
            version = i.version, updated_at = i.updated_at
          FROM input i
          WHERE i.version <> 1 AND h.account_id = ${accountId} AND h.customer_id = i.customer_id
        ), history AS (
          INSERT INTO score_history (account_id, customer_id, version, score, status, factors, reason, created_at)
          SELECT ${accountId}, customer_id, version, score, status, factors::json, ${reason}, updated_at
          FROM input
        ), days AS (
          -- What these writes change in the trend rollup (docs/operations.md, "The trend rollup").
          SELECT i.updated_at / 86400000 AS day,
            ${this.sql.unsafe(bandDelta(0))} AS critical,
            ${this.sql.unsafe(bandDelta(1))} AS at_risk,
            ${this.sql.unsafe(bandDelta(2))} AS healthy,
            SUM(${this.sql.unsafe(microsOf('i'))} - COALESCE(${this.sql.unsafe(microsOf('p'))}, 0)) AS micros
          FROM input i LEFT JOIN previous p ON p.customer_id = i.customer_id
          GROUP BY 1
        )
        INSERT INTO score_days (account_id, day, slot, critical, at_risk, healthy, score_micros)
        SELECT ${accountId}, day, ${this.sql.unsafe(SLOT)}, critical, at_risk, healthy, micros FROM days
        ${this.sql.unsafe(ADD_TO_DAY)}`;
    }
  }

  async dropWatch(accountId: string, customerIds: readonly string[], since: number) {
    return portfolio.dropWatch(this.sql, accountId, customerIds, since);
  }

  async recordDropAlerts(accountId: string, alerts: readonly { customerId: string; at: number }[]) {
    if (alerts.length === 0) return;
    await this.sql`
      INSERT INTO drop_alerts (account_id, customer_id, alerted_at)
      SELECT ${accountId}, customer_id, alerted_at
      FROM unnest(${alerts.map((a) => a.customerId)}::text[], ${alerts.map((a) => a.at)}::int8[])
        AS t(customer_id, alerted_at)
      ON CONFLICT (account_id, customer_id) DO UPDATE SET alerted_at = excluded.alerted_at`;
  }

  async putAlerts(accountId: string, drop: DropRule | null, now: number): Promise<void> {
    await this.#lockAccount(accountId, 'exclusive');
    await this.sql`
      INSERT INTO account_settings (account_id, drop_delta, drop_days, alerts_updated_at)
      VALUES (${accountId}, ${drop?.delta ?? null}, ${drop?.days ?? null}, ${now})
      ON CONFLICT (account_id) DO UPDATE SET drop_delta = excluded.drop_delta,
        drop_days = excluded.drop_days, alerts_updated_at = excluded.alerts_updated_at`;
  }

  async scoresAfter(accountId: string, after: string | null, limit: number): Promise<ScoreRecord[]> {
    await this.#lockAccount(accountId, 'shared');
    const rows = await this.sql<Row[]>`
      SELECT customer_id, score, band, factors, version, updated_at FROM health_scores
      WHERE account_id = ${accountId} AND customer_id > ${after ?? ''}
      ORDER BY customer_id LIMIT ${limit}`;
    return rows.map(toScore);
  }

  async putWeights(accountId: string, weights: Weights, now: number): Promise<void> {
    await this.#lockAccount(accountId, 'exclusive');
    await this.sql`
      INSERT INTO account_settings (account_id, weights, weights_updated_at)
      VALUES (${accountId}, ${JSON.stringify(weights)}::text::json, ${now})
      ON CONFLICT (account_id) DO UPDATE SET weights = excluded.weights,
        weights_updated_at = excluded.weights_updated_at`;
  }

  async putThresholds(accountId: string, t: Thresholds, now: number): Promise<void> {
    await this.#lockAccount(accountId, 'exclusive');
    await this.sql`
      INSERT INTO account_settings (account_id, healthy, at_risk, thresholds_updated_at)
      VALUES (${accountId}, ${t.healthy}, ${t.at_risk}, ${now})
      ON CONFLICT (account_id) DO UPDATE SET healthy = excluded.healthy, at_risk = excluded.at_risk,
        thresholds_updated_at = excluded.thresholds_updated_at`;
  }

  async insertEvents(accountId: string, events: EventRecord[]): Promise<void> {
    if (events.length === 0) return;
    // KEY SHARE (what the deliveries' foreign key takes anyway), taken now: a webhook being
    // deleted at this moment is waited for and then left out, instead of failing the insert.
    const subscribers = subscribersByType(
      await this.sql<{ event_type: string; webhook_id: string }[]>`
        SELECT s.event_type, s.webhook_id FROM webhook_subscriptions s
        JOIN webhooks w ON w.account_id = s.account_id AND w.id = s.webhook_id
        WHERE s.account_id = ${accountId} AND w.enabled
        FOR KEY SHARE OF w`,
    );
    for (const part of chunks(events)) {
      // WITH ORDINALITY ... ORDER BY: seq follows the order of the list, as on SQLite.
      await this.sql`
        INSERT INTO events (id, account_id, type, data, created_at)
        SELECT id, ${accountId}, type, data::json, created_at
        FROM unnest(
          ${part.map((e) => e.id)}::text[],
          ${part.map((e) => e.type)}::text[],
          ${part.map((e) => JSON.stringify(e.data))}::text[],
          ${part.map((e) => e.createdAt)}::int8[]
        ) WITH ORDINALITY AS t(id, type, data, created_at, n)
        ORDER BY n`;
    }
    const deliveries = deliveriesFor(events, subscribers);
    for (const part of chunks(deliveries)) {
      await this.sql`
        INSERT INTO deliveries (id, account_id, webhook_id, event_id, status, attempts, next_attempt_at,
          created_at, updated_at)
        SELECT id, ${accountId}, webhook_id, event_id, 'pending', 0, at, at, at
        FROM unnest(
          ${part.map((d) => d.id)}::text[],
          ${part.map((d) => d.webhookId)}::text[],
          ${part.map((d) => d.eventId)}::text[],
          ${part.map((d) => d.at)}::int8[]
        ) AS t(id, webhook_id, event_id, at)`;
    }
    if (deliveries.length > 0) this.deliveriesDue = true;
  }

  async insertDirectEvent(accountId: string, webhookId: string, e: EventRecord): Promise<string | null> {
    // KEY SHARE, as in insertEvents: a delete of the webhook running now is waited for.
    const [found] = await this.sql`
      SELECT 1 FROM webhooks WHERE account_id = ${accountId} AND id = ${webhookId} FOR KEY SHARE`;
    if (!found) return null;
    const id = newId.delivery();
    await this.sql`
      INSERT INTO events (id, account_id, type, data, created_at)
      VALUES (${e.id}, ${accountId}, ${e.type}, ${JSON.stringify(e.data)}::text::json, ${e.createdAt})`;
    await this.sql`
      INSERT INTO deliveries (id, account_id, webhook_id, event_id, status, attempts, next_attempt_at,
        created_at, updated_at)
      VALUES (${id}, ${accountId}, ${webhookId}, ${e.id}, 'pending', 0, ${e.createdAt}, ${e.createdAt}, ${e.createdAt})`;
    this.deliveriesDue = true;
    return id;
  }

  async insertWebhook(accountId: string, w: WebhookRecord): Promise<void> {
    await this.sql`
      INSERT INTO webhooks (account_id, id, url, events, description, secret, enabled, disabled_reason,
        created_at, updated_at)
      VALUES (${accountId}, ${w.id}, ${toText(w.url)}, ${JSON.stringify(w.events)}::text::json,
        ${toTextOrNull(w.description)}, ${w.secret}, ${w.enabled}, ${toTextOrNull(w.disabledReason)}, ${w.createdAt},
        ${w.updatedAt})`;
    await this.#subscribe(accountId, w);
  }

  async updateWebhook(accountId: string, w: WebhookRecord): Promise<void> {
    await this.sql`
      UPDATE webhooks SET url = ${toText(w.url)}, events = ${JSON.stringify(w.events)}::text::json,
        description = ${toTextOrNull(w.description)}, secret = ${w.secret}, enabled = ${w.enabled},
        disabled_reason = ${toTextOrNull(w.disabledReason)}, updated_at = ${w.updatedAt}
      WHERE account_id = ${accountId} AND id = ${w.id}`;
    await this
      .sql`DELETE FROM webhook_subscriptions WHERE account_id = ${accountId} AND webhook_id = ${w.id}`;
    await this.#subscribe(accountId, w);
    // Switching a webhook back on resumes the deliveries it had pending.
    if (w.enabled) this.deliveriesDue = true;
  }

  async #subscribe(accountId: string, w: WebhookRecord): Promise<void> {
    if (w.events.length === 0) return;
    await this.sql`
      INSERT INTO webhook_subscriptions (account_id, event_type, webhook_id)
      SELECT ${accountId}, event_type, ${w.id} FROM unnest(${w.events}::text[]) AS t(event_type)`;
  }

  async deleteWebhook(accountId: string, id: string): Promise<boolean> {
    if (hasNul(id)) return false;
    let deleted = 0;
    for (const sql of DELETE_WEBHOOK) deleted = (await this.sql.unsafe(sql, [accountId, id])).count;
    return deleted === 1;
  }

  async retryDelivery(accountId: string, webhookId: string, id: string, now: number): Promise<boolean> {
    if (hasNul(webhookId) || hasNul(id)) return false;
    const result = await this.sql`
      UPDATE deliveries SET status = 'pending', next_attempt_at = ${now}, updated_at = ${now}
      WHERE account_id = ${accountId} AND webhook_id = ${webhookId} AND id = ${id}
        AND NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_id = ${id} AND l.until > ${now})`;
    if (result.count === 1) this.deliveriesDue = true;
    return result.count === 1;
  }

  async appendAudits(accountId: string, entries: readonly AuditEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const col = <K extends keyof AuditEntry>(k: K) => entries.map((e) => e[k]);
    await this.sql`
      INSERT INTO audit_log (account_id, id, actor_type, actor_id, actor_label, action, object_id, at, request_id)
      SELECT ${accountId}, * FROM unnest(${col('id') as string[]}::text[],
        ${entries.map((e) => e.actor.type)}::text[], ${entries.map((e) => e.actor.id)}::text[],
        ${entries.map((e) => e.actor.label)}::text[], ${col('action') as string[]}::text[],
        ${col('objectId') as (string | null)[]}::text[], ${col('at') as number[]}::int8[],
        ${col('requestId') as string[]}::text[])`;
  }

  async recordIdempotentAnswer(
    accountId: string,
    key: string,
    claimedAt: number,
    answer: { status: number; body: string },
  ): Promise<boolean> {
    const result = await this.sql`
      UPDATE idempotency_keys SET status = ${answer.status}, body = ${answer.body}
      WHERE account_id = ${accountId} AND key = ${key} AND created_at = ${claimedAt} AND status IS NULL`;
    return result.count === 1;
  }
}
