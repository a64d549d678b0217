// POST /api/customers/batch and /api/health-scores/batch (docs/api.md, "Batches"): each item is
// checked here on its own, so a bad one is refused alone; the checked items are applied in one
// transaction where the writes run (writes/batches.ts), which returns the answer's text.

import type { TSchema } from 'typebox';
import {
  CustomerItem,
  CustomersBatchAnswer,
  CustomersBatchBody,
  ScoreItem,
  ScoreMergeItem,
  ScoresBatchAnswer,
  ScoresBatchBody,
} from '../api/batch.ts';
import { errorResponses } from '../api/common.ts';
import { BATCH_BODY_LIMIT } from '../api/limits.ts';
import type { ApiError } from '../domain/errors.ts';
import type { Store } from '../store/store.ts';
import {
  CustomerTaken,
  type CustomerUpsert,
  customerBatch,
  type Entry,
  refusedJson,
  scoreBatch,
} from '../writes/batches.ts';
import type { FactorUpdate } from '../writes/factor-updates.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { type App, type Routes, sendJson } from './reply.ts';
import { itemValidator } from './validation.ts';

const checkCustomer = itemValidator(CustomerItem);
const checkScore = itemValidator(ScoreItem);
const checkMerge = itemValidator(ScoreMergeItem);

type Raw = Record<string, unknown>;

/** The id a refused item's result names: the item's own, when it is a string. */
const idOf = (raw: unknown): string | null => {
  const id = raw !== null && typeof raw === 'object' ? (raw as Raw).customer_id : undefined;
  return typeof id === 'string' ? id : null;
};

function entries<T>(
  items: readonly unknown[],
  check: (raw: unknown) => ApiError | null,
  toItem: (raw: Raw) => T,
): Entry<T>[] {
  return items.map((raw) => {
    const error = check(raw);
    return error ? { result: refusedJson(idOf(raw), error) } : { item: toItem(raw as Raw) };
  });
}

/** The route's options: the batch body limit, who may call it and the OpenAPI description. */
const options = <Body extends TSchema>(tag: string, summary: string, body: Body, answer: TSchema) => ({
  bodyLimit: BATCH_BODY_LIMIT,
  config: { area: 'customers' as const },
  schema: {
    tags: [tag],
    summary,
    body,
    response: { 200: answer, ...errorResponses(400, 401, 409, 413, 415) },
  },
});

function customersBatch(app: App, store: Store, now: () => number): void {
  app.post(
    '/customers/batch',
    options(
      'customers',
      'Create or update up to 1,000 customers in one transaction',
      CustomersBatchBody,
      CustomersBatchAnswer,
    ),
    async (req, reply) => {
      const items = entries<CustomerUpsert>(req.body.customers, checkCustomer, (raw) => ({
        customerId: raw.customer_id as string,
        name: raw.name as string | undefined,
        email: raw.email as string | undefined,
        owner: raw.owner as string | null | undefined,
        arr: raw.arr as number | null | undefined,
        renewal_at: raw.renewal_at as string | null | undefined,
        lifecycle: raw.lifecycle as CustomerUpsert['lifecycle'],
        parent_id: raw.parent_id as string | null | undefined,
        metadata: raw.metadata as Record<string, unknown> | undefined,
      }));
      const claim = claimToAnswer(req);
      // On PostgreSQL another writer may create one of the new customers between the batch's
      // read and its insert: nothing of the batch commits, and it runs again on what is there now.
      for (let attempt = 1; ; attempt++) {
        try {
          const body = await store.run(customerBatch, req.accountId, items, claim, now());
          answeredWithWrite(req);
          return sendJson(reply, body);
        } catch (error) {
          if (!(error instanceof Error && error.name === CustomerTaken.name && attempt < 3)) throw error;
        }
      }
    },
  );
}

function scoresBatch(app: App, store: Store, now: () => number): void {
  app.post(
    '/health-scores/batch',
    options(
      'health scores',
      "Replace or merge up to 1,000 customers' factors in one transaction",
      ScoresBatchBody,
      ScoresBatchAnswer,
    ),
    async (req, reply) => {
      const check = (raw: unknown) =>
        raw !== null && typeof raw === 'object' && (raw as Raw).merge === true
          ? checkMerge(raw)
          : checkScore(raw);
      const items = entries<FactorUpdate>(req.body.scores, check, (raw) => ({
        customerId: raw.customer_id as string,
        factors: raw.factors as Record<string, number | null>,
        merge: raw.merge === true,
      }));
      const body = await store.run(scoreBatch, req.accountId, items, claimToAnswer(req), now());
      answeredWithWrite(req);
      return sendJson(reply, body);
    },
  );
}

export const batchRoutes =
  (store: Store, now: () => number): Routes =>
  async (app) => {
    customersBatch(app, store, now);
    scoresBatch(app, store, now);
  };
