import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { type Static, Type } from 'typebox';
import { ApiError, notFound } from '../domain/errors.ts';
import { computedOf, gatesOf, type ScoreRecord } from '../domain/health.ts';
import { type Factors, STATUSES } from '../domain/scoring.ts';
import { iso } from '../domain/time.ts';
import type { ScoreCursor, Store } from '../store/store.ts';
import { runOne } from '../store/write.ts';
import { applyFactorUpdates, MAX_FACTORS } from '../writes/factor-updates.ts';
import { scoreAsOf } from '../writes/overrides.ts';
import { healthScoreJson } from '../writes/score-json.ts';
import { auditEntry } from './audit.ts';
import { sendJson } from './customers.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { errorResponses, Limit, Timestamp } from './schemas.ts';
import { segmentOf, segmentParams } from './segments.ts';

export const FactorName = {
  pattern: '^[a-z][a-z0-9_]{0,63}$',
  description: 'lowercase letters, digits, _; 1-64 long',
};

export const FactorsSchema = Type.Unsafe<Factors>({
  type: 'object',
  minProperties: 1,
  maxProperties: MAX_FACTORS,
  propertyNames: FactorName,
  additionalProperties: { type: 'number', minimum: 0, maximum: 1 },
  description: 'Factor name to score in [0, 1]; 1-50 factors.',
});
export const FactorsPatch = Type.Unsafe<Record<string, number | null>>({
  type: 'object',
  minProperties: 1,
  maxProperties: MAX_FACTORS,
  propertyNames: FactorName,
  additionalProperties: { type: ['number', 'null'], minimum: 0, maximum: 1 },
  description: 'Factors to set (score in [0, 1]) or remove (null).',
});

export const OverrideSchema = Type.Object(
  {
    health_score: Type.Number({ minimum: 0, maximum: 1, description: 'The score shown while it stands.' }),
    computed_score: Type.Number({ description: 'What the factors give, moving underneath.' }),
    reason: Type.String(),
    expires_at: Timestamp,
    set_at: Timestamp,
    set_by: Type.String({ description: 'The key or person who set it, as the audit log names them.' }),
  },
  { $id: 'Override' },
);

export const HealthScore = Type.Object(
  {
    customer_id: Type.String(),
    health_score: Type.Number({ minimum: 0, maximum: 1 }),
    factors: Type.Record(Type.String(), Type.Number()),
    status: Type.Union(
      STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          'The band of health_score, capped by the gates that apply (docs/scoring.md, "Gates"); an override sets it alone.',
      },
    ),
    gated_by: Type.Array(Type.String(), {
      description:
        "The factors whose rule's gate applies (the factor is below the gate), by name; empty when none does or an override stands.",
    }),
    updated_at: Timestamp,
    override: Type.Union([Type.Ref('Override'), Type.Null()], {
      description:
        'The override pinning health_score while it stands (docs/scoring.md, "Overrides"); null: none.',
    }),
  },
  { $id: 'HealthScore' },
);

export const HistoryEntry = Type.Object({
  version: Type.Integer({ description: 'Starts at 1 and grows by one with every change of this score.' }),
  health_score: Type.Number(),
  status: Type.String(),
  factors: Type.Record(Type.String(), Type.Number()),
  reason: Type.Union([
    Type.Literal('factors_updated'),
    Type.Literal('weights_changed'),
    Type.Literal('thresholds_changed'),
    Type.Literal('metrics_updated'),
    Type.Literal('rules_changed'),
    Type.Literal('time_passed'),
    Type.Literal('override_set'),
    Type.Literal('override_removed'),
    Type.Literal('override_expired'),
  ]),
  created_at: Timestamp,
});

const IdParams = Type.Object({ customer_id: Type.String() });
export const ScoreBody = Type.Object({ factors: FactorsSchema }, { additionalProperties: false });
export const PatchBody = Type.Object({ factors: FactorsPatch }, { additionalProperties: false });
export const HistoryQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    starting_after: Type.Optional(
      // Versions are 32-bit integers in storage (PostgreSQL integer): a larger bound is no version.
      Type.Integer({
        minimum: 1,
        maximum: 2_147_483_647,
        description: 'A version: the page starts just below it.',
      }),
    ),
  },
  { additionalProperties: false },
);
export const PortfolioQuery = Type.Object(
  {
    status: Type.Optional(Type.Enum(STATUSES)),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(Type.String({ maxLength: 1024, description: 'next_cursor of the previous page.' })),
  },
  { additionalProperties: false, ...segmentParams },
);

/** A health score on the portfolio's list: with its customer's name, so a page needs one request. */
export const PortfolioEntry = Type.Object(
  { ...HealthScore.properties, name: Type.String({ description: "The customer's name." }) },
  { $id: 'PortfolioEntry' },
);

export const toOverride = (s: Pick<ScoreRecord, 'score' | 'computed' | 'override'>) =>
  s.override
    ? {
        health_score: s.override.score,
        computed_score: computedOf(s),
        reason: s.override.reason,
        expires_at: iso(s.override.expiresAt),
        set_at: iso(s.override.setAt),
        set_by: s.override.setBy,
      }
    : null;

export const toHealthScore = (s: ScoreRecord) => ({
  customer_id: s.customerId,
  health_score: s.score,
  factors: s.factors,
  status: s.status,
  gated_by: s.gatedBy ?? [],
  updated_at: iso(s.updatedAt),
  override: toOverride(s),
});

const encodeCursor = (s: ScoreRecord) =>
  Buffer.from(JSON.stringify([s.status, s.score, s.customerId])).toString('base64url');

function decodeCursor(cursor: string): ScoreCursor {
  try {
    const [status, score, customerId] = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    if (STATUSES.includes(status) && typeof score === 'number' && typeof customerId === 'string') {
      return { status, score, customerId };
    }
  } catch {}
  throw new ApiError(
    'parameter_invalid',
    "'cursor' must be a next_cursor returned by this endpoint.",
    'cursor',
  );
}

interface Deps {
  store: Store;
  now: () => number;
}

const HealthScoreRef = Type.Ref('HealthScore');

function replaceFactors(app: FastifyInstance, { store, now }: Deps): void {
  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof ScoreBody> }>(
    '/customers/:customer_id/health-score',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['health scores'],
        summary: "Replace a customer's factors and recompute its health score",
        params: IdParams,
        body: ScoreBody,
        response: { 200: HealthScoreRef, ...errorResponses(400, 401, 404, 413, 415) },
      },
    },
    async (req, reply) => {
      // Gathered with the account's other updates meanwhile, in one call (../store/write.ts).
      const record = await runOne(
        store,
        applyFactorUpdates,
        req.accountId,
        {
          customerId: req.params.customer_id,
          factors: req.body.factors,
          merge: false,
          answer: claimToAnswer(req),
          audit: auditEntry(req, req.params.customer_id, now()),
        },
        now(),
      );
      // The same text the write stored as the Idempotency-Key's answer, if there is a key.
      answeredWithWrite(req);
      return sendJson(reply, healthScoreJson(record));
    },
  );
}

function patchFactors(app: FastifyInstance, { store, now }: Deps): void {
  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof PatchBody> }>(
    '/customers/:customer_id/health-score',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['health scores'],
        summary: 'Merge factors into the current set (null removes one) and recompute',
        params: IdParams,
        body: PatchBody,
        response: { 200: HealthScoreRef, ...errorResponses(400, 401, 404, 413, 415) },
      },
    },
    async (req, reply) => {
      // Gathered with the account's other updates meanwhile, in one call (../store/write.ts).
      const record = await runOne(
        store,
        applyFactorUpdates,
        req.accountId,
        {
          customerId: req.params.customer_id,
          factors: req.body.factors,
          merge: true,
          audit: auditEntry(req, req.params.customer_id, now()),
        },
        now(),
      );
      return sendJson(reply, healthScoreJson(record));
    },
  );
}

function getScore(app: FastifyInstance, { store, now }: Deps): void {
  app.get<{ Params: Static<typeof IdParams> }>(
    '/customers/:customer_id/health-score',
    {
      schema: {
        tags: ['health scores'],
        summary: "Retrieve a customer's current health score",
        params: IdParams,
        response: { 200: HealthScoreRef, ...errorResponses(401, 404) },
      },
    },
    async (req, reply) => {
      const { customer_id } = req.params;
      // The rules' gates say which cap the stored status (gated_by); read beside the score.
      const [score, rules] = await Promise.all([
        store.getScore(req.accountId, customer_id),
        store.listFactorRules(req.accountId),
      ]);
      // Built by hand, as POST's answer is (score-json.ts): the schema serializer would test which
      // branch of `override` (an object or null) each answer takes.
      if (score) {
        const shown = await scoreAsOf(store, req.accountId, score, now());
        return sendJson(reply, healthScoreJson(shown, gatesOf(rules)));
      }
      if (!(await store.getCustomer(req.accountId, customer_id))) throw notFound.customer(customer_id);
      throw notFound.healthScore(customer_id);
    },
  );
}

function listHistory(app: FastifyInstance, { store }: Deps): void {
  app.get<{ Params: Static<typeof IdParams>; Querystring: Static<typeof HistoryQuery> }>(
    '/customers/:customer_id/health-score/history',
    {
      schema: {
        tags: ['health scores'],
        summary: "A customer's score changes, newest first",
        params: IdParams,
        querystring: HistoryQuery,
        response: {
          200: Type.Object({ data: Type.Array(HistoryEntry), has_more: Type.Boolean() }),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (req) => {
      const { customer_id } = req.params;
      if (!(await store.getCustomer(req.accountId, customer_id))) throw notFound.customer(customer_id);
      const page = await store.listHistory(req.accountId, customer_id, {
        limit: req.query.limit ?? 10,
        before: req.query.starting_after,
      });
      return {
        data: page.data.map((h) => ({
          version: h.version,
          health_score: h.score,
          status: h.status,
          factors: h.factors,
          reason: h.reason,
          created_at: iso(h.createdAt),
        })),
        has_more: page.hasMore,
      };
    },
  );
}

function listScores(app: FastifyInstance, { store }: Deps): void {
  app.get<{ Querystring: Static<typeof PortfolioQuery> }>(
    '/health-scores',
    {
      schema: {
        tags: ['health scores'],
        summary: 'Current scores of the account, lowest first, optionally of one status band',
        querystring: PortfolioQuery,
        response: {
          200: Type.Object({
            data: Type.Array(Type.Ref('PortfolioEntry')),
            has_more: Type.Boolean(),
            next_cursor: Type.Union([Type.String(), Type.Null()]),
          }),
          ...errorResponses(400, 401),
        },
      },
    },
    async (req, reply) => {
      const after = req.query.cursor === undefined ? undefined : decodeCursor(req.query.cursor);
      const [page, rules] = await Promise.all([
        store.listScores(req.accountId, {
          status: req.query.status,
          after,
          limit: req.query.limit ?? 10,
          segment: segmentOf(req.query),
        }),
        store.listFactorRules(req.accountId),
      ]);
      const gates = gatesOf(rules);
      const last = page.data.at(-1);
      // By hand, as GET's answer: each entry is the HealthScore's text with the name after it.
      const data = page.data.map(
        (e) => `${healthScoreJson(e, gates).slice(0, -1)},"name":${JSON.stringify(e.name)}}`,
      );
      const cursor = page.hasMore && last ? `"${encodeCursor(last)}"` : 'null';
      return sendJson(
        reply,
        `{"data":[${data.join(',')}],"has_more":${page.hasMore},"next_cursor":${cursor}}`,
      );
    },
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [replaceFactors, patchFactors, getScore, listHistory, listScores];

export const healthScoresRoutes =
  (store: Store, now: () => number): FastifyPluginAsync =>
  async (app) => {
    const deps: Deps = { store, now };
    for (const route of ROUTES) route(app, deps);
  };
