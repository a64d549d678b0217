import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { type Static, Type } from 'typebox';
import { notFound } from '../domain/errors.ts';
import { customerObject } from '../store/customer-json.ts';
import type { Store } from '../store/store.ts';
import { createCustomer, deleteCustomer, updateCustomer } from '../writes/customers.ts';
import { recordAnswer } from './idempotency.ts';
import { CustomerId, errorResponses, Limit, Metadata, Timestamp } from './schemas.ts';
import { segmentOf, segmentParams } from './segments.ts';

export const Name = Type.String({
  minLength: 1,
  maxLength: 512,
  pattern: '\\S',
  description: '1-512 characters, not blank.',
});
export const Email = Type.String({
  maxLength: 320,
  pattern:
    '^[^@\\s\\u0000-\\u001f\\u007f]+@[^@\\s\\u0000-\\u001f\\u007f.]+(\\.[^@\\s\\u0000-\\u001f\\u007f.]+)+$',
  description: 'an address with one @ and a dot in the domain, at most 320 characters.',
});

export const Customer = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    email: Type.String(),
    metadata: Type.Object({}, { additionalProperties: true }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Customer' },
);

export const CreateBody = Type.Object(
  { customer_id: CustomerId, name: Name, email: Email, metadata: Type.Optional(Metadata) },
  { additionalProperties: false },
);
export const UpdateBody = Type.Object(
  { name: Type.Optional(Name), email: Type.Optional(Email), metadata: Type.Optional(Metadata) },
  { additionalProperties: false, minProperties: 1 },
);
const IdParams = Type.Object({ customer_id: Type.String() });
export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    starting_after: Type.Optional(Type.String({ maxLength: 255 })),
    search: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        // A NUL cannot be a LIKE pattern on either backend (SQLite ends the pattern there and
        // matches everything; PostgreSQL text cannot hold it): refused, see docs/api.md.
        pattern: '^[^\\u0000]+$',
        description:
          'Only customers whose id, name or email contains this text (ignoring case); no NUL character.',
      }),
    ),
  },
  { additionalProperties: false, ...segmentParams },
);

/** Sends JSON text we built ourselves (the route's schema still documents its shape). */
export const sendJson = (reply: FastifyReply, json: string) =>
  reply
    .type('application/json; charset=utf-8')
    .serializer((payload: unknown) => payload as string)
    .send(json);

export const toCustomer = customerObject;

const CustomerRef = Type.Ref('Customer');

function createCustomerRoute(app: FastifyInstance, store: Store, now: () => number): void {
  app.post<{ Body: Static<typeof CreateBody> }>(
    '/customers',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['customers'],
        summary: 'Create a customer',
        body: CreateBody,
        response: { 201: CustomerRef, ...errorResponses(400, 401, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      const { customer_id, name, email, metadata } = req.body;
      const body = await store.transaction(async (tx) => {
        const input = { customerId: customer_id, name, email, metadata };
        const created = toCustomer(await createCustomer(tx, req.accountId, input, now()));
        await recordAnswer(tx, req, reply, 201, created);
        return created;
      });
      return reply.code(201).send(body);
    },
  );
}

function getCustomerRoute(app: FastifyInstance, store: Store): void {
  app.get<{ Params: Static<typeof IdParams> }>(
    '/customers/:customer_id',
    {
      schema: {
        tags: ['customers'],
        summary: 'Retrieve a customer',
        params: IdParams,
        response: { 200: CustomerRef, ...errorResponses(401, 404) },
      },
    },
    async (req, reply) => {
      const json = await store.getCustomerJson(req.accountId, req.params.customer_id);
      if (json === null) throw notFound.customer(req.params.customer_id);
      return sendJson(reply, json);
    },
  );
}

function listCustomersRoute(app: FastifyInstance, store: Store): void {
  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/customers',
    {
      schema: {
        tags: ['customers'],
        summary: 'List customers by id, byte-wise ascending',
        querystring: ListQuery,
        response: {
          200: Type.Object({ customers: Type.Array(CustomerRef), has_more: Type.Boolean() }),
          ...errorResponses(400, 401),
        },
      },
    },
    async (req, reply) => {
      const page = await store.listCustomersJson(req.accountId, {
        limit: req.query.limit ?? 10,
        startingAfter: req.query.starting_after,
        search: req.query.search,
        segment: segmentOf(req.query),
      });
      return sendJson(reply, `{"customers":[${page.json}],"has_more":${page.hasMore}}`);
    },
  );
}

function updateCustomerRoute(app: FastifyInstance, store: Store, now: () => number): void {
  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof UpdateBody> }>(
    '/customers/:customer_id',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['customers'],
        summary: 'Update a customer (metadata merges; a null value removes a key)',
        params: IdParams,
        body: UpdateBody,
        response: { 200: CustomerRef, ...errorResponses(400, 401, 404, 413, 415) },
      },
    },
    async (req) => {
      const change = { customerId: req.params.customer_id, ...req.body };
      const updated = await store.transaction((tx) => updateCustomer(tx, req.accountId, change, now()));
      return toCustomer(updated);
    },
  );
}

function deleteCustomerRoute(app: FastifyInstance, store: Store, now: () => number): void {
  app.delete<{ Params: Static<typeof IdParams> }>(
    '/customers/:customer_id',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['customers'],
        summary: 'Delete a customer with its score and history',
        params: IdParams,
        response: {
          200: Type.Object({ id: Type.String(), deleted: Type.Boolean() }),
          ...errorResponses(400, 401, 404, 413, 415),
        },
      },
    },
    async (req) =>
      store.transaction((tx) => deleteCustomer(tx, req.accountId, req.params.customer_id, now())),
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [
  createCustomerRoute,
  getCustomerRoute,
  listCustomersRoute,
  updateCustomerRoute,
  deleteCustomerRoute,
];

export const customersRoutes =
  (store: Store, now: () => number): FastifyPluginAsync =>
  async (app) => {
    for (const route of ROUTES) route(app, store, now);
  };
