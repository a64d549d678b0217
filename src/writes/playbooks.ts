// Playbooks below HTTP (docs/playbooks.md): their own writes, and the tasks they open. A trigger
// opens its task in the transaction of its cause: the writes that record a customer's score,
// status, drop or book change pass their events through actOn, and the metric writes call
// actOnMetrics; settings changes and backfills call neither, so they open nothing. As time passes,
// the rescore job's playbookPass finds the renewals that came within reach and the metric triggers
// that started to hold, a bounded number per pass. One open task per playbook and customer, and one
// per renewal date, are the database's unique indexes (migration 30): a second opener, in this
// process or another, writes nothing.
import { playbookFields, playbookJson } from '../api/playbooks.ts';
import { taskFields } from '../api/tasks.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { type EventRecord, event } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import {
  MAX_PLAYBOOKS,
  metricHolds,
  metricRuleOf,
  PLAYBOOK_FANOUT,
  type PlaybookAssignee,
  type PlaybookRecord,
  type PlaybookTarget,
  type PlaybookTask,
  playbookTask,
  renewalHolds,
  type Trigger,
} from '../domain/playbooks.ts';
import { DAY_MS, emptySummary } from '../domain/rules.ts';
import type { Status } from '../domain/scoring.ts';
import type { TaskRecord } from '../domain/tasks.ts';
import type { Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { type Claim, recordAnswer } from './answers.ts';
import { queueAssignmentMails } from './mail.ts';

/** A playbook's fields as a request gives them, checked (the trigger in the domain's spelling). */
export interface PlaybookInput {
  name?: string | undefined;
  enabled?: boolean | undefined;
  trigger?: Trigger | undefined;
  task?: PlaybookTask | undefined;
  assignee?: PlaybookAssignee | undefined;
}

/** How far ahead of the clock a point may be dated (the metric writes' bound, writes/rules.ts). */
const FUTURE_MS = 5 * 60_000;

type Opened = { playbook: PlaybookRecord; customerId: string; triggerKey: string | null };

/** Opens each task (none for a churned or deleted customer); answers task.created for those written. */
async function open(
  tx: Tx,
  accountId: string,
  opened: readonly Opened[],
  targets: ReadonlyMap<string, PlaybookTarget>,
  now: number,
): Promise<EventRecord[]> {
  const events: EventRecord[] = [];
  const inserted: TaskRecord[] = [];
  for (const o of opened) {
    const target = targets.get(o.customerId);
    if (!target || target.lifecycle === 'churned') continue;
    const ids = { id: newId.task(), triggerKey: o.triggerKey };
    const task = playbookTask(o.playbook, o.customerId, target, ids, now);
    if (!(await tx.insertTask(accountId, task))) continue;
    events.push(event('task.created', taskFields(task), now));
    inserted.push(task);
  }
  // Their assignees' mails, in the same transaction (./mail.ts).
  await queueAssignmentMails(tx, accountId, inserted, now);
  return events;
}

/**
 * What a write read with its own first reads, in the same round trip: the account's enabled
 * playbooks and its customers' targets (their status as before the write; actOn takes the new one
 * from the events).
 */
export interface ReadAhead {
  playbooks: PlaybookRecord[];
  targets: ReadonlyMap<string, PlaybookTarget>;
}

/** The customer an event is about, when it is one of a customer's. */
function customerOf(e: EventRecord): string | null {
  if (!e.type.startsWith('customer.') || e.type === 'customer.deleted') return null;
  const id = e.data.customer_id ?? e.data.id;
  return typeof id === 'string' ? id : null;
}

/**
 * The events of a customer write with the tasks they trigger (task.created appended): a status
 * entered, a drop alert, and a renewal within reach of a customer whose score or book changed.
 * Writes that settings or a backfill cause never come here.
 */
export async function actOn(
  tx: Tx,
  accountId: string,
  events: readonly EventRecord[],
  now: number,
  readAhead?: ReadAhead,
): Promise<EventRecord[]> {
  if (events.length === 0) return [...events];
  const playbooks = readAhead?.playbooks ?? (await tx.enabledPlaybooks(accountId));
  if (playbooks.length === 0) return [...events];
  // Every band each customer entered: a gathered write may move one customer in and out again.
  const entered = new Set<string>();
  /** Each customer's status after these events: a target read before the write has the one before. */
  const statusNow = new Map<string, Status>();
  const dropped = new Set<string>();
  const touched = new Set<string>();
  for (const e of events) {
    const id = customerOf(e);
    if (id === null) continue;
    touched.add(id);
    if (typeof e.data.status === 'string' && e.type.startsWith('customer.health_score')) {
      statusNow.set(id, e.data.status as Status);
    }
    if (e.type === 'customer.status.changed') entered.add(`${e.data.status as Status}\u0000${id}`);
    if (e.type === 'customer.health_score.dropped') dropped.add(id);
  }
  const opened: Opened[] = [];
  for (const p of playbooks) {
    const t = p.trigger;
    if (t.type === 'status_entered') {
      for (const key of entered) {
        const [status, id] = key.split('\u0000') as [Status, string];
        if (status === t.status) opened.push({ playbook: p, customerId: id, triggerKey: null });
      }
    } else if (t.type === 'score_dropped') {
      for (const id of dropped) opened.push({ playbook: p, customerId: id, triggerKey: null });
    }
  }
  const renewals = playbooks.filter((p) => p.trigger.type === 'renewal_approaching');
  const wanted = new Set(opened.map((o) => o.customerId));
  if (renewals.length > 0) for (const id of touched) wanted.add(id);
  if (wanted.size === 0) return [...events];
  const known = readAhead?.targets;
  const targets =
    known && [...wanted].every((id) => known.has(id))
      ? known
      : await tx.playbookTargets(accountId, [...wanted]);
  for (const p of renewals) {
    const t = p.trigger as Extract<Trigger, { type: 'renewal_approaching' }>;
    for (const id of touched) {
      const seen = targets.get(id);
      const target = seen && { ...seen, status: statusNow.get(id) ?? seen.status };
      if (target && renewalHolds(t, target, now)) {
        opened.push({ playbook: p, customerId: id, triggerKey: String(target.renewalAt) });
      }
    }
  }
  return [...events, ...(await open(tx, accountId, opened, targets, now))];
}

/**
 * A metric trigger looked at for these customers now: the ones for which it starts to hold get a
 * task, and what holds is remembered for next time (playbook_states).
 */
async function metricStarts(
  tx: Tx,
  accountId: string,
  p: PlaybookRecord,
  ids: readonly string[],
  now: number,
) {
  const t = p.trigger as Extract<Trigger, { type: 'metric_threshold' }>;
  const rule = metricRuleOf(p.id, t);
  const [summaries, held] = await Promise.all([
    tx.metricSummaries(accountId, ids, [rule], now, now + FUTURE_MS),
    tx.heldBefore(accountId, p.id, ids),
  ]);
  const holds = new Set(
    ids.filter((id) => metricHolds(t, rule, summaries.get(id)?.[0] ?? emptySummary(), now)),
  );
  const started = [...holds].filter((id) => !held.has(id));
  const ended = [...held].filter((id) => !holds.has(id));
  await Promise.all([tx.setHeld(accountId, p.id, started, true), tx.setHeld(accountId, p.id, ended, false)]);
  return started.map((customerId): Opened => ({ playbook: p, customerId, triggerKey: null }));
}

/** After a metric write: the metric triggers on the metrics written, for the customers written. Answers task.created events. */
export async function actOnMetrics(
  tx: Tx,
  accountId: string,
  written: ReadonlyMap<string, ReadonlySet<string>>,
  now: number,
  enabled?: readonly PlaybookRecord[],
): Promise<EventRecord[]> {
  const playbooks = (enabled ?? (await tx.enabledPlaybooks(accountId))).filter(
    (p) => p.trigger.type === 'metric_threshold',
  );
  if (playbooks.length === 0) return [];
  const opened: Opened[] = [];
  for (const p of playbooks) {
    const metric = (p.trigger as Extract<Trigger, { type: 'metric_threshold' }>).metric;
    const ids = [...written].filter(([, metrics]) => metrics.has(metric)).map(([id]) => id);
    if (ids.length > 0) opened.push(...(await metricStarts(tx, accountId, p, ids, now)));
  }
  if (opened.length === 0) return [];
  const targets = await tx.playbookTargets(accountId, [...new Set(opened.map((o) => o.customerId))]);
  return open(tx, accountId, opened, targets, now);
}

/** actOnMetrics for these points (customer and metric), its task.created events recorded. */
export async function actOnPoints(
  tx: Tx,
  accountId: string,
  points: readonly { customerId: string; metric: string }[],
  now: number,
  enabled?: readonly PlaybookRecord[],
): Promise<void> {
  const written = new Map<string, Set<string>>();
  for (const { customerId, metric } of points) {
    const metrics = written.get(customerId) ?? new Set<string>();
    metrics.add(metric);
    written.set(customerId, metrics);
  }
  const opened = await actOnMetrics(tx, accountId, written, now, enabled);
  if (opened.length > 0) await tx.insertEvents(accountId, opened);
}

/** Where each metric playbook's walk through the customers stands (by playbook id; null: from the start). */
export type Walks = Record<string, string | null>;

/**
 * The rescore job's pass over one account's playbooks, as time passes: each renewal playbook opens
 * the tasks of renewals now within reach (at most PLAYBOOK_FANOUT; the rest next pass), each metric
 * playbook looks at the next PLAYBOOK_FANOUT active customers after where its walk stands. Answers
 * the tasks opened and where the walks stand now.
 */
export const playbookPass = write(
  async function playbookPass(
    tx: Tx,
    accountId: string,
    walks: Walks,
    now: number,
  ): Promise<{ opened: number; walks: Walks }> {
    const playbooks = await tx.enabledPlaybooks(accountId);
    const next: Walks = {};
    const events: EventRecord[] = [];
    for (const p of playbooks) {
      const t = p.trigger;
      if (t.type === 'renewal_approaching') {
        const window = { from: now, until: now + t.days * DAY_MS, statuses: t.statuses };
        const due = await tx.renewalsWithoutTask(accountId, p.id, window, PLAYBOOK_FANOUT);
        const opened = due.map((d) => ({
          playbook: p,
          customerId: d.customerId,
          triggerKey: String(d.target.renewalAt),
        }));
        events.push(
          ...(await open(tx, accountId, opened, new Map(due.map((d) => [d.customerId, d.target])), now)),
        );
      } else if (t.type === 'metric_threshold') {
        const ids = await tx.activeCustomersAfter(accountId, walks[p.id] ?? null, PLAYBOOK_FANOUT);
        next[p.id] = ids.length < PLAYBOOK_FANOUT ? null : (ids.at(-1) ?? null);
        if (ids.length === 0) continue;
        const opened = await metricStarts(tx, accountId, p, ids, now);
        if (opened.length === 0) continue;
        const targets = await tx.playbookTargets(
          accountId,
          opened.map((o) => o.customerId),
        );
        events.push(...(await open(tx, accountId, opened, targets, now)));
      }
    }
    if (events.length > 0) await tx.insertEvents(accountId, events);
    return { opened: events.length, walks: next };
  },
  { heavy: true },
);

/** POST /api/playbooks: the new playbook's answer text (201); 400 past MAX_PLAYBOOKS. */
export const createPlaybook = write(async function createPlaybook(
  tx: Tx,
  accountId: string,
  input: Required<Pick<PlaybookInput, 'name' | 'trigger' | 'task'>> & PlaybookInput,
  claim: Claim,
  now: number,
): Promise<string> {
  const playbook: PlaybookRecord = {
    id: newId.playbook(),
    name: input.name,
    enabled: input.enabled ?? true,
    trigger: input.trigger,
    task: input.task,
    assignee: input.assignee === undefined ? 'owner' : input.assignee,
    createdAt: now,
    updatedAt: now,
  };
  if (!(await tx.insertPlaybook(accountId, playbook, MAX_PLAYBOOKS))) {
    throw new ApiError(
      'parameter_invalid',
      `An account may have at most ${MAX_PLAYBOOKS} playbooks; delete one to add another.`,
    );
  }
  const body = playbookJson(playbook);
  await recordAnswer(tx, accountId, claim, body, 201);
  return body;
});

/** PATCH /api/playbooks/{id}. */
export const updatePlaybook = write(async function updatePlaybook(
  tx: Tx,
  accountId: string,
  id: string,
  input: PlaybookInput,
  now: number,
): Promise<ReturnType<typeof playbookFields>> {
  const stored = await tx.getPlaybook(accountId, id);
  if (!stored) throw notFound.playbook(id);
  const next: PlaybookRecord = {
    ...stored,
    name: input.name ?? stored.name,
    enabled: input.enabled ?? stored.enabled,
    trigger: input.trigger ?? stored.trigger,
    task: input.task ?? stored.task,
    assignee: input.assignee === undefined ? stored.assignee : input.assignee,
    updatedAt: now,
  };
  await tx.updatePlaybook(accountId, next, JSON.stringify(next.trigger) !== JSON.stringify(stored.trigger));
  return playbookFields(next);
});

/** DELETE /api/playbooks/{id}: its open tasks stay, as work people may still do. */
export const deletePlaybook = write(async function deletePlaybook(
  tx: Tx,
  accountId: string,
  id: string,
): Promise<{ id: string; deleted: true }> {
  if (!(await tx.deletePlaybook(accountId, id))) throw notFound.playbook(id);
  return { id, deleted: true };
});
