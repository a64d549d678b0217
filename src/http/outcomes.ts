// Outcomes and calibration (docs/api.md, "Outcomes and calibration"; docs/scoring.md, "Does the
// score predict churn?"): what happened to each customer at a renewal, and the report that judges
// the score by them (the arithmetic in ../domain/calibration.ts).
import { Type } from 'typebox';
import { Deleted, errorResponses, CustomerParams as IdParams } from '../api/common.ts';
import { BATCH_BODY_LIMIT } from '../api/limits.ts';
import {
  CalibrationQuery,
  CalibrationSchema,
  calibrationJson,
  OutcomeBody,
  OutcomeItem,
  OutcomeParams,
  type OutcomeRequest,
  OutcomesBatchAnswer,
  OutcomesBatchBody,
  OutcomesPage,
  OutcomesQuery,
  toOutcome,
} from '../api/outcomes.ts';
import { JudgedPacker } from '../domain/calibration-pack.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { DAY_MS } from '../domain/rules.ts';
import type { Segment, Store } from '../store/store.ts';
import { type CalibrationThreadOptions, CalibrationThreads } from '../work/calibration-threads.ts';
import { PerAccount } from '../work/per-account.ts';
import { type Entry, refusedJson } from '../writes/batches.ts';
import { type OutcomeInput, outcomeBatch, recordOutcome, removeOutcome } from '../writes/outcomes.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { instantOf } from './instants.ts';
import { type App, type Routes, sendJson } from './reply.ts';
import { segmentOf } from './segments.ts';
import { itemValidator } from './validation.ts';

const OutcomeRef = Type.Ref('Outcome');

/** `at` as ms: now when absent; 400 parameter_invalid unless ISO 8601 and not in the future. */
function outcomeTime(at: string | undefined, now: number, param = 'at'): number {
  if (at === undefined) return now;
  const ms = instantOf(at, param);
  if (ms > now) throw new ApiError('parameter_invalid', `'${param}' may not be in the future.`, param);
  return ms;
}

const inputOf = (customerId: string, body: OutcomeRequest, now: number): OutcomeInput => ({
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

function postOutcome(app: App, { store, now }: Deps): void {
  app.post(
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
      const body = await store.run(
        recordOutcome,
        req.accountId,
        item,
        { ...req.actor },
        claimToAnswer(req),
        clock,
      );
      answeredWithWrite(req);
      return sendJson(reply.code(201), body);
    },
  );
}

function listOutcomes(app: App, { store }: Deps): void {
  app.get(
    '/customers/:customer_id/outcomes',
    {
      schema: {
        tags: ['outcomes'],
        summary: "A customer's outcomes, the newest first",
        params: IdParams,
        querystring: OutcomesQuery,
        response: {
          200: OutcomesPage,
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
        data: page.data.map(toOutcome),
        has_more: page.hasMore,
      };
    },
  );
}

function deleteOutcome(app: App, { store }: Deps): void {
  app.delete(
    '/customers/:customer_id/outcomes/:outcome_id',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['outcomes'],
        summary: 'Delete an outcome recorded by mistake',
        params: OutcomeParams,
        response: {
          200: Deleted,
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

function postOutcomesBatch(app: App, { store, now }: Deps): void {
  app.post(
    '/outcomes/batch',
    {
      bodyLimit: BATCH_BODY_LIMIT,
      config: { area: 'customers' },
      schema: {
        tags: ['outcomes'],
        summary: 'Record up to 1,000 outcomes in one transaction',
        body: OutcomesBatchBody,
        response: {
          200: OutcomesBatchAnswer,
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
          return { item: inputOf(id as string, raw as OutcomeRequest, clock) };
        } catch (error) {
          if (error instanceof ApiError) return { result: refusedJson(id, error) };
          throw error;
        }
      });
      const body = await store.run(
        outcomeBatch,
        req.accountId,
        entries,
        { ...req.actor },
        claimToAnswer(req),
        clock,
      );
      answeredWithWrite(req);
      return sendJson(reply, body);
    },
  );
}

/**
 * The size of a page of outcomes read. On SQLite the read itself is synchronous, and on both the
 * factors' JSON is parsed on the main thread: a page of 5,000 outcomes of 50 factors holds it
 * 40-60 ms, and two calibrations' pages would run back to back between two turns of the event loop.
 * The reads yield between pages (docs/operations.md, "The calibration threads"), each page at
 * most PAGE_CELLS factor values (800 outcomes of 50 factors) and, on SQLite, where a page's
 * time is all this thread's, sized from the last one's to take about PAGE_MS; 100 to 5,000
 * outcomes. Not by time on PostgreSQL, where most of it is the database's: so sized, a segment's
 * pages shrink to 100 and its calibration over 100,000 outcomes takes 8.1 s instead of 4.3 s.
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

/** Lets the requests waiting run between two pages. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

function getCalibration(app: App, { store, calibrations }: Deps): void {
  const { threads, perAccount } = calibrations;
  app.get(
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
      // Every lifecycle unless filtered: churned customers are what calibration judges the score by.
      const segment = segmentOf(req);
      // Identical: the same horizon and the same filters, in any order.
      const key = JSON.stringify([
        horizonDays,
        (segment?.metadata ?? []).map((f) => JSON.stringify([f.key, f.value])).sort(),
        segment?.owner,
        segment?.renewalAfter,
        segment?.renewalBefore,
        segment?.parentId,
        segment?.lifecycle,
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
  (store: Store, now: () => number, threads: CalibrationThreadOptions = {}): Routes =>
  async (app) => {
    const calibrations = {
      threads: new CalibrationThreads(threads),
      perAccount: new PerAccount(CALIBRATIONS_PER_ACCOUNT),
    };
    app.addHook('onClose', () => calibrations.threads.close());
    const deps: Deps = { store, now, calibrations };
    for (const route of ROUTES) route(app, deps);
  };
