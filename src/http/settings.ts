// The settings routes: parse, call ../writes/rescore.ts (which recomputes the scores) or
// ../writes/alerts.ts (the drop alert rule, which recomputes nothing), shape the answer.
// docs/api.md, "Settings".
import { errorResponses } from '../api/common.ts';
import {
  AlertsAnswer,
  AlertsBody,
  PreviewAnswer,
  previewAnswer,
  ThresholdsAnswer,
  ThresholdsBody,
  WeightsAnswer,
  WeightsBody,
} from '../api/settings.ts';
import { iso } from '../domain/time.ts';
import type { Settings, Store } from '../store/store.ts';
import { applyAlerts } from '../writes/alerts.ts';
import { changeThresholds, changeWeights, previewWeights } from '../writes/rescore.ts';
import { auditEntry } from './audit.ts';
import type { App, Routes } from './reply.ts';

const weightsAnswer = (s: Settings) => ({
  weights: s.weights,
  updated_at: s.weightsUpdatedAt === null ? null : iso(s.weightsUpdatedAt),
});
const thresholdsAnswer = (s: Settings) => ({
  ...s.thresholds,
  updated_at: s.thresholdsUpdatedAt === null ? null : iso(s.thresholdsUpdatedAt),
});

function readWeights(app: App, store: Store): void {
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

function patchWeights(app: App, store: Store, now: () => number): void {
  app.patch(
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

function postWeightsPreview(app: App, store: Store): void {
  app.post(
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

function readThresholds(app: App, store: Store): void {
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

function patchThresholds(app: App, store: Store, now: () => number): void {
  app.patch(
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

const alertsAnswer = (s: Settings) => ({
  drop: s.drop,
  updated_at: s.alertsUpdatedAt === null ? null : iso(s.alertsUpdatedAt),
});

function readAlerts(app: App, store: Store): void {
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

function patchAlerts(app: App, store: Store, now: () => number): void {
  app.patch(
    '/settings/health-score/alerts',
    {
      schema: {
        tags: ['settings'],
        summary: 'Set the drop alert rule (customer.health_score.dropped), or turn it off with null',
        body: AlertsBody,
        response: { 200: AlertsAnswer, ...errorResponses(400, 401, 413, 415) },
      },
    },
    async (req) => alertsAnswer(await store.run(applyAlerts, req.accountId, req.body.drop, now())),
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
  (store: Store, now: () => number): Routes =>
  async (app) => {
    for (const route of ROUTES) route(app, store, now);
  };
