// How a score changes: a new factor set for one customer, or new settings for all of them.
// Pure: the handlers read the current state, call these, and write what they return.
import { type EventRecord, scoreEvents } from './events.ts';
import { effectiveWeights } from './explain.ts';
import type { DerivedInputs, FactorRule } from './rules.ts';
import {
  computeScore,
  type Factors,
  type Gate,
  type Gates,
  gatedBy,
  gatedStatus,
  NO_GATES,
  type Status,
  statusFor,
  type Thresholds,
  type Weights,
} from './scoring.ts';
import { nextTimestamp } from './time.ts';

/** A score pinned by a person (docs/scoring.md, "Overrides"): it shows instead of the computed one until it expires. */
export interface Override {
  score: number;
  reason: string;
  expiresAt: number;
  setAt: number;
  /** Who set it: the audit log's label of the key or person. */
  setBy: string;
}

/**
 * What a status is computed with: the account's weights and thresholds, and its rules' gates
 * (gatesOf: every write that bands a score reads the rules with the settings; absent: none, as
 * for seeds and tests of an account without rules).
 */
export interface ScoringSettings {
  weights: Weights;
  thresholds: Thresholds;
  gates?: Gates;
}

/** The gates of these rules, by factor. */
export function gatesOf(rules: readonly Pick<FactorRule, 'factor' | 'gate'>[]): Gates {
  const gates = new Map<string, Gate>();
  for (const rule of rules) if (rule.gate) gates.set(rule.factor, rule.gate);
  return gates;
}

/** A customer's current health score. */
export interface ScoreRecord {
  customerId: string;
  /** The score everything shows: the override's while one stands, else the computed one. */
  score: number;
  /** `score`'s band. */
  status: Status;
  factors: Factors;
  /**
   * The stored JSON text of `factors`, when read from a store that has it. A recomputation
   * keeps the factors, so it is carried along and written back without re-serializing; a
   * new factor set never has it (scoreFactors builds the record field by field).
   */
  factorsJson?: string;
  /** 1 for the first score of a customer, +1 for every change; history entries carry it. */
  version: number;
  updatedAt: number;
  /** The score the factors give, while an override pins `score` to another; absent or null: `score`. */
  computed?: number | null;
  /** The override standing (null or absent: none). */
  override?: Override | null;
  /** What the derived factors came from (null or absent: none derived). */
  inputs?: DerivedInputs | null;
  /**
   * `inputs` are, to the last value, those the customer's stored score holds (a rule's new scale
   * put on the aggregates it stored): a store may keep its own column instead of being sent them
   * again (PostgreSQL does; docs/postgresql.md, "Rescoring a whole account").
   */
  inputsKept?: boolean;
  /** The effective weights this version was computed with: kept with its history entry. */
  weights?: Weights;
  /**
   * The factors whose gate caps `status` (docs/scoring.md, "Gates"), where the status was just
   * computed; a record read from a store has none (healthScoreJson works it out from the gates).
   */
  gatedBy?: string[];
}

/** The score a record's factors give, override or not. */
export const computedOf = (s: { score: number; computed?: number | null }): number => s.computed ?? s.score;

/** The record's override if it still stands at `now`. */
export const standingOverride = (s: ScoreRecord | null, now: number): Override | null =>
  s?.override && s.override.expiresAt > now ? s.override : null;

/** Whether the record carries an override that has ended by `now` (and is not yet recorded as ended). */
export const overrideEnded = (s: Pick<ScoreRecord, 'override'>, now: number): boolean =>
  !!s.override && s.override.expiresAt <= now;

/**
 * The status a version shows: an override's score in its band (an override pins the status too),
 * else the computed score's band capped by the gates that apply (docs/scoring.md, "Gates").
 */
export function statusOf(
  score: number,
  factors: Factors,
  override: Override | null,
  settings: Pick<ScoringSettings, 'thresholds' | 'gates'>,
): Status {
  return override
    ? statusFor(score, settings.thresholds)
    : gatedStatus(score, factors, settings.thresholds, settings.gates ?? NO_GATES);
}

/**
 * The factors whose gate caps the status `s` stores (docs/scoring.md, "Gates"): none under an
 * override, which pins the status; else those of `gates` its factors are below. Exact for a
 * stored score because every change of a gate re-bands the account in its transaction.
 */
export function gatedByOf(s: Pick<ScoreRecord, 'factors' | 'override'>, gates: Gates): string[] {
  return s.override ? [] : gatedBy(s.factors, gates);
}

/** The score as it shows once its ended override has given way: computed, in its (gated) band. */
export function withoutOverride<
  T extends Pick<ScoreRecord, 'score' | 'status' | 'computed' | 'override' | 'factors'>,
>(s: T, settings: Pick<ScoringSettings, 'thresholds' | 'gates'>): T {
  const computed = computedOf(s);
  const status = statusOf(computed, s.factors, null, settings);
  return { ...s, score: computed, status, computed: null, override: null };
}

/** `inputs` of the factors present only; null when none is left. */
function inputsFor(factors: Factors, inputs: DerivedInputs | null | undefined): DerivedInputs | null {
  if (!inputs) return null;
  const kept = Object.entries(inputs).filter(([name]) => Object.hasOwn(factors, name));
  return kept.length === 0 ? null : Object.fromEntries(kept);
}

/**
 * A version of `current` whose factors give `computed` and which carries `override` (null: none):
 * the visible score and band follow the override while there is one.
 */
function version(
  current: ScoreRecord | null,
  fields: { customerId: string; factors: Factors; computed: number; override: Override | null },
  settings: ScoringSettings,
  inputs: DerivedInputs | null | undefined,
  now: number,
): ScoreRecord {
  const { customerId, factors, computed, override } = fields;
  const score = override ? override.score : computed;
  return {
    customerId,
    score,
    status: statusOf(score, factors, override, settings),
    gatedBy: override ? [] : gatedBy(factors, settings.gates ?? NO_GATES),
    factors,
    version: (current?.version ?? 0) + 1,
    updatedAt: current ? nextTimestamp(now, current.updatedAt) : now,
    computed: override ? computed : null,
    override,
    inputs: inputsFor(factors, inputs),
    weights: effectiveWeights(factors, settings.weights),
  };
}

export interface ScoreUpdate {
  record: ScoreRecord;
  events: EventRecord[];
}

/**
 * A new factor set for one customer (`inputs`: what its derived factors came from). An override
 * that still stands keeps showing; one that has expired ends with this version.
 */
export function scoreFactors(
  customerId: string,
  current: ScoreRecord | null,
  factors: Factors,
  settings: ScoringSettings,
  now: number,
  inputs?: DerivedInputs | null,
): ScoreUpdate {
  const computed = computeScore(factors, settings.weights);
  const override = standingOverride(current, now);
  const record = version(current, { customerId, factors, computed, override }, settings, inputs, now);
  return { record, events: scoreEvents({ ...record, previous: current }, true) };
}

/**
 * After a settings change every stored score is recomputed; only the customers whose score or
 * band moved (the visible one, or the computed one under an override) get a new version, a
 * history entry and events (events only for what shows).
 */
export function rescoreAll(scores: ScoreRecord[], settings: ScoringSettings, now: number): ScoreUpdate[] {
  const updates: ScoreUpdate[] = [];
  for (const current of scores) {
    const computed = computeScore(current.factors, settings.weights);
    const override = standingOverride(current, now);
    const score = override ? override.score : computed;
    const status = statusOf(score, current.factors, override, settings);
    if (
      score === current.score &&
      status === current.status &&
      computed === computedOf(current) &&
      override === (current.override ?? null)
    ) {
      continue;
    }
    const record = {
      ...version(current, { ...current, computed, override }, settings, current.inputs, now),
      // A recomputation keeps the factors: their stored text goes back as it is.
      ...(current.factorsJson === undefined ? {} : { factorsJson: current.factorsJson }),
    };
    updates.push({ record, events: scoreEvents({ ...record, previous: current }, false) });
  }
  return updates;
}

/**
 * A version for a score whose factors stay but whose gated status moves (a gate put, changed or
 * lifted: docs/scoring.md, "Gates"), with its events; null when it stays. A score under an
 * override keeps the status the override gives.
 */
export function regated(current: ScoreRecord, settings: ScoringSettings, now: number): ScoreUpdate | null {
  if (current.override) return null;
  if (statusOf(current.score, current.factors, null, settings) === current.status) return null;
  return rescoreAll([current], settings, now)[0] ?? null;
}

/**
 * A version that changes only the override (set, replaced, removed or expired: `override` null),
 * events for what shows. The factors, their computed score and inputs stay.
 */
export function overrideVersion(
  current: ScoreRecord,
  override: Override | null,
  settings: ScoringSettings,
  now: number,
): ScoreUpdate {
  const record = {
    ...version(
      current,
      { ...current, computed: computedOf(current), override },
      settings,
      current.inputs,
      now,
    ),
    ...(current.factorsJson === undefined ? {} : { factorsJson: current.factorsJson }),
  };
  return { record, events: scoreEvents({ ...record, previous: current }, false) };
}
