// Events (docs/api.md, "Events"): the account's feed and one event, as ../api/events.ts shapes them.
import { Type } from 'typebox';
import { errorResponses } from '../api/common.ts';
import { EventParams, EventsPage, ListQuery, toEvent } from '../api/events.ts';
import { ApiError } from '../domain/errors.ts';
import type { Store } from '../store/store.ts';
import type { Routes } from './reply.ts';

export const eventsRoutes =
  (store: Store): Routes =>
  async (app) => {
    app.get(
      '/events',
      {
        schema: {
          tags: ['events'],
          summary: 'Events of the account, newest first',
          querystring: ListQuery,
          response: {
            200: EventsPage,
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
          params: EventParams,
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
