// Fastify's own serializer for one of our response schemas, as a route with that response
// schema uses it: the reference that hand-built JSON is proven byte-equal to.
import Fastify, { type FastifyInstance } from 'fastify';

export async function schemaSerializer<T>(
  schema: object,
  shape: (value: T) => unknown,
  /** The schemas it refers to by $ref. */
  refs: readonly object[] = [],
): Promise<{ app: FastifyInstance; serialize: (value: T) => Promise<string> }> {
  const { $id } = schema as { $id?: string };
  if (!$id) throw new Error('the schema needs an $id');
  const app = Fastify();
  for (const ref of refs) app.addSchema(ref);
  app.addSchema(schema);
  let next: unknown;
  app.get('/value', { schema: { response: { 200: { $ref: `${$id}#` } } } }, async () => next);
  await app.ready();
  return {
    app,
    serialize: async (value) => {
      next = shape(value);
      return (await app.inject({ method: 'GET', url: '/value' })).body;
    },
  };
}
