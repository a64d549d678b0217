// Overrides below HTTP (docs/scoring.md, "Overrides"): a person pins the score everything shows,
// with a reason and an end, while the computed score keeps moving underneath. Setting, replacing
// and removing one are versions of the score, with their events, in one transaction; its end is
// recorded by the rescore job (the customer is due then) or by the next write after it. Who set or
// removed one is kept by the version that did (override_actors), for the customer's timeline.
import { ApiError, notFound } from '../domain/errors.ts';
import {
  gatesOf,
  type Override,
  overrideEnded,
  overrideVersion,
  type ScoreRecord,
  withoutOverride,
} from '../domain/health.ts';
import { DAY_MS } from '../domain/rules.ts';
import type { Actor } from '../domain/tasks.ts';
import type { ScoreReason, Store, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { actOn } from './playbooks.ts';

/** How long an override stands when no end is given. */
export const DEFAULT_OVERRIDE_DAYS = 30;
/** The furthest ahead an override may end. */
export const MAX_OVERRIDE_DAYS = 365;

export interface OverrideInput {
  score: number;
  reason: string;
  /** When it ends; null: DEFAULT_OVERRIDE_DAYS from now. */
  expiresAt: number | null;
  /** Who sets it: the audit log's label of the key or person. */
  setBy: string;
  /** Who sets it, as the audit log names them (docs/people.md, "Audit log"). */
  actor: Actor;
}

/** 400 parameter_invalid (or parameter_missing) for an override that may not be set at `now`; null if it may. */
export function overrideRefusal(
  input: Pick<OverrideInput, 'reason' | 'expiresAt'>,
  now: number,
): ApiError | null {
  if (input.reason.trim() === '') {
    return new ApiError('parameter_missing', "'reason' must say why the score is overridden.", 'reason');
  }
  if (input.expiresAt !== null && input.expiresAt <= now) {
    return new ApiError('parameter_invalid', "'expires_at' must be in the future.", 'expires_at');
  }
  if (input.expiresAt !== null && input.expiresAt > now + MAX_OVERRIDE_DAYS * DAY_MS) {
    return new ApiError(
      'parameter_invalid',
      `'expires_at' may be at most ${MAX_OVERRIDE_DAYS} days ahead.`,
      'expires_at',
    );
  }
  return null;
}

/** The customer's score, locked; 404 customer_not_found or health_score_not_found. */
async function scoreToChange(tx: Tx, accountId: string, customerId: string): Promise<ScoreRecord> {
  const found = await tx.scoresForUpdate(accountId, [customerId]);
  if (!found.has(customerId)) throw notFound.customer(customerId);
  const score = found.get(customerId);
  if (!score) throw notFound.healthScore(customerId);
  return score;
}

/** Writes the version that changes only the override, with its events; answers it. */
async function writeOverride(
  tx: Tx,
  accountId: string,
  current: ScoreRecord,
  override: Override | null,
  reason: ScoreReason,
  actor: Actor,
  now: number,
): Promise<ScoreRecord> {
  // The rules' gates band the computed score once the override is gone (docs/scoring.md, "Gates").
  const [settings, rules] = await Promise.all([tx.getSettings(accountId), tx.listFactorRules(accountId)]);
  const { record, events } = overrideVersion(current, override, { ...settings, gates: gatesOf(rules) }, now);
  await Promise.all([
    tx.writeScores(accountId, [record], reason),
    tx.recordVersionActor(accountId, current.customerId, record.version, actor),
  ]);
  if (events.length > 0) await tx.insertEvents(accountId, await actOn(tx, accountId, events, now));
  return record;
}

/** Sets (or replaces) the customer's override; answers the score as it now shows. */
export const putOverride = write(async function putOverride(
  tx: Tx,
  accountId: string,
  customerId: string,
  input: OverrideInput,
  now: number,
): Promise<ScoreRecord> {
  const refused = overrideRefusal(input, now);
  if (refused) throw refused;
  const current = await scoreToChange(tx, accountId, customerId);
  const override: Override = {
    score: input.score,
    reason: input.reason,
    expiresAt: input.expiresAt ?? now + DEFAULT_OVERRIDE_DAYS * DAY_MS,
    setAt: now,
    setBy: input.setBy,
  };
  const record = await writeOverride(tx, accountId, current, override, 'override_set', input.actor, now);
  // The rescore job records the end when it comes.
  await tx.setRederiveDue(accountId, [{ customerId, at: override.expiresAt }], { earlierOnly: true });
  return record;
});

/** Removes the customer's override; 404 override_not_found when there is none. */
export const deleteOverride = write(async function deleteOverride(
  tx: Tx,
  accountId: string,
  customerId: string,
  actor: Actor,
  now: number,
): Promise<ScoreRecord> {
  const current = await scoreToChange(tx, accountId, customerId);
  if (!current.override) throw notFound.override(customerId);
  return writeOverride(tx, accountId, current, null, 'override_removed', actor, now);
});

/** The current score as it shows at `now`: an override that has ended gives way at once, before the job records it. */
export async function scoreAsOf(
  store: Pick<Store, 'getSettings' | 'listFactorRules'>,
  accountId: string,
  score: ScoreRecord,
  now: number,
): Promise<ScoreRecord> {
  if (!overrideEnded(score, now)) return score;
  const [settings, rules] = await Promise.all([
    store.getSettings(accountId),
    store.listFactorRules(accountId),
  ]);
  return withoutOverride(score, { thresholds: settings.thresholds, gates: gatesOf(rules) });
}
