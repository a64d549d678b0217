// Backfill's writes (docs/api.md, "Backfill"; docs/scoring.md, "Backfilling history"): a run
// started (one per account at a time), a run taken over from a process that stopped, and one
// customer backfilled per transaction under its lock, with the run's progress and lease in the
// same transaction: a crash leaves every customer either backfilled whole or untouched, and the
// run's cursor says which. The runner that drives them is src/backfill-runner.ts.
import { backfillJson } from '../api/backfill.ts';
import { backfillScores, endOfDay } from '../domain/backfill.ts';
import { ApiError } from '../domain/errors.ts';
import { gatesOf } from '../domain/health.ts';
import { newId } from '../domain/ids.ts';
import { dayOf } from '../domain/portfolio.ts';
import type { BackfillRecord, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { type Claim, recordAnswer } from './answers.ts';

/** How long a run's lease holds unless renewed, by default (each customer renews it; VITALS_BACKFILL_LEASE). */
export const LEASE_MS = 60_000;

/**
 * POST /api/health-scores/backfill: the new run, held by `owner`, its answer's text stored for
 * the request's Idempotency-Key. 400 naming unknown customers; 409 while one runs.
 */
export const startBackfill = write(async function startBackfill(
  tx: Tx,
  accountId: string,
  input: { fromDay: number; customerIds: string[] | null },
  owner: string,
  claim: Claim,
  now: number,
  leaseMs: number,
): Promise<{ body: string; id: string }> {
  let total: number;
  let ids: string[] | null = null;
  if (input.customerIds) {
    ids = [...new Set(input.customerIds)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    // customerParents answers the customers that exist, by id.
    const known = await tx.customerParents(accountId, ids);
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length > 0) {
      const named = unknown.slice(0, 10).map((id) => `'${id}'`);
      throw new ApiError(
        'parameter_invalid',
        `No customer with id ${named.join(', ')}${unknown.length > 10 ? ` and ${unknown.length - 10} more` : ''}.`,
        'customer_ids',
      );
    }
    total = ids.length;
  } else {
    total = await tx.countCustomers(accountId);
  }
  const run: BackfillRecord = {
    id: newId.backfill(),
    status: 'running',
    fromDay: input.fromDay,
    customerIds: ids,
    customersTotal: total,
    customersDone: 0,
    versionsWritten: 0,
    cursor: null,
    startedAt: now,
    finishedAt: null,
    error: null,
    leaseOwner: owner,
    leaseExpiresAt: now + leaseMs,
  };
  if (!(await tx.insertBackfill(accountId, run))) {
    const running = (await tx.listBackfills(accountId, 1)).find((b) => b.status === 'running');
    throw new ApiError(
      'backfill_running',
      `A backfill is running for this account${running ? ` (${running.id})` : ''}; wait for it to finish.`,
    );
  }
  const body = backfillJson(run);
  await recordAnswer(tx, accountId, claim, body, 202);
  return { body, id: run.id };
});

/** Takes a running run over whose lease expired at `now`; false when another process holds it. */
export const claimBackfill = write(async function claimBackfill(
  tx: Tx,
  accountId: string,
  id: string,
  owner: string,
  now: number,
  leaseMs: number,
): Promise<boolean> {
  const run = await tx.backfillForUpdate(accountId, id);
  if (run?.status !== 'running' || run.leaseExpiresAt >= now) return false;
  await tx.updateBackfill(accountId, { ...run, leaseOwner: owner, leaseExpiresAt: now + leaseMs });
  return true;
});

/** The run, locked, while it runs and `owner` holds it; null when it was taken over or has ended. */
async function heldRun(tx: Tx, accountId: string, id: string, owner: string): Promise<BackfillRecord | null> {
  const run = await tx.backfillForUpdate(accountId, id);
  return run?.status === 'running' && run.leaseOwner === owner ? run : null;
}

/** A run's step: `lost` when `owner` no longer holds it (taken over, or finished). */
export type BackfillStep = { lost: true } | { lost: false; run: BackfillRecord };

/**
 * Backfills the run's next customer (the one after its cursor) and records it, renewing the
 * lease; the run is `done` when none is left. The customer is locked as a score write locks it,
 * so no live version is written meanwhile; one deleted since the run began is passed over.
 */
export const backfillNext = write(async function backfillNext(
  tx: Tx,
  accountId: string,
  id: string,
  owner: string,
  now: number,
  leaseMs: number,
): Promise<BackfillStep> {
  const run = await heldRun(tx, accountId, id, owner);
  if (!run) return { lost: true };
  const next = run.customerIds
    ? run.customerIds.find((c) => run.cursor === null || c > run.cursor)
    : (await tx.customerIdsAfter(accountId, run.cursor, 1))[0];
  if (next === undefined) {
    const done: BackfillRecord = { ...run, status: 'done', finishedAt: now };
    await tx.updateBackfill(accountId, done);
    return { lost: false, run: done };
  }
  const written = await backfillCustomer(tx, accountId, next, run.fromDay, now);
  const progressed: BackfillRecord = {
    ...run,
    cursor: next,
    customersDone: run.customersDone + 1,
    versionsWritten: run.versionsWritten + written,
    leaseExpiresAt: now + leaseMs,
  };
  await tx.updateBackfill(accountId, progressed);
  return { lost: false, run: progressed };
});

/** Ends a run that failed (`owner` holding it), with the reason it gives. */
export const failBackfill = write(async function failBackfill(
  tx: Tx,
  accountId: string,
  id: string,
  owner: string,
  error: string,
  now: number,
): Promise<void> {
  const run = await heldRun(tx, accountId, id, owner);
  if (!run) return;
  await tx.updateBackfill(accountId, { ...run, status: 'failed', error, finishedAt: now });
});

/**
 * One customer's past (docs/scoring.md, "Backfilling history"): its score as of the end of each
 * day from `fromDay` to the day before its first version (yesterday, for one with none), from the
 * rules and weights in force now, numbered below its first version. Answers the versions written.
 */
async function backfillCustomer(
  tx: Tx,
  accountId: string,
  customerId: string,
  fromDay: number,
  now: number,
): Promise<number> {
  const [locked, first, rules, settings] = await Promise.all([
    tx.scoresForUpdate(accountId, [customerId]),
    tx.firstVersion(accountId, customerId),
    tx.listFactorRules(accountId),
    tx.getSettings(accountId),
  ]);
  if (!locked.has(customerId) || rules.length === 0) return 0;
  const lastDay = (first ? dayOf(first.at) : dayOf(now)) - 1;
  if (lastDay < fromDay) return 0;
  const points = await tx.customerPoints(
    accountId,
    customerId,
    rules.map((r) => r.metric),
    endOfDay(lastDay),
  );
  const records = backfillScores({
    customerId,
    rules,
    settings: { weights: settings.weights, thresholds: settings.thresholds, gates: gatesOf(rules) },
    points,
    fromDay,
    lastDay,
  });
  if (records.length === 0) return 0;
  // Counting down from the first version (existing versions keep their numbers); 1, 2, … for a
  // customer with no history, whose live versions then follow its last.
  const base = first ? first.version - records.length - 1 : 0;
  for (const [i, r] of records.entries()) r.version = base + i + 1;
  await tx.writeBackfill(accountId, customerId, records, first);
  return records.length;
}
