// An account hierarchy's rollup (docs/api.md, "Customers"): over a customer and all its
// descendants, their ARR summed, their scores' ARR-weighted mean banded under the account's
// thresholds, and their stored statuses counted. Pure: no I/O.
import { round6, STATUSES, type Status, statusFor, type Thresholds } from './scoring.ts';

/** A customer of the subtree as the rollup needs it (null ARR counts 0; null score: unscored). */
export interface RollupMember {
  arrCents: number | null;
  score: number | null;
  status: Status | null;
}

export interface Rollup {
  /** How many customers below the top one, at every level. */
  descendants: number;
  /** Integer cents: summed as such, so the answer divides once. */
  arrCents: number;
  healthScore: number | null;
  status: Status | null;
  counts: Record<Status, number>;
}

/**
 * The rollup of these members, the top customer among them. The members come in a fixed order
 * (by id) so the same subtree always gives the same bits.
 */
export function rollup(members: readonly RollupMember[], thresholds: Thresholds): Rollup {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>;
  // BigInt: a thousand customers at the 1e12 maximum pass 2^53 cents.
  let cents = 0n;
  let scored = 0;
  let plain = 0;
  let weight = 0;
  let weighted = 0;
  for (const m of members) {
    cents += BigInt(m.arrCents ?? 0);
    if (m.score === null) continue;
    scored++;
    plain += m.score;
    if (m.status !== null) counts[m.status]++;
    const w = m.arrCents ?? 0;
    if (w > 0) {
      weight += w;
      weighted += w * m.score;
    }
  }
  let healthScore: number | null = null;
  if (scored > 0) {
    const mean = weight > 0 ? weighted / weight : plain / scored;
    // Floating error must not push the mean outside [0, 1], as computeScore guards a score.
    healthScore = round6(Math.min(1, Math.max(0, mean)));
  }
  return {
    descendants: members.length - 1,
    arrCents: Number(cents),
    healthScore,
    status: healthScore === null ? null : statusFor(healthScore, thresholds),
    counts,
  };
}
