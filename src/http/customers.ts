// Customers (docs/api.md, "Customers"): parse, call ../writes/customers.ts, answer in the
// shapes of ../api/customers.ts.
import { Type } from 'typebox';
import { Deleted, errorResponses, CustomerParams as IdParams } from '../api/common.ts';
import {
  CreateBody,
  CustomerPage,
  customerObject,
  customerPageJson,
  ListQuery,
  UpdateBody,
} from '../api/customers.ts';
import { notFound } from '../domain/errors.ts';
import type { Store } from '../store/store.ts';
import { createCustomer, deleteCustomer, updateCustomer } from '../writes/customers.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { type App, type Routes, sendJson } from './reply.ts';
import { segmentOf } from './segments.ts';

const CustomerRef = Type.Ref('Customer');

function createCustomerRoute(app: App, store: Store, now: () => number): void {
  app.post(
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
      const { customer_id, ...fields } = req.body;
      const input = { customerId: customer_id, ...fields };
      const body = await store.run(createCustomer, req.accountId, input, claimToAnswer(req), now());
      answeredWithWrite(req);
      return sendJson(reply.code(201), body);
    },
  );
}

function getCustomerRoute(app: App, store: Store): void {
  app.get(
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

function listCustomersRoute(app: App, store: Store): void {
  app.get(
    '/customers',
    {
      schema: {
        tags: ['customers'],
        summary: 'List customers by id, byte-wise ascending',
        querystring: ListQuery,
        response: {
          200: CustomerPage,
          ...errorResponses(400, 401),
        },
      },
    },
    async (req, reply) => {
      const page = await store.listCustomersJson(req.accountId, {
        limit: req.query.limit ?? 10,
        startingAfter: req.query.starting_after,
        search: req.query.search,
        segment: segmentOf(req),
      });
      return sendJson(reply, customerPageJson(page.json, page.hasMore));
    },
  );
}

function updateCustomerRoute(app: App, store: Store, now: () => number): void {
  app.patch(
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
      const updated = await store.run(updateCustomer, req.accountId, change, now());
      return customerObject(updated);
    },
  );
}

function deleteCustomerRoute(app: App, store: Store, now: () => number): void {
  app.delete(
    '/customers/:customer_id',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['customers'],
        summary: 'Delete a customer with its score and history',
        params: IdParams,
        response: {
          200: Deleted,
          ...errorResponses(400, 401, 404, 413, 415),
        },
      },
    },
    async (req) => store.run(deleteCustomer, req.accountId, req.params.customer_id, now()),
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
  (store: Store, now: () => number): Routes =>
  async (app) => {
    for (const route of ROUTES) route(app, store, now);
  };
