import { addDays, backfillDays, type FirstVersion } from '../backfills.ts';
import { type CustomerWrite, withBook } from '../customers.ts';
import { hasNul, type Row } from '../driver.ts';
import { deliveriesFor, subscribersByType } from '../outbox.ts';
import { bandOf, CUSTOMER_COLUMNS, SCORE_COLUMNS, toCustomer, toScore, toWebhook } from '../rows.ts';
import { ADD_TO_DAY, explainedColumns, historyToDays, microsOf } from '../scores.ts';
import { SqlTx } from '../sql-tx.ts';
import type {
  CustomerRecord,
  EventRecord,
  ScoreReason,
  ScoreRecord,
  Settings,
  WebhookRecord,
} from '../store.ts';
import { LOCKS, type Queryable } from './connection.ts';
import { pgDriver } from './driver.ts';
import * as portfolio from './portfolio.ts';
import { pgReads } from './reader.ts';
import { fromText, pgArray, toText } from './text.ts';

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
export class PgTx extends SqlTx {
  readonly sql: Queryable;

  constructor(sql: Queryable) {
    super(pgDriver(sql), pgReads(sql));
    this.sql = sql;
  }

  readonly #locked = new Map<string, 'shared' | 'exclusive'>();
  /** The account locks sent (lockAccount waits for none of them): see held(). */
  readonly #locks: Promise<unknown>[] = [];

  /**
   * Waits for every account lock this transaction asked for, and throws if one failed: awaited
   * before the commit, so a transaction whose last statement was a lock that failed (which
   * PostgreSQL would answer COMMIT with a rollback for, without an error) never passes as committed.
   */
  async held(): Promise<void> {
    await Promise.all(this.#locks);
  }

  protected override lockAccount(accountId: string, mode: 'shared' | 'exclusive'): void {
    const held = this.#locked.get(accountId);
    if (held === 'exclusive' || held === mode) return;
    this.#locked.set(accountId, mode);
    // Sent, not waited for: the connection runs a transaction's statements in the order sent, so
    // whatever the caller sends next runs once the lock is held, and goes in the same round trip.
    // A lock that fails (a deadlock, a timeout) still fails the transaction: the statements after
    // it are refused, and postgres.js throws the first error of any of them and rolls back
    // (docs/postgresql.md, "Round trips of a write").
    this.#locks.push(
      (mode === 'shared'
        ? this.sql`SELECT pg_advisory_xact_lock_shared(${LOCKS.account}, hashtext(${accountId}))`
        : this.sql`SELECT pg_advisory_xact_lock(${LOCKS.account}, hashtext(${accountId}))`
      ).execute(),
    );
  }

  override async getCustomer(accountId: string, id: string): Promise<CustomerRecord | null> {
    this.lockAccount(accountId, 'shared');
    if (hasNul(id)) return null;
    const [row] = await this.sql<Row[]>`
      SELECT ${this.sql.unsafe(CUSTOMER_COLUMNS)} FROM customers
      WHERE account_id = ${accountId} AND id = ${id} FOR NO KEY UPDATE`;
    return row ? toCustomer(row, fromText) : null;
  }

  async scoresForUpdate(accountId: string, customerIds: readonly string[]) {
    this.lockAccount(accountId, 'shared');
    const found = new Map<string, ScoreRecord | null>();
    const ids = customerIds.filter((id) => !hasNul(id));
    if (ids.length === 0) return found;
    // ORDER BY id: every batch locks its customers in the same order, so two batches in two
    // processes wait for each other instead of deadlocking. The scores are read by a second
    // statement (sent in the same round trip): under READ COMMITTED it sees what the writers
    // the lock waited for have committed, where a join in the locking statement would not.
    const reads = Promise.all([
      this.sql<{ id: string }[]>`
        SELECT id FROM customers WHERE account_id = ${accountId} AND id = ANY(${pgArray(ids)}::text[])
        ORDER BY id FOR NO KEY UPDATE`,
      this.sql<Row[]>`
        SELECT ${this.sql.unsafe(SCORE_COLUMNS)} FROM health_scores
        WHERE account_id = ${accountId} AND customer_id = ANY(${pgArray(ids)}::text[])`,
    ]);
    // The scores are read to be changed, and a change writes events: the account's webhook
    // subscribers are read in this round trip too (after the row locks, in the order the locks
    // were always taken), not in one of their own before the events.
    void this.#subscribersOf(accountId);
    const [locked, scores] = await reads;
    const byId = new Map(scores.map((r) => [r.customer_id, r]));
    for (const { id } of locked) {
      const row = byId.get(id);
      found.set(id, row ? toScore(row) : null);
    }
    return found;
  }

  override async getScore(accountId: string, customerId: string) {
    this.lockAccount(accountId, 'shared');
    return super.getScore(accountId, customerId);
  }

  /** `forUpdate`: the caller is about to change the settings (and recompute every score). */
  override async getSettings(accountId: string, opts?: { forUpdate?: boolean }): Promise<Settings> {
    this.lockAccount(accountId, opts?.forUpdate ? 'exclusive' : 'shared');
    return super.getSettings(accountId);
  }

  override async getWebhook(accountId: string, id: string): Promise<WebhookRecord | null> {
    if (hasNul(id)) return null;
    const [row] = await this.sql<Row[]>`
      SELECT * FROM webhooks WHERE account_id = ${accountId} AND id = ${id} FOR NO KEY UPDATE`;
    return row ? toWebhook(row, fromText) : null;
  }

  async customersForUpdate(accountId: string, ids: readonly string[]) {
    this.lockAccount(accountId, 'shared');
    const found = new Map<string, CustomerRecord>();
    const wanted = ids.filter((id) => !hasNul(id));
    if (wanted.length === 0) return found;
    // ORDER BY id: every batch locks its customers in one order, so two batches wait rather than deadlock.
    const rows = await this.sql<Row[]>`
      SELECT ${this.sql.unsafe(CUSTOMER_COLUMNS)} FROM customers
      WHERE account_id = ${accountId} AND id = ANY(${pgArray(wanted)}::text[])
      ORDER BY id FOR NO KEY UPDATE`;
    for (const row of rows) found.set(row.id as string, toCustomer(row, fromText));
    return found;
  }

  async saveCustomers(
    accountId: string,
    inserts: readonly CustomerWrite[],
    updates: readonly CustomerWrite[],
  ) {
    this.lockAccount(accountId, 'shared');
    const columns = (given: readonly CustomerWrite[]) => {
      const part = given.map(withBook);
      return {
        id: part.map((c) => c.id),
        name: part.map((c) => toText(c.name)),
        email: part.map((c) => toText(c.email)),
        owner: part.map((c) => (c.owner === null ? null : toText(c.owner))),
        arrCents: part.map((c) => c.arrCents),
        renewalAt: part.map((c) => c.renewalAt),
        lifecycle: part.map((c) => c.lifecycle),
        parentId: part.map((c) => c.parentId),
        metadata: part.map((c) => c.metadataJson ?? JSON.stringify(c.metadata)),
        createdAt: part.map((c) => c.createdAt),
        updatedAt: part.map((c) => c.updatedAt),
      };
    };
    const taken: string[] = [];
    for (const part of chunks(inserts)) {
      const {
        id,
        name,
        email,
        owner,
        arrCents,
        renewalAt,
        lifecycle,
        parentId,
        metadata,
        createdAt,
        updatedAt,
      } = columns(part);
      const rows = await this.sql<{ id: string }[]>`
        INSERT INTO customers (account_id, id, name, email, owner, arr_cents, renewal_at, lifecycle, parent_id,
          metadata, created_at, updated_at)
        SELECT ${accountId}, id, name, email, owner, arr_cents, renewal_at, lifecycle, parent_id,
          metadata::json, created_at, updated_at
        FROM unnest(${pgArray(id)}::text[], ${pgArray(name)}::text[], ${pgArray(email)}::text[],
          ${pgArray(owner)}::text[], ${pgArray(arrCents)}::int8[], ${pgArray(renewalAt)}::int8[],
          ${pgArray(lifecycle)}::text[], ${pgArray(parentId)}::text[], ${pgArray(metadata)}::text[],
          ${pgArray(createdAt)}::int8[], ${pgArray(updatedAt)}::int8[])
          AS t(id, name, email, owner, arr_cents, renewal_at, lifecycle, parent_id, metadata, created_at, updated_at)
        ON CONFLICT DO NOTHING RETURNING id`;
      const inserted = new Set(rows.map((r) => r.id));
      for (const c of part) if (!inserted.has(c.id)) taken.push(c.id);
    }
    for (const part of chunks(updates)) {
      const { id, name, email, owner, arrCents, renewalAt, lifecycle, parentId, metadata, updatedAt } =
        columns(part);
      await this.sql`
        UPDATE customers c SET name = t.name, email = t.email, owner = t.owner, arr_cents = t.arr_cents,
          renewal_at = t.renewal_at, lifecycle = t.lifecycle, parent_id = t.parent_id,
          metadata = t.metadata::json, updated_at = t.updated_at
        FROM unnest(${pgArray(id)}::text[], ${pgArray(name)}::text[], ${pgArray(email)}::text[],
          ${pgArray(owner)}::text[], ${pgArray(arrCents)}::int8[], ${pgArray(renewalAt)}::int8[],
          ${pgArray(lifecycle)}::text[], ${pgArray(parentId)}::text[], ${pgArray(metadata)}::text[],
          ${pgArray(updatedAt)}::int8[])
          AS t(id, name, email, owner, arr_cents, renewal_at, lifecycle, parent_id, metadata, updated_at)
        WHERE c.account_id = ${accountId} AND c.id = t.id`;
    }
    return taken;
  }

  async insertCustomer(accountId: string, given: CustomerWrite): Promise<boolean> {
    this.lockAccount(accountId, 'shared');
    const c = withBook(given);
    const result = await this.sql`
      INSERT INTO customers (account_id, id, name, email, owner, arr_cents, renewal_at, lifecycle, parent_id,
        metadata, created_at, updated_at)
      VALUES (${accountId}, ${c.id}, ${toText(c.name)}, ${toText(c.email)}, ${c.owner === null ? null : toText(c.owner)},
        ${c.arrCents}, ${c.renewalAt}, ${c.lifecycle}, ${c.parentId}, ${JSON.stringify(c.metadata)}::text::json,
        ${c.createdAt}, ${c.updatedAt})
      ON CONFLICT DO NOTHING`;
    return result.count === 1;
  }

  async updateCustomer(accountId: string, given: CustomerWrite): Promise<void> {
    this.lockAccount(accountId, 'shared');
    const c = withBook(given);
    if (hasNul(c.id)) return;
    await this.sql`
      UPDATE customers SET name = ${toText(c.name)}, email = ${toText(c.email)},
        owner = ${c.owner === null ? null : toText(c.owner)}, arr_cents = ${c.arrCents}, renewal_at = ${c.renewalAt},
        lifecycle = ${c.lifecycle}, parent_id = ${c.parentId},
        metadata = ${JSON.stringify(c.metadata)}::text::json, updated_at = ${c.updatedAt}
      WHERE account_id = ${accountId} AND id = ${c.id}`;
  }

  async writeBackfill(
    accountId: string,
    customerId: string,
    records: ScoreRecord[],
    first: FirstVersion | null,
  ) {
    this.lockAccount(accountId, 'shared');
    if (records.length === 0) return;
    const explained = records.map((s) => explainedColumns(s));
    await this.sql`
      INSERT INTO score_history (account_id, customer_id, version, score, status, factors, reason, created_at,
        computed, override, weights, inputs)
      SELECT ${accountId}, ${customerId}, version, score, status, factors::json, 'backfill', created_at,
        computed, override::json, weights::json, inputs::json
      FROM unnest(${pgArray(records.map((s) => s.version))}::int8[], ${pgArray(records.map((s) => s.score))}::float8[],
        ${pgArray(records.map((s) => s.status))}::text[], ${pgArray(records.map((s) => JSON.stringify(s.factors)))}::text[],
        ${pgArray(records.map((s) => s.updatedAt))}::int8[], ${pgArray(explained.map((e) => e.computed))}::float8[],
        ${pgArray(explained.map((e) => e.override))}::text[], ${pgArray(explained.map((e) => e.weights))}::text[],
        ${pgArray(explained.map((e) => e.inputs))}::text[])
        AS t(version, score, status, factors, created_at, computed, override, weights, inputs)`;
    const last = records.at(-1) as ScoreRecord;
    // A customer with no history has no score either: its last backfilled version becomes it.
    if (!first) {
      const { computed, override, inputs } = explained.at(-1) as (typeof explained)[number];
      await this.sql`
        INSERT INTO health_scores (account_id, customer_id, score, band, factors, version, updated_at,
          computed, override, inputs)
        VALUES (${accountId}, ${customerId}, ${last.score}, ${bandOf(last.status)}, ${JSON.stringify(last.factors)}::text::json,
          ${last.version}, ${last.updatedAt}, ${computed}, ${override}::text::json, ${inputs}::text::json)`;
    }
    await addDays(this.db, accountId, backfillDays(records, first));
  }

  async deleteCustomer(accountId: string, id: string): Promise<boolean> {
    this.lockAccount(accountId, 'shared');
    if (hasNul(id)) return false;
    // The customer's row first, as a score write locks it: then its history leaves the rollup.
    const [found] = await this.sql`
      SELECT 1 FROM customers WHERE account_id = ${accountId} AND id = ${id} FOR UPDATE`;
    if (!found) return false;
    await this.sql.unsafe(UNDO_HISTORY, [accountId, id]);
    // The history has no foreign key to cascade by (migration 18): it goes here.
    await this.sql`DELETE FROM score_history WHERE account_id = ${accountId} AND customer_id = ${id}`;
    const result = await this.sql`DELETE FROM customers WHERE account_id = ${accountId} AND id = ${id}`;
    return result.count === 1;
  }

  async writeScores(accountId: string, scores: ScoreRecord[], reason: ScoreReason): Promise<void> {
    this.lockAccount(accountId, 'shared');
    // Version 1 is a customer's first score; every later version replaces an existing row.
    // One statement per chunk: the new rows, the changed rows and their history. A recomputation
    // (`kept`: a later version carrying its stored factor text, as on SQLite) sends neither its
    // factors nor their inputs again: the row keeps its own, and its history entry copies them. A
    // new scale on stored aggregates (`inputsKept`) keeps the inputs the same way.
    for (const part of chunks(scores)) {
      const kept = part.map((s) => s.version !== 1 && s.factorsJson !== undefined);
      const keptInputs = part.map((s, i) => kept[i] || (s.version !== 1 && s.inputsKept === true));
      const explained = part.map((s, i) => explainedColumns(s, { inputs: !keptInputs[i] }));
      await this.sql`
        WITH input AS (
          SELECT * FROM unnest(
            ${pgArray(part.map((s) => s.customerId))}::text[],
            ${pgArray(part.map((s) => s.score))}::float8[],
            ${pgArray(part.map((s) => bandOf(s.status)))}::int2[],
            ${pgArray(part.map((s) => s.status))}::text[],
            ${pgArray(part.map((s, i) => (kept[i] ? null : (s.factorsJson ?? JSON.stringify(s.factors)))))}::text[],
            ${pgArray(part.map((s) => s.version))}::int4[],
            ${pgArray(part.map((s) => s.updatedAt))}::int8[],
            ${pgArray(explained.map((e) => e.computed))}::float8[],
            ${pgArray(explained.map((e) => e.override))}::text[],
            ${pgArray(explained.map((e) => e.inputs))}::text[],
            ${pgArray(explained.map((e) => e.weights))}::text[],
            ${pgArray(kept)}::bool[],
            ${pgArray(keptInputs)}::bool[]
          ) AS t(customer_id, score, band, status, factors, version, updated_at, computed, override, inputs,
            weights, kept, kept_inputs)
        ), inserted AS (
          INSERT INTO health_scores (account_id, customer_id, score, band, factors, version, updated_at,
            computed, override, inputs)
          SELECT ${accountId}, customer_id, score, band, factors::json, version, updated_at,
            computed, override::json, inputs::json
          FROM input WHERE version = 1
        ), previous AS (
          SELECT h.customer_id, h.score, h.band, h.factors, h.inputs FROM health_scores h
          WHERE h.account_id = ${accountId}
            AND h.customer_id IN (SELECT customer_id FROM input WHERE version <> 1)
        ), updated AS (
          UPDATE health_scores h SET score = i.score, band = i.band,
            factors = CASE WHEN i.kept THEN h.factors ELSE i.factors::json END,
            version = i.version, updated_at = i.updated_at, computed = i.computed,
            override = i.override::json, inputs = CASE WHEN i.kept_inputs THEN h.inputs ELSE i.inputs::json END
          FROM input i
          WHERE i.version <> 1 AND h.account_id = ${accountId} AND h.customer_id = i.customer_id
        ), history AS (
          INSERT INTO score_history (account_id, customer_id, version, score, status, factors, reason, created_at,
            computed, override, weights, inputs)
          SELECT ${accountId}, i.customer_id, i.version, i.score, i.status,
            CASE WHEN i.kept THEN p.factors ELSE i.factors::json END, ${reason}, i.updated_at,
            i.computed, i.override::json, i.weights::json, CASE WHEN i.kept_inputs THEN p.inputs ELSE i.inputs::json END
          FROM input i LEFT JOIN previous p ON p.customer_id = i.customer_id
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

  /** Each account's subscribers, read (and locked) once per transaction: see insertEvents. */
  readonly #subscribers = new Map<string, Promise<Map<string, string[]>>>();

  /**
   * The account's webhook subscribers by event type, read once per transaction. KEY SHARE (what
   * the deliveries' foreign key takes anyway), taken with the read: a webhook being deleted at
   * this moment is waited for and then left out, instead of failing the insert. The lock holds to
   * the end of the transaction, so one read serves every page of a rescore.
   */
  #subscribersOf(accountId: string): Promise<Map<string, string[]>> {
    let subscribing = this.#subscribers.get(accountId);
    if (!subscribing) {
      subscribing = this.sql<{ event_type: string; webhook_id: string }[]>`
        SELECT s.event_type, s.webhook_id FROM webhook_subscriptions s
        JOIN webhooks w ON w.account_id = s.account_id AND w.id = s.webhook_id
        WHERE s.account_id = ${accountId} AND w.enabled
        FOR KEY SHARE OF w`.then(subscribersByType);
      // Read ahead, it may never be awaited: its failure fails the transaction (postgres.js), not the process.
      subscribing.catch(() => {});
      this.#subscribers.set(accountId, subscribing);
    }
    return subscribing;
  }

  async insertEvents(accountId: string, events: EventRecord[]): Promise<void> {
    if (events.length === 0) return;
    const subscribers = await this.#subscribersOf(accountId);
    // Every statement sent at once, in order (the connection runs them one after another).
    const sent: Promise<unknown>[] = [];
    for (const part of chunks(events)) {
      // WITH ORDINALITY ... ORDER BY: seq follows the order of the list, as on SQLite.
      sent.push(this.sql`
        INSERT INTO events (id, account_id, type, data, created_at)
        SELECT id, ${accountId}, type, data::json, created_at
        FROM unnest(
          ${pgArray(part.map((e) => e.id))}::text[],
          ${pgArray(part.map((e) => e.type))}::text[],
          ${pgArray(part.map((e) => JSON.stringify(e.data)))}::text[],
          ${pgArray(part.map((e) => e.createdAt))}::int8[]
        ) WITH ORDINALITY AS t(id, type, data, created_at, n)
        ORDER BY n`);
    }
    const deliveries = deliveriesFor(events, subscribers);
    for (const part of chunks(deliveries)) {
      sent.push(this.sql`
        INSERT INTO deliveries (id, account_id, webhook_id, event_id, status, attempts, next_attempt_at,
          created_at, updated_at)
        SELECT id, ${accountId}, webhook_id, event_id, 'pending', 0, at, at, at
        FROM unnest(
          ${pgArray(part.map((d) => d.id))}::text[],
          ${pgArray(part.map((d) => d.webhookId))}::text[],
          ${pgArray(part.map((d) => d.eventId))}::text[],
          ${pgArray(part.map((d) => d.at))}::int8[]
        ) AS t(id, webhook_id, event_id, at)`);
    }
    await Promise.all(sent);
    if (deliveries.length > 0) this.deliveriesDue = true;
  }
}
