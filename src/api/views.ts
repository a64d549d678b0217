// Saved views (docs/api.md, "Saved views"): a signed-in person's named filters and sort of the
// portfolio, kept as the portfolio's query string; the schemas of /api/views and a view as the API
// writes it.
import { Type } from 'typebox';
import { iso } from '../domain/time.ts';
import type { ViewRecord } from '../store/store.ts';
import { Timestamp } from './common.ts';

/** A person may keep this many views; one more is 400 (docs/api.md, "Saved views"). */
export const VIEWS_PER_PERSON = 100;
export const VIEW_NAME_MAX = 100;
export const VIEW_QUERY_MAX = 2000;

export const View = Type.Object({
  id: Type.String({ description: '`view_` and a time-ordered random part.' }),
  name: Type.String(),
  query: Type.String({ description: "The portfolio's URL query string, as saved." }),
  created_at: Timestamp,
});
export const ViewsList = Type.Object({ data: Type.Array(View) });
export const CreateViewBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: VIEW_NAME_MAX }),
    query: Type.String({
      maxLength: VIEW_QUERY_MAX,
      description: "The portfolio's URL query string (without the `?`); it may be empty.",
    }),
  },
  { additionalProperties: false },
);
export const ViewParams = Type.Object({ view_id: Type.String() });

/** The view as the API answers it. */
export const viewFields = (v: ViewRecord) => ({
  id: v.id,
  name: v.name,
  query: v.query,
  created_at: iso(v.createdAt),
});

/** The same as text: a write stores it for an Idempotency-Key's replay (writes/answers.ts). */
export const viewJson = (v: ViewRecord): string => JSON.stringify(viewFields(v));
