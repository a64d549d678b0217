// Factor rules (docs/scoring.md, "Factors from metrics"; docs/api.md, "Factor rules"): parse and
// check, call ../writes/rules.ts (which rescores every customer the change moves), shape the answer.
import { Type } from 'typebox';
import { errorResponses } from '../api/common.ts';
import {
  FactorParams,
  RuleBody,
  RuleDeleted,
  RulePreviewAnswer,
  type RuleRequest,
  RulesList,
  type ScaleRequest,
  toRule,
} from '../api/factor-rules.ts';
import { previewAnswer } from '../api/settings.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { type Scale, scaleRefusal } from '../domain/rules.ts';
import type { Store } from '../store/store.ts';
import { deleteRule, previewRule, putRule, type RuleInput } from '../writes/rules.ts';
import { auditEntry } from './audit.ts';
import type { App, Routes } from './reply.ts';

const RuleRef = Type.Ref('FactorRule');

/** The scale as the rule keeps it: only its type's fields, checked beyond what the schema says. */
function scaleOf(body: ScaleRequest): Scale {
  const wrong = (param: string, message: string) => new ApiError('parameter_invalid', message, param);
  let scale: Scale;
  if (body.type === 'linear') {
    if (body.steps !== undefined)
      throw wrong('scale.steps', "A linear scale has 'from' and 'to', not 'steps'.");
    for (const field of ['from', 'to'] as const) {
      if (body[field] === undefined) {
        throw new ApiError('parameter_missing', `A linear scale needs '${field}'.`, `scale.${field}`);
      }
    }
    scale = { type: 'linear', from: body.from as number, to: body.to as number };
  } else {
    for (const field of ['from', 'to'] as const) {
      if (body[field] !== undefined)
        throw wrong(`scale.${field}`, `A steps scale has 'steps', not '${field}'.`);
    }
    if (body.steps === undefined)
      throw new ApiError('parameter_missing', "A steps scale needs 'steps'.", 'scale.steps');
    scale = { type: 'steps', steps: body.steps.map((s) => ({ min: s.min, score: s.score })) };
  }
  const refused = scaleRefusal(scale);
  if (refused) throw wrong(refused.param, refused.message);
  return scale;
}

/** A rule as the body gives it, checked beyond what the schema says. */
const ruleInput = (factor: string, body: RuleRequest): RuleInput => ({
  factor,
  metric: body.metric,
  aggregate: body.aggregate,
  windowDays: body.window_days ?? null,
  scale: scaleOf(body.scale),
  maxAgeDays: body.max_age_days ?? null,
  gate: body.gate ? { below: body.gate.below, status: body.gate.status } : null,
});

function listRules(app: App, store: Store): void {
  app.get(
    '/settings/health-score/factors',
    {
      schema: {
        tags: ['settings'],
        summary: 'The factor rules, by factor name',
        response: { 200: RulesList, ...errorResponses(401) },
      },
    },
    async (req) => ({ data: (await store.listFactorRules(req.accountId)).map(toRule) }),
  );
}

function getRule(app: App, store: Store): void {
  app.get(
    '/settings/health-score/factors/:factor',
    {
      schema: {
        tags: ['settings'],
        summary: 'The rule that derives one factor',
        params: FactorParams,
        response: { 200: RuleRef, ...errorResponses(400, 401, 404) },
      },
    },
    async (req) => {
      const rule = (await store.listFactorRules(req.accountId)).find((r) => r.factor === req.params.factor);
      if (!rule) throw notFound.factorRule(req.params.factor);
      return toRule(rule);
    },
  );
}

function putRuleRoute(app: App, store: Store, now: () => number): void {
  app.put(
    '/settings/health-score/factors/:factor',
    {
      schema: {
        tags: ['settings'],
        summary: 'Create or replace the rule of a factor; every score it moves is recomputed at once',
        params: FactorParams,
        body: RuleBody,
        response: { 200: RuleRef, ...errorResponses(400, 401, 413, 415) },
      },
    },
    async (req) => {
      const at = now();
      const audit = auditEntry(req, req.params.factor, at);
      return toRule(
        await store.run(putRule, req.accountId, ruleInput(req.params.factor, req.body), at, audit),
      );
    },
  );
}

function previewRuleRoute(app: App, store: Store, now: () => number): void {
  app.post(
    '/settings/health-score/factors/:factor/preview',
    {
      schema: {
        tags: ['settings'],
        summary: 'What this rule would change, without saving it',
        params: FactorParams,
        body: RuleBody,
        response: { 200: RulePreviewAnswer, ...errorResponses(400, 401, 413, 415) },
      },
    },
    async (req) =>
      previewAnswer(
        await store.run(previewRule, req.accountId, ruleInput(req.params.factor, req.body), now()),
      ),
  );
}

function deleteRuleRoute(app: App, store: Store, now: () => number): void {
  app.delete(
    '/settings/health-score/factors/:factor',
    {
      schema: {
        tags: ['settings'],
        summary: 'Delete the rule of a factor; the factor leaves every score',
        params: FactorParams,
        response: {
          200: RuleDeleted,
          ...errorResponses(400, 401, 404, 413, 415),
        },
      },
    },
    async (req) => {
      const at = now();
      await store.run(
        deleteRule,
        req.accountId,
        req.params.factor,
        at,
        auditEntry(req, req.params.factor, at),
      );
      return { factor: req.params.factor, deleted: true };
    },
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [listRules, getRule, putRuleRoute, previewRuleRoute, deleteRuleRoute];

export const factorRulesRoutes =
  (store: Store, now: () => number): Routes =>
  async (app) => {
    for (const route of ROUTES) route(app, store, now);
  };
