// Health score from factors and account-wide weights (docs/scoring.md). Pure: no I/O.

export type Factors = Record<string, number>;
export type Weights = Record<string, number>;

export const STATUSES = ['healthy', 'at_risk', 'critical'] as const;
export type Status = (typeof STATUSES)[number];

/** Lower bounds of the bands: score >= healthy is healthy, >= at_risk is at_risk, else critical. */
export interface Thresholds {
  healthy: number;
  at_risk: number;
}

export const DEFAULT_THRESHOLDS: Thresholds = { healthy: 0.7, at_risk: 0.4 };
export const FACTOR_NAME = /^[a-z][a-z0-9_]{0,63}$/;
export const MAX_FACTORS = 50;
export const WEIGHT_SUM_TOLERANCE = 1e-6;

/** Whether two factor sets are the same names with the same scores. */
export const sameFactors = (a: Factors, b: Factors): boolean => {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((n) => b[n] === a[n]);
};

export const round6 = (x: number): number => Math.round(x * 1e6) / 1e6 + 0; // + 0 turns -0 into 0

/**
 * Weighted mean over the factors that have a positive weight (weights renormalized over the
 * factors present); the plain mean when no weight covers any supplied factor. Names are
 * visited in sorted order so the same inputs always give the same bits.
 */
export function computeScore(factors: Factors, weights: Weights): number {
  const names = Object.keys(factors).sort();
  if (names.length === 0) throw new RangeError('a health score needs at least one factor');
  let weightSum = 0;
  let plain = 0;
  for (const name of names) {
    plain += factors[name] as number;
    const w = weights[name];
    if (w !== undefined && w > 0) weightSum += w;
  }
  // Each weight over their sum first, as the explanation shows it (effectiveWeights): w × value
  // summed before dividing underflows to 0 for a weight as small as 5e-324.
  let weighted = 0;
  if (weightSum > 0) {
    for (const name of names) {
      const w = weights[name];
      if (w !== undefined && w > 0) weighted += (w / weightSum) * (factors[name] as number);
    }
  }
  const score = weightSum > 0 ? weighted : plain / names.length;
  // Floating error must not push a score outside [0, 1].
  return round6(Math.min(1, Math.max(0, score)));
}

export function statusFor(score: number, thresholds: Thresholds): Status {
  if (score >= thresholds.healthy) return 'healthy';
  if (score >= thresholds.at_risk) return 'at_risk';
  return 'critical';
}

/** The bands a gate may cap a status at (docs/scoring.md, "Gates"). */
export const GATE_STATUSES = ['at_risk', 'critical'] as const;

/**
 * A factor rule's gate: while its factor scores below `below`, the customer's status is at most
 * `status`, whatever the weighted mean (docs/scoring.md, "Gates"). The score itself is not touched.
 */
export interface Gate {
  below: number;
  status: (typeof GATE_STATUSES)[number];
}

/** The account's gates by factor (a Map: a factor may be named `constructor`). */
export type Gates = ReadonlyMap<string, Gate>;

export const NO_GATES: Gates = new Map();

/** The factors whose gate applies to these factors (present and below it), by name. */
export function gatedBy(factors: Factors, gates: Gates): string[] {
  if (gates.size === 0) return [];
  const applied: string[] = [];
  for (const [factor, gate] of gates) {
    const value = Object.hasOwn(factors, factor) ? factors[factor] : undefined;
    if (value !== undefined && value < gate.below) applied.push(factor);
  }
  return applied.sort();
}

/** The worse of two statuses. */
const worse = (a: Status, b: Status): Status => (STATUSES.indexOf(a) >= STATUSES.indexOf(b) ? a : b);

/**
 * The status a computed score shows: its band under the thresholds, capped by every gate that
 * applies. An override's score is banded by statusFor alone: a gate never caps it.
 */
export function gatedStatus(score: number, factors: Factors, thresholds: Thresholds, gates: Gates): Status {
  let status = statusFor(score, thresholds);
  if (status === 'critical' || gates.size === 0) return status;
  for (const factor of gatedBy(factors, gates)) status = worse(status, (gates.get(factor) as Gate).status);
  return status;
}

export function weightsSumValid(weights: Weights): boolean {
  let sum = 0;
  for (const w of Object.values(weights)) sum += w;
  return Math.abs(sum - 1) <= WEIGHT_SUM_TOLERANCE;
}

export function thresholdsValid(t: Thresholds): boolean {
  return t.at_risk > 0 && t.at_risk < t.healthy && t.healthy <= 1;
}

/** PATCH semantics for factors: supplied values are set, null removes a factor. */
export function mergeFactors(current: Factors, patch: Record<string, number | null>): Factors {
  const next: Factors = { ...current };
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete next[name];
    else next[name] = value;
  }
  return next;
}
