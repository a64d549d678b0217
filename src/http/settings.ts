import type { FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { ApiError } from '../domain/errors.ts';
import { rescoreAll } from '../domain/health.ts';
import { type Thresholds, thresholdsValid, type Weights, weightsSumValid } from '../domain/scoring.ts';
import { iso, nextTimestamp } from '../domain/time.ts';
import type { ScoreReason, Settings, Store, Tx } from '../store/store.ts';
import { errorResponses, Timestamp } from './schemas.ts';

const WeightsSchema = Type.Unsafe<Weights>({
  type: 'object',
  minProperties: 1,
  maxProperties: 50,
  propertyNames: { pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'names as for factors' },
  additionalProperties: { type: 'number', minimum: 0, maximum: 1 },
  description: 'Factor name to weight in [0, 1]; the weights sum to 1.0 (within 1e-6).',
});
const WeightsBody = Type.Object({ weights: WeightsSchema }, { additionalProperties: false });
const WeightsAnswer = Type.Object({
  weights: Type.Record(Type.String(), Type.Number()),
  updated_at: Type.Union([Timestamp, Type.Null()]),
});

const Bound = Type.Number({ exclusiveMinimum: 0, maximum: 1 });
const ThresholdsBody = Type.Object(
  { healthy: Type.Optional(Bound), at_risk: Type.Optional(Bound) },
  { additionalProperties: false, minProperties: 1 },
);
const ThresholdsAnswer = Type.Object({
  healthy: Type.Number({ description: 'Scores at or above are healthy.' }),
  at_risk: Type.Number({
    description: 'Scores at or above (and below healthy) are at_risk; below are critical.',
  }),
  updated_at: Type.Union([Timestamp, Type.Null()]),
});

const weightsAnswer = (s: Settings) => ({
  weights: s.weights,
  updated_at: s.weightsUpdatedAt === null ? null : iso(s.weightsUpdatedAt),
});
const thresholdsAnswer = (s: Settings) => ({
  ...s.thresholds,
  updated_at: s.thresholdsUpdatedAt === null ? null : iso(s.thresholdsUpdatedAt),
});

function checkWeightsSum(weights: Weights): void {
  if (!weightsSumValid(weights)) {
    const sum = Object.values(weights).reduce((a, b) => a + b, 0);
    throw new ApiError('weights_sum_invalid', `The weights must sum to 1.0; these sum to ${sum}.`, 'weights');
  }
}

const PreviewAnswer = Type.Object({
  customers: Type.Integer({ description: 'Customers with a health score.' }),
  scores_changed: Type.Integer({ description: 'Scores these weights would change.' }),
  band_changes: Type.Integer({ description: 'Customers who would move to another status band.' }),
  bands: Type.Object(
    { healthy: Type.Integer(), at_risk: Type.Integer(), critical: Type.Integer() },
    { description: 'Customers per band under these weights.' },
  ),
});

/** Every stored score follows the new settings at once, with history and events for those that moved. */
async function rescore(tx: Tx, accountId: string, settings: Settings, reason: ScoreReason, now: number) {
  const updates = rescoreAll(await tx.allScores(accountId), settings, now);
  if (updates.length === 0) return;
  await tx.writeScores(
    accountId,
    updates.map((u) => u.record),
    reason,
  );
  await tx.insertEvents(
    accountId,
    updates.flatMap((u) => u.events),
  );
}

export const settingsRoutes =
  (store: Store): FastifyPluginAsync =>
  async (app) => {
    app.get(
      '/settings/health-score/weights',
      {
        schema: {
          tags: ['settings'],
          summary: 'The account-wide factor weights ({} and null before any are set)',
          response: { 200: WeightsAnswer, ...errorResponses(401) },
        },
      },
      async (req) => weightsAnswer(await store.getSettings(req.accountId)),
    );

    app.patch<{ Body: Static<typeof WeightsBody> }>(
      '/settings/health-score/weights',
      {
        schema: {
          tags: ['settings'],
          summary: 'Replace the weights; every stored score is recomputed at once',
          body: WeightsBody,
          response: { 200: WeightsAnswer, ...errorResponses(400, 401, 413, 415) },
        },
      },
      async (req) => {
        const { weights } = req.body;
        checkWeightsSum(weights);
        const settings = await store.transaction(async (tx) => {
          const current = await tx.getSettings(req.accountId, { forUpdate: true });
          const now = nextTimestamp(Date.now(), current.weightsUpdatedAt ?? 0);
          await tx.putWeights(req.accountId, weights, now);
          const next = await tx.getSettings(req.accountId);
          await rescore(tx, req.accountId, next, 'weights_changed', now);
          return next;
        });
        return weightsAnswer(settings);
      },
    );

    app.post<{ Body: Static<typeof WeightsBody> }>(
      '/settings/health-score/weights/preview',
      {
        schema: {
          tags: ['settings'],
          summary: 'What these weights would change, without saving them',
          body: WeightsBody,
          response: { 200: PreviewAnswer, ...errorResponses(400, 401, 413, 415) },
        },
      },
      async (req) => {
        const { weights } = req.body;
        checkWeightsSum(weights);
        return store.transaction(async (tx) => {
          const scores = await tx.allScores(req.accountId);
          const settings = await tx.getSettings(req.accountId);
          const updates = rescoreAll(scores, { weights, thresholds: settings.thresholds }, Date.now());
          const bands = await tx.countScoresByStatus(req.accountId);
          let scoresChanged = 0;
          let bandChanges = 0;
          const before = new Map(scores.map((s) => [s.customerId, s]));
          for (const { record } of updates) {
            const old = before.get(record.customerId);
            if (!old) continue;
            if (record.score !== old.score) scoresChanged++;
            if (record.status !== old.status) {
              bandChanges++;
              bands[old.status]--;
              bands[record.status]++;
            }
          }
          return {
            customers: scores.length,
            scores_changed: scoresChanged,
            band_changes: bandChanges,
            bands,
          };
        });
      },
    );

    app.get(
      '/settings/health-score/thresholds',
      {
        schema: {
          tags: ['settings'],
          summary: 'The lower bounds of the healthy and at_risk status bands',
          response: { 200: ThresholdsAnswer, ...errorResponses(401) },
        },
      },
      async (req) => thresholdsAnswer(await store.getSettings(req.accountId)),
    );

    app.patch<{ Body: Static<typeof ThresholdsBody> }>(
      '/settings/health-score/thresholds',
      {
        schema: {
          tags: ['settings'],
          summary: 'Change the status band bounds (0 < at_risk < healthy <= 1); every status is re-banded',
          body: ThresholdsBody,
          response: { 200: ThresholdsAnswer, ...errorResponses(400, 401, 413, 415) },
        },
      },
      async (req) => {
        const settings = await store.transaction(async (tx) => {
          const current = await tx.getSettings(req.accountId, { forUpdate: true });
          const thresholds: Thresholds = { ...current.thresholds, ...req.body };
          if (!thresholdsValid(thresholds)) {
            throw new ApiError(
              'parameter_invalid',
              `Thresholds need 0 < at_risk < healthy <= 1; this would make at_risk ${thresholds.at_risk} and healthy ${thresholds.healthy}.`,
              req.body.at_risk !== undefined ? 'at_risk' : 'healthy',
            );
          }
          const now = nextTimestamp(Date.now(), current.thresholdsUpdatedAt ?? 0);
          await tx.putThresholds(req.accountId, thresholds, now);
          const next = await tx.getSettings(req.accountId);
          await rescore(tx, req.accountId, next, 'thresholds_changed', now);
          return next;
        });
        return thresholdsAnswer(settings);
      },
    );
  };
