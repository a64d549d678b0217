// Playbooks (docs/playbooks.md): a trigger and the task it opens, for the customer's owner. What a
// playbook is, when each trigger holds, and the task it makes. Pure.
import { DAY_MS } from './portfolio.ts';
import { type Aggregate, aggregateOf, type FactorRule, type PointSummary } from './rules.ts';
import type { Status } from './scoring.ts';
import type { TaskRecord } from './tasks.ts';

/** The most playbooks an account may have (docs/api.md, "Playbooks"). */
export const MAX_PLAYBOOKS = 50;
/** New tasks one playbook opens per pass of the job, at most; the rest follow in the next passes. */
export const PLAYBOOK_FANOUT = 1000;

export const TRIGGER_TYPES = [
  'status_entered',
  'score_dropped',
  'renewal_approaching',
  'metric_threshold',
] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

export type Trigger =
  | { type: 'status_entered'; status: Status }
  | { type: 'score_dropped' }
  | { type: 'renewal_approaching'; days: number; statuses: Status[] | null }
  | {
      type: 'metric_threshold';
      metric: string;
      aggregate: Aggregate;
      windowDays: number;
      op: 'gte' | 'lte';
      value: number;
    };

export interface PlaybookTask {
  title: string;
  body: string;
  dueInDays: number | null;
}

/** Who gets the task: the customer's owner, an email, or nobody. */
export type PlaybookAssignee = 'owner' | string | null;

export interface PlaybookRecord {
  id: string;
  name: string;
  enabled: boolean;
  trigger: Trigger;
  task: PlaybookTask;
  assignee: PlaybookAssignee;
  createdAt: number;
  updatedAt: number;
}

/** What a playbook needs to know of a customer to act on it. */
export interface PlaybookTarget {
  owner: string | null;
  lifecycle: string;
  renewalAt: number | null;
  status: Status | null;
}

/** Whether a renewal playbook's trigger holds for the customer at `now`: active, renewing within `days`, in one of its statuses. */
export function renewalHolds(
  trigger: Extract<Trigger, { type: 'renewal_approaching' }>,
  c: PlaybookTarget,
  now: number,
): boolean {
  if (c.lifecycle === 'churned' || c.renewalAt === null) return false;
  if (c.renewalAt < now || c.renewalAt > now + trigger.days * DAY_MS) return false;
  return trigger.statuses === null || (c.status !== null && trigger.statuses.includes(c.status));
}

/** The factor rule whose aggregate a metric trigger compares (its scale is never used). */
export const metricRuleOf = (
  playbookId: string,
  t: Extract<Trigger, { type: 'metric_threshold' }>,
): FactorRule => ({
  factor: `playbook:${playbookId}`,
  metric: t.metric,
  aggregate: t.aggregate,
  windowDays: t.windowDays,
  scale: { type: 'linear', from: 0, to: 1 },
  maxAgeDays: null,
  updatedAt: 0,
});

/** Whether a metric trigger holds on the summary: no point counts as 0 for `count` and `sum`, and as not holding otherwise. */
export function metricHolds(
  t: Extract<Trigger, { type: 'metric_threshold' }>,
  rule: FactorRule,
  summary: PointSummary,
  now: number,
): boolean {
  const value =
    aggregateOf(rule, summary, now) ?? (t.aggregate === 'count' || t.aggregate === 'sum' ? 0 : null);
  if (value === null) return false;
  return t.op === 'gte' ? value >= t.value : value <= t.value;
}

/** The task a playbook opens for a customer, assigned as the playbook says (its owner, an email or nobody). */
export function playbookTask(
  p: PlaybookRecord,
  customerId: string,
  target: PlaybookTarget,
  ids: { id: string; triggerKey: string | null },
  now: number,
): TaskRecord {
  return {
    id: ids.id,
    customerId,
    title: p.task.title,
    body: p.task.body,
    status: 'open',
    assignee: p.assignee === 'owner' ? target.owner : p.assignee,
    dueAt: p.task.dueInDays === null ? null : now + p.task.dueInDays * DAY_MS,
    snoozedUntil: null,
    playbookId: p.id,
    triggerKey: ids.triggerKey,
    createdAt: now,
    updatedAt: now,
    doneAt: null,
    createdBy: { type: 'playbook', id: p.id, label: p.name },
    doneBy: null,
  };
}
