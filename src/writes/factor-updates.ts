// New factor sets for many customers in one transaction: one read that locks every customer of
// the batch, one write per round. A refused item (unknown customer, no factor left, too many)
// writes nothing and does not stop the others. See docs/api.md, "Health scores".
import { healthScoreJson } from '../api/health-scores.ts';
import { type DropRecord, dropAlert, dropRecord, windowStart } from '../domain/alerts.ts';
import { ApiError, idempotencyInProgress, notFound } from '../domain/errors.ts';
import type { EventRecord } from '../domain/events.ts';
import { gatesOf, type ScoreRecord, scoreFactors } from '../domain/health.ts';
import { type Factors, MAX_FACTORS, mergeFactors } from '../domain/scoring.ts';
import type { AuditEntry, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { settleAll } from './pipeline.ts';
import { actOn } from './playbooks.ts';
import { postedOf } from './rules.ts';

/**
 * One update, as plain data (it may cross to the SQLite writer thread): `factors` replace the
 * current set, or with `merge` are merged into it (null removes a factor).
 */
export interface FactorUpdate {
  customerId: string;
  factors: Record<string, number | null>;
  merge: boolean;
  /**
   * The request's Idempotency-Key claim: its answer (the score as the route sends it) is
   * stored in the transaction of the write. A claim taken over meanwhile undoes the whole
   * batch with idempotency_request_in_progress (docs/api.md, "Idempotency keys").
   */
  answer?: { key: string; claimedAt: number } | undefined;
  /** The audit entry of the request, recorded in the write's transaction if the update is applied. */
  audit?: AuditEntry | undefined;
}

/** The factor set an update leaves, from the current one ({} before the first score). */
const nextFactors = (u: FactorUpdate, current: Factors): Factors =>
  u.merge ? mergeFactors(current, u.factors) : (u.factors as Factors);

export type FactorResult = { ok: true; record: ScoreRecord } | { ok: false; error: ApiError };

/** 400 factor_derived: a rule derives this factor from a metric (docs/scoring.md, "Factors from metrics"). */
const derivedRefusal = (name: string) =>
  new ApiError(
    'factor_derived',
    `'${name}' is derived from a metric by a factor rule; post the metric instead, or delete the rule.`,
    `factors.${name}`,
  );

/** `posted` with the derived factors of `current` (a posted set never changes those). */
function withDerived(posted: Factors, current: Factors, derived: ReadonlySet<string>): Factors {
  const next: Factors = { ...posted };
  for (const [name, value] of Object.entries(current)) if (derived.has(name)) next[name] = value;
  return next;
}

function refusal(factors: Factors): ApiError | null {
  const n = Object.keys(factors).length;
  if (n === 0) {
    return new ApiError(
      'parameter_invalid',
      'At least one factor must remain in the health score.',
      'factors',
    );
  }
  if (n > MAX_FACTORS) {
    return new ApiError(
      'parameter_invalid',
      `A health score may have at most ${MAX_FACTORS} factors.`,
      'factors',
    );
  }
  return null;
}

/**
 * Applies `items` in order, as if each ran alone one after another: a customer named twice gets
 * two versions. Results are in input order. Items of one round touch distinct customers (the
 * store writes at most one score per customer per call); a later item for the same customer
 * goes to the next round and builds on the version the round before made.
 *
 * `together` (one request's items, which all stand at `now`): a customer's items make one
 * version instead, at its first item's place, each item folded into the factors the ones
 * before left; a refused item is left out of the fold alone, and every other of the customer's
 * items answers the one score (docs/api.md, "One customer, one instant, one version").
 */
export const applyFactorUpdates = write(
  async function applyFactorUpdates(
    tx: Tx,
    accountId: string,
    items: readonly FactorUpdate[],
    now: number,
    together = false,
  ): Promise<FactorResult[]> {
    const results = new Array<FactorResult>(items.length);
    const ids = [...new Set(items.map((i) => i.customerId))];
    // Locks every customer of the batch at once, in one order, before anything is written; the
    // settings and rules are read in the same round trip (PostgreSQL runs them in the order sent).
    // The playbooks and what they read of these customers come in the same round trip (PostgreSQL),
    // so a trigger costs the write none of its own (docs/playbooks.md).
    const [current, settings, rules, playbooks, targets] = await Promise.all([
      tx.scoresForUpdate(accountId, ids),
      tx.getSettings(accountId),
      tx.listFactorRules(accountId),
      tx.enabledPlaybooks(accountId),
      tx.playbookTargets(accountId, ids),
    ]);
    // A factor a rule derives cannot be posted, and a posted set leaves the derived ones as they are.
    const derived = new Set(rules.map((r) => r.factor));
    // The rules' gates cap the status (docs/scoring.md, "Gates").
    const scoring = { ...settings, gates: gatesOf(rules) };
    const drops = settings.drop ? await tx.dropWatch(accountId, ids, windowStart(settings.drop, now)) : null;
    const alerted: DropRecord[] = [];
    // Events go out in input order, as if the items had run one after another, whatever their rounds.
    const events = new Array<EventRecord[]>(items.length);
    let pending = items.map((_, i) => i);
    while (pending.length > 0) {
      /** Each customer of the round: the factors its items leave, and those items (the first first). */
      const round = new Map<string, { factors: Factors; items: number[] }>();
      const later: number[] = [];
      for (const i of pending) {
        const item = items[i] as FactorUpdate;
        const held = round.get(item.customerId);
        if (held && !together) {
          later.push(i);
          continue;
        }
        if (!current.has(item.customerId)) {
          results[i] = { ok: false, error: notFound.customer(item.customerId) };
          continue;
        }
        const posted = Object.keys(item.factors).find((name) => derived.has(name));
        if (posted !== undefined) {
          results[i] = { ok: false, error: derivedRefusal(posted) };
          continue;
        }
        const base = held?.factors ?? current.get(item.customerId)?.factors ?? {};
        const factors =
          derived.size === 0
            ? nextFactors(item, base)
            : withDerived(nextFactors(item, postedOf(base, derived)), base, derived);
        const refused = refusal(factors);
        if (refused) {
          results[i] = { ok: false, error: refused };
          continue;
        }
        if (held) {
          held.factors = factors;
          held.items.push(i);
        } else round.set(item.customerId, { factors, items: [i] });
      }
      const records: ScoreRecord[] = [];
      for (const [customerId, { factors, items: applied }] of round) {
        const score = current.get(customerId) ?? null;
        const update = scoreFactors(customerId, score, factors, scoring, now, score?.inputs);
        current.set(customerId, update.record);
        records.push(update.record);
        events[applied[0] as number] = update.events;
        const watch = drops?.get(customerId);
        const dropped = watch && settings.drop ? dropAlert(watch, update.record, settings.drop) : null;
        if (dropped) {
          update.events.push(dropped);
          alerted.push(dropRecord(dropped, score?.score ?? null));
        }
        for (const i of applied) results[i] = { ok: true, record: update.record };
      }
      if (records.length > 0) await tx.writeScores(accountId, records, 'factors_updated');
      pending = later;
    }
    // The rest sent at once (on PostgreSQL one round trip, not one each).
    const sent: Promise<unknown>[] = [];
    const all = events.flat();
    // The playbooks' triggers open their tasks with these events (docs/playbooks.md).
    if (all.length > 0)
      sent.push(
        actOn(tx, accountId, all, now, { playbooks, targets }).then((acted) =>
          tx.insertEvents(accountId, acted),
        ),
      );
    if (alerted.length > 0) sent.push(tx.recordDropAlerts(accountId, alerted));
    const audits = items.flatMap((item, i) => (item.audit && results[i]?.ok ? [item.audit] : []));
    if (audits.length > 0) sent.push(tx.appendAudits(accountId, audits));
    for (const [i, item] of items.entries()) {
      const result = results[i] as FactorResult;
      if (!result.ok || !item.answer) continue;
      const { key, claimedAt } = item.answer;
      const answer = { status: 200, body: healthScoreJson(result.record) };
      sent.push(
        tx.recordIdempotentAnswer(accountId, key, claimedAt, answer).then((recorded) => {
          if (!recorded) throw idempotencyInProgress();
        }),
      );
    }
    await settleAll(sent);
    return results;
  },
  { batched: true },
);
