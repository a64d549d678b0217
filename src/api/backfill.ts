// Backfill (docs/api.md, "Backfill"): the schemas of /api/health-scores/backfill and a run as the
// API writes it.
import { Type } from 'typebox';
import { dateOf } from '../domain/portfolio.ts';
import { iso } from '../domain/time.ts';
import type { BackfillRecord } from '../store/store.ts';
import { CustomerId, Timestamp } from './common.ts';

/** The most customers one backfill may name. */
export const BACKFILL_IDS_MAX = 1000;

export const Backfill = Type.Object({
  id: Type.String({ description: '`bf_` and a time-ordered random part.' }),
  status: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
  from: Type.String({ description: 'The first day backfilled, YYYY-MM-DD (UTC).' }),
  customers_total: Type.Integer(),
  customers_done: Type.Integer(),
  versions_written: Type.Integer(),
  started_at: Timestamp,
  finished_at: Type.Union([Timestamp, Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
});
export const BackfillList = Type.Object({ data: Type.Array(Backfill) });
export const CreateBackfillBody = Type.Object(
  {
    from: Type.String({
      description: 'The first day to backfill, YYYY-MM-DD (UTC): at most 730 days back, not after today.',
    }),
    customer_ids: Type.Optional(
      Type.Array(CustomerId, {
        minItems: 1,
        maxItems: BACKFILL_IDS_MAX,
        description: 'The customers to backfill (1–1,000); every customer of the account when absent.',
      }),
    ),
  },
  { additionalProperties: false },
);
export const BackfillParams = Type.Object({ backfill_id: Type.String() });

/** The run as the API answers it. */
export const backfillFields = (b: BackfillRecord) => ({
  id: b.id,
  status: b.status,
  from: dateOf(b.fromDay),
  customers_total: b.customersTotal,
  customers_done: b.customersDone,
  versions_written: b.versionsWritten,
  started_at: iso(b.startedAt),
  finished_at: b.finishedAt === null ? null : iso(b.finishedAt),
  error: b.error,
});

/** The same as text: a write stores it for an Idempotency-Key's replay (writes/answers.ts). */
export const backfillJson = (b: BackfillRecord): string => JSON.stringify(backfillFields(b));
