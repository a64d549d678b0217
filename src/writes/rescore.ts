// Weights and thresholds changes, below HTTP (the API and the CLI can both call these): the new
// settings and every stored score they move commit in one transaction, so the next read follows
// them. docs/api.md, "Settings"; docs/scoring.md for the computation.
import { ApiError } from '../domain/errors.ts';
import { gatesOf, rescoreAll, type ScoringSettings, statusOf } from '../domain/health.ts';
import {
  computeScore,
  type Status,
  type Thresholds,
  thresholdsValid,
  type Weights,
  weightsSumValid,
} from '../domain/scoring.ts';
import { nextTimestamp } from '../domain/time.ts';
import type { AuditEntry, ScoreReason, ScoreRecord, Settings, Store, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { pages, pipelined, settleAll } from './pipeline.ts';

/** What a weights change would do, without saving it. */
/** What a settings or rule change would do, computed and written nowhere (weights and rule previews). */
export interface Preview {
  /** Customers the change was computed for. */
  customers: number;
  /** Of those, the scores it would change (a first score counts). */
  scoresChanged: number;
  /** Of those with a score, the ones who would move to another status band. */
  bandChanges: number;
  /** Customers per band after the change. */
  bands: Record<Status, number>;
}

/** Counts one customer into a preview: its score as it is (null: none yet) and as it would be. */
export function countChange(
  preview: Preview,
  before: { score: number; status: Status } | null,
  after: { score: number; status: Status },
): void {
  if (!before) {
    preview.scoresChanged++;
    preview.bands[after.status]++;
    return;
  }
  if (after.score !== before.score) preview.scoresChanged++;
  if (after.status !== before.status) {
    preview.bandChanges++;
    preview.bands[before.status]--;
    preview.bands[after.status]++;
  }
}

/** Throws 400 weights_sum_invalid unless the weights sum to 1.0 (within 1e-6). */
export function checkWeightsSum(weights: Weights): void {
  if (!weightsSumValid(weights)) {
    const sum = Object.values(weights).reduce((a, b) => a + b, 0);
    throw new ApiError('weights_sum_invalid', `The weights must sum to 1.0; these sum to ${sum}.`, 'weights');
  }
}

/**
 * Customers a whole-account rescore (a settings or a rule change) holds at once: its memory is
 * bounded by this, not by the account's size. A page is planned and serialized in one turn of the
 * event loop, so this also bounds how long the process's other requests wait (5,000 hold a
 * PostgreSQL reader's p99 at 170-270 ms).
 */
export const RESCORE_PAGE = 1000;

/** One page of the account's stored scores after `after` (null: from the first), and where the next starts. */
async function scorePage(tx: Tx, accountId: string, after: string | null) {
  const scores = await tx.scoresAfter(accountId, after, RESCORE_PAGE);
  if (scores.length === 0) return null;
  const last = scores.length < RESCORE_PAGE ? null : (scores.at(-1) as ScoreRecord).customerId;
  return { page: scores, after: last };
}

/**
 * Every stored score follows the new settings at once, with history and events for those that
 * moved, all in the caller's transaction; read, computed and written a page at a time, pipelined
 * (the caller holds the account exclusively).
 */
export async function rescore(
  tx: Tx,
  accountId: string,
  settings: ScoringSettings,
  reason: ScoreReason,
  now: number,
): Promise<void> {
  await pipelined(
    (after) => scorePage(tx, accountId, after),
    (scores) => rescoreAll(scores, settings, now),
    async (updates) => {
      if (updates.length === 0) return;
      // Both sent at once: the database runs the second as soon as the first is done.
      await settleAll([
        tx.writeScores(
          accountId,
          updates.map((u) => u.record),
          reason,
        ),
        tx.insertEvents(
          accountId,
          updates.flatMap((u) => u.events),
        ),
      ]);
    },
  );
}

/**
 * Replaces the account's weights and rescores; answers the settings as saved. `audit`: the
 * change's audit log entry, recorded in its transaction.
 */
export async function changeWeights(
  store: Store,
  accountId: string,
  weights: Weights,
  now: number,
  audit?: AuditEntry,
): Promise<Settings> {
  checkWeightsSum(weights);
  return store.run(applyWeights, accountId, weights, now, audit);
}

/** Records the change's audit entry (if any) in its transaction: sent now, awaited with the rest. */
export function auditIn(tx: Tx, accountId: string, audit: AuditEntry | undefined): Promise<void> {
  return audit ? tx.appendAudits(accountId, [audit]) : Promise.resolve();
}

/** changeWeights' transaction (a write: on SQLite it runs on the writer thread). */
export const applyWeights = write(
  async function applyWeights(
    tx: Tx,
    accountId: string,
    weights: Weights,
    clock: number,
    audit?: AuditEntry,
  ): Promise<Settings> {
    const current = await tx.getSettings(accountId, { forUpdate: true });
    const now = nextTimestamp(clock, current.weightsUpdatedAt ?? 0);
    await tx.putWeights(accountId, weights, now);
    const [next, rules] = await Promise.all([tx.getSettings(accountId), tx.listFactorRules(accountId)]);
    const scoring = { ...next, gates: gatesOf(rules) };
    await settleAll([auditIn(tx, accountId, audit), rescore(tx, accountId, scoring, 'weights_changed', now)]);
    return next;
  },
  { heavy: true },
);

/**
 * Sets the bounds given (the others stay) and re-bands every score; answers the settings as
 * saved. 400 parameter_invalid unless 0 < at_risk < healthy <= 1, naming at_risk when it was given.
 * `audit`: the change's audit log entry, recorded in its transaction.
 */
export async function changeThresholds(
  store: Store,
  accountId: string,
  change: Partial<Thresholds>,
  now: number,
  audit?: AuditEntry,
): Promise<Settings> {
  return store.run(applyThresholds, accountId, change, now, audit);
}

/** changeThresholds' transaction (a write). */
export const applyThresholds = write(
  async function applyThresholds(
    tx: Tx,
    accountId: string,
    change: Partial<Thresholds>,
    clock: number,
    audit?: AuditEntry,
  ): Promise<Settings> {
    const current = await tx.getSettings(accountId, { forUpdate: true });
    const thresholds: Thresholds = { ...current.thresholds, ...change };
    if (!thresholdsValid(thresholds)) {
      throw new ApiError(
        'parameter_invalid',
        `Thresholds need 0 < at_risk < healthy <= 1; this would make at_risk ${thresholds.at_risk} and healthy ${thresholds.healthy}.`,
        change.at_risk !== undefined ? 'at_risk' : 'healthy',
      );
    }
    const now = nextTimestamp(clock, current.thresholdsUpdatedAt ?? 0);
    await tx.putThresholds(accountId, thresholds, now);
    // The gates stay and cap the new bands (docs/scoring.md, "Gates").
    const [next, rules] = await Promise.all([tx.getSettings(accountId), tx.listFactorRules(accountId)]);
    const scoring = { ...next, gates: gatesOf(rules) };
    await settleAll([
      auditIn(tx, accountId, audit),
      rescore(tx, accountId, scoring, 'thresholds_changed', now),
    ]);
    return next;
  },
  { heavy: true },
);

/** What these weights would change (scores, bands), computed in a transaction that writes nothing. */
export async function previewWeights(store: Store, accountId: string, weights: Weights): Promise<Preview> {
  checkWeightsSum(weights);
  return store.run(computePreview, accountId, weights);
}

/** previewWeights' reads and computation, in a transaction that writes nothing (a write that writes nothing). */
export const computePreview = write(
  async function computePreview(tx: Tx, accountId: string, weights: Weights): Promise<Preview> {
    const [settings, rules] = await Promise.all([tx.getSettings(accountId), tx.listFactorRules(accountId)]);
    const next = { weights, thresholds: settings.thresholds, gates: gatesOf(rules) };
    const preview: Preview = {
      customers: 0,
      scoresChanged: 0,
      bandChanges: 0,
      bands: await tx.countScoresByStatus(accountId),
    };
    for await (const scores of pages((after) => scorePage(tx, accountId, after))) {
      preview.customers += scores.length;
      for (const old of scores) {
        const score = computeScore(old.factors, next.weights);
        countChange(preview, old, { score, status: statusOf(score, old.factors, null, next) });
      }
    }
    return preview;
  },
  { heavy: true },
);
