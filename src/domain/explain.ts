// Why a score is what it is (docs/scoring.md, "Why this score"): each factor's effective weight
// and contribution in one version, and what moved between two versions. Pure: no I/O.
import type { DerivedInput, DerivedInputs } from './rules.ts';
import { type Factors, round6, type Weights } from './scoring.ts';

/**
 * The weight each factor carried in computeScore (docs/scoring.md): w/Σw over the factors with a
 * positive weight, 0 for the others; 1/n for every factor when no weight covers any (plain mean).
 */
export function effectiveWeights(factors: Factors, weights: Weights): Weights {
  const byNames = shared.get(weights);
  const names = Object.keys(factors);
  const key = names.join('\u0000');
  const known = byNames?.get(key);
  if (known) return known;
  const effective = Object.freeze(computeEffective(factors, weights));
  if (byNames) {
    if (byNames.size < 64) byNames.set(key, effective);
  } else {
    shared.set(weights, new Map([[key, effective]]));
  }
  return effective;
}

/**
 * effectiveWeights already worked out, per weights object and factor names in order: every customer
 * of a rescore with the same factors gets the same (frozen) object, so a store writes its JSON once
 * (store/scores.ts, jsonOf). A few shapes per account at most; 64 bounds an account with odd ones.
 */
const shared = new WeakMap<Weights, Map<string, Weights>>();

function computeEffective(factors: Factors, weights: Weights): Weights {
  const names = Object.keys(factors).sort();
  let sum = 0;
  for (const name of names) {
    const w = weights[name];
    if (w !== undefined && w > 0) sum += w;
  }
  const effective: Weights = {};
  for (const name of names) {
    const w = weights[name];
    effective[name] = sum > 0 ? (w !== undefined && w > 0 ? w / sum : 0) : 1 / names.length;
  }
  return effective;
}

export interface ExplainedFactor {
  factor: string;
  score: number;
  weight: number;
  /** weight × score, 6 places. */
  contribution: number;
  /** For a derived factor, what it came from; null: posted. */
  input: DerivedInput | null;
}

/** Each factor of a version with its weight and contribution, by factor name. */
export function explainFactors(
  factors: Factors,
  weights: Weights,
  inputs: DerivedInputs | null,
): ExplainedFactor[] {
  return Object.keys(factors)
    .sort()
    .map((factor) => {
      const score = factors[factor] as number;
      const weight = weights[factor] ?? 0;
      return {
        factor,
        score,
        weight: round6(weight),
        contribution: round6(weight * score),
        input: inputs?.[factor] ?? null,
      };
    });
}

export interface ContributionChange {
  factor: string;
  previous: number;
  contribution: number;
  delta: number;
}

/**
 * Every factor whose contribution moved from `before` to `after` (a factor added or removed moves
 * from or to 0), biggest |delta| first, then by name.
 */
export function contributionChanges(
  before: readonly ExplainedFactor[],
  after: readonly ExplainedFactor[],
): ContributionChange[] {
  const previous = new Map(before.map((f) => [f.factor, f.contribution]));
  const now = new Map(after.map((f) => [f.factor, f.contribution]));
  const changes: ContributionChange[] = [];
  for (const factor of new Set([...previous.keys(), ...now.keys()])) {
    const from = previous.get(factor) ?? 0;
    const to = now.get(factor) ?? 0;
    const delta = round6(to - from);
    if (delta !== 0) changes.push({ factor, previous: from, contribution: to, delta });
  }
  return changes.sort(
    (a, b) =>
      Math.abs(b.delta) - Math.abs(a.delta) || (a.factor < b.factor ? -1 : a.factor > b.factor ? 1 : 0),
  );
}
