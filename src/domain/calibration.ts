// Does the score predict churn? (docs/scoring.md, "Does the score predict churn?"). Each outcome (a customer churned
// or was retained) is judged by the computed score and factors the customer had some days before
// it; from those pairs: the AUC of the score, churn per band, the AUC of each factor, and weights
// fitted to the outcomes. Pure: no I/O; the caller reads the judged versions and passes them in.
import {
  computeScore,
  type Factors,
  round6,
  STATUSES,
  type Status,
  statusFor,
  type Thresholds,
  type Weights,
} from './scoring.ts';

export const OUTCOMES = ['churned', 'retained'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** Fewer outcomes of either kind than this, and no weights are suggested. */
export const MIN_FIT_OUTCOMES = 20;
/** The most outcomes the weights are fitted on. */
const FIT_SAMPLE = 20_000;

/** One outcome and what it is judged by: the computed score and factors of the version then. */
export interface Judged {
  churned: boolean;
  score: number;
  factors: Factors;
}

/**
 * The probability that a retained outcome's score is above a churned one's, ties counting ½
 * (the Mann–Whitney U over the product of the two counts), 6 places; null without one of each.
 * O(n log n): sorted once, ties grouped.
 */
export function auc(scores: ArrayLike<number>, churned: ArrayLike<boolean>): number | null {
  const n = scores.length;
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => (scores[a] as number) - (scores[b] as number),
  );
  let churnedBelow = 0; // churned outcomes with a lower score than the current group
  let pairs = 0; // Σ over retained outcomes of churned below + ½ churned tied
  let retainedTotal = 0;
  for (let i = 0; i < n; ) {
    const value = scores[order[i] as number] as number;
    let groupChurned = 0;
    let groupRetained = 0;
    let j = i;
    for (; j < n && scores[order[j] as number] === value; j++) {
      if (churned[order[j] as number]) groupChurned++;
      else groupRetained++;
    }
    pairs += groupRetained * (churnedBelow + groupChurned / 2);
    churnedBelow += groupChurned;
    retainedTotal += groupRetained;
    i = j;
  }
  if (churnedBelow === 0 || retainedTotal === 0) return null;
  return round6(pairs / (churnedBelow * retainedTotal));
}

export interface BandReport {
  status: Status;
  outcomes: number;
  churned: number;
  churnRate: number | null;
}

export interface FactorReport {
  factor: string;
  outcomes: number;
  auc: number | null;
}

export interface Calibration {
  churned: number;
  retained: number;
  auc: number | null;
  bands: BandReport[];
  factors: FactorReport[];
  /** Today's weights applied to the same outcomes' factors: what the suggestion is measured against. */
  currentWeightsAuc: number | null;
  suggestedWeights: Weights | null;
  suggestedAuc: number | null;
}

/** The report over judged outcomes, with today's weights and thresholds. */
export function calibrate(
  judged: readonly Judged[],
  settings: { weights: Weights; thresholds: Thresholds },
): Calibration {
  const churned = judged.map((j) => j.churned);
  const nChurned = churned.filter(Boolean).length;
  const bands = STATUSES.map((status) => ({
    status,
    outcomes: 0,
    churned: 0,
    churnRate: null as number | null,
  }));
  for (const j of judged) {
    const band = bands[STATUSES.indexOf(statusFor(j.score, settings.thresholds))] as BandReport;
    band.outcomes++;
    if (j.churned) band.churned++;
  }
  for (const band of bands)
    band.churnRate = band.outcomes === 0 ? null : round6(band.churned / band.outcomes);

  const byFactor = new Map<string, { scores: number[]; churned: boolean[] }>();
  for (const j of judged) {
    for (const [name, value] of Object.entries(j.factors)) {
      let f = byFactor.get(name);
      if (!f) {
        f = { scores: [], churned: [] };
        byFactor.set(name, f);
      }
      f.scores.push(value);
      f.churned.push(j.churned);
    }
  }
  const factors = [...byFactor]
    .map(([factor, f]) => ({ factor, outcomes: f.scores.length, auc: auc(f.scores, f.churned) }))
    .sort(
      (a, b) => (b.auc ?? -1) - (a.auc ?? -1) || b.outcomes - a.outcomes || (a.factor < b.factor ? -1 : 1),
    );

  const currentWeightsAuc = aucWith(judged, settings.weights);
  const common = [...byFactor].filter(([, f]) => f.scores.length * 2 >= judged.length).map(([name]) => name);
  const suggestion = suggestWeights(judged, settings.weights, currentWeightsAuc, common, nChurned);
  return {
    churned: nChurned,
    retained: judged.length - nChurned,
    auc: auc(
      judged.map((j) => j.score),
      churned,
    ),
    bands,
    factors,
    currentWeightsAuc,
    ...suggestion,
  };
}

/** The AUC of `weights` applied to each outcome's factors (as computeScore scores them). */
export function aucWith(judged: readonly Judged[], weights: Weights): number | null {
  return auc(
    judged.map((j) => (Object.keys(j.factors).length === 0 ? 0 : computeScore(j.factors, weights))),
    judged.map((j) => j.churned),
  );
}

/**
 * Weights over `names` fitted to the outcomes, or the current ones if the fit does not beat them
 * over the same outcomes; null with fewer than MIN_FIT_OUTCOMES of either kind.
 */
function suggestWeights(
  judged: readonly Judged[],
  current: Weights,
  currentAuc: number | null,
  names: readonly string[],
  nChurned: number,
): { suggestedWeights: Weights | null; suggestedAuc: number | null } {
  if (nChurned < MIN_FIT_OUTCOMES || judged.length - nChurned < MIN_FIT_OUTCOMES || names.length === 0) {
    return { suggestedWeights: null, suggestedAuc: null };
  }
  const fitted = fitWeights(judged, [...names].sort());
  const fittedAuc = fitted ? aucWith(judged, fitted) : null;
  if (fitted && fittedAuc !== null && (currentAuc === null || fittedAuc > currentAuc)) {
    return { suggestedWeights: fitted, suggestedAuc: fittedAuc };
  }
  return { suggestedWeights: { ...current }, suggestedAuc: currentAuc };
}

/**
 * Logistic regression of "retained" on the factors' scores with non-negative coefficients
 * (projected gradient descent on the mean log loss, a factor an outcome lacks taken at its mean),
 * the coefficients scaled to sum to 1 and rounded to 6 places (the rounding's rest on the largest).
 * Null when every coefficient ends at 0: no factor carries signal in that direction.
 */
export function fitWeights(judged: readonly Judged[], names: readonly string[]): Weights | null {
  // At most FIT_SAMPLE outcomes, evenly spread: the fit's cost stays bounded, its answer barely moves.
  const step = Math.max(1, Math.ceil(judged.length / FIT_SAMPLE));
  const sample = step === 1 ? judged : judged.filter((_, i) => i % step === 0);
  const n = sample.length;
  const k = names.length;
  const means = names.map((name) => {
    let sum = 0;
    let count = 0;
    for (const j of sample) {
      const v = j.factors[name];
      if (v !== undefined) {
        sum += v;
        count++;
      }
    }
    return count === 0 ? 0 : sum / count;
  });
  // Features centred on their means, so the intercept carries the base rate.
  const x = new Float64Array(n * k);
  const y = new Float64Array(n);
  for (const [i, j] of sample.entries()) {
    y[i] = j.churned ? 0 : 1;
    for (const [c, name] of names.entries())
      x[i * k + c] = (j.factors[name] ?? (means[c] as number)) - (means[c] as number);
  }
  const w = new Float64Array(k);
  let b = 0;
  const grad = new Float64Array(k);
  const rate = 4;
  for (let iter = 0; iter < 500; iter++) {
    let moved = 0;
    grad.fill(0);
    let gb = 0;
    for (let i = 0; i < n; i++) {
      let z = b;
      for (let c = 0; c < k; c++) z += (w[c] as number) * (x[i * k + c] as number);
      const err = 1 / (1 + Math.exp(-z)) - (y[i] as number);
      gb += err;
      for (let c = 0; c < k; c++) grad[c] = (grad[c] as number) + err * (x[i * k + c] as number);
    }
    b -= (rate * gb) / n;
    for (let c = 0; c < k; c++) {
      const next = Math.max(0, (w[c] as number) - (rate * (grad[c] as number)) / n);
      moved = Math.max(moved, Math.abs(next - (w[c] as number)));
      w[c] = next;
    }
    if (moved < 1e-7) break;
  }
  const total = w.reduce((a, v) => a + v, 0);
  if (!(total > 0)) return null;
  const weights: Weights = {};
  let largest = names[0] as string;
  let rest = 1;
  for (const [c, name] of names.entries()) {
    const value = round6((w[c] as number) / total);
    if (value === 0) continue;
    weights[name] = value;
    rest -= value;
    if (value > (weights[largest] ?? 0)) largest = name;
  }
  weights[largest] = round6((weights[largest] as number) + rest);
  return weights;
}
