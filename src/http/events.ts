import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { ApiError } from '../domain/errors.ts';
import { EVENT_TYPES, type EventRecord } from '../domain/events.ts';
import { iso } from '../domain/time.ts';
import type { Store } from '../store/store.ts';
import { errorResponses, Limit, Timestamp } from './schemas.ts';

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

export const eventsRoutes =
  (store: Store): FastifyPluginAsync =>
  async (app) => {
    app.get<{ Querystring: Static<typeof ListQuery> }>(
      '/events',
      {
        schema: {
          tags: ['events'],
          summary: 'Events of the account, newest first',
          querystring: ListQuery,
          response: {
            200: Type.Object({ data: Type.Array(Type.Ref('Event')), has_more: Type.Boolean() }),
            ...errorResponses(400, 401),
          },
        },
      },
      async (req) => {
        const { starting_after: after, ending_before: before } = req.query;
        if (after !== undefined && before !== undefined) {
          throw new ApiError(
            'parameter_invalid',
            "Give 'starting_after' (to page back) or 'ending_before' (to follow forward), not both.",
            'ending_before',
          );
        }
        // Event positions come from the event itself: an unknown id is a mistake, not the end of the list.
        for (const [name, id] of [
          ['starting_after', after],
          ['ending_before', before],
        ] as const) {
          if (id !== undefined && !(await store.getEvent(req.accountId, id))) {
            throw new ApiError(
              'parameter_invalid',
              `'${name}' must be the id of an event; '${id}' is not.`,
              name,
            );
          }
        }
        const page = await store.listEvents(req.accountId, {
          type: req.query.type,
          startingAfter: after,
          endingBefore: before,
          limit: req.query.limit ?? 10,
        });
        return { data: page.data.map(toEvent), has_more: page.hasMore };
      },
    );

    app.get<{ Params: { event_id: string } }>(
      '/events/:event_id',
      {
        schema: {
          tags: ['events'],
          summary: 'Retrieve one event',
          params: Type.Object({ event_id: Type.String() }),
          response: { 200: Type.Ref('Event'), ...errorResponses(401, 404) },
        },
      },
      async (req) => {
        const event = await store.getEvent(req.accountId, req.params.event_id);
        if (!event) throw new ApiError('event_not_found', `No event with id '${req.params.event_id}'.`);
        return toEvent(event);
      },
    );
  };
