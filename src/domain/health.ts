// How a score changes: a new factor set for one customer, or new settings for all of them.
// Pure: the handlers read the current state, call these, and write what they return.
import { type EventRecord, scoreEvents } from './events.ts';
import {
  computeScore,
  type Factors,
  type Status,
  statusFor,
  type Thresholds,
  type Weights,
} from './scoring.ts';
import { nextTimestamp } from './time.ts';

/** A customer's current health score. */
export interface ScoreRecord {
  customerId: string;
  score: number;
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
}

export interface ScoreUpdate {
  record: ScoreRecord;
  events: EventRecord[];
}

export function scoreFactors(
  customerId: string,
  current: ScoreRecord | null,
  factors: Factors,
  settings: { weights: Weights; thresholds: Thresholds },
  now: number,
): ScoreUpdate {
  const score = computeScore(factors, settings.weights);
  const status = statusFor(score, settings.thresholds);
  const updatedAt = current ? nextTimestamp(now, current.updatedAt) : now;
  const record = { customerId, score, status, factors, version: (current?.version ?? 0) + 1, updatedAt };
  return { record, events: scoreEvents({ ...record, previous: current }, true) };
}

/**
 * After a settings change every stored score is recomputed; only the customers whose score or
 * band moved get a new version, a history entry and events.
 */
export function rescoreAll(
  scores: ScoreRecord[],
  settings: { weights: Weights; thresholds: Thresholds },
  now: number,
): ScoreUpdate[] {
  const updates: ScoreUpdate[] = [];
  for (const current of scores) {
    const score = computeScore(current.factors, settings.weights);
    const status = statusFor(score, settings.thresholds);
    if (score === current.score && status === current.status) continue;
    const record = {
      ...current,
      score,
      status,
      version: current.version + 1,
      updatedAt: nextTimestamp(now, current.updatedAt),
    };
    updates.push({ record, events: scoreEvents({ ...record, previous: current }, false) });
  }
  return updates;
}
