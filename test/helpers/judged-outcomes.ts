// An account with outcomes to calibrate, written straight through the store (thousands of HTTP
// calls would cost the suite more than what it tests): customers, one scored version each with up
// to `factors` factors (some missing, one only on the later customers), and one outcome each,
// churned more often the lower the score. Every 50th customer has no version: its outcome is
// unscored. Used by test/http/calibration-threads.test.ts and bench/isolation.ts.

import { calibrationJson } from '../../src/api/outcomes.ts';
import { calibrate, type Judged } from '../../src/domain/calibration.ts';
import { scoreFactors } from '../../src/domain/health.ts';
import { newId } from '../../src/domain/ids.ts';
import type { Factors } from '../../src/domain/scoring.ts';
import type { OutcomeRecord, ScoreRecord, Segment, Store } from '../../src/store/store.ts';
import { transaction } from './transaction.ts';

const DAY = 86_400_000;
const CHUNK = 1000;

/** A repeatable pseudo-random number in [0, 1) for (i, k). */
const noise = (i: number, k: number) => {
  const x = Math.sin(i * 12.9898 + k * 78.233) * 43758.5453;
  return x - Math.floor(x);
};

export async function seedJudgedOutcomes(
  store: Store,
  accountId: string,
  opts: { customers: number; factors: number; prefix?: string; now?: number },
): Promise<void> {
  const prefix = opts.prefix ?? 'cal';
  const now = opts.now ?? Date.now();
  const scoredAt = now - 200 * DAY;
  // Gates cap a status, never the computed score calibration judges (docs/scoring.md): none here.
  const settings = { ...(await store.getSettings(accountId)), gates: new Map() };
  for (let i = 0; i < opts.customers; i += CHUNK) {
    const end = Math.min(opts.customers, i + CHUNK);
    const scores: ScoreRecord[] = [];
    const outcomes: OutcomeRecord[] = [];
    await transaction(store, async (tx) => {
      for (let j = i; j < end; j++) {
        const id = `${prefix}_${j}`;
        await tx.insertCustomer(accountId, {
          id,
          name: `Customer ${j}`,
          email: `${prefix}${j}@example.com`,
          metadata: { plan: j % 3 === 0 ? 'pro' : 'basic', region: j % 2 === 0 ? 'emea' : 'amer' },
          createdAt: scoredAt,
          updatedAt: scoredAt,
        });
        const base = (j % 97) / 97;
        if (j % 50 !== 0) {
          const factors: Factors = {};
          for (let f = 0; f < opts.factors; f++) {
            // One factor only from the 1,500th customer on: a column the first pages lack.
            if (f === opts.factors - 1 && j < 1500) continue;
            if (noise(j, f) < 0.1) continue;
            factors[`f${f}`] =
              Math.round(Math.min(1, Math.max(0, base + (noise(j, f + 100) - 0.5) * 0.6)) * 1e4) / 1e4;
          }
          if (Object.keys(factors).length === 0) factors.f0 = base;
          scores.push(scoreFactors(id, null, factors, settings, scoredAt + j).record);
        }
        outcomes.push({
          id: newId.outcome(),
          customerId: id,
          outcome: noise(j, 7777) < 0.6 - 0.5 * base ? 'churned' : 'retained',
          at: now - Math.floor(noise(j, 8888) * 30 * DAY),
          note: null,
          createdAt: now,
        });
      }
      await tx.writeScores(accountId, scores, 'factors_updated');
      await tx.insertOutcomes(accountId, outcomes);
    });
  }
}

/**
 * The report as the route answered it before the calibration threads: every judged outcome read
 * on this thread and calibrate() called here (what the threads' answer must equal, bit for bit).
 */
export async function calibrationHere(
  store: Store,
  accountId: string,
  horizonDays: number,
  segment?: Segment,
): Promise<unknown> {
  const settings = await store.getSettings(accountId);
  const judged: Judged[] = [];
  let unscored = 0;
  for (let after: string | null = null; ; ) {
    const page = await store.judgedOutcomes(accountId, {
      horizonMs: horizonDays * DAY,
      segment,
      after,
      limit: 5000,
    });
    for (const o of page) {
      if (o.score === null) unscored++;
      else judged.push({ churned: o.outcome === 'churned', score: o.score, factors: o.factors ?? {} });
    }
    if (page.length < 5000) break;
    after = (page.at(-1) as { id: string }).id;
  }
  const report = calibrate(judged, settings);
  // Through JSON, as the answer is: -0 and 0 are one number there.
  return JSON.parse(JSON.stringify(calibrationJson(report, horizonDays, unscored)));
}
