// Backfill (docs/api.md, "Backfill"): scores for the past from the metrics already kept, so the
// trend, the movers and the calibration work on the first day. A run starts here and goes on in
// the background (src/backfill-runner.ts); its progress is read back by id.
import {
  Backfill,
  BackfillList,
  BackfillParams,
  backfillFields,
  CreateBackfillBody,
} from '../api/backfill.ts';
import { errorResponses } from '../api/common.ts';
import type { BackfillRunner } from '../backfill-runner.ts';
import { BACKFILL_MAX_DAYS } from '../domain/backfill.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { DAY_MS, dayOf } from '../domain/portfolio.ts';
import type { Store } from '../store/store.ts';
import { startBackfill } from '../writes/backfill.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { type App, type Routes, sendJson } from './reply.ts';

interface Deps {
  store: Store;
  now: () => number;
  runner: BackfillRunner;
  leaseMs: number;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The UTC day of a YYYY-MM-DD that names a real date; null otherwise. */
function dayOfDate(text: string): number | null {
  if (!DATE.test(text)) return null;
  const ms = Date.parse(`${text}T00:00:00.000Z`);
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text) return null;
  return ms / DAY_MS;
}

/** The first day asked for: a real date, not after today, at most BACKFILL_MAX_DAYS back. */
function fromDayOf(text: string, now: number): number {
  const day = dayOfDate(text);
  if (day === null)
    throw new ApiError('parameter_invalid', `'from' must be a date as YYYY-MM-DD; got '${text}'.`, 'from');
  const today = dayOf(now);
  if (day > today) throw new ApiError('parameter_invalid', `'from' is after today (${text}).`, 'from');
  if (today - day > BACKFILL_MAX_DAYS) {
    throw new ApiError(
      'parameter_invalid',
      `'from' may be at most ${BACKFILL_MAX_DAYS} days back; got ${text}.`,
      'from',
    );
  }
  return day;
}

function start(app: App, { store, now, runner, leaseMs }: Deps): void {
  app.post(
    '/health-scores/backfill',
    {
      config: { area: 'account' },
      schema: {
        tags: ['health scores'],
        summary: 'Compute past scores from the metrics kept, day by day, in the background',
        body: CreateBackfillBody,
        response: { 202: Backfill, ...errorResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      const at = now();
      const input = { fromDay: fromDayOf(req.body.from, at), customerIds: req.body.customer_ids ?? null };
      const { body, id } = await store.run(
        startBackfill,
        req.accountId,
        input,
        runner.owner,
        claimToAnswer(req),
        at,
        leaseMs,
      );
      answeredWithWrite(req);
      void runner.drive(req.accountId, id);
      return sendJson(reply.code(202), body);
    },
  );
}

function list(app: App, { store }: Deps): void {
  app.get(
    '/health-scores/backfill',
    {
      config: { area: 'account' },
      schema: {
        tags: ['health scores'],
        summary: "The account's backfills, newest first (the last 20)",
        response: { 200: BackfillList, ...errorResponses(401) },
      },
    },
    async (req) => ({ data: (await store.listBackfills(req.accountId, 20)).map(backfillFields) }),
  );
}

function read(app: App, { store }: Deps): void {
  app.get(
    '/health-scores/backfill/:backfill_id',
    {
      config: { area: 'account' },
      schema: {
        tags: ['health scores'],
        summary: "A backfill's progress",
        params: BackfillParams,
        response: { 200: Backfill, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const run = await store.getBackfill(req.accountId, req.params.backfill_id);
      if (!run) throw notFound.backfill(req.params.backfill_id);
      return backfillFields(run);
    },
  );
}

export const backfillRoutes =
  (deps: Deps): Routes =>
  async (app) => {
    for (const route of [start, list, read]) route(app, deps);
  };
