// Factor rules (docs/scoring.md, "Factors from metrics"; docs/api.md, "Factor rules"): parse and
// check, call ../writes/rules.ts (which rescores every customer the change moves), shape the answer.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { ApiError, notFound } from '../domain/errors.ts';
import { AGGREGATES, type FactorRule, MAX_STEPS, type Scale, scaleRefusal } from '../domain/rules.ts';
import { GATE_STATUSES, type Gate } from '../domain/scoring.ts';
import { iso } from '../domain/time.ts';
import type { Store } from '../store/store.ts';
import { deleteRule, previewRule, putRule, type RuleInput } from '../writes/rules.ts';
import { auditEntry } from './audit.ts';
import { FactorName } from './health-scores.ts';
import { errorResponses, Timestamp } from './schemas.ts';
import { previewAnswer, previewSchema } from './settings.ts';

const Days = Type.Integer({ minimum: 1, maximum: 365 });
const Finite = Type.Number({ minimum: -Number.MAX_VALUE, maximum: Number.MAX_VALUE });

const ScaleSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('linear'), Type.Literal('steps')], {
      description: '`linear` (with from and to) or `steps` (with steps).',
    }),
    from: Type.Optional({ ...Finite, description: 'linear: the value that scores 0.' }),
    to: Type.Optional({ ...Finite, description: 'linear: the value that scores 1 (≠ from).' }),
    steps: Type.Optional(
      Type.Array(
        Type.Object(
          { min: Finite, score: Type.Number({ minimum: 0, maximum: 1 }) },
          { additionalProperties: false },
        ),
        {
          minItems: 1,
          maxItems: MAX_STEPS,
          description: `steps: 1-${MAX_STEPS} of {min, score}, min strictly ascending.`,
        },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * A gate: an object or null in one schema (not a union), so that a bad field is named as
 * `gate.below`, `gate.status` or `gate.NAME` rather than as the union's first branch.
 */
const GateBody = Type.Unsafe<Gate | null>({
  type: ['object', 'null'],
  properties: {
    below: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      description: 'While the factor scores below this (0-1), the status is at most `status`.',
    },
    status: { type: 'string', enum: [...GATE_STATUSES], description: 'at_risk or critical.' },
  },
  required: ['below', 'status'],
  additionalProperties: false,
  description:
    'Caps the customer\'s status while the factor is below `below`; its score is unchanged (docs/scoring.md, "Gates"). null or absent: none.',
});

/** A gate's band, spelled out (a union built from an array is `never` to Static, and so to the typed client). */
export const GateStatus = Type.Union([Type.Literal('at_risk'), Type.Literal('critical')]);

const GateAnswer = Type.Union([Type.Object({ below: Type.Number(), status: GateStatus }), Type.Null()], {
  description: 'The gate (docs/scoring.md, "Gates"); null: none.',
});

export const RuleBody = Type.Object(
  {
    metric: Type.String({ ...FactorName, description: 'The metric it reads; names as for factors.' }),
    aggregate: Type.Enum(AGGREGATES, {
      description: 'last, sum, count, avg, min or max of the points in the window.',
    }),
    window_days: Type.Optional({
      ...Days,
      description: '1-365; 30 unless given (last: no window unless given).',
    }),
    scale: ScaleSchema,
    max_age_days: Type.Optional({
      ...Days,
      description: '1-365: an older newest point makes the factor absent.',
    }),
    gate: Type.Optional(GateBody),
  },
  { additionalProperties: false },
);

export const Rule = Type.Object(
  {
    factor: Type.String(),
    metric: Type.String(),
    aggregate: Type.String(),
    window_days: Type.Union([Type.Integer(), Type.Null()]),
    scale: Type.Union([
      Type.Object({ type: Type.Literal('linear'), from: Type.Number(), to: Type.Number() }),
      Type.Object({
        type: Type.Literal('steps'),
        steps: Type.Array(Type.Object({ min: Type.Number(), score: Type.Number() })),
      }),
    ]),
    max_age_days: Type.Union([Type.Integer(), Type.Null()]),
    gate: GateAnswer,
    updated_at: Timestamp,
  },
  { $id: 'FactorRule' },
);
const RuleRef = Type.Ref('FactorRule');
const FactorParams = Type.Object({ factor: Type.String({ ...FactorName }) });

export const toRule = (r: FactorRule) => ({
  factor: r.factor,
  metric: r.metric,
  aggregate: r.aggregate,
  window_days: r.windowDays,
  scale: r.scale,
  max_age_days: r.maxAgeDays,
  gate: r.gate ? { below: r.gate.below, status: r.gate.status } : null,
  updated_at: iso(r.updatedAt),
});

/** The scale as the rule keeps it: only its type's fields, checked beyond what the schema says. */
function scaleOf(body: Static<typeof ScaleSchema>): Scale {
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
const ruleInput = (factor: string, body: Static<typeof RuleBody>): RuleInput => ({
  factor,
  metric: body.metric,
  aggregate: body.aggregate,
  windowDays: body.window_days ?? null,
  scale: scaleOf(body.scale),
  maxAgeDays: body.max_age_days ?? null,
  gate: body.gate ? { below: body.gate.below, status: body.gate.status } : null,
});

export const RulePreviewAnswer = previewSchema({
  customers: 'Customers the rule may move: those with a score or a point of its metric.',
  scores: 'Scores this rule would change (or create).',
  moves: 'Customers with a score who would move to another status band.',
  bands: 'Customers per band with this rule.',
});

function listRules(app: FastifyInstance, store: Store): void {
  app.get(
    '/settings/health-score/factors',
    {
      schema: {
        tags: ['settings'],
        summary: 'The factor rules, by factor name',
        response: { 200: Type.Object({ data: Type.Array(RuleRef) }), ...errorResponses(401) },
      },
    },
    async (req) => ({ data: (await store.listFactorRules(req.accountId)).map(toRule) }),
  );
}

function getRule(app: FastifyInstance, store: Store): void {
  app.get<{ Params: Static<typeof FactorParams> }>(
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

function putRuleRoute(app: FastifyInstance, store: Store, now: () => number): void {
  app.put<{ Params: Static<typeof FactorParams>; Body: Static<typeof RuleBody> }>(
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

function previewRuleRoute(app: FastifyInstance, store: Store, now: () => number): void {
  app.post<{ Params: Static<typeof FactorParams>; Body: Static<typeof RuleBody> }>(
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

function deleteRuleRoute(app: FastifyInstance, store: Store, now: () => number): void {
  app.delete<{ Params: Static<typeof FactorParams> }>(
    '/settings/health-score/factors/:factor',
    {
      schema: {
        tags: ['settings'],
        summary: 'Delete the rule of a factor; the factor leaves every score',
        params: FactorParams,
        response: {
          200: Type.Object({ factor: Type.String(), deleted: Type.Boolean() }),
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
  (store: Store, now: () => number): FastifyPluginAsync =>
  async (app) => {
    for (const route of ROUTES) route(app, store, now);
  };
