// Outcomes below HTTP (docs/api.md, "Outcomes and calibration"): what happened to a customer at a renewal, recorded
// one at a time or in a batch (the CLI's import), and deleted. An outcome changes no score: the
// calibration report reads them beside the history (docs/scoring.md, "Does the score predict churn?").
// Who recorded one is kept for the customer's timeline (docs/api.md, "Timeline").

import { outcomeJson } from '../api/outcomes.ts';
import type { Outcome } from '../domain/calibration.ts';
import { type ApiError, notFound } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { Actor } from '../domain/tasks.ts';
import type { OutcomeRecord, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { type Claim, recordAnswer } from './answers.ts';
import { answerItems, type Entry } from './batches.ts';

/** An outcome as the API gives it, checked. */
export interface OutcomeInput {
  customerId: string;
  outcome: Outcome;
  at: number;
  note: string | null;
}

type OutcomeResult = { ok: true; record: OutcomeRecord } | { ok: false; error: ApiError };

async function applyOutcomes(
  tx: Tx,
  accountId: string,
  items: readonly OutcomeInput[],
  actor: Actor,
  now: number,
): Promise<OutcomeResult[]> {
  const known = await tx.customersForUpdate(accountId, [...new Set(items.map((i) => i.customerId))]);
  const stored: OutcomeRecord[] = [];
  const results = items.map((item): OutcomeResult => {
    if (!known.has(item.customerId)) return { ok: false, error: notFound.customer(item.customerId) };
    const record = { id: newId.outcome(), ...item, createdAt: now, createdBy: actor };
    stored.push(record);
    return { ok: true, record };
  });
  if (stored.length > 0) await tx.insertOutcomes(accountId, stored);
  return results;
}

/** POST /api/customers/{id}/outcomes: the outcome as stored, its answer's text; an unknown customer throws 404. */
export const recordOutcome = write(async function recordOutcome(
  tx: Tx,
  accountId: string,
  item: OutcomeInput,
  actor: Actor,
  claim: Claim,
  now: number,
): Promise<string> {
  const [result] = await applyOutcomes(tx, accountId, [item], actor, now);
  if (!result?.ok) throw result?.error ?? new Error('the outcome write gave no result');
  const body = outcomeJson(result.record);
  await recordAnswer(tx, accountId, claim, body, 201);
  return body;
});

/** POST /api/outcomes/batch: every checked item in order, one result per item, as the answer's text. */
export const outcomeBatch = write(async function outcomeBatch(
  tx: Tx,
  accountId: string,
  entries: readonly Entry<OutcomeInput>[],
  actor: Actor,
  claim: Claim,
  now: number,
): Promise<string> {
  return answerItems(
    tx,
    accountId,
    entries,
    claim,
    (items) => applyOutcomes(tx, accountId, items, actor, now),
    (item, record) =>
      `{"customer_id":${JSON.stringify(item.customerId)},"status":201,"outcome":${outcomeJson(record)}}`,
  );
});

/** DELETE /api/customers/{id}/outcomes/{outcome_id}: 404 customer_not_found or outcome_not_found. */
export const removeOutcome = write(async function removeOutcome(
  tx: Tx,
  accountId: string,
  customerId: string,
  id: string,
): Promise<void> {
  if (await tx.deleteOutcome(accountId, customerId, id)) return;
  if ((await tx.customersForUpdate(accountId, [customerId])).size === 0) throw notFound.customer(customerId);
  throw notFound.outcome(id);
});
