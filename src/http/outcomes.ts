// Outcomes and calibration (docs/api.md, "Outcomes and calibration"; docs/scoring.md, "Does the
// score predict churn?"): what happened to each customer at a renewal, and the report that judges
// the score by them (the arithmetic in ../domain/calibration.ts).
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { type Calibration, OUTCOMES } from '../domain/calibration.ts';
import { JudgedPacker } from '../domain/calibration-pack.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { DAY_MS } from '../domain/rules.ts';
import { STATUSES, type Weights } from '../domain/scoring.ts';
import type { Segment, Store } from '../store/store.ts';
import { type CalibrationThreadOptions, CalibrationThreads } from '../work/calibration-threads.ts';
import { PerAccount } from '../work/per-account.ts';
import { type Entry, refusedJson } from '../writes/batches.ts';
import {
  MAX_NOTE,
  type OutcomeInput,
  outcomeBatch,
  recordOutcome,
  removeOutcome,
} from '../writes/outcomes.ts';
import { BATCH_BODY_LIMIT, MAX_BATCH_ITEMS, refusal } from './batch-schemas.ts';
import { sendJson } from './customers.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { errorResponses, instantOf, Limit, Timestamp } from './schemas.ts';
import { segmentOf, segmentParams } from './segments.ts';
import { itemValidator } from './validation.ts';

const IdParams = Type.Object({ customer_id: Type.String() });
const OutcomeParams = Type.Object({ customer_id: Type.String(), outcome_id: Type.String() });

const Kind = Type.Union(
  OUTCOMES.map((o) => Type.Literal(o)),
  { description: 'churned or retained.' },
);
const fields = {
  outcome: Kind,
  at: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'When it happened (the renewal date): ISO 8601 with a time zone, not in the future; now unless given.',
    }),
  ),
  note: Type.Optional(Type.String({ maxLength: MAX_NOTE, description: `Up to ${MAX_NOTE} characters.` })),
};
export const OutcomeBody = Type.Object(fields, { additionalProperties: false });
export const OutcomeItem = Type.Object(
  { customer_id: Type.String({ minLength: 1, maxLength: 255 }), ...fields },
  { additionalProperties: false },
);
export const OutcomesBatchBody = Type.Object(
  {
    outcomes: Type.Array(Type.Unknown(), {
      minItems: 1,
      maxItems: MAX_BATCH_ITEMS,
      description: '1-1,000 outcomes, recorded in order.',
    }),
  },
  { additionalProperties: false },
);
export const OutcomeSchema = Type.Object(
  {
    id: Type.String(),
    customer_id: Type.String(),
    outcome: Kind,
    at: Timestamp,
    note: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
  },
  { $id: 'Outcome' },
);
const OutcomeRef = Type.Ref('Outcome');
export const OutcomesQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    starting_after: Type.Optional(
      Type.String({ maxLength: 255, description: 'The id of the last outcome of the previous page.' }),
    ),
  },
  { additionalProperties: false },
);
export const CalibrationQuery = Type.Object(
  {
    horizon_days: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 365,
        description: 'Judge each outcome by the score this many days before it (0-365; 0 unless given).',
      }),
    ),
  },
  { additionalProperties: false, ...segmentParams },
);
const Auc = Type.Union([Type.Number(), Type.Null()], {
  description: 'P(a retained outcome scored above a churned one), ties ½; null without one of each.',
});
export const CalibrationSchema = Type.Object({
  horizon_days: Type.Integer(),
  outcomes: Type.Object({
    churned: Type.Integer({ description: 'Churned outcomes judged by a score.' }),
    retained: Type.Integer({ description: 'Retained outcomes judged by a score.' }),
    unscored: Type.Integer({ description: 'Outcomes whose customer had no score yet at that time.' }),
  }),
  auc: Auc,
  bands: Type.Array(
    Type.Object({
      status: Type.Union(STATUSES.map((s) => Type.Literal(s))),
      outcomes: Type.Integer(),
      churned: Type.Integer(),
      churn_rate: Type.Union([Type.Number(), Type.Null()]),
    }),
    { description: 'By the band the judged score has under today’s thresholds: healthy, at_risk, critical.' },
  ),
  factors: Type.Array(Type.Object({ factor: Type.String(), outcomes: Type.Integer(), auc: Auc }), {
    description: 'Each factor’s own AUC over the outcomes whose version had it, best first.',
  }),
  current_weights_auc: Type.Union([Type.Number(), Type.Null()], {
    description:
      'The AUC of today’s weights applied to the same outcomes’ factors: what the suggestion must beat.',
  }),
  suggested_weights: Type.Union([Type.Record(Type.String(), Type.Number()), Type.Null()], {
    description:
      'Weights fitted to the outcomes (never worse than today’s over them); null with fewer than 20 of either kind.',
  }),
  suggested_auc: Auc,
});

/** `at` as ms: now when absent; 400 parameter_invalid unless ISO 8601 and not in the future. */
function outcomeTime(at: string | undefined, now: number, param = 'at'): number {
  if (at === undefined) return now;
  const ms = instantOf(at, param);
  if (ms > now) throw new ApiError('parameter_invalid', `'${param}' may not be in the future.`, param);
  return ms;
}

const inputOf = (customerId: string, body: Static<typeof OutcomeBody>, now: number): OutcomeInput => ({
  customerId,
  outcome: body.outcome,
  at: outcomeTime(body.at, now),
  note: body.note ?? null,
});

interface Deps {
  store: Store;
  now: () => number;
  calibrations: { threads: CalibrationThreads; perAccount: PerAccount };
}

function postOutcome(app: FastifyInstance, { store, now }: Deps): void {
  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof OutcomeBody> }>(
    '/customers/:customer_id/outcomes',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['outcomes'],
        summary: 'Record what happened to a customer at a renewal: churned or retained',
        params: IdParams,
        body: OutcomeBody,
        response: { 201: OutcomeRef, ...errorResponses(400, 401, 404, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      const clock = now();
      const item = inputOf(req.params.customer_id, req.body, clock);
      const body = await store.run(recordOutcome, req.accountId, item, claimToAnswer(req), clock);
      answeredWithWrite(req);
      return sendJson(reply.code(201), body);
    },
  );
}

function listOutcomes(app: FastifyInstance, { store }: Deps): void {
  app.get<{ Params: Static<typeof IdParams>; Querystring: Static<typeof OutcomesQuery> }>(
    '/customers/:customer_id/outcomes',
    {
      schema: {
        tags: ['outcomes'],
        summary: "A customer's outcomes, the newest first",
        params: IdParams,
        querystring: OutcomesQuery,
        response: {
          200: Type.Object({ data: Type.Array(OutcomeRef), has_more: Type.Boolean() }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (req) => {
      const { customer_id } = req.params;
      const page = await store.listOutcomes(req.accountId, customer_id, {
        after: req.query.starting_after,
        limit: req.query.limit ?? 10,
      });
      // Outcomes go with their customer: only an empty page asks whether the customer exists, and
      // whether the page it goes on from is one of its outcomes (an empty page otherwise says nothing).
      if (page.data.length === 0) {
        if (!(await store.getCustomer(req.accountId, customer_id))) throw notFound.customer(customer_id);
        const after = req.query.starting_after;
        if (after !== undefined && !(await store.getOutcome(req.accountId, customer_id, after))) {
          throw new ApiError(
            'parameter_invalid',
            `'starting_after' must be the id of one of this customer's outcomes; '${after}' is not.`,
            'starting_after',
          );
        }
      }
      return {
        data: page.data.map((o) => ({
          id: o.id,
          customer_id: o.customerId,
          outcome: o.outcome,
          at: new Date(o.at).toISOString(),
          note: o.note,
          created_at: new Date(o.createdAt).toISOString(),
        })),
        has_more: page.hasMore,
      };
    },
  );
}

function deleteOutcome(app: FastifyInstance, { store }: Deps): void {
  app.delete<{ Params: Static<typeof OutcomeParams> }>(
    '/customers/:customer_id/outcomes/:outcome_id',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['outcomes'],
        summary: 'Delete an outcome recorded by mistake',
        params: OutcomeParams,
        response: {
          200: Type.Object({ id: Type.String(), deleted: Type.Boolean() }),
          ...errorResponses(401, 404),
        },
      },
    },
    async (req) => {
      await store.run(removeOutcome, req.accountId, req.params.customer_id, req.params.outcome_id);
      return { id: req.params.outcome_id, deleted: true };
    },
  );
}

const checkItem = itemValidator(OutcomeItem);

function postOutcomesBatch(app: FastifyInstance, { store, now }: Deps): void {
  app.post<{ Body: Static<typeof OutcomesBatchBody> }>(
    '/outcomes/batch',
    {
      bodyLimit: BATCH_BODY_LIMIT,
      config: { area: 'customers' },
      schema: {
        tags: ['outcomes'],
        summary: 'Record up to 1,000 outcomes in one transaction',
        body: OutcomesBatchBody,
        response: {
          200: Type.Object({
            results: Type.Array(
              Type.Union([
                Type.Object({ customer_id: Type.String(), status: Type.Literal(201), outcome: OutcomeRef }),
                Type.Object(refusal),
              ]),
            ),
          }),
          ...errorResponses(400, 401, 409, 413, 415),
        },
      },
    },
    async (req, reply) => {
      const clock = now();
      const entries: Entry<OutcomeInput>[] = req.body.outcomes.map((raw) => {
        const id =
          typeof (raw as { customer_id?: unknown })?.customer_id === 'string'
            ? (raw as { customer_id: string }).customer_id
            : null;
        try {
          const refused = checkItem(raw);
          if (refused) throw refused;
          return { item: inputOf(id as string, raw as Static<typeof OutcomeBody>, clock) };
        } catch (error) {
          if (error instanceof ApiError) return { result: refusedJson(id, error) };
          throw error;
        }
      });
      const body = await store.run(outcomeBatch, req.accountId, entries, claimToAnswer(req), clock);
      answeredWithWrite(req);
      return sendJson(reply, body);
    },
  );
}

/**
 * The size of a page of outcomes read. On SQLite the read itself is synchronous, and on both the
 * factors' JSON is parsed on the main thread: a page of 5,000 outcomes of 50 factors held it
 * 40-60 ms, and two calibrations' pages ran back to back between two turns of the event loop.
 * The reads yield between pages (docs/operations.md, "The calibration threads"), each page at
 * most PAGE_CELLS factor values (800 outcomes of 50 factors) and, on SQLite, where a page's
 * time is all this thread's, sized from the last one's to take about PAGE_MS; 100 to 5,000
 * outcomes. Not by time on PostgreSQL, where most of it is the database's: so sized, a segment's
 * pages shrank to 100 and its calibration over 100,000 outcomes took 8.1 s instead of 4.3 s.
 */
const PAGE_CELLS = 40_000;
const PAGE_MS = 8;
const FIRST_PAGE = 500;

/** Different calibrations of one account computed at once; the next waits its turn (docs/api.md). */
const CALIBRATIONS_PER_ACCOUNT = 2;

/** The calibration report (docs/scoring.md, "Does the score predict churn?"). */
export async function calibration(
  store: Store,
  threads: CalibrationThreads,
  accountId: string,
  horizonDays: number,
  segment: Segment | undefined,
) {
  const settings = await store.getSettings(accountId);
  const packer = new JudgedPacker();
  let limit = FIRST_PAGE;
  for (let after: string | null = null; ; ) {
    const started = performance.now();
    const page = await store.judgedOutcomes(accountId, {
      horizonMs: horizonDays * DAY_MS,
      segment,
      after,
      limit,
    });
    packer.add(page);
    if (page.length < limit) break;
    after = (page.at(-1) as { id: string }).id;
    let next = PAGE_CELLS / (1 + packer.cells / Math.max(1, packer.judged));
    if (store.backend === 'sqlite')
      next = Math.min(next, (limit * PAGE_MS) / Math.max(1, performance.now() - started));
    limit = Math.round(Math.min(5000, Math.max(100, next)));
    await turn();
  }
  const { judged, transfer } = packer.packed();
  const report = await threads.compute(accountId, judged, transfer, {
    weights: settings.weights,
    thresholds: settings.thresholds,
  });
  return calibrationJson(report, horizonDays, packer.unscored);
}

/** The calibration report as the API answers it (docs/api.md, "Outcomes and calibration"). */
export function calibrationJson(report: Calibration, horizonDays: number, unscored: number) {
  return {
    horizon_days: horizonDays,
    outcomes: { churned: report.churned, retained: report.retained, unscored },
    auc: report.auc,
    bands: report.bands.map((b) => ({
      status: b.status,
      outcomes: b.outcomes,
      churned: b.churned,
      churn_rate: b.churnRate,
    })),
    factors: report.factors,
    current_weights_auc: report.currentWeightsAuc,
    suggested_weights: report.suggestedWeights as Weights | null,
    suggested_auc: report.suggestedAuc,
  };
}

/** Lets the requests waiting run between two pages. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

function getCalibration(app: FastifyInstance, { store, calibrations }: Deps): void {
  const { threads, perAccount } = calibrations;
  app.get<{ Querystring: Static<typeof CalibrationQuery> }>(
    '/health-scores/calibration',
    {
      schema: {
        tags: ['outcomes'],
        summary: 'Does the score predict churn? Each outcome judged by the score some days before it',
        querystring: CalibrationQuery,
        response: { 200: CalibrationSchema, ...errorResponses(400, 401) },
      },
    },
    async (req) => {
      const horizonDays = req.query.horizon_days ?? 0;
      const segment = segmentOf(req.query);
      // Identical: the same horizon and the same filters, in any order.
      const key = JSON.stringify([
        horizonDays,
        (segment ?? []).map((f) => JSON.stringify([f.key, f.value])).sort(),
      ]);
      return perAccount.run(req.accountId, key, () =>
        calibration(store, threads, req.accountId, horizonDays, segment),
      );
    },
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [postOutcome, listOutcomes, deleteOutcome, postOutcomesBatch, getCalibration];

/** `threads`: where the calibration's arithmetic runs; they are closed with the app. */
export const outcomesRoutes =
  (store: Store, now: () => number, threads: CalibrationThreadOptions = {}): FastifyPluginAsync =>
  async (app) => {
    const calibrations = {
      threads: new CalibrationThreads(threads),
      perAccount: new PerAccount(CALIBRATIONS_PER_ACCOUNT),
    };
    app.addHook('onClose', () => calibrations.threads.close());
    const deps: Deps = { store, now, calibrations };
    for (const route of ROUTES) route(app, deps);
  };
