// The batch endpoints' shapes (docs/api.md, "Batches"). The request schema checks only the
// envelope: each item is checked on its own (CustomerItem, ScoreItem…), so one bad item is that
// item's refusal, not the request's.
import { Type } from 'typebox';
import { CustomerId, ErrorSchema, ItemCustomerId, Metadata } from './common.ts';
import { bookFields, Email, Name } from './customers.ts';
import { FactorsPatch, FactorsSchema } from './health-scores.ts';
import { MAX_BATCH_ITEMS } from './limits.ts';

/** A batch body's list: 1 to MAX_BATCH_ITEMS items, each checked on its own. */
export const batchItems = (description: string) =>
  Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_BATCH_ITEMS, description });

export const CustomersBatchBody = Type.Object(
  { customers: batchItems('1-1,000 customers to create or update, applied in order.') },
  { additionalProperties: false },
);
export const ScoresBatchBody = Type.Object(
  { scores: batchItems('1-1,000 factor sets, applied in order.') },
  { additionalProperties: false },
);

/** One customer to upsert: created when missing (name and email then required), else updated. */
export const CustomerItem = Type.Object(
  {
    customer_id: CustomerId,
    name: Type.Optional(Name),
    email: Type.Optional(Email),
    ...bookFields,
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
/** One factor set: replaces the customer's factors, or with `merge: true` is merged into them. */
export const ScoreItem = Type.Object(
  {
    customer_id: ItemCustomerId,
    factors: FactorsSchema,
    merge: Type.Optional(Type.Literal(false)),
  },
  { additionalProperties: false },
);
export const ScoreMergeItem = Type.Object(
  {
    customer_id: ItemCustomerId,
    factors: FactorsPatch,
    merge: Type.Literal(true),
  },
  { additionalProperties: false },
);

/** A refused item's result: its own status (4xx) and error. */
export const refusal = {
  customer_id: Type.Union([Type.String(), Type.Null()]),
  status: Type.Integer({ minimum: 400, maximum: 499 }),
  error: ErrorSchema.properties.error,
};

export const CustomerResult = Type.Union([
  Type.Object({
    customer_id: Type.String(),
    status: Type.Union([Type.Literal(200), Type.Literal(201)]),
    customer: Type.Ref('Customer'),
  }),
  Type.Object(refusal),
]);
export const ScoreResult = Type.Union([
  Type.Object({
    customer_id: Type.String(),
    status: Type.Literal(200),
    health_score: Type.Ref('HealthScore'),
  }),
  Type.Object(refusal),
]);

export const CustomersBatchAnswer = Type.Object({ results: Type.Array(CustomerResult) });
export const ScoresBatchAnswer = Type.Object({ results: Type.Array(ScoreResult) });
