// What every route file shares to register and answer: the Fastify instance typed by the API's
// schemas (src/api), so a handler's request is the schema's Static, and the sending of JSON text
// written by src/api.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';

/** The app as a route file registers on it: requests typed from the route's schema. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** A route file's plugin, on the typed app. */
export type Routes = FastifyPluginAsync<Record<never, never>, RawServerDefault, TypeBoxTypeProvider>;

/** Sends JSON text we built ourselves (the route's schema still documents its shape). */
export const sendJson = (reply: FastifyReply, json: string) =>
  reply
    .type('application/json; charset=utf-8')
    .serializer((payload: unknown) => payload as string)
    .send(json);

/** Vitals' address as the request reached it: links and ingest URLs go back there. */
export const publicBase = (req: FastifyRequest): string => `${req.protocol}://${req.host}`;
