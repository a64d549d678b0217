// Metric points and factor rules (docs/scoring.md, "Factors from metrics"), written once for both
// backends: the reads of SqlReader and the writes of SqlTx call these.
import {
  type Aggregate,
  boundedValue,
  emptySummary,
  type FactorRule,
  lastSummary,
  METRIC_VALUE_MAX,
  type PointSummary,
  type Scale,
  windowStart,
} from '../../domain/rules.ts';
import type { Gate } from '../../domain/scoring.ts';
import type { MetricName, MetricPointRecord, Page, RederiveTarget } from '../store.ts';
import { type Driver, hasNul, Params, parsed, type Row } from './driver.ts';
import { scoreColumns, toScore } from './rows.ts';

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

/**
 * A point's value as the sum reads it: within METRIC_VALUE_MAX (domain/rules.ts, boundedValue).
 * The API refuses values beyond it, but a point stored before it did may lie there, and two
 * points of 1.7e308 made PostgreSQL's SUM fail with `value out of range` (the account's every
 * rescore with it) and SQLite's answer Infinity. Within the bound a sum stays finite.
 */
const BOUND = METRIC_VALUE_MAX.toExponential(); // a real literal on both: SQLite sums integers as integers
const BOUNDED = `CASE WHEN value > ${BOUND} THEN ${BOUND} WHEN value < -${BOUND} THEN -${BOUND} ELSE value END`;

/**
 * Each rule's summary of each customer's points as of `now` (points dated up to `until`, ahead of
 * `now`, count as coming due): summaries[i] is rules[i]'s, for every customer given, points or not.
 * Aggregated where the points are, a query per window: a customer's year of daily points is one
 * row, not 365 (docs/development.md, "The store").
 */
export async function metricSummaries(
  db: Driver,
  accountId: string,
  customerIds: readonly string[],
  rules: readonly FactorRule[],
  now: number,
  until: number,
): Promise<Map<string, PointSummary[]>> {
  const ids = customerIds.filter((id) => !hasNul(id));
  const found = new Map<string, PointSummary[]>(ids.map((id) => [id, rules.map(emptySummary)]));
  if (ids.length === 0 || rules.length === 0) return found;
  // One query per distinct window: the rules reading the same metric over the same days share it.
  // A `last` rule reads the newest point alone (PointSummary), by one probe of the key.
  const windows = new Map<string, { metric: string; after: number; last: boolean; rules: number[] }>();
  for (const [i, rule] of rules.entries()) {
    const start = windowStart(rule, now);
    const after = start === Number.NEGATIVE_INFINITY ? Number.MIN_SAFE_INTEGER : start;
    const last = rule.aggregate === 'last';
    const key = JSON.stringify([rule.metric, after, last]);
    const w = windows.get(key) ?? { metric: rule.metric, after, last, rules: [] };
    w.rules.push(i);
    windows.set(key, w);
  }
  // The newest point as of `now` is read apart only for the customers whose window held none:
  // is the factor absent, or too old?
  const newestWanted = new Map<string, Set<string>>();
  const wantNewest = (metric: string, id: string) => {
    const set = newestWanted.get(metric) ?? new Set();
    set.add(id);
    newestWanted.set(metric, set);
  };
  // Every window's query sent at once (on PostgreSQL they follow each other on the connection
  // without a round trip between), and the rows taken as they come.
  const read = [...windows.values()].map(async (w) => {
    if (w.last) return { w, newest: await edges(db, accountId, ids, w.metric, 'MAX', w.after, now, true) };
    const p = new Params(accountId);
    const metric = p.add(w.metric);
    const rows = await db.all(
      db.perId(
        p,
        ids,
        (match) => `SELECT customer_id, COUNT(*) AS n, SUM(${BOUNDED}) AS total,
          MIN(value) AS lo, MAX(value) AS hi, MIN(at) AS oldest, MAX(at) AS newest
        FROM metric_points
        WHERE account_id = $1 AND customer_id ${match} AND metric = ${metric}
          AND at > ${p.add(w.after)} AND at <= ${p.add(now)}
        GROUP BY customer_id`,
      ),
      p.list,
    );
    const newest = new Map<string, { at: number; value: number }>();
    for (const r of rows) {
      const summary: PointSummary = {
        count: Number(r.n),
        sum: Number(r.total),
        min: boundedValue(Number(r.lo)),
        max: boundedValue(Number(r.hi)),
        last: null,
        oldestAt: Number(r.oldest),
        newestAt: Number(r.newest),
        nextAt: null,
      };
      for (const i of w.rules) {
        const target = found.get(r.customer_id as string)?.[i];
        if (target) Object.assign(target, summary);
      }
    }
    return { w, newest };
  });
  // Almost always none: one look along the index by instant says so for every customer at once
  // (the account's own points only: another account's say nothing about this one). `account_id
  // || ''` keeps the account to a filter: as a key it made both planners walk every point of the
  // account by the primary key instead (SQLite always; PostgreSQL's generic plan with many accounts).
  const ahead = db.get(
    "SELECT 1 AS found FROM metric_points WHERE at > $2 AND at <= $3 AND (account_id || '') = $1 LIMIT 1",
    [accountId, now, until],
  );
  const [windowRows, aheadRow] = await Promise.all([Promise.all(read), ahead]);
  for (const { w, newest } of windowRows) {
    for (const [id, point] of newest) {
      for (const i of w.rules) {
        const target = found.get(id)?.[i];
        if (target) Object.assign(target, lastSummary(target, point.at, point.value), { newestAt: point.at });
      }
    }
    // A window without a bound held every point as of `now`: none found, there is none.
    if (w.after === Number.MIN_SAFE_INTEGER) continue;
    for (const id of ids) {
      const summary = found.get(id)?.[w.rules[0] as number];
      if (summary && summary.newestAt === null) wantNewest(w.metric, id);
    }
  }
  // Points dated ahead of `now` (up to `until`): each metric's first, when it comes due. Read
  // apart, so the window's aggregates need no test per row.
  for (const metric of aheadRow ? new Set(rules.map((r) => r.metric)) : []) {
    const next = await edges(db, accountId, ids, metric, 'MIN', now, until, false);
    for (const [id, { at }] of next) for (const s of summariesOf(found, rules, id, metric)) s.nextAt = at;
  }
  for (const [metric, wanted] of newestWanted) {
    const newest = await edges(
      db,
      accountId,
      [...wanted],
      metric,
      'MAX',
      Number.MIN_SAFE_INTEGER,
      now,
      false,
    );
    for (const [id, { at }] of newest) for (const s of summariesOf(found, rules, id, metric)) s.newestAt = at;
  }
  return found;
}

/**
 * The first (MIN) or last (MAX) point of each customer's points of `metric` in `(after, upTo]`:
 * its instant, and with `value`, its value (else NaN). One probe of the key per customer and
 * column, by scalar subqueries: a GROUP BY would read every point of the range, and a join back
 * to the point for its value may be planned by SQLite, without statistics, as a walk of every
 * point of the account (12.8 s for 500 customers × 30 points, against 2.4 ms).
 */
async function edges(
  db: Driver,
  accountId: string,
  ids: readonly string[],
  metric: string,
  pick: 'MIN' | 'MAX',
  after: number,
  upTo: number,
  value: boolean,
): Promise<Map<string, { at: number; value: number }>> {
  const found = new Map<string, { at: number; value: number }>();
  if (ids.length === 0) return found;
  const p = new Params(accountId);
  // The instant and the value by one probe of the key per customer on PostgreSQL (by one each on
  // SQLite): a subquery for each took the rescore job 7% longer (docs/development.md, "The store").
  const rows = await db.all(
    db.probePerId(
      p,
      ids,
      value ? ['at', 'value'] : ['at'],
      (columns, id) => `SELECT ${columns} FROM metric_points
        WHERE account_id = $1 AND customer_id = ${id} AND metric = ${p.add(metric)}
          AND at > ${p.add(after)} AND at <= ${p.add(upTo)}
        ORDER BY at ${pick === 'MIN' ? 'ASC' : 'DESC'} LIMIT 1`,
    ),
    p.list,
  );
  // SQLite answers a customer without such a point with a null instant: dropped here (a WHERE on
  // it would run its probe a second time).
  for (const r of rows) {
    if (r.at !== null) {
      found.set(r.customer_id as string, { at: Number(r.at), value: boundedValue(Number(r.value)) });
    }
  }
  return found;
}

/** The summaries of a customer's rules that read `metric`. */
function* summariesOf(
  found: ReadonlyMap<string, PointSummary[]>,
  rules: readonly FactorRule[],
  id: string,
  metric: string,
): Generator<PointSummary> {
  const summaries = found.get(id) ?? [];
  for (const [i, rule] of rules.entries()) {
    const summary = summaries[i];
    if (summary && rule.metric === metric) yield summary;
  }
}

export const pruneMetricPoints = (db: Driver, before: number, limit: number): Promise<number> =>
  db.run(
    `DELETE FROM metric_points WHERE (account_id, customer_id, metric, at) IN (
       SELECT account_id, customer_id, metric, at FROM metric_points WHERE at < $1 ORDER BY at LIMIT $2)`,
    [before, limit],
  );

export async function rederiveTargets(
  db: Driver,
  accountId: string,
  metrics: readonly string[],
  after: string | null,
  limit: number,
  dueAt: number | null,
): Promise<RederiveTarget[]> {
  const p = new Params(accountId, after ?? '');
  const points =
    metrics.length === 0
      ? ''
      : ` OR EXISTS (SELECT 1 FROM metric_points m WHERE m.account_id = c.account_id AND m.customer_id = c.id
           AND m.metric ${db.inList(p, metrics)})`;
  // The score by a join, not a second EXISTS: PostgreSQL answers an EXISTS beside an OR with a hash
  // of every score of the account, built again for each page (a rule change over 100,000
  // customers spent 6 to 13 s here); the join probes the key of each customer the page walks. The
  // same join gives the score itself, and one to the due times whether each is due: a page of a
  // rule change is one statement, not three waiting on each other.
  const due =
    dueAt === null
      ? { column: '0', join: '' }
      : {
          column: `CASE WHEN d.due_at <= ${p.add(dueAt)} THEN 1 ELSE 0 END`,
          join: ' LEFT JOIN rederive_due d ON d.account_id = c.account_id AND d.customer_id = c.id',
        };
  const rows = await db.all(
    `SELECT c.id AS target, ${scoreColumns('h')}, ${due.column} AS due FROM customers c
       LEFT JOIN health_scores h ON h.account_id = c.account_id AND h.customer_id = c.id${due.join}
     WHERE c.account_id = $1 AND c.id > $2 AND (h.customer_id IS NOT NULL${points})
     ORDER BY c.id LIMIT ${p.add(limit)}`,
    p.list,
  );
  return rows.map((r) => ({
    customerId: r.target as string,
    score: r.customer_id == null ? null : toScore(r),
    due: Number(r.due) === 1,
  }));
}

/** Sets when each customer is next due for the rescore job; null: never (its row goes). See Tx. */
export async function setRederiveDue(
  db: Driver,
  accountId: string,
  due: readonly { customerId: string; at: number | null }[],
  earlierOnly: boolean,
): Promise<void> {
  const set = due.filter((d) => d.at !== null);
  const cleared = earlierOnly ? [] : due.filter((d) => d.at === null).map((d) => d.customerId);
  if (set.length > 0) {
    // A row whose time stays is not written again (on PostgreSQL an update with the same value is
    // still a new row version): most of a rule change's customers keep theirs.
    const when = earlierOnly
      ? 'excluded.due_at < rederive_due.due_at'
      : 'excluded.due_at <> rederive_due.due_at';
    await db.runEach(
      `INSERT INTO rederive_due (account_id, customer_id, due_at) VALUES ($1, $2, $3)
       ON CONFLICT (account_id, customer_id) DO UPDATE SET due_at = excluded.due_at WHERE ${when}`,
      set.map((d) => [accountId, d.customerId, d.at]),
      ['text', 'text', 'int8'],
    );
  }
  if (cleared.length > 0) {
    const p = new Params(accountId);
    await db.run(
      `DELETE FROM rederive_due WHERE account_id = $1 AND customer_id ${db.inList(p, cleared)}`,
      p.list,
    );
  }
}

/** The customers due at `now` (oldest due first), at most `limit`, across accounts but those in `skip`. */
export async function dueForRederive(
  db: Driver,
  now: number,
  limit: number,
  skip: readonly string[] = [],
): Promise<{ accountId: string; customerId: string }[]> {
  const p = new Params(now, limit);
  // An account whose pass failed keeps its customers due, oldest first: left out, or they would
  // fill every page of the pass ahead of the other accounts' (docs/operations.md, "Background jobs").
  const others = skip.length === 0 ? '' : ` AND NOT (account_id ${db.inList(p, skip)})`;
  const rows = await db.all(
    `SELECT account_id, customer_id FROM rederive_due WHERE due_at <= $1${others} ORDER BY due_at LIMIT $2`,
    p.list,
  );
  return rows.map((r) => ({ accountId: r.account_id as string, customerId: r.customer_id as string }));
}

/**
 * Of these customers, the ones due at `now`, by id; `claim`: locked for this transaction (rows
 * others hold skipped). One probe of the key per customer (perId). `due_at + 0`: the due time's
 * index must not be used here. Statistics taken while every due time lay ahead (the job's own
 * next times) tell PostgreSQL that none is due, and it walked that index for each customer, past
 * every row due (841 ms a transaction of 500, against 2 ms; a 100,000-customer job 113 s).
 */
async function dueOf(
  db: Driver,
  accountId: string,
  customerIds: readonly string[],
  now: number,
  claim: boolean,
): Promise<string[]> {
  if (customerIds.length === 0) return [];
  const p = new Params(accountId, now);
  const rows = await db.all(
    `${db.perId(
      p,
      customerIds,
      (match) =>
        `SELECT customer_id FROM rederive_due WHERE account_id = $1 AND customer_id ${match} AND due_at + 0 <= $2${claim ? db.skipLocked : ''}`,
    )} ORDER BY customer_id`,
    p.list,
  );
  return rows.map((r) => r.customer_id as string);
}

/** Of these customers, the ones still due at `now`, locked for this transaction (others' locks skipped). */
export const claimRederiveDue = (
  db: Driver,
  accountId: string,
  customerIds: readonly string[],
  now: number,
) => dueOf(db, accountId, customerIds, now, true);
