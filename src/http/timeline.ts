// A customer's timeline (docs/api.md, "Timeline"): one newest-first feed of what Vitals keeps about
// it, paged by the last entry's id. Every key and role reads it (the `customers` area).
import { errorResponses, CustomerParams as IdParams } from '../api/common.ts';
import { TimelinePage, TimelineQuery, timelineJson } from '../api/timeline.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { positionOf, TIMELINE_LIMIT_DEFAULT, TIMELINE_TYPES, type TimelineType } from '../domain/timeline.ts';
import type { Store } from '../store/store.ts';
import { type App, type Routes, sendJson } from './reply.ts';

const KNOWN = new Set<string>(TIMELINE_TYPES);

/** `types=a,b`: the types asked for (all when absent); 400 naming the first that is not one. */
function typesOf(text: string | undefined): Set<TimelineType> {
  if (text === undefined) return new Set(TIMELINE_TYPES);
  const types = text.split(',').map((t) => t.trim());
  const unknown = types.find((t) => !KNOWN.has(t));
  if (unknown !== undefined) {
    throw new ApiError(
      'parameter_invalid',
      `'types' lists timeline types separated by commas; ${JSON.stringify(unknown)} is not one of ${TIMELINE_TYPES.join(', ')}.`,
      'types',
    );
  }
  return new Set(types as TimelineType[]);
}

function listTimeline(app: App, store: Store): void {
  app.get(
    '/customers/:customer_id/timeline',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['customers'],
        summary:
          "A customer's story, newest first: score changes, drops, overrides, outcomes, notes, tasks, changes and what its sources applied",
        params: IdParams,
        querystring: TimelineQuery,
        response: { 200: TimelinePage, ...errorResponses(400, 401, 404) },
      },
    },
    async (req, reply) => {
      const { customer_id } = req.params;
      const q = req.query;
      const types = typesOf(q.types);
      const after = q.starting_after === undefined ? null : positionOf(q.starting_after);
      if (after === null && q.starting_after !== undefined) {
        throw new ApiError(
          'parameter_invalid',
          "'starting_after' must be the id of an entry of a timeline (tl_…).",
          'starting_after',
        );
      }
      if (!(await store.getCustomer(req.accountId, customer_id))) throw notFound.customer(customer_id);
      const page = await store.customerTimeline(req.accountId, customer_id, {
        types,
        after,
        limit: q.limit ?? TIMELINE_LIMIT_DEFAULT,
      });
      return sendJson(reply, timelineJson(page));
    },
  );
}

export const timelineRoutes =
  (store: Store): Routes =>
  async (app) => {
    listTimeline(app, store);
  };
