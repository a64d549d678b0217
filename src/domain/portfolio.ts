// The portfolio as numbers: band counts and the average score, now and at the end of past UTC
// days (docs/api.md, "Segments, trends and movers"). Pure: the stores keep a per-day rollup of
// how the portfolio changed (a day's delta) and hand it here.
import { round6, STATUSES, type Status } from './scoring.ts';

export const DAY_MS = 86_400_000;

/** The UTC day (days since 1970-01-01) holding this instant. */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);
/** A day as YYYY-MM-DD. */
export const dateOf = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/**
 * Scores are kept to 6 decimal places, so sums are exact as integers of millionths: the same
 * average on both backends and however the rollup was added up.
 */
export const micros = (score: number): number => Math.round(score * 1e6);

/** Customers per band and the sum of their scores in millionths. */
export interface Tally {
  counts: Record<Status, number>;
  micros: number;
}

/** How the portfolio changed during one UTC day (each count may be negative). */
export interface DayDelta extends Tally {
  day: number;
}

export const emptyTally = (): Tally => ({ counts: { healthy: 0, at_risk: 0, critical: 0 }, micros: 0 });

/** A score as far as the portfolio is concerned. */
export interface Standing {
  score: number;
  status: Status;
}

/**
 * Adds one customer's change at `at` (from `before` to `after`, null: not in the portfolio) to
 * the day deltas. Deleting a customer adds its history's changes back the other way.
 */
export function addChange(
  days: Map<number, DayDelta>,
  at: number,
  before: Standing | null,
  after: Standing | null,
): void {
  const day = dayOf(at);
  let d = days.get(day);
  if (!d) {
    d = { day, ...emptyTally() };
    days.set(day, d);
  }
  if (before) {
    d.counts[before.status]--;
    d.micros -= micros(before.score);
  }
  if (after) {
    d.counts[after.status]++;
    d.micros += micros(after.score);
  }
}

/** A tally with the ARR of each band's customers, in integer cents (a customer without ARR counts 0). */
export interface ArrTally extends Tally {
  arrCents: Record<Status, number>;
}

export const emptyArrTally = (): ArrTally => ({
  ...emptyTally(),
  arrCents: { healthy: 0, at_risk: 0, critical: 0 },
});

/**
 * The summary's money (docs/api.md, "Segments, trends and movers"): the integer cents summed, then
 * divided, so 0.1 + 0.2 is 0.3 to the cent.
 */
export function arrFigures(t: ArrTally) {
  const { healthy, at_risk, critical } = t.arrCents;
  const money = (cents: number) => Math.round(cents) / 100;
  return {
    arr: {
      total: money(healthy + at_risk + critical),
      healthy: money(healthy),
      at_risk: money(at_risk),
      critical: money(critical),
    },
    arr_at_risk: money(at_risk + critical),
  };
}

export interface PortfolioFigures {
  total: number;
  counts: Record<Status, number>;
  /** The mean score to 6 places; null when there is no score. */
  average: number | null;
}

export function figures(t: Tally): PortfolioFigures {
  const total = t.counts.healthy + t.counts.at_risk + t.counts.critical;
  return {
    total,
    counts: { ...t.counts },
    average: total === 0 ? null : round6(Math.round(t.micros / total) / 1e6),
  };
}

export interface TrendDay extends PortfolioFigures {
  date: string;
}

/**
 * The portfolio at the end of each of the `days` UTC days up to and including `today`, oldest
 * first, from the portfolio now and what each day changed: the end of day D is now, less every
 * change made after D.
 */
export function trend(now: Tally, deltas: readonly DayDelta[], today: number, days: number): TrendDay[] {
  const byDay = new Map(deltas.map((d) => [d.day, d]));
  const state: Tally = { counts: { ...now.counts }, micros: now.micros };
  // Changes stamped after today (a clock set back) are undone first.
  for (const d of deltas) if (d.day > today) subtract(state, d);
  const out: TrendDay[] = [];
  for (let day = today; day > today - days; day--) {
    out.push({ date: dateOf(day), ...figures(state) });
    const d = byDay.get(day);
    if (d) subtract(state, d);
  }
  return out.reverse();
}

function subtract(state: Tally, d: Tally): void {
  for (const s of STATUSES) state.counts[s] -= d.counts[s];
  state.micros -= d.micros;
}

/** The portfolio list's orders (docs/api.md, "Health scores"): `score` is the band's, then the score's. */
export const PORTFOLIO_SORTS = ['score', '-arr', 'renewal_at'] as const;
export type PortfolioSort = (typeof PORTFOLIO_SORTS)[number];
