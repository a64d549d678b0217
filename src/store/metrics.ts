// Metric points and factor rules (docs/scoring.md, "Factors from metrics"), written once for both
// backends. What the rules read of the points is metric-summaries.ts; which customers a change of
// rules rescores, and when the rescore job has each due, rederive.ts.
import type { Aggregate, FactorRule, MetricPoint, PointSummary, Scale } from '../domain/rules.ts';
import type { Gate } from '../domain/scoring.ts';
import { type Driver, hasNul, Params, parsed, type Row } from './driver.ts';
import type { Page } from './rows.ts';

export type { FactorRule, MetricPoint };

/** One point of one of a customer's metrics. */
export interface MetricPointRecord extends MetricPoint {
  customerId: string;
  metric: string;
}

/** One of an account's metric names, with how many customers and points have it and its newest instant. */
export interface MetricName {
  name: string;
  customers: number;
  points: number;
  lastAt: number;
}

export interface MetricReads {
  /** The account's factor rules, by factor name (byte order). */
  listFactorRules(accountId: string): Promise<FactorRule[]>;
  /**
   * The account's metric names, by name (byte order), each with the customers that have a point
   * of it, its points and its newest point's instant. Read in slices of customers that let
   * other work run between them (docs/api.md, "Metrics").
   */
  metricNames(accountId: string): Promise<MetricName[]>;
  /**
   * A customer's metric points, newest first (then by metric name); `metric`: of that metric only;
   * `after`: the page goes on after this point.
   */
  listMetricPoints(
    accountId: string,
    customerId: string,
    opts: { metric?: string | undefined; after?: { at: number; metric: string } | undefined; limit: number },
  ): Promise<Page<MetricPointRecord>>;
  /**
   * Each rule's summary of each customer's points as of `now` (points up to `until` count as
   * dated ahead): summaries[i] is rules[i]'s, for every customer given, with points or not.
   */
  metricSummaries(
    accountId: string,
    customerIds: readonly string[],
    rules: readonly FactorRule[],
    now: number,
    until: number,
  ): Promise<Map<string, PointSummary[]>>;
}

export interface MetricWrites {
  /** Creates or replaces the rule of `rule.factor`. */
  putFactorRule(accountId: string, rule: FactorRule): Promise<void>;
  /** False when the factor had no rule. */
  deleteFactorRule(accountId: string, factor: string): Promise<boolean>;
  /**
   * Stores the points; a point of a customer's metric at an instant it already has replaces it.
   * Sent when called: a read called after it, before it settles, sees the points (a metric write
   * reads its rules' windows in the same round trip on PostgreSQL).
   */
  insertMetricPoints(accountId: string, points: readonly MetricPointRecord[]): Promise<void>;
}

const RULE_COLUMNS = 'factor, metric, aggregate, window_days, scale, max_age_days, gate, updated_at';

const toRule = (r: Row): FactorRule => ({
  factor: r.factor as string,
  metric: r.metric as string,
  aggregate: r.aggregate as Aggregate,
  windowDays: (r.window_days as number | null) ?? null,
  scale: parsed<Scale>(r.scale),
  maxAgeDays: (r.max_age_days as number | null) ?? null,
  // JSON text {"below", "status"} on both backends (migration 22), or null.
  gate: r.gate === null || r.gate === undefined ? null : parsed<Gate>(r.gate),
  updatedAt: r.updated_at as number,
});

export async function listFactorRules(db: Driver, accountId: string): Promise<FactorRule[]> {
  const rows = await db.all(
    `SELECT ${RULE_COLUMNS} FROM factor_rules WHERE account_id = $1 ORDER BY factor`,
    [accountId],
  );
  return rows.map(toRule);
}

export async function putFactorRule(db: Driver, accountId: string, rule: FactorRule): Promise<void> {
  await db.run(
    `INSERT INTO factor_rules (account_id, factor, metric, aggregate, window_days, scale, max_age_days, gate, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $9, $8)
     ON CONFLICT (account_id, factor) DO UPDATE SET metric = excluded.metric, aggregate = excluded.aggregate,
       window_days = excluded.window_days, scale = excluded.scale, max_age_days = excluded.max_age_days,
       gate = excluded.gate, updated_at = excluded.updated_at`,
    [
      accountId,
      rule.factor,
      rule.metric,
      rule.aggregate,
      rule.windowDays,
      db.json(rule.scale),
      rule.maxAgeDays,
      rule.updatedAt,
      // Only its two fields, in this order: the text is what the API answers.
      rule.gate ? JSON.stringify({ below: rule.gate.below, status: rule.gate.status }) : null,
    ],
  );
}

export async function deleteFactorRule(db: Driver, accountId: string, factor: string): Promise<boolean> {
  if (hasNul(factor)) return false;
  return (
    (await db.run('DELETE FROM factor_rules WHERE account_id = $1 AND factor = $2', [accountId, factor])) ===
    1
  );
}

export async function insertMetricPoints(
  db: Driver,
  accountId: string,
  points: readonly MetricPointRecord[],
): Promise<void> {
  // One row per (customer, metric, instant), the last given: a statement may not change a row twice.
  const last = new Map<string, MetricPointRecord>();
  for (const p of points) last.set(JSON.stringify([p.customerId, p.metric, p.at]), p);
  await db.runEach(
    `INSERT INTO metric_points (account_id, customer_id, metric, at, value) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (account_id, customer_id, metric, at) DO UPDATE SET value = excluded.value`,
    [...last.values()].map((p) => [accountId, p.customerId, p.metric, p.at, p.value]),
    ['text', 'text', 'text', 'int8', 'float8'],
  );
}

/**
 * How long a slice of metricNames should keep this thread busy (ms of its CPU time, which other
 * processes on the machine do not inflate as they do the wall clock): each slice's customers
 * follow from the last one's pace, since points per customer vary from account to account. On
 * PostgreSQL the database does the counting, and slices grow to the largest.
 */
const NAMES_SLICE_MS = 15;

/** Per metric name, a slice's customers with it, their points and the newest instant. */
const namesOf = (upTo: string) =>
  `SELECT metric, COUNT(*) AS customers, SUM(n) AS points, MAX(last_at) AS last_at FROM (
     SELECT metric, COUNT(*) AS n, MAX(at) AS last_at FROM metric_points
     WHERE account_id = $1 AND customer_id > $2${upTo} GROUP BY customer_id, metric
   ) AS per_customer GROUP BY metric`;
const NAMES_UP_TO = namesOf(' AND customer_id <= $3');
const NAMES_REST = namesOf('');

/**
 * The account's metric names. SQLite reads on the main thread, so a read of every point of an
 * account at once (100,000 customers × 3 metrics × 30 points: seconds) would hold every other
 * request: it goes in slices of customers along the points' key, each a range of the key
 * counted in the database, with the event loop let run between them; the slices' counts add up
 * here, a customer being in one slice only.
 */
export async function metricNames(db: Driver, accountId: string): Promise<MetricName[]> {
  const names = new Map<string, MetricName>();
  let after = '';
  let slice = 100;
  for (;;) {
    const started = process.threadCpuUsage();
    const edge = await db.get(
      'SELECT id FROM customers WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT 1 OFFSET $3',
      [accountId, after, slice - 1],
    );
    const upTo = (edge?.id as string | undefined) ?? null;
    const rows = await db.all(
      upTo === null ? NAMES_REST : NAMES_UP_TO,
      upTo === null ? [accountId, after] : [accountId, after, upTo],
    );
    for (const r of rows) {
      const name = r.metric as string;
      const seen = names.get(name);
      const customers = Number(r.customers);
      const points = Number(r.points);
      const lastAt = Number(r.last_at);
      if (seen) {
        seen.customers += customers;
        seen.points += points;
        seen.lastAt = Math.max(seen.lastAt, lastAt);
      } else names.set(name, { name, customers, points, lastAt });
    }
    if (upTo === null) break;
    after = upTo;
    const cpu = process.threadCpuUsage(started);
    const ms = Math.max((cpu.user + cpu.system) / 1000, 1);
    // At most four times the last, so one fast slice (cached pages) cannot make the next one long.
    slice = Math.min(Math.max(Math.round((slice * NAMES_SLICE_MS) / ms), 10), slice * 4, 10_000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return [...names.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export async function listMetricPoints(
  db: Driver,
  accountId: string,
  customerId: string,
  opts: { metric?: string | undefined; after?: { at: number; metric: string } | undefined; limit: number },
): Promise<Page<MetricPointRecord>> {
  if (hasNul(customerId) || (opts.metric !== undefined && hasNul(opts.metric))) {
    return { data: [], hasMore: false };
  }
  const p = new Params(accountId, customerId);
  let where = 'account_id = $1 AND customer_id = $2';
  if (opts.metric !== undefined) where += ` AND metric = ${p.add(opts.metric)}`;
  if (opts.after) {
    // Newest first, then by name: after (at, metric) comes an older point, or one of the same instant named later.
    const at = p.add(opts.after.at);
    where += ` AND (at < ${at} OR (at = ${at} AND metric > ${p.add(opts.after.metric)}))`;
  }
  const rows = await db.all(
    `SELECT metric, at, value FROM metric_points WHERE ${where} ORDER BY at DESC, metric LIMIT ${p.add(opts.limit + 1)}`,
    p.list,
  );
  const data = rows.slice(0, opts.limit).map((r) => ({
    customerId,
    metric: r.metric as string,
    at: r.at as number,
    value: r.value as number,
  }));
  return { data, hasMore: rows.length > opts.limit };
}
