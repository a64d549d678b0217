// Factor rules: a factor score derived from a customer's raw metric points (an aggregate over a
// window, put on a scale). Pure: no I/O; the caller reads the points and writes the factors.
import { DAY_MS } from './portfolio.ts';
import { type Factors, type Gate, round6 } from './scoring.ts';

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
  /** Caps the status while the factor is below it (docs/scoring.md, "Gates"); null or absent: none. */
  gate?: Gate | null;
  /** ms since epoch. */
  updatedAt: number;
}

/** One raw value of a metric: `at` in ms since epoch, `value` a finite number. */
export interface MetricPoint {
  at: number;
  value: number;
}

export const MAX_STEPS = 20;

/**
 * A metric value lies in [−METRIC_VALUE_MAX, METRIC_VALUE_MAX] (docs/scoring.md, "Metric values"):
 * a sum over a window of such points stays far inside a double (1e15 × a billion points is 1e24),
 * so no aggregate overflows on either backend, where 1.7e308 twice made PostgreSQL's SUM fail and
 * SQLite's Infinity.
 */
export const METRIC_VALUE_MAX = 1e15;

/**
 * A stored point as the aggregates read it: within the bound. Points stored before the bound was
 * checked may lie beyond it; each counts as the bound, the same in SQL (metricSummaries) as here.
 */
export const boundedValue = (value: number): number =>
  Math.min(METRIC_VALUE_MAX, Math.max(-METRIC_VALUE_MAX, value));

const DEFAULT_WINDOW_DAYS = 30;

/** The window a rule aggregates over, in days: as given, else 30, except `last`, which has none unless given (null). */
export function windowOf(rule: Pick<FactorRule, 'aggregate' | 'windowDays'>): number | null {
  if (rule.windowDays !== null) return rule.windowDays;
  return rule.aggregate === 'last' ? null : DEFAULT_WINDOW_DAYS;
}

/**
 * All a rule needs of one customer's points of its metric as of `now`: the aggregates over the
 * window `(now − window, now]`, and the instants that decide whether the factor is absent and when
 * it may next change. The store computes it in SQL (a year of daily points is one row, not 365);
 * summarize() computes it from points.
 */
export interface PointSummary {
  /**
   * Points in the window the aggregate reads. A `last` rule reads one, the newest: its summary is
   * of that point alone (count 1, sum, min and max its value, oldestAt its instant), so the store
   * answers it with one probe of the key, and it may next change when that point leaves the window.
   */
  count: number;
  /** Their sum (0 without any), least and greatest value (null without any). */
  sum: number;
  min: number | null;
  max: number | null;
  /** A `last` rule's: the value of the newest point in the window; null without any (and for other rules). */
  last: number | null;
  /** The oldest point's instant in the window: when it leaves, the aggregate may change. */
  oldestAt: number | null;
  /** The newest point's instant at or before `now`, in the window or not: absent or too old. */
  newestAt: number | null;
  /** The first point's instant after `now` (dated ahead of the clock): it comes due then. */
  nextAt: number | null;
}

/** The excluded lower bound of the rule's window as of `now`; -Infinity when there is no window. */
export function windowStart(rule: Pick<FactorRule, 'aggregate' | 'windowDays'>, now: number): number {
  const window = windowOf(rule);
  return window === null ? Number.NEGATIVE_INFINITY : now - window * DAY_MS;
}

/** The summary of no point at all. */
export const emptySummary = (): PointSummary => ({
  count: 0,
  sum: 0,
  min: null,
  max: null,
  last: null,
  oldestAt: null,
  newestAt: null,
  nextAt: null,
});

/** The rule's summary of these points (any order; on equal `at`, the later one in the array) as of `now`. */
export function summarize(rule: FactorRule, points: readonly MetricPoint[], now: number): PointSummary {
  const after = windowStart(rule, now);
  const summary = emptySummary();
  let lastAt = Number.NEGATIVE_INFINITY;
  for (const p of points) {
    if (p.at > now) {
      if (summary.nextAt === null || p.at < summary.nextAt) summary.nextAt = p.at;
      continue;
    }
    if (summary.newestAt === null || p.at > summary.newestAt) summary.newestAt = p.at;
    if (p.at <= after) continue;
    const value = boundedValue(p.value);
    summary.count += 1;
    summary.sum += value;
    if (summary.min === null || value < summary.min) summary.min = value;
    if (summary.max === null || value > summary.max) summary.max = value;
    if (rule.aggregate === 'last' && p.at >= lastAt) {
      lastAt = p.at;
      summary.last = value;
    }
    if (summary.oldestAt === null || p.at < summary.oldestAt) summary.oldestAt = p.at;
  }
  if (rule.aggregate === 'last' && summary.last !== null) return lastSummary(summary, lastAt, summary.last);
  return summary;
}

/** A `last` rule's summary: of the newest point in the window alone (PointSummary's count). */
export const lastSummary = (summary: PointSummary, at: number, value: number): PointSummary => ({
  ...summary,
  count: 1,
  sum: value,
  min: value,
  max: value,
  last: value,
  oldestAt: at,
});

/**
 * The aggregate of the points (any order) as of `now`; null when the factor is absent: no point
 * as of `now`, the newest one older than `maxAgeDays`, or (for every aggregate but `sum` and
 * `count`, which are 0 then) no point inside the window `(now − window, now]`.
 */
export function aggregate(rule: FactorRule, points: readonly MetricPoint[], now: number): number | null {
  return aggregateOf(rule, summarize(rule, points, now), now);
}

/** aggregate() from the rule's summary. */
export function aggregateOf(rule: FactorRule, summary: PointSummary, now: number): number | null {
  if (summary.newestAt === null) return null;
  if (rule.maxAgeDays !== null && now - summary.newestAt > rule.maxAgeDays * DAY_MS) return null;
  switch (rule.aggregate) {
    case 'sum':
      return summary.sum;
    case 'count':
      return summary.count;
    case 'avg':
      return summary.count === 0 ? null : summary.sum / summary.count;
    case 'min':
      return summary.min;
    case 'max':
      return summary.max;
    case 'last':
      return summary.last;
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
  return factorOf(rule, summarize(rule, points, now), now);
}

/** deriveFactor() from the rule's summary. */
export function factorOf(rule: FactorRule, summary: PointSummary, now: number): number | null {
  const value = aggregateOf(rule, summary, now);
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
  return factorsOf(
    rules,
    rules.map((rule) => summarize(rule, pointsByMetric.get(rule.metric) ?? [], now)),
    now,
  );
}

/** deriveFactors() from each rule's summary (summaries[i] is rules[i]'s). */
export function factorsOf(
  rules: readonly FactorRule[],
  summaries: readonly PointSummary[],
  now: number,
): Factors {
  return derivationsOf(rules, summaries, now).factors;
}

/** What a derived factor was computed from, kept with every version that holds the factor. */
export interface DerivedInput {
  metric: string;
  aggregate: Aggregate;
  /** The rule's window (null: `last` without one). */
  windowDays: number | null;
  /** The aggregate the scale turned into the factor's score. */
  value: number;
  /** Points the aggregate read. */
  points: number;
  /** The newest point's instant. */
  newestAt: number | null;
}

/** Derived factor name → its input. */
export type DerivedInputs = Record<string, DerivedInput>;

/** What the rule's factor comes from as of `now` (docs/scoring.md, "Why this score"); null: absent. */
export function inputOf(rule: FactorRule, summary: PointSummary, now: number): DerivedInput | null {
  const value = aggregateOf(rule, summary, now);
  if (value === null) return null;
  return {
    metric: rule.metric,
    aggregate: rule.aggregate,
    windowDays: rule.windowDays,
    value,
    points: summary.count,
    newestAt: summary.newestAt,
  };
}

/** factorsOf() with each factor's input beside it. */
export function derivationsOf(
  rules: readonly FactorRule[],
  summaries: readonly PointSummary[],
  now: number,
): { factors: Factors; inputs: DerivedInputs } {
  const derived = new Map<string, [number, DerivedInput]>();
  for (const [i, rule] of rules.entries()) {
    const summary = summaries[i] as PointSummary;
    const input = inputOf(rule, summary, now);
    if (input !== null) derived.set(rule.factor, [scaleScore(rule.scale, input.value), input]);
  }
  // fromEntries defines own properties, so no factor name can reach the prototype.
  return {
    factors: Object.fromEntries([...derived].map(([name, [score]]) => [name, score])),
    inputs: Object.fromEntries([...derived].map(([name, [, input]]) => [name, input])),
  };
}

/**
 * The first instant after `now` at which deriveFactor's answer may differ with no new point
 * written (a point leaves the window, the newest point passes max_age_days, a point dated in the
 * future comes due); null: never. It may name an instant at which the answer stays the same,
 * but never one later than a change.
 */
export function changesAt(rule: FactorRule, points: readonly MetricPoint[], now: number): number | null {
  return changeOf(rule, summarize(rule, points, now), now);
}

/** changesAt() from the rule's summary. */
export function changeOf(rule: FactorRule, summary: PointSummary, now: number): number | null {
  const window = windowOf(rule);
  const at = [
    summary.nextAt,
    window !== null && summary.oldestAt !== null ? summary.oldestAt + window * DAY_MS : null,
    rule.maxAgeDays !== null && summary.newestAt !== null
      ? summary.newestAt + rule.maxAgeDays * DAY_MS + 1
      : null,
  ].filter((t): t is number => t !== null && t > now);
  return at.length === 0 ? null : Math.min(...at);
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
