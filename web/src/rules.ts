// Factor rules for a person to read (docs/scoring.md, "Factors from metrics"): a rule's aggregate,
// window and scale in words, and its scale as a curve to draw. Plain TypeScript (no JSX, no DOM),
// so the tests import it. The score itself is the server's own function (src/domain/rules.ts).
import { type Aggregate, type Scale, scaleScore, windowOf } from '../../src/domain/rules.ts';

export { AGGREGATES, MAX_STEPS, scaleScore } from '../../src/domain/rules.ts';
export type { Aggregate, Scale };

export const AGGREGATE_LABEL: Record<Aggregate, string> = {
  last: 'last value',
  sum: 'sum',
  count: 'count of points',
  avg: 'average',
  min: 'minimum',
  max: 'maximum',
};

const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 6 });
/** A scale's number as typed, without a thousands separator in the way of reading it back: 0.25, -3, 1200. */
export const plain = (n: number) => number.format(n).replaceAll(',', '');

const days = (n: number) => `${n} ${n === 1 ? 'day' : 'days'}`;

/** The days a rule aggregates over as the server applies them (30 unless given; `last` none unless given). */
export const windowDaysOf = (rule: { aggregate: string; window_days: number | null }): number | null =>
  windowOf({ aggregate: rule.aggregate as Aggregate, windowDays: rule.window_days });

/**
 * How the rule reads its metric: "sum over 30 days" (the default window said as it applies),
 * "last value" (no window), "last value over 7 days".
 */
export function aggregateWords(rule: { aggregate: string; window_days: number | null }): string {
  const aggregate = rule.aggregate as Aggregate;
  const label = AGGREGATE_LABEL[aggregate] ?? rule.aggregate;
  const window = windowDaysOf(rule);
  return window === null ? label : `${label} over ${days(window)}`;
}

/** "linear: 0 at 0, 1 at 20" or "steps: 0 below 1, 0.5 from 1, 1 from 10". */
export function scaleWords(scale: Scale): string {
  if (scale.type === 'linear') {
    const lower = scale.from > scale.to ? ' (lower is better)' : '';
    return `linear: 0 at ${plain(scale.from)}, 1 at ${plain(scale.to)}${lower}`;
  }
  const first = scale.steps[0];
  const below = first ? `0 below ${plain(first.min)}, ` : '';
  return `steps: ${below}${scale.steps.map((s) => `${plain(s.score)} from ${plain(s.min)}`).join(', ')}`;
}

export const maxAgeWords = (maxAge: number | null) => (maxAge === null ? 'none' : days(maxAge));

/** Why this scale cannot be drawn yet, or null. (Whether it may be saved is the server's to say.) */
export function undrawable(scale: Scale): string | null {
  if (scale.type === 'linear') {
    if (!Number.isFinite(scale.from) || !Number.isFinite(scale.to))
      return 'Enter from and to to see the curve.';
    if (scale.from === scale.to) return 'From and to are the same value: there is no ramp to draw.';
    return null;
  }
  if (scale.steps.length === 0) return 'Add a step to see the curve.';
  if (scale.steps.some((s) => !Number.isFinite(s.min) || !Number.isFinite(s.score)))
    return "Enter every step's min and score to see the curve.";
  return null;
}

/** The values where the curve bends: a linear scale's from and to, or each step's min, ascending and distinct. */
export function breakpoints(scale: Scale): number[] {
  const xs = scale.type === 'linear' ? [scale.from, scale.to] : scale.steps.map((s) => s.min);
  return [...new Set(xs)].sort((a, b) => a - b);
}

/** The metric values to draw: the breakpoints with a quarter of their span either side (1 either side of one value). */
export function curveDomain(scale: Scale): [number, number] {
  const xs = breakpoints(scale);
  const lo = xs[0] ?? 0;
  const hi = xs.at(-1) ?? 0;
  const pad = hi > lo ? (hi - lo) / 4 : Math.max(1, Math.abs(lo) / 4);
  return [lo - pad, hi + pad];
}

/**
 * The curve from lo to hi as the corners of a polyline, each [value, score]: straight between
 * them for a linear scale, a staircase for steps (each rise drawn as a vertical segment).
 */
export function curve(scale: Scale, lo: number, hi: number): [number, number][] {
  const f = (x: number) => scaleScore(scale, x);
  const inside = breakpoints(scale).filter((x) => x > lo && x < hi);
  const corners: [number, number][] = [[lo, f(lo)]];
  for (const x of inside) {
    if (scale.type === 'steps') {
      const before = corners.at(-1)?.[1] ?? 0;
      corners.push([x, before]);
    }
    corners.push([x, f(x)]);
  }
  corners.push([hi, f(hi)]);
  return corners;
}

/**
 * About `n` round tick values inside [lo, hi]: multiples of a step of 1, 2 or 5 times a power of
 * ten (fractions too, unlike the count axis of ticks.ts).
 */
export function valueTicks(lo: number, hi: number, n = 5): number[] {
  if (!(hi > lo) || !Number.isFinite(hi - lo)) return [lo];
  const raw = (hi - lo) / Math.max(1, n);
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw * (1 - 1e-9)) ?? 10 * pow;
  const out: number[] = [];
  for (let i = Math.ceil(lo / step); i * step <= hi; i++) {
    // Rounded to the step's decimals, so 0.1 + 0.2 is labelled 0.3.
    out.push(Number((i * step).toPrecision(12)));
  }
  return out;
}

/** A gate's band in words (docs/scoring.md, "Gates"). */
const GATE_WORDS = { at_risk: 'at risk', critical: 'critical' } as const;

/** A rule's gate in the rules table: "below 0.5: at most critical", or "none". */
export const gateWords = (gate: { below: number; status: keyof typeof GATE_WORDS } | null | undefined) =>
  gate ? `below ${plain(gate.below)}: at most ${GATE_WORDS[gate.status]}` : 'none';

/** Why a status is capped: "Capped at critical by invoice_overdue (0.333, below its gate of 0.5)". */
export const cappedWords = (
  factor: string,
  gate: { below: number; status: keyof typeof GATE_WORDS },
  factorScore: number,
) =>
  `Capped at ${GATE_WORDS[gate.status]} by ${factor} (${factorScore.toFixed(3)}, below its gate of ${plain(gate.below)})`;
