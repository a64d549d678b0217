// The audit log (docs/people.md, "Audit log"): the schemas, and an entry as the API writes it.
import { Type } from 'typebox';
import { iso } from '../domain/time.ts';
import { Limit } from './common.ts';

export const AuditQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    starting_after: Type.Optional(
      Type.String({ maxLength: 255, description: 'An entry id: the page starts just older.' }),
    ),
  },
  { additionalProperties: false },
);
const Entry = Type.Object({
  id: Type.String(),
  actor: Type.Object({
    type: Type.Union([Type.Literal('key'), Type.Literal('user'), Type.Literal('source')]),
    id: Type.String(),
    label: Type.String({
      description:
        "A key's first characters, a person's email, or the name of the source whose message made the change.",
    }),
  }),
  action: Type.String({
    description: 'What was done, e.g. customer.updated, weights.updated, user.created.',
  }),
  object_id: Type.Union([Type.String(), Type.Null()]),
  at: Type.String(),
  request_id: Type.String(),
});
export const AuditPage = Type.Object({ data: Type.Array(Entry), has_more: Type.Boolean() });

/** What the API writes of an entry (the store's AuditEntry has it). */
export interface AuditFields {
  id: string;
  actor: { type: 'key' | 'user' | 'source'; id: string; label: string };
  action: string;
  objectId: string | null;
  at: number;
  requestId: string;
}

export const toAuditEntry = (e: AuditFields) => ({
  id: e.id,
  actor: e.actor,
  action: e.action,
  object_id: e.objectId,
  at: iso(e.at),
  request_id: e.requestId,
});
