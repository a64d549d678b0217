// A customer's rollup over its account hierarchy (docs/api.md, "Customers", "Rollup"): the subtree
// read in one recursive query (../store/customers.ts), summed and banded by ../domain/rollup.ts.
import { errorResponses, CustomerParams as IdParams } from '../api/common.ts';
import { Rollup, rollupObject } from '../api/rollup.ts';
import { notFound } from '../domain/errors.ts';
import { rollup } from '../domain/rollup.ts';
import type { Store } from '../store/store.ts';
import { MAX_CHAIN } from '../writes/customers.ts';
import type { App, Routes } from './reply.ts';

function rollupRoute(app: App, store: Store): void {
  app.get(
    '/customers/:customer_id/rollup',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['customers'],
        summary:
          "Roll up a customer and its descendants: ARR, the ARR-weighted score, its band, the statuses' counts",
        params: IdParams,
        response: { 200: Rollup, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const { customer_id: id } = req.params;
      // A chain holds at most MAX_CHAIN customers, so descendants lie at most MAX_CHAIN - 1 below.
      const members = await store.customerSubtree(req.accountId, id, MAX_CHAIN - 1);
      if (members === null) throw notFound.customer(id);
      const { thresholds } = await store.getSettings(req.accountId);
      return rollupObject(id, rollup(members, thresholds));
    },
  );
}

export const rollupRoutes =
  (store: Store): Routes =>
  async (app) => {
    rollupRoute(app, store);
  };
