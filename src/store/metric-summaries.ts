// What factor rules read of the metric points (docs/scoring.md, "Factors from metrics"): per rule
// window and customer, a summary aggregated where the points are stored, written once for both
// backends (docs/development.md, "The store").
import {
  boundedValue,
  emptySummary,
  type FactorRule,
  lastSummary,
  METRIC_VALUE_MAX,
  type PointSummary,
  windowStart,
} from '../domain/rules.ts';
import { type Driver, hasNul, Params } from './driver.ts';

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
  // SQLite): a subquery for each makes the rescore job 7% longer (docs/development.md, "The store").
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
