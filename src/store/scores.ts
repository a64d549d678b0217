// Health scores: the current score, its history with what explains each version (docs/scoring.md,
// "Why this score"), and the trend rollup their writes keep (score_days, docs/operations.md, "The
// trend rollup"). The reads are written once here; the writes of scores in bulk are each
// backend's own (sqlite/tx.ts, postgres/tx.ts), from the statements and columns below.
import type { DropRecord, DropWatch } from '../domain/alerts.ts';
import type { Override, ScoreRecord } from '../domain/health.ts';
import type { DerivedInputs } from '../domain/rules.ts';
import { type Factors, STATUSES, type Status, type Weights } from '../domain/scoring.ts';
import { type Driver, hasNul, Params } from './driver.ts';
import {
  EXPLAINED_COLUMNS,
  type Page,
  page,
  SCORE_COLUMNS,
  statusOf,
  toExplained,
  toHistory,
  toScore,
} from './rows.ts';

export type { ScoreRecord };

export type ScoreReason =
  | 'factors_updated'
  | 'weights_changed'
  | 'thresholds_changed'
  | 'metrics_updated'
  | 'rules_changed'
  | 'time_passed'
  | 'override_set'
  | 'override_removed'
  | 'override_expired'
  | 'backfill';

/**
 * The reasons of versions that record a change of the settings (or a backfill of the past), not
 * of the customer (docs/api.md, "Segments, trends and movers"): they move no one among the
 * movers, and a drop alert's peak starts again from them (docs/scoring.md, "Drop alerts").
 */
export const SETTINGS_REASONS = [
  'weights_changed',
  'thresholds_changed',
  'rules_changed',
  'backfill',
] as const satisfies readonly ScoreReason[];

/** SETTINGS_REASONS as a list of SQL literals, for `reason IN (…)`. */
export const SETTINGS_REASONS_SQL = SETTINGS_REASONS.map((r) => `'${r}'`).join(', ');

/**
 * The versions a drop alert's peak starts again from: those that moved the score by a change of
 * the settings, or a backfill. A thresholds change moves no score, only bands: a customer at 0.9
 * re-banded at 0.75 that then falls to 0.6 has fallen 0.3 (docs/scoring.md, "Drop alerts").
 */
export const PEAK_RESET_REASONS_SQL = SETTINGS_REASONS.filter((r) => r !== 'thresholds_changed')
  .map((r) => `'${r}'`)
  .join(', ');

export interface HistoryRecord {
  version: number;
  score: number;
  status: Status;
  factors: Factors;
  reason: ScoreReason;
  createdAt: number;
}

/** A history version with what explains it (docs/scoring.md, "Why this score"); null for versions kept before it was. */
export interface ExplainedVersion extends HistoryRecord {
  /** The computed score, when an override pinned `score`. */
  computed: number | null;
  override: Override | null;
  /** The effective weights it was computed with. */
  weights: Weights | null;
  inputs: DerivedInputs | null;
}

export interface ScoreReads {
  getScore(accountId: string, customerId: string): Promise<ScoreRecord | null>;
  /** Newest first; `before` is an exclusive upper bound on the version. */
  listHistory(
    accountId: string,
    customerId: string,
    opts: { before?: number; limit: number },
  ): Promise<Page<HistoryRecord>>;
  /** These versions of a customer's score as kept in its history, with what explains them; absent ones left out. */
  explainedVersions(
    accountId: string,
    customerId: string,
    versions: readonly number[],
  ): Promise<ExplainedVersion[]>;
  /**
   * The version of a customer's score that stood at `at`: the highest with `created_at` ≤ `at`
   * (a change at that very instant counts as before, as the movers' baseline), else the first one
   * (the lowest: backfilled versions are numbered below it, docs/api.md); null without history.
   */
  versionAt(accountId: string, customerId: string, at: number): Promise<number | null>;
  /** Counts of current scores per status band. */
  countScoresByStatus(accountId: string): Promise<Record<Status, number>>;
}

export interface ScoreWrites {
  /**
   * The current score of each of these customers that exists (null: no score yet); ids of
   * customers that do not exist are absent from the map. The customers are locked for this
   * transaction, as `getCustomer` locks one: it is how a batch of score updates reads.
   */
  scoresForUpdate(
    accountId: string,
    customerIds: readonly string[],
  ): Promise<Map<string, ScoreRecord | null>>;
  /**
   * Sets the current scores and appends each to its customer's history (at most one score per
   * customer); the trend rollup follows in the same transaction.
   */
  writeScores(accountId: string, scores: ScoreRecord[], reason: ScoreReason): Promise<void>;
  /**
   * Up to `limit` current scores of the account by customer id, byte-wise, after `after` (from
   * the first when null): a recomputation after a settings change walks them in pages.
   */
  scoresAfter(accountId: string, after: string | null, limit: number): Promise<ScoreRecord[]>;
  /**
   * For a drop alert rule whose window opens at `since`: each of these customers' peak score
   * and last alert (alerts.ts). Customers without a score have a null peak.
   */
  dropWatch(
    accountId: string,
    customerIds: readonly string[],
    since: number,
  ): Promise<Map<string, DropWatch>>;
  /**
   * Remembers that these customers were alerted at these times (the next alert's window), and
   * keeps each drop for the customer's timeline.
   */
  recordDropAlerts(accountId: string, alerts: readonly DropRecord[]): Promise<void>;
}

export async function getScore(
  db: Driver,
  accountId: string,
  customerId: string,
): Promise<ScoreRecord | null> {
  if (hasNul(customerId)) return null;
  const row = await db.get(
    `SELECT ${SCORE_COLUMNS} FROM health_scores WHERE account_id = $1 AND customer_id = $2`,
    [accountId, customerId],
  );
  return row ? toScore(row) : null;
}

export async function listHistory(
  db: Driver,
  accountId: string,
  customerId: string,
  opts: { before?: number; limit: number },
): Promise<Page<HistoryRecord>> {
  if (hasNul(customerId)) return { data: [], hasMore: false };
  const p = new Params(accountId, customerId);
  const before = opts.before === undefined ? '' : ` AND version < ${p.add(opts.before)}`;
  const rows = await db.all(
    `SELECT version, score, status, factors, reason, created_at FROM score_history
     WHERE account_id = $1 AND customer_id = $2${before} ORDER BY version DESC LIMIT ${p.add(opts.limit + 1)}`,
    p.list,
  );
  return page(rows, opts.limit, toHistory);
}

export async function explainedVersions(
  db: Driver,
  accountId: string,
  customerId: string,
  versions: readonly number[],
): Promise<ExplainedVersion[]> {
  if (hasNul(customerId) || versions.length === 0) return [];
  const p = new Params(accountId, customerId);
  const rows = await db.all(
    `SELECT ${EXPLAINED_COLUMNS} FROM score_history
     WHERE account_id = $1 AND customer_id = $2 AND version IN (${versions.map((v) => p.add(v)).join(', ')})`,
    p.list,
  );
  return rows.map(toExplained);
}

export async function versionAt(
  db: Driver,
  accountId: string,
  customerId: string,
  at: number,
): Promise<number | null> {
  if (hasNul(customerId)) return null;
  // Two walks of the (account, customer, version) index, newest first and oldest first, as the
  // movers' baseline reads it (sqlite/portfolio.ts, postgres/portfolio.ts).
  const row = await db.get(
    `SELECT COALESCE(
       (SELECT version FROM score_history WHERE account_id = $1 AND customer_id = $2 AND created_at <= $3
        ORDER BY version DESC LIMIT 1),
       (SELECT version FROM score_history WHERE account_id = $1 AND customer_id = $2
        ORDER BY version LIMIT 1)) AS version`,
    [accountId, customerId, at],
  );
  const version = row?.version;
  return version === null || version === undefined ? null : Number(version);
}

export async function countScoresByStatus(db: Driver, accountId: string): Promise<Record<Status, number>> {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>;
  const rows = await db.all(
    'SELECT band, COUNT(*) AS n FROM health_scores WHERE account_id = $1 GROUP BY band',
    [accountId],
  );
  for (const r of rows) counts[statusOf(r.band as number)] = Number(r.n);
  return counts;
}

export async function scoresAfter(
  db: Driver,
  accountId: string,
  after: string | null,
  limit: number,
): Promise<ScoreRecord[]> {
  const rows = await db.all(
    `SELECT ${SCORE_COLUMNS} FROM health_scores WHERE account_id = $1 AND customer_id > $2
     ORDER BY customer_id LIMIT $3`,
    [accountId, after ?? '', limit],
  );
  return rows.map(toScore);
}

export async function recordDropAlerts(
  db: Driver,
  accountId: string,
  alerts: readonly DropRecord[],
): Promise<void> {
  await Promise.all([
    db.runEach(
      `INSERT INTO drop_alerts (account_id, customer_id, alerted_at) VALUES ($1, $2, $3)
       ON CONFLICT (account_id, customer_id) DO UPDATE SET alerted_at = excluded.alerted_at`,
      alerts.map((a) => [accountId, a.customerId, a.at]),
      ['text', 'text', 'int8'],
    ),
    // score_drops (migration 33): each drop, for the timeline; one per customer and instant.
    db.runEach(
      `INSERT INTO score_drops (account_id, customer_id, at, from_score, to_score, peak)
       VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
      alerts.map((a) => [accountId, a.customerId, a.at, a.from, a.to, a.peak]),
      ['text', 'text', 'int8', 'float8', 'float8', 'float8'],
    ),
  ]);
}

/**
 * A score's columns beside its number (docs/scoring.md, "Why this score"), as both backends
 * store them: the computed score only while an override pins another, the JSON texts or null.
 */
export function explainedColumns(s: ScoreRecord, opts?: { inputs: boolean }) {
  return {
    computed: s.override ? (s.computed ?? s.score) : null,
    override: s.override ? JSON.stringify(s.override) : null,
    inputs: s.inputs && opts?.inputs !== false ? JSON.stringify(s.inputs) : null,
    weights: s.weights ? jsonOf(s.weights) : null,
  };
}

/** JSON of objects many records share (effectiveWeights gives one per factor set): written once each. */
const written = new WeakMap<object, string>();
function jsonOf(value: object): string {
  let json = written.get(value);
  if (json === undefined) {
    json = JSON.stringify(value);
    written.set(value, json);
  }
  return json;
}

/** How a row of score_days takes more changes of its day: they are added to it. */
export const ADD_TO_DAY = `
  ON CONFLICT (account_id, day, slot) DO UPDATE SET
    critical = score_days.critical + excluded.critical,
    at_risk = score_days.at_risk + excluded.at_risk,
    healthy = score_days.healthy + excluded.healthy,
    score_micros = score_days.score_micros + excluded.score_micros`;

/** A score in millionths, as an integer (domain/portfolio.ts, `micros`), of table `t`. */
export const microsOf = (t: string) => `CAST(round(${t}.score * 1000000) AS bigint)`;
/** The scores of `s` added up in millionths. */
export const SCORE_MICROS = `SUM(${microsOf('s')})`;

/**
 * The per-day rollup of the portfolio (score_days, docs/operations.md, "The trend rollup"), from
 * score history: each entry moves its customer from the band and score of the entry before it
 * (none for the first) to its own, on the UTC day it was made. `sign` 1 adds the history's
 * changes, -1 takes them away (the customer is deleted); `where` picks the history. Each is SQL
 * text: a literal or a parameter. Both backends run this text.
 */
export function historyToDays(o: { where: string; sign: string; slot: string }): string {
  const band = (column: string, status: string) => `CASE WHEN ${column} = '${status}' THEN 1 ELSE 0 END`;
  const count = (status: string) =>
    `${o.sign} * SUM(${band('status', status)} - ${band('prev_status', status)})`;
  return `
  INSERT INTO score_days (account_id, day, slot, critical, at_risk, healthy, score_micros)
  SELECT account_id, day, ${o.slot}, ${count('critical')}, ${count('at_risk')}, ${count('healthy')},
    ${o.sign} * SUM(micros - COALESCE(prev_micros, 0))
  FROM (
    SELECT account_id, created_at / 86400000 AS day, status, ${microsOf('h')} AS micros,
      lag(status) OVER w AS prev_status, lag(${microsOf('h')}) OVER w AS prev_micros
    FROM score_history h WHERE ${o.where}
    WINDOW w AS (PARTITION BY account_id, customer_id ORDER BY version)
  ) h
  WHERE true
  GROUP BY account_id, day
  ${ADD_TO_DAY}`;
}

/** Adds day deltas ($1 account, $2 day, $3 slot, then critical, at_risk, healthy, micros). */
export const ADD_DAY = `
  INSERT INTO score_days (account_id, day, slot, critical, at_risk, healthy, score_micros)
  VALUES ($1, $2, $3, $4, $5, $6, $7)
  ${ADD_TO_DAY}`;
