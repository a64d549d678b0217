// A customer's timeline (docs/api.md, "Timeline"): the query, an entry of each type with its own
// data, and an entry as the API writes it.
import { type TSchema, Type } from 'typebox';
import { OUTCOMES } from '../domain/calibration.ts';
import { STATUSES } from '../domain/scoring.ts';
import { iso } from '../domain/time.ts';
import {
  TIMELINE_LIMIT_DEFAULT,
  TIMELINE_LIMIT_MAX,
  TIMELINE_TYPES,
  type TimelineEntry,
  type TimelineType,
} from '../domain/timeline.ts';
import { oneOf, Timestamp } from './common.ts';
import { ActorSchema } from './tasks.ts';

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const TimelineQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: TIMELINE_LIMIT_MAX,
        default: TIMELINE_LIMIT_DEFAULT,
        description: `Page size, 1-${TIMELINE_LIMIT_MAX} (${TIMELINE_LIMIT_DEFAULT}).`,
      }),
    ),
    starting_after: Type.Optional(
      Type.String({ maxLength: 512, description: 'The id of the last entry of the previous page.' }),
    ),
    types: Type.Optional(
      Type.String({
        maxLength: 1024,
        description: `Only these types, comma-separated: ${TIMELINE_TYPES.join(', ')}.`,
      }),
    ),
  },
  { additionalProperties: false },
);

const Version = Type.Integer({ description: 'The version of the score (its history’s).' });
const Score = Type.Number();
const Status = oneOf(STATUSES);
const Change = <T extends TSchema>(value: T) => Type.Object({ from: nullable(value), to: nullable(value) });

/** Each type's `data`. */
const DATA = {
  score_changed: Type.Object({
    version: Version,
    reason: Type.String({ description: 'The history’s reason: factors_updated, metrics_updated, …' }),
    from: nullable(Score),
    to: Score,
    status: Status,
  }),
  status_changed: Type.Object({ version: Version, from: nullable(Status), to: Status, health_score: Score }),
  score_dropped: Type.Object({ from: nullable(Score), to: Score, peak: Score }),
  override_set: Type.Object({
    version: Version,
    health_score: Score,
    reason: Type.String(),
    expires_at: Timestamp,
    set_by: Type.String(),
  }),
  override_removed: Type.Object({
    version: Version,
    health_score: nullable(Score),
    reason: nullable(Type.String()),
    computed_score: Score,
  }),
  override_expired: Type.Object({
    version: Version,
    health_score: nullable(Score),
    reason: nullable(Type.String()),
    expires_at: nullable(Timestamp),
    computed_score: Score,
  }),
  outcome: Type.Object({
    outcome_id: Type.String(),
    outcome: oneOf(OUTCOMES),
    note: nullable(Type.String()),
  }),
  note: Type.Object({ note_id: Type.String(), body: Type.String(), updated_at: Timestamp }),
  task_created: Type.Object({
    task_id: Type.String(),
    title: Type.String(),
    assignee: nullable(Type.String()),
    due_at: nullable(Timestamp),
    playbook_id: nullable(Type.String()),
  }),
  task_done: Type.Object({ task_id: Type.String(), title: Type.String(), assignee: nullable(Type.String()) }),
  customer_updated: Type.Object({
    changes: Type.Object(
      {
        owner: Type.Optional(Change(Type.String())),
        arr: Type.Optional(Change(Type.Number())),
        renewal_at: Type.Optional(Change(Timestamp)),
        lifecycle: Type.Optional(Change(Type.String())),
        parent_id: Type.Optional(Change(Type.String())),
      },
      { description: 'The fields that changed, each with its value before and after.' },
    ),
  }),
  source_event: Type.Object({
    source_id: Type.String(),
    source_name: Type.String({ description: 'The source’s name when the message came.' }),
    source_type: oneOf(['segment', 'stripe', 'webhook'] as const),
    kind: Type.String({ description: 'The Segment type, the Stripe event type, or webhook.' }),
    summary: Type.String({ description: 'What it changed, in words; empty when not known.' }),
  }),
} satisfies Record<TimelineType, TSchema>;

const item = <T extends TimelineType>(type: T) =>
  Type.Object({
    id: Type.String({
      description: '`tl_` and an opaque part: the same entry has the same id on every read.',
    }),
    type: Type.Literal(type),
    at: Timestamp,
    actor: nullable(ActorSchema),
    summary: Type.String({ description: 'One readable sentence.' }),
    data: DATA[type],
  });

// One literal per type, as a tuple: the union's Static (the typed client's) tells the types apart.
export const TimelineItem = Type.Union(
  [
    item('score_changed'),
    item('status_changed'),
    item('score_dropped'),
    item('override_set'),
    item('override_removed'),
    item('override_expired'),
    item('outcome'),
    item('note'),
    item('task_created'),
    item('task_done'),
    item('customer_updated'),
    item('source_event'),
  ],
  {
    description: 'One entry of a timeline; its `data` depends on its `type`.',
  },
);

export const TimelinePage = Type.Object({ data: Type.Array(TimelineItem), has_more: Type.Boolean() });

/** The page as the API writes it. */
export const timelineJson = (page: { data: readonly TimelineEntry[]; hasMore: boolean }): string =>
  JSON.stringify({
    data: page.data.map((e) => ({
      id: e.id,
      type: e.type,
      at: iso(e.at),
      actor: e.actor === null ? null : { type: e.actor.type, id: e.actor.id, label: e.actor.label },
      summary: e.summary,
      data: e.data,
    })),
    has_more: page.hasMore,
  });
