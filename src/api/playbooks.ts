// Playbooks (docs/api.md, "Playbooks"; docs/playbooks.md): the schemas of /api/playbooks and a
// playbook as the API writes it. A trigger is checked by its type's own schema (TRIGGERS), so a
// refusal names the field of that type (`trigger.days`), not a branch of a union.
import { type Static, Type } from 'typebox';
import { type PlaybookRecord, TRIGGER_TYPES, type Trigger } from '../domain/playbooks.ts';
import { AGGREGATES, type Aggregate } from '../domain/rules.ts';
import { STATUSES, type Status as StatusName } from '../domain/scoring.ts';
import { iso } from '../domain/time.ts';
import { oneOf, Timestamp } from './common.ts';
import { Email } from './customers.ts';
import { FactorName } from './limits.ts';

const Status = oneOf(STATUSES);
const Days = Type.Integer({ minimum: 1, maximum: 365, description: '1-365 days.' });

/** Each trigger type's fields (docs/playbooks.md, "Triggers"). */
export const TRIGGERS = {
  status_entered: Type.Object(
    { type: Type.Literal('status_entered'), status: Status },
    { additionalProperties: false },
  ),
  score_dropped: Type.Object({ type: Type.Literal('score_dropped') }, { additionalProperties: false }),
  renewal_approaching: Type.Object(
    {
      type: Type.Literal('renewal_approaching'),
      days: Days,
      statuses: Type.Optional(Type.Array(Status, { minItems: 1, maxItems: 3, uniqueItems: true })),
    },
    { additionalProperties: false },
  ),
  metric_threshold: Type.Object(
    {
      type: Type.Literal('metric_threshold'),
      metric: Type.String({ ...FactorName, description: 'The metric it reads; names as for factors.' }),
      aggregate: oneOf(AGGREGATES),
      window_days: Days,
      op: oneOf(['gte', 'lte'] as const),
      value: Type.Number({ minimum: -1e15, maximum: 1e15 }),
    },
    { additionalProperties: false },
  ),
} as const;

const TriggerBody = Type.Object(
  { type: oneOf(TRIGGER_TYPES, { description: TRIGGER_TYPES.join(', ') }) },
  {
    additionalProperties: true,
    description: "The trigger: its type and that type's fields (docs/playbooks.md).",
  },
);

const TaskTemplate = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
    body: Type.Optional(Type.String({ maxLength: 10_000 })),
    due_in_days: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 365 }), Type.Null()])),
  },
  { additionalProperties: false },
);

const Assignee = Type.Union([Type.Literal('owner'), Type.String({ ...Email }), Type.Null()], {
  description: "'owner' (the customer's owner), an email address, or null (nobody).",
});

export const CreatePlaybookBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
    enabled: Type.Optional(Type.Boolean()),
    trigger: TriggerBody,
    task: TaskTemplate,
    assignee: Type.Optional(Assignee),
  },
  { additionalProperties: false },
);

export const UpdatePlaybookBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' })),
    enabled: Type.Optional(Type.Boolean()),
    trigger: Type.Optional(TriggerBody),
    task: Type.Optional(TaskTemplate),
    assignee: Type.Optional(Assignee),
  },
  { additionalProperties: false, minProperties: 1 },
);

const TriggerAnswer = Type.Object(
  {
    type: oneOf(TRIGGER_TYPES),
    status: Type.Optional(Status),
    days: Type.Optional(Type.Integer()),
    statuses: Type.Optional(Type.Array(Status)),
    metric: Type.Optional(Type.String()),
    aggregate: Type.Optional(Type.String()),
    window_days: Type.Optional(Type.Integer()),
    op: Type.Optional(Type.String()),
    value: Type.Optional(Type.Number()),
  },
  { additionalProperties: false },
);

export const Playbook = Type.Object({
  id: Type.String({ description: '`pb_` and a time-ordered random part.' }),
  name: Type.String(),
  enabled: Type.Boolean(),
  trigger: TriggerAnswer,
  task: Type.Object({
    title: Type.String(),
    body: Type.String(),
    due_in_days: Type.Union([Type.Integer(), Type.Null()]),
  }),
  assignee: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const PlaybookList = Type.Object({ data: Type.Array(Playbook) });
export const PlaybookParams = Type.Object({ playbook_id: Type.String() });

/** The trigger as the API spells it. */
export function triggerFields(t: Trigger): Static<typeof TriggerAnswer> {
  switch (t.type) {
    case 'status_entered':
      return { type: t.type, status: t.status };
    case 'score_dropped':
      return { type: t.type };
    case 'renewal_approaching':
      return { type: t.type, days: t.days, ...(t.statuses ? { statuses: t.statuses } : {}) };
    case 'metric_threshold':
      return {
        type: t.type,
        metric: t.metric,
        aggregate: t.aggregate,
        window_days: t.windowDays,
        op: t.op,
        value: t.value,
      };
  }
}

/** A trigger as checked by its type's schema, in the domain's spelling. */
export function triggerOf(body: Record<string, unknown>): Trigger {
  // Checked by TRIGGERS[body.type] before: each field is there, of its type.
  const b = body as {
    status: StatusName;
    days: number;
    statuses?: StatusName[];
    metric: string;
    aggregate: Aggregate;
    window_days: number;
    op: 'gte' | 'lte';
    value: number;
  };
  switch (body.type as Trigger['type']) {
    case 'status_entered':
      return { type: 'status_entered', status: b.status };
    case 'score_dropped':
      return { type: 'score_dropped' };
    case 'renewal_approaching':
      return { type: 'renewal_approaching', days: b.days, statuses: b.statuses ?? null };
    case 'metric_threshold':
      return {
        type: 'metric_threshold',
        metric: b.metric,
        aggregate: b.aggregate,
        windowDays: b.window_days,
        op: b.op,
        value: b.value,
      };
  }
}

export const playbookFields = (p: PlaybookRecord) => ({
  id: p.id,
  name: p.name,
  enabled: p.enabled,
  trigger: triggerFields(p.trigger),
  task: { title: p.task.title, body: p.task.body, due_in_days: p.task.dueInDays },
  assignee: p.assignee,
  created_at: iso(p.createdAt),
  updated_at: iso(p.updatedAt),
});

export const playbookJson = (p: PlaybookRecord): string => JSON.stringify(playbookFields(p));
