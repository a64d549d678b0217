// Factor rules: a factor score derived from a customer's raw metric points (an aggregate over a
// window, put on a scale). Pure: no I/O; the caller reads the points and writes the factors.
import { DAY_MS } from './portfolio.ts';
import { type Factors, round6 } from './scoring.ts';

export { DAY_MS };

export const AGGREGATES = ['last', 'sum', 'count', 'avg', 'min', 'max'] as const;
export type Aggregate = (typeof AGGREGATES)[number];

/** How an aggregate becomes a score in [0, 1]. */
export type Scale =
  | { type: 'linear'; from: number; to: number }
  | { type: 'steps'; steps: { min: number; score: number }[] };

/** How one factor is derived from one metric. */
export interface FactorRule {
  /** The factor it derives. */
  factor: string;
  /** The metric it reads. */
  metric: string;
  aggregate: Aggregate;
  /** As given; null: not given (see windowOf). */
  windowDays: number | null;
  scale: Scale;
  /** The newest point may be at most this old, else the factor is absent; null: no limit. */
  maxAgeDays: number | null;
  /** ms since epoch. */
  updatedAt: number;
}

/** One raw value of a metric: `at` in ms since epoch, `value` a finite number. */
export interface MetricPoint {
  at: number;
  value: number;
}

export const MAX_STEPS = 20;
const DEFAULT_WINDOW_DAYS = 30;

/** The window a rule aggregates over, in days: as given, else 30, except `last`, which has none unless given (null). */
export function windowOf(rule: Pick<FactorRule, 'aggregate' | 'windowDays'>): number | null {
  if (rule.windowDays !== null) return rule.windowDays;
  return rule.aggregate === 'last' ? null : DEFAULT_WINDOW_DAYS;
}

/** The newest point with `at <= now` (on equal `at`, the later one in the array), or null. */
function newestAsOf(points: readonly MetricPoint[], now: number): MetricPoint | null {
  let newest: MetricPoint | null = null;
  for (const p of points) {
    if (p.at <= now && (newest === null || p.at >= newest.at)) newest = p;
  }
  return newest;
}

/**
 * The aggregate of the points (any order) as of `now`; null when the factor is absent: no point
 * as of `now`, the newest one older than `maxAgeDays`, or (for every aggregate but `sum` and
 * `count`, which are 0 then) no point inside the window `(now − window, now]`.
 */
export function aggregate(rule: FactorRule, points: readonly MetricPoint[], now: number): number | null {
  const newest = newestAsOf(points, now);
  if (newest === null) return null;
  if (rule.maxAgeDays !== null && now - newest.at > rule.maxAgeDays * DAY_MS) return null;
  return aggregateOver(rule, points, now, windowStart(rule, now));
}

/** The excluded lower bound of the window as of `now`; -Infinity when there is no window. */
function windowStart(rule: FactorRule, now: number): number {
  const window = windowOf(rule);
  return window === null ? Number.NEGATIVE_INFINITY : now - window * DAY_MS;
}

/** The aggregate over the points with `after < at <= now`. */
function aggregateOver(
  rule: FactorRule,
  points: readonly MetricPoint[],
  now: number,
  after: number,
): number | null {
  let count = 0;
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let last: MetricPoint | null = null;
  for (const p of points) {
    if (p.at > now || p.at <= after) continue;
    count += 1;
    sum += p.value;
    if (p.value < min) min = p.value;
    if (p.value > max) max = p.value;
    if (last === null || p.at >= last.at) last = p;
  }
  switch (rule.aggregate) {
    case 'sum':
      return sum;
    case 'count':
      return count;
    case 'avg':
      return count === 0 ? null : sum / count;
    case 'min':
      return count === 0 ? null : min;
    case 'max':
      return count === 0 ? null : max;
    case 'last':
      return last === null ? null : last.value;
  }
}

/** A value on the rule's scale, in [0, 1], rounded to 6 decimal places. */
export function scaleScore(scale: Scale, value: number): number {
  if (scale.type === 'linear') {
    const { from, to } = scale;
    let t = (value - from) / (to - from);
    // A span wider than a double holds (±1.8e308): halve everything first, which is exact there.
    if (!Number.isFinite(to - from)) t = (value / 2 - from / 2) / (to / 2 - from / 2);
    return round6(Math.min(1, Math.max(0, t)));
  }
  let score = 0;
  for (const step of scale.steps) if (step.min <= value) score = step.score;
  return round6(Math.min(1, Math.max(0, score)));
}

/** The factor score the rule derives from the points as of `now`; null: absent. */
export function deriveFactor(rule: FactorRule, points: readonly MetricPoint[], now: number): number | null {
  const value = aggregate(rule, points, now);
  return value === null ? null : scaleScore(rule.scale, value);
}

/**
 * Every rule's factor for one customer: pointsByMetric maps a metric name to its points (any
 * order). Absent factors are left out; when two rules derive the same factor, the later one wins.
 */
export function deriveFactors(
  rules: readonly FactorRule[],
  pointsByMetric: ReadonlyMap<string, readonly MetricPoint[]>,
  now: number,
): Factors {
  const factors = new Map<string, number>();
  for (const rule of rules) {
    const score = deriveFactor(rule, pointsByMetric.get(rule.metric) ?? [], now);
    if (score !== null) factors.set(rule.factor, score);
  }
  // fromEntries defines own properties, so no factor name can reach the prototype.
  return Object.fromEntries(factors);
}

/**
 * The first instant after `now` at which deriveFactor's answer may differ with no new point
 * written (a point leaves the window, the newest point passes max_age_days, a point dated in the
 * future comes due); null: never. It may name an instant at which the answer stays the same,
 * but never one later than a change.
 */
export function changesAt(rule: FactorRule, points: readonly MetricPoint[], now: number): number | null {
  let first: number | null = null;
  const consider = (t: number): void => {
    if (t > now && (first === null || t < first)) first = t;
  };
  const window = windowOf(rule);
  const after = windowStart(rule, now);
  for (const p of points) {
    if (p.at > now) consider(p.at);
    else if (window !== null && p.at > after) consider(p.at + window * DAY_MS);
  }
  if (rule.maxAgeDays !== null) {
    const newest = newestAsOf(points, now);
    if (newest !== null) consider(newest.at + rule.maxAgeDays * DAY_MS + 1);
  }
  return first;
}

/**
 * Why a scale is refused, or null: a non-finite number (param: the field's path); linear with
 * from === to; steps empty or more than MAX_STEPS; a step's min not strictly greater than the
 * one before; a step's score outside [0, 1].
 */
export function scaleRefusal(scale: Scale): { param: string; message: string } | null {
  if (scale.type === 'linear') {
    for (const key of ['from', 'to'] as const) {
      if (!Number.isFinite(scale[key])) return notFinite(`scale.${key}`);
    }
    if (scale.from === scale.to) {
      return {
        param: 'scale.to',
        message: "'scale.to' must differ from 'scale.from': a linear scale's from and to must differ.",
      };
    }
    return null;
  }
  const { steps } = scale;
  if (steps.length === 0 || steps.length > MAX_STEPS) {
    return { param: 'scale.steps', message: `'scale.steps' must have 1 to ${MAX_STEPS} steps.` };
  }
  for (const [i, step] of steps.entries()) {
    const path = `scale.steps.${i}`;
    if (!Number.isFinite(step.min)) return notFinite(`${path}.min`);
    const before = steps[i - 1];
    if (before !== undefined && !(step.min > before.min)) {
      return {
        param: `${path}.min`,
        message: `'${path}.min' must be greater than the min of the step before it (${before.min}).`,
      };
    }
    if (!Number.isFinite(step.score) || step.score < 0 || step.score > 1) {
      return { param: `${path}.score`, message: `'${path}.score' must be a number from 0 to 1.` };
    }
  }
  return null;
}

function notFinite(param: string): { param: string; message: string } {
  return { param, message: `'${param}' must be a finite number.` };
}
