// Backfills (docs/api.md, "Backfill"; docs/scoring.md, "Backfilling history"): a run's row with its
// progress and lease, and what a run reads and writes of one customer, written once for both
// backends but the history's insert (each backend's writeBackfill). The writes run in the writes of
// src/writes/backfill.ts, one customer per transaction.
import { addChange, type DayDelta } from '../domain/portfolio.ts';
import type { MetricPoint } from '../domain/rules.ts';
import type { Status } from '../domain/scoring.ts';
import { type Driver, hasNul, Params } from './driver.ts';
import { ADD_DAY, type ScoreRecord } from './scores.ts';

export type BackfillStatus = 'running' | 'done' | 'failed';

export interface BackfillRecord {
  id: string;
  status: BackfillStatus;
  /** The first day backfilled (UTC days since the epoch). */
  fromDay: number;
  /** The customers in scope; null: every customer of the account. */
  customerIds: string[] | null;
  customersTotal: number;
  customersDone: number;
  versionsWritten: number;
  /** The last customer done (customers go by id); null: none yet. */
  cursor: string | null;
  startedAt: number;
  finishedAt: number | null;
  error: string | null;
  /** The process running it, and until when its lease holds (renewed with each customer). */
  leaseOwner: string;
  leaseExpiresAt: number;
}

/** A customer's first history version: where its backfill stops, and what the rollup counted it from. */
export interface FirstVersion {
  version: number;
  at: number;
  score: number;
  status: Status;
}

export interface BackfillReads {
  /** The account's backfill of this id; null: none (another account's is none). */
  getBackfill(accountId: string, id: string): Promise<BackfillRecord | null>;
  /** The account's backfills, newest first. */
  listBackfills(accountId: string, limit: number): Promise<BackfillRecord[]>;
  /**
   * Running backfills of any account whose lease has expired at `now` (their process stopped):
   * what a process's backfill runner takes over. Across accounts by design, as the rescore job's list is.
   */
  staleBackfills(now: number, limit: number): Promise<{ accountId: string; id: string }[]>;
}

export interface BackfillWrites {
  /** Inserts the run; false (nothing written) when the account has one running already. */
  insertBackfill(accountId: string, b: BackfillRecord): Promise<boolean>;
  /** The run, locked for this transaction where writers run side by side. */
  backfillForUpdate(accountId: string, id: string): Promise<BackfillRecord | null>;
  /** Writes the run's progress, status and lease. */
  updateBackfill(accountId: string, b: BackfillRecord): Promise<void>;
  /** Up to `limit` of the account's customer ids after `after`, byte-wise. */
  customerIdsAfter(accountId: string, after: string | null, limit: number): Promise<string[]>;
  /** How many customers the account has. */
  countCustomers(accountId: string): Promise<number>;
  /** The customer's first history version; null: no history. */
  firstVersion(accountId: string, customerId: string): Promise<FirstVersion | null>;
  /** The customer's points of these metrics up to `until` (inclusive), by metric, ascending by `at`. */
  customerPoints(
    accountId: string,
    customerId: string,
    metrics: readonly string[],
    until: number,
  ): Promise<Map<string, MetricPoint[]>>;
  /**
   * Writes one customer's backfilled versions (numbered, in time order, all before `first`) to its
   * history, and, when it has no history (`first` null), the last of them as its current score;
   * the trend rollup follows (backfillDays).
   */
  writeBackfill(
    accountId: string,
    customerId: string,
    records: ScoreRecord[],
    first: FirstVersion | null,
  ): Promise<void>;
}

const COLUMNS = `id, status, from_day, customer_ids, customers_total, customers_done, versions_written, cursor,
  started_at, finished_at, error, lease_owner, lease_expires_at`;

const SQL = {
  get: `SELECT ${COLUMNS} FROM backfills WHERE account_id = $1 AND id = $2`,
  list: `SELECT ${COLUMNS} FROM backfills WHERE account_id = $1 ORDER BY id DESC LIMIT $2`,
  stale: `SELECT account_id, id FROM backfills WHERE status = 'running' AND lease_expires_at < $1
    ORDER BY lease_expires_at LIMIT $2`,
  insert: `INSERT INTO backfills (account_id, ${COLUMNS})
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT DO NOTHING`,
  update: `UPDATE backfills SET status = $3, customers_done = $4, versions_written = $5, cursor = $6,
    finished_at = $7, error = $8, lease_owner = $9, lease_expires_at = $10
    WHERE account_id = $1 AND id = $2`,
  count: 'SELECT count(*) AS n FROM customers WHERE account_id = $1',
  first: `SELECT version, score, status, created_at FROM score_history
    WHERE account_id = $1 AND customer_id = $2 ORDER BY version LIMIT 1`,
} as const;

type BackfillRow = Record<string, unknown>;

const toBackfill = (r: BackfillRow): BackfillRecord => ({
  id: r.id as string,
  status: r.status as BackfillStatus,
  fromDay: Number(r.from_day),
  customerIds: r.customer_ids === null ? null : (JSON.parse(r.customer_ids as string) as string[]),
  customersTotal: Number(r.customers_total),
  customersDone: Number(r.customers_done),
  versionsWritten: Number(r.versions_written),
  cursor: (r.cursor as string | null) ?? null,
  startedAt: Number(r.started_at),
  finishedAt: r.finished_at === null ? null : Number(r.finished_at),
  error: (r.error as string | null) ?? null,
  leaseOwner: r.lease_owner as string,
  leaseExpiresAt: Number(r.lease_expires_at),
});

export async function getBackfill(
  db: Driver,
  accountId: string,
  id: string,
  lock = '',
): Promise<BackfillRecord | null> {
  if (hasNul(id)) return null;
  const row = await db.get<BackfillRow>(`${SQL.get}${lock}`, [accountId, id]);
  return row ? toBackfill(row) : null;
}

export async function listBackfills(db: Driver, accountId: string, limit: number): Promise<BackfillRecord[]> {
  return (await db.all<BackfillRow>(SQL.list, [accountId, limit])).map(toBackfill);
}

export async function staleBackfills(db: Driver, now: number, limit: number) {
  const rows = await db.all<{ account_id: string; id: string }>(SQL.stale, [now, limit]);
  return rows.map((r) => ({ accountId: r.account_id, id: r.id }));
}

export async function insertBackfill(db: Driver, accountId: string, b: BackfillRecord): Promise<boolean> {
  const changed = await db.run(SQL.insert, [
    accountId,
    b.id,
    b.status,
    b.fromDay,
    b.customerIds === null ? null : JSON.stringify(b.customerIds),
    b.customersTotal,
    b.customersDone,
    b.versionsWritten,
    b.cursor,
    b.startedAt,
    b.finishedAt,
    b.error,
    b.leaseOwner,
    b.leaseExpiresAt,
  ]);
  return changed === 1;
}

export async function updateBackfill(db: Driver, accountId: string, b: BackfillRecord): Promise<void> {
  await db.run(SQL.update, [
    accountId,
    b.id,
    b.status,
    b.customersDone,
    b.versionsWritten,
    b.cursor,
    b.finishedAt,
    b.error,
    b.leaseOwner,
    b.leaseExpiresAt,
  ]);
}

export async function customerIdsAfter(
  db: Driver,
  accountId: string,
  after: string | null,
  limit: number,
): Promise<string[]> {
  const p = new Params(accountId);
  const from = after === null ? '' : ` AND id > ${p.add(after)}`;
  const rows = await db.all<{ id: string }>(
    `SELECT id FROM customers WHERE account_id = $1${from} ORDER BY id LIMIT ${p.add(limit)}`,
    p.list,
  );
  return rows.map((r) => r.id);
}

export async function countCustomers(db: Driver, accountId: string): Promise<number> {
  return Number((await db.get<{ n: number | string }>(SQL.count, [accountId]))?.n ?? 0);
}

export async function firstVersion(
  db: Driver,
  accountId: string,
  customerId: string,
): Promise<FirstVersion | null> {
  const row = await db.get<{
    version: number | string;
    score: number;
    status: Status;
    created_at: number | string;
  }>(SQL.first, [accountId, customerId]);
  return row
    ? {
        version: Number(row.version),
        at: Number(row.created_at),
        score: Number(row.score),
        status: row.status,
      }
    : null;
}

export async function customerPoints(
  db: Driver,
  accountId: string,
  customerId: string,
  metrics: readonly string[],
  until: number,
): Promise<Map<string, MetricPoint[]>> {
  const out = new Map<string, MetricPoint[]>(metrics.map((m) => [m, []]));
  if (metrics.length === 0) return out;
  const p = new Params(accountId, customerId, until);
  const rows = await db.all<{ metric: string; at: number | string; value: number }>(
    `SELECT metric, at, value FROM metric_points
     WHERE account_id = $1 AND customer_id = $2 AND metric ${db.inList(p, [...new Set(metrics)])} AND at <= $3
     ORDER BY metric, at`,
    p.list,
  );
  for (const r of rows) out.get(r.metric)?.push({ at: Number(r.at), value: Number(r.value) });
  return out;
}

/**
 * What one customer's backfill changes in the trend rollup (docs/operations.md, "The trend
 * rollup"): each backfilled version moves the customer from the one before it (the first from
 * nothing), and its first existing version, which the rollup counted from nothing, now moves it
 * from the last backfilled one.
 */
export function backfillDays(records: readonly ScoreRecord[], first: FirstVersion | null): DayDelta[] {
  const days = new Map<number, DayDelta>();
  let before: ScoreRecord | null = null;
  for (const r of records) {
    addChange(days, r.updatedAt, before, r);
    before = r;
  }
  if (first && before) addChange(days, first.at, before, null);
  return [...days.values()];
}

/** Adds day deltas to the rollup (slot 0). */
export async function addDays(db: Driver, accountId: string, days: readonly DayDelta[]): Promise<void> {
  await db.runEach(
    ADD_DAY,
    days.map((d) => [accountId, d.day, 0, d.counts.critical, d.counts.at_risk, d.counts.healthy, d.micros]),
    ['text', 'int8', 'int8', 'int8', 'int8', 'int8', 'int8'],
  );
}
