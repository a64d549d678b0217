import { customerJson } from '../../api/customers.ts';
import { addChange, type DayDelta } from '../../domain/portfolio.ts';
import { addDays, backfillDays, type FirstVersion } from '../backfills.ts';
import { type CustomerWrite, withBook } from '../customers.ts';
import { deliveriesFor, subscribersByType } from '../outbox.ts';
import { bandOf, statusOf, toScore } from '../rows.ts';
import { ADD_DAY, explainedColumns, historyToDays } from '../scores.ts';
import { SqlTx } from '../sql-tx.ts';
import type { CustomerRecord, EventRecord, ScoreReason, ScoreRecord } from '../store.ts';
import type { Connection } from './connection.ts';
import { driverOf } from './driver.ts';
import * as portfolio from './portfolio.ts';
import { sqliteReads } from './reader.ts';

/** deleteCustomer's share of the rollup: (sign, slot, account, customer). */
const UNDO_HISTORY = historyToDays({ where: 'account_id = $3 AND customer_id = $4', sign: '$1', slot: '$2' });

/** The write side: the Tx of the writes the group commit runs on the write connection (group-commit.ts). */
export class SqliteTx extends SqlTx {
  readonly conn: Connection;

  constructor(conn: Connection) {
    super(driverOf(conn), sqliteReads(conn));
    this.conn = conn;
  }

  async scoresForUpdate(accountId: string, customerIds: readonly string[]) {
    // One writer at a time: nothing to lock, and a point lookup per id is as cheap as a join.
    const found = new Map<string, ScoreRecord | null>();
    const lookup = this.conn.statement(
      `SELECT c.id AS id, h.customer_id, h.score, h.band, h.factors, h.version, h.updated_at, h.computed,
         h.override, h.inputs
       FROM customers c LEFT JOIN health_scores h ON h.account_id = c.account_id AND h.customer_id = c.id
       WHERE c.account_id = ? AND c.id = ?`,
    );
    for (const id of customerIds) {
      const row = lookup.get(accountId, id);
      if (row) found.set(id, row.customer_id === null ? null : toScore(row));
    }
    return found;
  }

  async customersForUpdate(accountId: string, ids: readonly string[]) {
    const found = new Map<string, CustomerRecord>();
    for (const id of ids) {
      const customer = await this.getCustomer(accountId, id);
      if (customer) found.set(id, customer);
    }
    return found;
  }

  async saveCustomers(
    accountId: string,
    inserts: readonly CustomerWrite[],
    updates: readonly CustomerWrite[],
  ) {
    const taken: string[] = [];
    for (const c of inserts) if (!(await this.insertCustomer(accountId, c))) taken.push(c.id);
    for (const c of updates) await this.updateCustomer(accountId, c);
    return taken;
  }

  async insertCustomer(accountId: string, given: CustomerWrite): Promise<boolean> {
    const c = withBook(given);
    const metadata = JSON.stringify(c.metadata);
    const changes = this.conn.run(
      `INSERT INTO customers (account_id, id, name, email, owner, arr_cents, renewal_at, lifecycle, parent_id,
         metadata, created_at, updated_at, json)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      accountId,
      c.id,
      c.name,
      c.email,
      c.owner,
      c.arrCents,
      c.renewalAt,
      c.lifecycle,
      c.parentId,
      metadata,
      c.createdAt,
      c.updatedAt,
      customerJson({ ...c, metadataJson: metadata }),
    );
    return changes === 1;
  }

  async updateCustomer(accountId: string, given: CustomerWrite): Promise<void> {
    const c = withBook(given);
    const metadata = JSON.stringify(c.metadata);
    this.conn.run(
      `UPDATE customers SET name = ?, email = ?, owner = ?, arr_cents = ?, renewal_at = ?, lifecycle = ?,
         parent_id = ?, metadata = ?, updated_at = ?, json = ?
       WHERE account_id = ? AND id = ?`,
      c.name,
      c.email,
      c.owner,
      c.arrCents,
      c.renewalAt,
      c.lifecycle,
      c.parentId,
      metadata,
      c.updatedAt,
      customerJson({ ...c, metadataJson: metadata }),
      accountId,
      c.id,
    );
  }

  async deleteCustomer(accountId: string, id: string): Promise<boolean> {
    // Its history leaves the trend: the rollup takes back what that history added.
    this.conn.run(UNDO_HISTORY, -1, 0, accountId, id);
    return this.conn.run('DELETE FROM customers WHERE account_id = ? AND id = ?', accountId, id) === 1;
  }

  async writeScores(accountId: string, scores: ScoreRecord[], reason: ScoreReason): Promise<void> {
    // Version 1 is a customer's first score; every later version replaces an existing row.
    const insert = this.conn.statement(
      `INSERT INTO health_scores (account_id, customer_id, score, band, factors, version, updated_at,
         computed, override, inputs)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const update = this.conn.statement(
      `UPDATE health_scores SET score = ?, band = ?, factors = ?, version = ?, updated_at = ?,
         computed = ?, override = ?, inputs = ?
       WHERE account_id = ? AND customer_id = ?`,
    );
    // A recomputation carries the stored factor text: the factors column is left as it is.
    const rescore = this.conn.statement(
      `UPDATE health_scores SET score = ?, band = ?, version = ?, updated_at = ?, computed = ?, override = ?
       WHERE account_id = ? AND customer_id = ?`,
    );
    const history = this.conn.statement(
      `INSERT INTO score_history (account_id, customer_id, version, score, status, factors, reason, created_at,
         computed, override, weights, inputs)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const previous = this.conn.statement(
      'SELECT score, band, version FROM health_scores WHERE account_id = ? AND customer_id = ?',
    );
    const days = new Map<number, DayDelta>();
    for (const s of scores) {
      const factors = s.factorsJson ?? JSON.stringify(s.factors);
      const band = bandOf(s.status);
      const { computed, override, inputs, weights } = explainedColumns(s);
      const before = s.version === 1 ? undefined : previous.get(accountId, s.customerId);
      // A version follows the stored one (the first has no score row: the key refuses a second):
      // what keeps the history's versions unique, which its index does not (migration 20).
      if (s.version !== 1 && before?.version !== s.version - 1) {
        throw new Error(
          `version ${s.version} of ${s.customerId} does not follow the stored ${before?.version}`,
        );
      }
      addChange(
        days,
        s.updatedAt,
        before ? { score: before.score as number, status: statusOf(before.band as number) } : null,
        s,
      );
      if (s.version === 1)
        insert.run(
          accountId,
          s.customerId,
          s.score,
          band,
          factors,
          s.version,
          s.updatedAt,
          computed,
          override,
          inputs,
        );
      else if (s.factorsJson !== undefined)
        rescore.run(s.score, band, s.version, s.updatedAt, computed, override, accountId, s.customerId);
      else
        update.run(
          s.score,
          band,
          factors,
          s.version,
          s.updatedAt,
          computed,
          override,
          inputs,
          accountId,
          s.customerId,
        );
      history.run(
        accountId,
        s.customerId,
        s.version,
        s.score,
        s.status,
        factors,
        reason,
        s.updatedAt,
        computed,
        override,
        weights,
        inputs,
      );
    }
    const add = this.conn.statement(ADD_DAY);
    for (const d of days.values()) {
      add.run(accountId, d.day, 0, d.counts.critical, d.counts.at_risk, d.counts.healthy, d.micros);
    }
  }

  async writeBackfill(
    accountId: string,
    customerId: string,
    records: ScoreRecord[],
    first: FirstVersion | null,
  ) {
    const history = this.conn.statement(
      `INSERT INTO score_history (account_id, customer_id, version, score, status, factors, reason, created_at,
         computed, override, weights, inputs)
       VALUES (?, ?, ?, ?, ?, ?, 'backfill', ?, ?, ?, ?, ?)`,
    );
    for (const s of records) {
      const { computed, override, inputs, weights } = explainedColumns(s);
      const factors = JSON.stringify(s.factors);
      history.run(
        accountId,
        customerId,
        s.version,
        s.score,
        s.status,
        factors,
        s.updatedAt,
        computed,
        override,
        weights,
        inputs,
      );
    }
    const last = records.at(-1);
    // A customer with no history has no score either: its last backfilled version becomes it.
    if (!first && last) {
      const { computed, override, inputs } = explainedColumns(last);
      this.conn.run(
        `INSERT INTO health_scores (account_id, customer_id, score, band, factors, version, updated_at,
           computed, override, inputs)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        accountId,
        customerId,
        last.score,
        bandOf(last.status),
        JSON.stringify(last.factors),
        last.version,
        last.updatedAt,
        computed,
        override,
        inputs,
      );
    }
    await addDays(this.db, accountId, backfillDays(records, first));
  }

  async dropWatch(accountId: string, customerIds: readonly string[], since: number) {
    return portfolio.dropWatch(this.conn, accountId, customerIds, since);
  }

  async insertEvents(accountId: string, events: EventRecord[]): Promise<void> {
    if (events.length === 0) return;
    const insert = this.conn.statement(
      'INSERT INTO events (id, account_id, type, data, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    const subscribers = subscribersByType(
      this.conn.all(
        `SELECT s.event_type, s.webhook_id FROM webhook_subscriptions s
         JOIN webhooks w ON w.account_id = s.account_id AND w.id = s.webhook_id
         WHERE s.account_id = ? AND w.enabled = 1`,
        accountId,
      ),
    );
    for (const e of events) insert.run(e.id, accountId, e.type, JSON.stringify(e.data), e.createdAt);
    const deliveries = deliveriesFor(events, subscribers);
    if (deliveries.length === 0) return;
    const delivery = this.conn.statement(
      `INSERT INTO deliveries (id, account_id, webhook_id, event_id, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'pending', 0, ?, ?, ?)`,
    );
    for (const d of deliveries) delivery.run(d.id, accountId, d.webhookId, d.eventId, d.at, d.at, d.at);
    this.deliveriesDue = true;
  }
}
