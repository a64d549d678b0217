// The settings routes: parse, call ../writes/rescore.ts (which recomputes the scores), shape the
// answer. docs/api.md, "Settings".
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import type { Weights } from '../domain/scoring.ts';
import { iso, nextTimestamp } from '../domain/time.ts';
import type { Settings, Store } from '../store/store.ts';
import { changeThresholds, changeWeights, type Preview, previewWeights } from '../writes/rescore.ts';
import { auditEntry } from './audit.ts';
import { errorResponses, Timestamp } from './schemas.ts';

export const WeightsSchema = Type.Unsafe<Weights>({
  type: 'object',
  minProperties: 1,
  maxProperties: 50,
  propertyNames: { pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'names as for factors' },
  additionalProperties: { type: 'number', minimum: 0, maximum: 1 },
  description: 'Factor name to weight in [0, 1]; the weights sum to 1.0 (within 1e-6).',
});
export const WeightsBody = Type.Object({ weights: WeightsSchema }, { additionalProperties: false });
export const WeightsAnswer = Type.Object({
  weights: Type.Record(Type.String(), Type.Number()),
  updated_at: Type.Union([Timestamp, Type.Null()]),
});

const Bound = Type.Number({ exclusiveMinimum: 0, maximum: 1 });
export const ThresholdsBody = Type.Object(
  { healthy: Type.Optional(Bound), at_risk: Type.Optional(Bound) },
  { additionalProperties: false, minProperties: 1 },
);
export const ThresholdsAnswer = Type.Object({
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

/** A preview's answer schema (weights, rules), each count described in the change's own words. */
export const previewSchema = (d: { customers: string; scores: string; bands: string; moves: string }) =>
  Type.Object({
    customers: Type.Integer({ description: d.customers }),
    scores_changed: Type.Integer({ description: d.scores }),
    band_changes: Type.Integer({ description: d.moves }),
    bands: Type.Object(
      { healthy: Type.Integer(), at_risk: Type.Integer(), critical: Type.Integer() },
      { description: d.bands },
    ),
  });

export const PreviewAnswer = previewSchema({
  customers: 'Customers with a health score.',
  scores: 'Scores these weights would change.',
  moves: 'Customers who would move to another status band.',
  bands: 'Customers per band under these weights.',
});

/** A preview as the API answers it. */
export const previewAnswer = (p: Preview) => ({
  customers: p.customers,
  scores_changed: p.scoresChanged,
  band_changes: p.bandChanges,
  bands: p.bands,
});

function readWeights(app: FastifyInstance, store: Store): void {
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
}

function patchWeights(app: FastifyInstance, store: Store, now: () => number): void {
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
      const at = now();
      return weightsAnswer(
        await changeWeights(store, req.accountId, req.body.weights, at, auditEntry(req, null, at)),
      );
    },
  );
}

function postWeightsPreview(app: FastifyInstance, store: Store): void {
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
    async (req) => previewAnswer(await previewWeights(store, req.accountId, req.body.weights)),
  );
}

function readThresholds(app: FastifyInstance, store: Store): void {
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
}

function patchThresholds(app: FastifyInstance, store: Store, now: () => number): void {
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
      const at = now();
      return thresholdsAnswer(
        await changeThresholds(store, req.accountId, req.body, at, auditEntry(req, null, at)),
      );
    },
  );
}

export const AlertsBody = Type.Object(
  {
    drop: Type.Union([
      Type.Object(
        {
          delta: Type.Number({
            exclusiveMinimum: 0,
            maximum: 1,
            description: 'How far below its peak a score must fall, in (0, 1].',
          }),
          days: Type.Integer({
            minimum: 1,
            maximum: 90,
            description: 'The window the peak is taken over, and the quiet time after an alert: 1-90 days.',
          }),
        },
        { additionalProperties: false },
      ),
      Type.Null({ description: 'No drop alerts.' }),
    ]),
  },
  { additionalProperties: false },
);
export const AlertsAnswer = Type.Object({
  drop: Type.Union([Type.Object({ delta: Type.Number(), days: Type.Integer() }), Type.Null()]),
  updated_at: Type.Union([Timestamp, Type.Null()]),
});

const alertsAnswer = (s: Settings) => ({
  drop: s.drop,
  updated_at: s.alertsUpdatedAt === null ? null : iso(s.alertsUpdatedAt),
});

function readAlerts(app: FastifyInstance, store: Store): void {
  app.get(
    '/settings/health-score/alerts',
    {
      schema: {
        tags: ['settings'],
        summary: 'The drop alert rule (null: off)',
        response: { 200: AlertsAnswer, ...errorResponses(401) },
      },
    },
    async (req) => alertsAnswer(await store.getSettings(req.accountId)),
  );
}

function patchAlerts(app: FastifyInstance, store: Store, now: () => number): void {
  app.patch<{ Body: Static<typeof AlertsBody> }>(
    '/settings/health-score/alerts',
    {
      schema: {
        tags: ['settings'],
        summary: 'Set the drop alert rule (customer.health_score.dropped), or turn it off with null',
        body: AlertsBody,
        response: { 200: AlertsAnswer, ...errorResponses(400, 401, 413, 415) },
      },
    },
    async (req) => {
      const settings = await store.transaction(async (tx) => {
        const current = await tx.getSettings(req.accountId, { forUpdate: true });
        await tx.putAlerts(req.accountId, req.body.drop, nextTimestamp(now(), current.alertsUpdatedAt ?? 0));
        return tx.getSettings(req.accountId);
      });
      return alertsAnswer(settings);
    },
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [
  readWeights,
  patchWeights,
  postWeightsPreview,
  readThresholds,
  patchThresholds,
  readAlerts,
  patchAlerts,
];

export const settingsRoutes =
  (store: Store, now: () => number): FastifyPluginAsync =>
  async (app) => {
    for (const route of ROUTES) route(app, store, now);
  };
