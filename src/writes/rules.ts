// Factor rules below HTTP (docs/scoring.md, "Factors from metrics"): a rule put or deleted, and
// every score it moves, in one transaction, as a weights change does; and the factor set rules
// give a customer, which the metric writes and the rescore job use too.
import { type DropRecord, dropAlert, dropRecord, windowStart } from '../domain/alerts.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import type { EventRecord } from '../domain/events.ts';
import {
  gatesOf,
  overrideVersion,
  regated,
  type ScoreUpdate,
  type ScoringSettings,
  scoreFactors,
  standingOverride,
} from '../domain/health.ts';
import {
  changeOf,
  type DerivedInput,
  type DerivedInputs,
  derivationsOf,
  emptySummary,
  type FactorRule,
  inputOf,
  type PointSummary,
  scaleScore,
} from '../domain/rules.ts';
import { type Factors, sameFactors } from '../domain/scoring.ts';
import { nextTimestamp } from '../domain/time.ts';
import type { AuditEntry, RederiveTarget, ScoreReason, ScoreRecord, Settings, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { pages, pipelined, settleAll, turn } from './pipeline.ts';
import { actOn } from './playbooks.ts';
import { auditIn, countChange, type Preview, RESCORE_PAGE } from './rescore.ts';

/** The most rules an account may have. */
export const MAX_RULES = 50;
/** How far ahead of the server's clock a metric point may be dated. */
export const FUTURE_MS = 5 * 60_000;

/** The factors of `factors` that no rule derives: the ones that were posted. */
export function postedOf(factors: Factors, derived: ReadonlySet<string>): Factors {
  const posted: Factors = {};
  for (const [name, value] of Object.entries(factors)) if (!derived.has(name)) posted[name] = value;
  return posted;
}

/** A customer's factors as rules give them now, with what the derived ones came from. */
export interface Derived {
  current: ScoreRecord | null;
  factors: Factors;
  inputs: DerivedInputs | null;
  /** `inputs` are those `current` stores (ScoreRecord.inputsKept). */
  inputsKept?: boolean;
}

/**
 * Derives these customers' factors again as the rules give them now — each one's posted factors
 * (those of its current score no rule derives) with every factor a rule derives from its points —
 * and writes a new version for each whose factor set changed (history `reason`), with when each is
 * next due. Locks the customers (unless the caller has: `known`, their current scores as it read
 * them under its locks); one that does not exist is left out. Answers the versions written.
 */
export async function rederive(
  tx: Tx,
  accountId: string,
  ids: readonly string[],
  rules: readonly FactorRule[],
  settings: Settings,
  reason: ScoreReason,
  now: number,
  known?: ReadonlyMap<string, ScoreRecord | null>,
): Promise<Map<string, ScoreRecord>> {
  const current = known
    ? new Map(ids.filter((id) => known.has(id)).map((id) => [id, known.get(id) ?? null]))
    : await tx.scoresForUpdate(accountId, ids);
  const derived = new Set(rules.map((r) => r.factor));
  // A customer's own signals moving its score may alert, as a factor write does; a rules change
  // does not. The drop-alert peaks are read with the points (on PostgreSQL in the same round trip).
  const alerts = reason !== 'rules_changed' && settings.drop ? settings.drop : null;
  const watching = alerts ? tx.dropWatch(accountId, [...current.keys()], windowStart(alerts, now)) : null;
  const [{ factors, due }, watch] = await Promise.all([
    deriveAll(tx, accountId, current, rules, derived, now),
    watching,
  ]);
  const plan = planRederived(factors, { ...settings, gates: gatesOf(rules) }, reason, watch, now);
  // The due times (when time alone may next move these customers' derived factors: the rescore
  // job's list) go out with the versions: on PostgreSQL in the same round trip.
  await settleAll([persistRederived(tx, accountId, plan, now), tx.setRederiveDue(accountId, due)]);
  return plan.written;
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
  const factors = new Map<string, Derived>();
  const due: { customerId: string; at: number | null }[] = [];
  for (const [id, score] of current) {
    const ofRules = summaries.get(id) ?? [];
    const derivation = derivationsOf(rules, ofRules, now);
    factors.set(id, {
      current: score,
      factors: { ...postedOf(score?.factors ?? {}, derived), ...derivation.factors },
      inputs: derivation.inputs,
    });
    due.push({ customerId: id, at: dueAt(score, nextChange(rules, ofRules, now), now) });
  }
  return { factors, due };
}

/**
 * When the rescore job must next see a customer: `at` (its rules' next change; null: never), or
 * sooner when its override ends then (the job records the end, docs/scoring.md, "Overrides").
 */
export function dueAt(score: ScoreRecord | null, at: number | null, now: number): number | null {
  const ends = standingOverride(score, now)?.expiresAt ?? null;
  if (ends === null) return at;
  return at === null ? ends : Math.min(at, ends);
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
 * What rederive writes, computed and not yet sent: a new version for each customer whose factor
 * set changed, with its events. A customer left with no factor at all keeps the score it has
 * (docs/scoring.md): a score needs a factor.
 */
interface RederivedPlan {
  reason: ScoreReason;
  written: Map<string, ScoreRecord>;
  changed: ScoreRecord[];
  expired: ScoreRecord[];
  events: EventRecord[];
  alerted: DropRecord[];
}

/** rederive's plan (`watch`: the drop-alert peaks, null when no alert applies). */
function planRederived(
  next: ReadonlyMap<string, Derived>,
  settings: Settings & ScoringSettings,
  reason: ScoreReason,
  watch: Awaited<ReturnType<Tx['dropWatch']>> | null,
  now: number,
): RederivedPlan {
  const alerts = watch && settings.drop ? settings.drop : null;
  const plan: RederivedPlan = {
    reason,
    written: new Map(),
    changed: [],
    expired: [],
    events: [],
    alerted: [],
  };
  const record = (id: string, update: ScoreUpdate, ended: boolean) => {
    plan.written.set(id, update.record);
    (ended ? plan.expired : plan.changed).push(update.record);
    plan.events.push(...update.events);
    const seen = watch?.get(id);
    const dropped = seen && alerts ? dropAlert(seen, update.record, alerts) : null;
    if (dropped) {
      plan.events.push(dropped);
      plan.alerted.push(dropRecord(dropped, next.get(id)?.current?.score ?? null));
    }
  };
  for (const [id, { current, factors, inputs, inputsKept }] of next) {
    const unchanged = Object.keys(factors).length === 0 || (current && sameFactors(current.factors, factors));
    if (unchanged) {
      // Nothing moved but time: an override that has ended is recorded as such (the rescore job).
      if (current?.override && !standingOverride(current, now)) {
        record(id, overrideVersion(current, null, settings, now), true);
        continue;
      }
      // The factors stay, but a gate put, changed or lifted may move the status.
      const update = current ? regated(current, settings, now) : null;
      if (update) record(id, update, false);
      continue;
    }
    const update = scoreFactors(id, current, factors, settings, now, inputs);
    if (inputsKept) update.record.inputsKept = true;
    record(id, update, false);
  }
  return plan;
}

/**
 * Sends what planRederived computed, all at once (on PostgreSQL the statements queue on the
 * connection, which runs them one after another): the database is never left waiting for this
 * process to send the next one. A page of a pipelined rescore reads in one statement
 * (rederiveTargets), so nothing of the next page waits between them.
 */
async function persistRederived(tx: Tx, accountId: string, plan: RederivedPlan, now: number): Promise<void> {
  const writes: Promise<unknown>[] = [];
  if (plan.changed.length > 0) writes.push(tx.writeScores(accountId, plan.changed, plan.reason));
  if (plan.expired.length > 0) writes.push(tx.writeScores(accountId, plan.expired, 'override_expired'));
  if (plan.events.length > 0) {
    // A rules change is a settings change: it opens no task; a customer's own signals may (docs/playbooks.md).
    const acting =
      plan.reason === 'rules_changed' ? Promise.resolve(plan.events) : actOn(tx, accountId, plan.events, now);
    writes.push(acting.then((events) => tx.insertEvents(accountId, events)));
  }
  if (plan.alerted.length > 0) writes.push(tx.recordDropAlerts(accountId, plan.alerted));
  await settleAll(writes);
}

/**
 * One rule's change: `changed` is the rule put for `factor`, null when it was deleted; `rules` the
 * account's rules after it, `derived` every factor a rule derives (or derived, for a deleted one).
 */
interface RuleChange {
  rules: readonly FactorRule[];
  factor: string;
  changed: FactorRule | null;
  /** The rule `changed` replaces (null: none). */
  before: FactorRule | null;
  derived: ReadonlySet<string>;
}

/** Whether two rules read the same aggregate of the same points (one is the other with a new scale at most). */
const sameSource = (a: FactorRule, b: FactorRule): boolean =>
  a.metric === b.metric &&
  a.aggregate === b.aggregate &&
  a.windowDays === b.windowDays &&
  a.maxAgeDays === b.maxAgeDays;

/** The rule a change gives a new scale only (the same points, aggregated the same way); null: none such. */
const rescaledBy = ({ changed, before }: RuleChange): FactorRule | null =>
  changed && before && sameSource(changed, before) ? changed : null;

/**
 * The input to `rule`'s factor that a customer's stored score holds: what its factor was made of
 * (null: the score has no such factor), or undefined where the score does not say (read the points).
 */
function storedInput(score: ScoreRecord, rule: FactorRule): DerivedInput | null | undefined {
  const input = score.inputs?.[rule.factor];
  if (!input) return Object.hasOwn(score.factors, rule.factor) ? undefined : null;
  // A value stored as null was an aggregate beyond a double (Infinity has no JSON), kept before
  // aggregates were bounded (docs/scoring.md, "Metric values"): the points say what it is.
  const same =
    Number.isFinite(input.value) &&
    input.metric === rule.metric &&
    input.aggregate === rule.aggregate &&
    input.windowDays === rule.windowDays;
  return same ? input : undefined;
}

/**
 * What one rule's change makes of these customers' factors. A customer with a score keeps its
 * other factors as they are (their rules did not change; if time has moved them, the customer is
 * already due for the rescore job) and gets this one derived again, or taken out; one without a
 * score is derived whole. Reads only this rule's aggregate for the first, and writes nothing:
 * `due` are the times this rule alone gives (to lower a customer's due time, never to raise it),
 * `wholeDue` exact ones. A new scale alone (`sameSource`) reads no point for a customer whose
 * stored aggregate is still its own, one the rescore job does not have due (docs/scoring.md,
 * "Changing a rule"); that customer's due time stays as it is.
 */
async function changedBy(
  tx: Tx,
  accountId: string,
  current: ReadonlyMap<string, ScoreRecord | null>,
  dueNow: ReadonlySet<string>,
  change: RuleChange,
  now: number,
) {
  const { rules, factor, changed, derived } = change;
  const scored = [...current].filter((e): e is [string, ScoreRecord] => e[1] !== null);
  const unscored = new Map([...current].filter(([, score]) => score === null));
  const whole =
    unscored.size > 0
      ? await deriveAll(tx, accountId, unscored, rules, derived, now)
      : { factors: new Map<string, Derived>(), due: [] };
  // A new scale: each stored input still current goes on it as it is; the others are read.
  const rescaled = rescaledBy(change);
  const kept = new Map<string, DerivedInput | null>();
  if (rescaled) {
    for (const [id, score] of scored) {
      const input = dueNow.has(id) ? undefined : storedInput(score, rescaled);
      if (input !== undefined) kept.set(id, input);
    }
  }
  const toRead = scored.filter(([id]) => !kept.has(id)).map(([id]) => id);
  const summaries =
    changed && toRead.length > 0
      ? await tx.metricSummaries(accountId, toRead, [changed], now, now + FUTURE_MS)
      : new Map<string, PointSummary[]>();
  const factors = new Map(whole.factors);
  const due: { customerId: string; at: number | null }[] = [];
  for (const [id, score] of scored) {
    let input: DerivedInput | null = null;
    const inputsKept = kept.has(id);
    if (inputsKept) {
      input = kept.get(id) ?? null;
    } else if (changed) {
      const summary = summaries.get(id)?.[0] ?? emptySummary();
      input = inputOf(changed, summary, now);
      due.push({ customerId: id, at: dueAt(score, changeOf(changed, summary, now), now) });
    }
    const others = Object.entries(score.factors).filter(([name]) => name !== factor);
    const otherInputs = Object.entries(score.inputs ?? {}).filter(([name]) => name !== factor);
    // fromEntries defines own properties, so no factor name can reach the prototype.
    factors.set(id, {
      current: score,
      factors: Object.fromEntries(
        changed && input ? [...others, [factor, scaleScore(changed.scale, input.value)]] : others,
      ),
      inputs: Object.fromEntries(input ? [...otherInputs, [factor, input]] : otherInputs),
      // The stored input of this factor, and the others' as they are: what the score stores.
      inputsKept,
    });
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
  change: RuleChange,
  settings: Settings,
  now: number,
): Promise<void> {
  // A page's reads write nothing, and the next page's do not depend on this one's writes (the
  // account's lock is held exclusively: no point or score moves meanwhile), so pages pipeline.
  // The gates of the rules after the change band every score, moved or not (docs/scoring.md, "Gates").
  const scoring = { ...settings, gates: gatesOf(change.rules) };
  await pipelined(
    rulePages(tx, accountId, change, now),
    (page) => ({ page, plan: planRederived(page.factors, scoring, 'rules_changed', null, now) }),
    ({ page, plan }) =>
      settleAll([
        tx.setRederiveDue(accountId, page.due, { earlierOnly: true }),
        tx.setRederiveDue(accountId, page.wholeDue),
        persistRederived(tx, accountId, plan, now),
      ]),
  );
}

/**
 * The reader of the pages of customers one rule's change may move (a score, or a point of the
 * rule's metric), by id, each with what the change makes of it (changedBy).
 */
function rulePages(tx: Tx, accountId: string, change: RuleChange, now: number) {
  const metrics = change.changed ? [change.changed.metric] : [];
  // Whether each is due matters to a new scale only (changedBy).
  const dueAt = rescaledBy(change) ? now : null;
  // Scores read unlocked: the account's exclusive lock keeps every other writer out already (a
  // preview writes nothing), and on PostgreSQL a row lock per customer would write to every customer's row.
  const targetsAfter = (after: string | null) => {
    const read = tx.rederiveTargets(accountId, metrics, after, RESCORE_PAGE, dueAt);
    read.catch(() => {}); // read ahead, it may never be awaited: its failure fails the transaction
    return { after, read };
  };
  let ahead: ReturnType<typeof targetsAfter> | null = null;
  return async (after: string | null) => {
    const targets = await (ahead?.after === after ? ahead.read : targetsAfter(after).read);
    if (targets.length === 0) return null;
    const last = targets.length < RESCORE_PAGE ? null : (targets.at(-1) as RederiveTarget).customerId;
    // The next page's customers, asked for at once: their key is known now, and this page's points
    // (changedBy) take a round trip of their own. Sent later, they queued behind this page's writes.
    ahead = last === null ? null : targetsAfter(last);
    const current = new Map(targets.map((t) => [t.customerId, t.score]));
    const due = new Set(targets.filter((t) => t.due).map((t) => t.customerId));
    // This page's points are asked for before the turn: sent after it, they queued behind the
    // writes of the page before, sent meanwhile, and this page's derivation waited for those too.
    const reading = changedBy(tx, accountId, current, due, change, now);
    reading.catch(() => {}); // awaited below; not unhandled meanwhile
    await turn(); // between reading the page and deriving it (pipeline.ts)
    return { page: await reading, after: last };
  };
}

/**
 * What putting `input` would change, computed as the change would be and written nowhere: no
 * lock beyond the account's shared one, no due time.
 */
export const previewRule = write(
  async function previewRule(tx: Tx, accountId: string, input: RuleInput, now: number): Promise<Preview> {
    const [account, rules] = await Promise.all([tx.getSettings(accountId), tx.listFactorRules(accountId)]);
    const rule: FactorRule = { ...input, updatedAt: now };
    const next = [...rules.filter((r) => r.factor !== input.factor), rule];
    const settings = { ...account, gates: gatesOf(next) };
    const derived = new Set([...rules, ...next].map((r) => r.factor));
    const preview: Preview = {
      customers: 0,
      scoresChanged: 0,
      bandChanges: 0,
      bands: await tx.countScoresByStatus(accountId),
    };
    const before = rules.find((r) => r.factor === rule.factor) ?? null;
    const change = { rules: next, factor: rule.factor, changed: rule, before, derived };
    for await (const { factors } of pages(rulePages(tx, accountId, change, now))) {
      preview.customers += factors.size;
      for (const [id, change] of factors) {
        const score = change.current;
        if (
          Object.keys(change.factors).length === 0 ||
          (score && sameFactors(score.factors, change.factors))
        ) {
          // The factors stay; the rule's gate may still move the status, as the put would.
          const moved = score && !standingOverride(score, now) ? regated(score, settings, now) : null;
          if (moved) countChange(preview, score, moved.record);
          continue;
        }
        countChange(preview, score, scoreFactors(id, score, change.factors, settings, now).record);
      }
    }
    return preview;
  },
  { heavy: true },
);

/** A rule as the API gives it: everything but its time. */
export type RuleInput = Omit<FactorRule, 'updatedAt'>;

/** Creates or replaces the rule of `input.factor` and rescores every customer it may move; answers it as stored. */
export const putRule = write(
  async function putRule(
    tx: Tx,
    accountId: string,
    input: RuleInput,
    now: number,
    audit?: AuditEntry,
  ): Promise<FactorRule> {
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
    const change = { rules: next, factor: rule.factor, changed: rule, before: before ?? null, derived };
    await settleAll([
      auditIn(tx, accountId, audit),
      rescoreForRule(tx, accountId, change, settings, rule.updatedAt),
    ]);
    return rule;
  },
  { heavy: true },
);

/** Deletes the rule and takes its factor out of every score; 404 factor_rule_not_found. */
export const deleteRule = write(
  async function deleteRule(
    tx: Tx,
    accountId: string,
    factor: string,
    now: number,
    audit?: AuditEntry,
  ): Promise<void> {
    const settings = await tx.getSettings(accountId, { forUpdate: true });
    const rules = await tx.listFactorRules(accountId);
    if (!(await tx.deleteFactorRule(accountId, factor))) {
      throw notFound.factorRule(factor);
    }
    const next = rules.filter((r) => r.factor !== factor);
    const derived = new Set([...next.map((r) => r.factor), factor]);
    await settleAll([
      auditIn(tx, accountId, audit),
      rescoreForRule(
        tx,
        accountId,
        { rules: next, factor, changed: null, before: null, derived },
        settings,
        now,
      ),
    ]);
  },
  { heavy: true },
);

/**
 * The rescore job's work for one account (docs/scoring.md, "Factors from metrics"): of these
 * customers, those still due (rows another process holds are skipped), derived again as of `now`
 * (history reason time_passed for those whose factors moved), with their next due times.
 * Answers how many were due and how many of those got a new version.
 */
export const rescoreDue = write(
  async function rescoreDue(
    tx: Tx,
    accountId: string,
    customerIds: string[],
    now: number,
  ): Promise<{ checked: number; rescored: number }> {
    const due = await tx.claimRederiveDue(accountId, customerIds, now);
    if (due.length === 0) return { checked: 0, rescored: 0 };
    const [settings, rules] = await Promise.all([tx.getSettings(accountId), tx.listFactorRules(accountId)]);
    const written = await rederive(tx, accountId, due, rules, settings, 'time_passed', now);
    return { checked: due.length, rescored: written.size };
  },
  { heavy: true },
);
