// Events (docs/api.md, "Events"): the schemas, and an event as the API writes it.
import { Type } from 'typebox';
import { EVENT_TYPES, type EventRecord } from '../domain/events.ts';
import { iso } from '../domain/time.ts';
import { Limit, Timestamp } from './common.ts';

// An enum (not a union of literals) so that a wrong value is answered with the list of valid ones.
export const EventType = Type.Enum(EVENT_TYPES);

export const EventSchema = Type.Object(
  {
    id: Type.String({ description: 'evt_…; the same id travels in X-Vitals-Event-Id on every delivery.' }),
    type: EventType,
    data: Type.Object({}, { additionalProperties: true }),
    created_at: Timestamp,
  },
  { $id: 'Event' },
);

export const ListQuery = Type.Object(
  {
    type: Type.Optional(EventType),
    limit: Type.Optional(Limit),
    starting_after: Type.Optional(
      Type.String({ maxLength: 64, description: 'An event id: the events just older than it.' }),
    ),
    ending_before: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'An event id: the events just newer than it, still newest first (follow the feed by passing the newest id seen).',
      }),
    ),
  },
  { additionalProperties: false },
);

export const toEvent = (e: EventRecord) => ({
  id: e.id,
  type: e.type,
  data: e.data,
  created_at: iso(e.createdAt),
});
export const EventsPage = Type.Object({ data: Type.Array(Type.Ref('Event')), has_more: Type.Boolean() });
export const EventParams = Type.Object({ event_id: Type.String() });
