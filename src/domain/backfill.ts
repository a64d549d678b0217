// A backfill (docs/scoring.md, "Backfilling history"): a customer's scores as of the end of each
// past day, from the factor rules and weights in force now over the metric points it had by then.
// Pure: the caller reads the points and writes the versions.
import { type ScoreRecord, type ScoringSettings, scoreFactors } from './health.ts';
import {
  DAY_MS,
  derivationsOf,
  type FactorRule,
  type MetricPoint,
  type PointSummary,
  summarize,
  windowStart,
} from './rules.ts';
import { sameFactors } from './scoring.ts';

/** The most days a backfill reaches back (docs/api.md, "Backfill"). */
export const BACKFILL_MAX_DAYS = 730;

/** The last instant of UTC day `day` (days since the epoch): a backfilled version's `updated_at`. */
export const endOfDay = (day: number): number => (day + 1) * DAY_MS - 1;

/**
 * The customer's versions for the days `fromDay`…`lastDay` (inclusive), numbered 1, 2, … in time
 * order (the caller numbers them below its first version): one for each day whose factors differ
 * from the version before, none for a day without any factor (a score needs one). Each is dated
 * the end of its day and carries its inputs and effective weights like any version. `points`
 * holds each metric's points ascending by `at` (one per instant, as they are stored).
 */
export function backfillScores(o: {
  customerId: string;
  rules: readonly FactorRule[];
  settings: ScoringSettings;
  points: ReadonlyMap<string, readonly MetricPoint[]>;
  fromDay: number;
  lastDay: number;
}): ScoreRecord[] {
  const out: ScoreRecord[] = [];
  // Per rule, two cursors that only move forward: the newest point at or before the day's end
  // (`newest`) and the first one inside its window (`first`). summarize() then reads only the
  // window's points and the newest, not the whole series, each day.
  const series = o.rules.map((rule) => o.points.get(rule.metric) ?? []);
  const newest = o.rules.map(() => -1);
  const first = o.rules.map(() => 0);
  let previous: ScoreRecord | null = null;
  for (let day = o.fromDay; day <= o.lastDay; day++) {
    const end = endOfDay(day);
    const summaries: PointSummary[] = o.rules.map((rule, i) => {
      const points = series[i] as readonly MetricPoint[];
      let n = newest[i] as number;
      while (n + 1 < points.length && (points[n + 1] as MetricPoint).at <= end) n++;
      newest[i] = n;
      const after = windowStart(rule, end);
      // Without a window (a `last` rule) only the newest point counts.
      let f = after === Number.NEGATIVE_INFINITY ? Math.max(n, 0) : (first[i] as number);
      while (f <= n && (points[f] as MetricPoint).at <= after) f++;
      first[i] = f;
      // The window's points, or the newest alone when none is inside it (its age still counts).
      return summarize(rule, n < 0 ? [] : points.slice(Math.min(f, n), n + 1), end);
    });
    const { factors, inputs } = derivationsOf(o.rules, summaries, end);
    if (Object.keys(factors).length === 0) continue;
    if (previous && sameFactors(previous.factors, factors)) continue;
    previous = scoreFactors(o.customerId, previous, factors, o.settings, end, inputs).record;
    out.push(previous);
  }
  return out;
}
