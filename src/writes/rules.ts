// Factor rules below HTTP (docs/scoring.md, "Factors from metrics"): a rule put or deleted, and
// every score it moves, in one transaction, as a weights change does; and the factor set rules
// give a customer, which the metric writes and the rescore job use too.
import { dropAlert, windowStart } from '../domain/alerts.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import type { EventRecord } from '../domain/events.ts';
import { scoreFactors } from '../domain/health.ts';
import {
  changeOf,
  emptySummary,
  type FactorRule,
  factorOf,
  factorsOf,
  type PointSummary,
} from '../domain/rules.ts';
import type { Factors } from '../domain/scoring.ts';
import { nextTimestamp } from '../domain/time.ts';
import type { ScoreReason, ScoreRecord, Settings, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { countChange, type Preview } from './rescore.ts';

/** The most rules an account may have. */
export const MAX_RULES = 50;
/** How far ahead of the server's clock a metric point may be dated. */
export const FUTURE_MS = 5 * 60_000;
/** Customers a rescore by rules holds at once. */
const PAGE = 1000;

/** The factors of `factors` that no rule derives: the ones that were posted. */
export function postedOf(factors: Factors, derived: ReadonlySet<string>): Factors {
  const posted: Factors = {};
  for (const [name, value] of Object.entries(factors)) if (!derived.has(name)) posted[name] = value;
  return posted;
}

const sameFactors = (a: Factors, b: Factors): boolean => {
  const names = Object.keys(a);
  return names.length === Object.keys(b).length && names.every((n) => b[n] === a[n]);
};

/**
 * The factor set the rules give each of these customers now: its posted factors (those of its
 * current score that `derived` does not name) with every factor a rule derives from its points.
 * Locks the customers (unless the caller has: `known`, their current scores as it read them
 * under its locks); one that does not exist is left out.
 */
export async function rederive(
  tx: Tx,
  accountId: string,
  ids: readonly string[],
  rules: readonly FactorRule[],
  derived: ReadonlySet<string>,
  now: number,
  known?: ReadonlyMap<string, ScoreRecord | null>,
): Promise<Map<string, { current: ScoreRecord | null; factors: Factors }>> {
  const current = known
    ? new Map(ids.filter((id) => known.has(id)).map((id) => [id, known.get(id) ?? null]))
    : await tx.scoresForUpdate(accountId, ids);
  const { factors, due } = await deriveAll(tx, accountId, current, rules, derived, now);
  // When time alone may next move these customers' derived factors: the rescore job's list.
  await tx.setRederiveDue(accountId, due);
  return factors;
}

/** rederive's reading and deriving, which writes nothing (a preview stops here). */
async function deriveAll(
  tx: Tx,
  accountId: string,
  current: ReadonlyMap<string, ScoreRecord | null>,
  rules: readonly FactorRule[],
  derived: ReadonlySet<string>,
  now: number,
) {
  const summaries = await tx.metricSummaries(accountId, [...current.keys()], rules, now, now + FUTURE_MS);
  const factors = new Map<string, { current: ScoreRecord | null; factors: Factors }>();
  const due: { customerId: string; at: number | null }[] = [];
  for (const [id, score] of current) {
    const ofRules = summaries.get(id) ?? [];
    factors.set(id, {
      current: score,
      factors: { ...postedOf(score?.factors ?? {}, derived), ...factorsOf(rules, ofRules, now) },
    });
    due.push({ customerId: id, at: nextChange(rules, ofRules, now) });
  }
  return { factors, due };
}

/** The first instant after `now` at which any rule's factor may change with no new point; null: never. */
function nextChange(rules: readonly FactorRule[], summaries: readonly PointSummary[], now: number) {
  let first: number | null = null;
  for (const [i, rule] of rules.entries()) {
    const summary = summaries[i];
    const at = summary ? changeOf(rule, summary, now) : null;
    if (at !== null && (first === null || at < first)) first = at;
  }
  return first;
}

/**
 * A new version for each customer whose factor set changed, with its events. A customer left
 * with no factor at all keeps the score it has (docs/scoring.md): a score needs a factor.
 */
export async function writeRederived(
  tx: Tx,
  accountId: string,
  next: ReadonlyMap<string, { current: ScoreRecord | null; factors: Factors }>,
  settings: Settings,
  reason: ScoreReason,
  now: number,
): Promise<Map<string, ScoreRecord>> {
  // A customer's own signals moving its score may alert, as a factor write does; a rules change does not.
  const alerts = reason !== 'rules_changed' && settings.drop ? settings.drop : null;
  const watch = alerts ? await tx.dropWatch(accountId, [...next.keys()], windowStart(alerts, now)) : null;
  const written = new Map<string, ScoreRecord>();
  const events: EventRecord[] = [];
  const alerted: { customerId: string; at: number }[] = [];
  for (const [id, { current, factors }] of next) {
    if (Object.keys(factors).length === 0) continue;
    if (current && sameFactors(current.factors, factors)) continue;
    const update = scoreFactors(id, current, factors, settings, now);
    written.set(id, update.record);
    events.push(...update.events);
    const seen = watch?.get(id);
    const dropped = seen && alerts ? dropAlert(seen, update.record, alerts) : null;
    if (dropped) {
      events.push(dropped);
      alerted.push({ customerId: id, at: update.record.updatedAt });
    }
  }
  if (written.size > 0) await tx.writeScores(accountId, [...written.values()], reason);
  if (events.length > 0) await tx.insertEvents(accountId, events);
  if (alerted.length > 0) await tx.recordDropAlerts(accountId, alerted);
  return written;
}

/**
 * What one rule's change makes of these customers' factors: `changed` is the rule put for
 * `factor`, null when it was deleted. A customer with a score keeps its other factors as they are
 * (their rules did not change; if time has moved them, the customer is already due for the rescore
 * job) and gets this one derived again, or taken out; one without a score is derived whole. Reads
 * only this rule's aggregate for the first, and writes nothing: `due` are the times this rule
 * alone gives (to lower a customer's due time, never to raise it), `wholeDue` exact ones.
 */
async function changedBy(
  tx: Tx,
  accountId: string,
  current: ReadonlyMap<string, ScoreRecord | null>,
  rules: readonly FactorRule[],
  factor: string,
  changed: FactorRule | null,
  derived: ReadonlySet<string>,
  now: number,
) {
  const scored = [...current].filter((e): e is [string, ScoreRecord] => e[1] !== null);
  const unscored = new Map([...current].filter(([, score]) => score === null));
  const whole =
    unscored.size > 0
      ? await deriveAll(tx, accountId, unscored, rules, derived, now)
      : { factors: new Map<string, { current: ScoreRecord | null; factors: Factors }>(), due: [] };
  const summaries =
    changed && scored.length > 0
      ? await tx.metricSummaries(
          accountId,
          scored.map(([id]) => id),
          [changed],
          now,
          now + FUTURE_MS,
        )
      : new Map<string, PointSummary[]>();
  const factors = new Map(whole.factors);
  const due: { customerId: string; at: number | null }[] = [];
  for (const [id, score] of scored) {
    const summary = summaries.get(id)?.[0] ?? emptySummary();
    const value = changed ? factorOf(changed, summary, now) : null;
    const kept = Object.entries(score.factors).filter(([name]) => name !== factor);
    // fromEntries defines own properties, so no factor name can reach the prototype.
    factors.set(id, {
      current: score,
      factors: Object.fromEntries(value === null ? kept : [...kept, [factor, value]]),
    });
    if (changed) due.push({ customerId: id, at: changeOf(changed, summary, now) });
  }
  return { factors, due, wholeDue: whole.due };
}

/**
 * Every customer one rule's change may move (a score, or a point of the rule's metric), a page at a
 * time, rescored in the caller's transaction (history reason rules_changed).
 */
async function rescoreForRule(
  tx: Tx,
  accountId: string,
  rules: readonly FactorRule[],
  factor: string,
  changed: FactorRule | null,
  derived: ReadonlySet<string>,
  settings: Settings,
  now: number,
): Promise<void> {
  let after: string | null = null;
  for (;;) {
    const ids = await tx.rederiveTargets(accountId, changed ? [changed.metric] : [], after, PAGE);
    if (ids.length === 0) return;
    const current = await tx.scoresForUpdate(accountId, ids);
    const { factors, due, wholeDue } = await changedBy(
      tx,
      accountId,
      current,
      rules,
      factor,
      changed,
      derived,
      now,
    );
    await tx.setRederiveDue(accountId, due, { earlierOnly: true });
    await tx.setRederiveDue(accountId, wholeDue);
    await writeRederived(tx, accountId, factors, settings, 'rules_changed', now);
    if (ids.length < PAGE) return;
    after = ids.at(-1) as string;
  }
}

/**
 * What putting `input` would change, computed as the change would be and written nowhere: no
 * lock beyond the account's shared one, no due time.
 */
export const previewRule = write(
  import.meta.url,
  async function previewRule(tx: Tx, accountId: string, input: RuleInput, now: number): Promise<Preview> {
    const settings = await tx.getSettings(accountId);
    const rules = await tx.listFactorRules(accountId);
    const rule: FactorRule = { ...input, updatedAt: now };
    const next = [...rules.filter((r) => r.factor !== input.factor), rule];
    const derived = new Set([...rules, ...next].map((r) => r.factor));
    const preview: Preview = {
      customers: 0,
      scoresChanged: 0,
      bandChanges: 0,
      bands: await tx.countScoresByStatus(accountId),
    };
    let after: string | null = null;
    for (;;) {
      const ids = await tx.rederiveTargets(accountId, [rule.metric], after, PAGE);
      const scores = await tx.scoresOf(accountId, ids);
      const current = new Map(ids.map((id) => [id, scores.get(id) ?? null]));
      const { factors } = await changedBy(tx, accountId, current, next, rule.factor, rule, derived, now);
      preview.customers += ids.length;
      for (const [id, change] of factors) {
        const score = change.current;
        if (Object.keys(change.factors).length === 0) continue;
        if (score && sameFactors(score.factors, change.factors)) continue;
        countChange(preview, score, scoreFactors(id, score, change.factors, settings, now).record);
      }
      if (ids.length < PAGE) return preview;
      after = ids.at(-1) as string;
    }
  },
);

/** A rule as the API gives it: everything but its time. */
export type RuleInput = Omit<FactorRule, 'updatedAt'>;

/** Creates or replaces the rule of `input.factor` and rescores every customer it may move; answers it as stored. */
export const putRule = write(
  import.meta.url,
  async function putRule(tx: Tx, accountId: string, input: RuleInput, now: number): Promise<FactorRule> {
    // The account's lock first (exclusive on PostgreSQL), as a weights change takes it.
    const settings = await tx.getSettings(accountId, { forUpdate: true });
    const rules = await tx.listFactorRules(accountId);
    const before = rules.find((r) => r.factor === input.factor);
    if (!before && rules.length >= MAX_RULES) {
      throw new ApiError(
        'parameter_invalid',
        `An account may have at most ${MAX_RULES} factor rules; delete one to add '${input.factor}'.`,
        'factor',
      );
    }
    const rule: FactorRule = { ...input, updatedAt: nextTimestamp(now, before?.updatedAt ?? 0) };
    await tx.putFactorRule(accountId, rule);
    const next = [...rules.filter((r) => r.factor !== rule.factor), rule];
    const derived = new Set(next.map((r) => r.factor));
    await rescoreForRule(tx, accountId, next, rule.factor, rule, derived, settings, rule.updatedAt);
    return rule;
  },
);

/** Deletes the rule and takes its factor out of every score; 404 factor_rule_not_found. */
export const deleteRule = write(
  import.meta.url,
  async function deleteRule(tx: Tx, accountId: string, factor: string, now: number): Promise<void> {
    const settings = await tx.getSettings(accountId, { forUpdate: true });
    const rules = await tx.listFactorRules(accountId);
    if (!(await tx.deleteFactorRule(accountId, factor))) {
      throw notFound.factorRule(factor);
    }
    const next = rules.filter((r) => r.factor !== factor);
    const derived = new Set([...next.map((r) => r.factor), factor]);
    await rescoreForRule(tx, accountId, next, factor, null, derived, settings, now);
  },
);

/**
 * The rescore job's work for one account (docs/scoring.md, "Factors from metrics"): of these
 * customers, those still due (rows another process holds are skipped), derived again as of `now`
 * (history reason time_passed for those whose factors moved), with their next due times.
 * Answers how many were due and how many of those got a new version.
 */
export const rescoreDue = write(
  import.meta.url,
  async function rescoreDue(
    tx: Tx,
    accountId: string,
    customerIds: string[],
    now: number,
  ): Promise<{ checked: number; rescored: number }> {
    const due = await tx.claimRederiveDue(accountId, customerIds, now);
    if (due.length === 0) return { checked: 0, rescored: 0 };
    const settings = await tx.getSettings(accountId);
    const rules = await tx.listFactorRules(accountId);
    const next = await rederive(tx, accountId, due, rules, new Set(rules.map((r) => r.factor)), now);
    const written = await writeRederived(tx, accountId, next, settings, 'time_passed', now);
    return { checked: due.length, rescored: written.size };
  },
);
