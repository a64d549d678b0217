// Tasks and notes (docs/api.md, "Tasks" and "Notes"): the schemas of /api/tasks, a customer's
// tasks and notes, and a task or note as the API writes it.
import { Type } from 'typebox';
import {
  type Actor,
  NOTE_BODY_MAX,
  type NoteRecord,
  TASK_BODY_MAX,
  TASK_STATUSES,
  TASK_TITLE_MAX,
  type TaskRecord,
} from '../domain/tasks.ts';
import { iso } from '../domain/time.ts';
import { Limit, oneOf, Timestamp } from './common.ts';
import { Email } from './customers.ts';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const ActorSchema = Type.Object({
  type: oneOf(['key', 'user', 'source', 'playbook'] as const),
  id: Type.String(),
  label: Type.String(),
});

const Title = Type.String({
  minLength: 1,
  maxLength: TASK_TITLE_MAX,
  pattern: '\\S',
  description: `1-${TASK_TITLE_MAX} characters, not blank.`,
});
const TaskBody = Type.String({
  maxLength: TASK_BODY_MAX,
  description: `At most ${TASK_BODY_MAX} characters.`,
});
const Assignee = nullable(
  Type.String({
    ...Email,
    description: 'Whose task it is: an email address, compared ignoring case; null: nobody.',
  }),
);
const Instant = (description: string) => nullable(Type.String({ maxLength: 64, description }));
const TaskStatus = oneOf(TASK_STATUSES);

export const Task = Type.Object({
  id: Type.String({ description: '`task_` and a time-ordered random part.' }),
  customer_id: Type.String(),
  title: Type.String(),
  body: Type.String(),
  status: TaskStatus,
  assignee: nullable(Type.String()),
  due_at: nullable(Timestamp),
  snoozed_until: nullable(Timestamp),
  playbook_id: nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
  done_at: nullable(Timestamp),
  created_by: ActorSchema,
});

export const TaskPage = Type.Object({
  data: Type.Array(Task),
  has_more: Type.Boolean(),
  next_cursor: nullable(Type.String()),
});

export const CreateTaskBody = Type.Object(
  {
    title: Title,
    body: Type.Optional(TaskBody),
    assignee: Type.Optional(Assignee),
    due_at: Type.Optional(Instant('When it is due: ISO 8601 with a time zone; null: no date.')),
  },
  { additionalProperties: false },
);

export const UpdateTaskBody = Type.Object(
  {
    title: Type.Optional(Title),
    body: Type.Optional(TaskBody),
    status: Type.Optional(TaskStatus),
    assignee: Type.Optional(Assignee),
    due_at: Type.Optional(Instant('When it is due: ISO 8601 with a time zone; null: no date.')),
    snoozed_until: Type.Optional(
      Instant('Out of the inbox until this instant (ISO 8601 with a time zone); null: back now.'),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const TaskListQuery = Type.Object(
  {
    assignee: Type.Optional(
      Type.String({
        maxLength: 320,
        description: "An assignee's email (ignoring case), 'me' (the signed-in person) or 'none' (nobody's).",
      }),
    ),
    status: Type.Optional(
      oneOf(['open', 'done', 'all'] as const, {
        description: "'open' (the default), 'done', or 'all': open ones first, then done ones.",
      }),
    ),
    customer_id: Type.Optional(Type.String({ maxLength: 255 })),
    due_before: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'Tasks due before this instant (ISO 8601 with a time zone).',
      }),
    ),
    include_snoozed: Type.Optional(
      oneOf(['true', 'false', 'only'] as const, {
        description: "'true' lists snoozed tasks too; 'only', the snoozed ones alone.",
      }),
    ),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(
      Type.String({ maxLength: 1024, description: 'next_cursor of the previous page (of the same query).' }),
    ),
  },
  { additionalProperties: false },
);

export const TaskParams = Type.Object({ task_id: Type.String() });

export const Note = Type.Object({
  id: Type.String({ description: '`note_` and a time-ordered random part.' }),
  customer_id: Type.String(),
  body: Type.String(),
  author: ActorSchema,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const NotePage = Type.Object({ data: Type.Array(Note), has_more: Type.Boolean() });

const NoteBody = Type.String({
  minLength: 1,
  maxLength: NOTE_BODY_MAX,
  pattern: '\\S',
  description: `1-${NOTE_BODY_MAX} characters, not blank.`,
});
export const NoteInput = Type.Object({ body: NoteBody }, { additionalProperties: false });

export const NoteListQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    starting_after: Type.Optional(
      Type.String({ maxLength: 255, description: 'The id of the last note of the previous page.' }),
    ),
  },
  { additionalProperties: false },
);

export const NoteParams = Type.Object({ note_id: Type.String() });

const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));
const actorFields = (a: Actor) => ({ type: a.type, id: a.id, label: a.label });

/** The task as the API answers it (and as task.created and task.updated carry it). */
export const taskFields = (t: TaskRecord) => ({
  id: t.id,
  customer_id: t.customerId,
  title: t.title,
  body: t.body,
  status: t.status,
  assignee: t.assignee,
  due_at: isoOrNull(t.dueAt),
  snoozed_until: isoOrNull(t.snoozedUntil),
  playbook_id: t.playbookId,
  created_at: iso(t.createdAt),
  updated_at: iso(t.updatedAt),
  done_at: isoOrNull(t.doneAt),
  created_by: actorFields(t.createdBy),
});

export const noteFields = (n: NoteRecord) => ({
  id: n.id,
  customer_id: n.customerId,
  body: n.body,
  author: actorFields(n.author),
  created_at: iso(n.createdAt),
  updated_at: iso(n.updatedAt),
});

/** As text: a create stores it for an Idempotency-Key's replay (writes/answers.ts). */
export const taskJson = (t: TaskRecord): string => JSON.stringify(taskFields(t));
export const noteJson = (n: NoteRecord): string => JSON.stringify(noteFields(n));
