// Why a score is what it is, and overrides (docs/scoring.md, "Why this score" and "Overrides";
// docs/api.md, "Explanations and overrides"): the explanation reads two versions of the history
// and puts them side by side (../domain/explain.ts); an override is set and removed by
// ../writes/overrides.ts.
import { Type } from 'typebox';
import { errorResponses, CustomerParams as IdParams } from '../api/common.ts';
import { ExplanationQuery, OverrideBody } from '../api/explanations.ts';
import { healthScoreJson, toOverride, VersionNumber } from '../api/health-scores.ts';
import { notFound } from '../domain/errors.ts';
import { contributionChanges, effectiveWeights, explainFactors } from '../domain/explain.ts';
import { computedOf, gatesOf, overrideEnded, type ScoreRecord, withoutOverride } from '../domain/health.ts';
import { type Gates, round6, type Weights } from '../domain/scoring.ts';
import { iso } from '../domain/time.ts';
import type { ExplainedVersion, Store } from '../store/store.ts';
import { deleteOverride, putOverride } from '../writes/overrides.ts';
import { instantOf } from './instants.ts';
import { type App, type Routes, sendJson } from './reply.ts';

interface Deps {
  store: Store;
  now: () => number;
}

/** The customer's current score; 404 customer_not_found or health_score_not_found. */
async function currentScore(store: Store, accountId: string, customerId: string): Promise<ScoreRecord> {
  const score = await store.getScore(accountId, customerId);
  if (score) return score;
  if (!(await store.getCustomer(accountId, customerId))) throw notFound.customer(customerId);
  throw notFound.healthScore(customerId);
}

/** A derived factor's `gate` member, when its rule has one: an override pins the status, so none applies then. */
function gateOf(factor: string, score: number, derived: boolean, overridden: boolean, gates: Gates) {
  const gate = derived ? gates.get(factor) : undefined;
  if (!gate) return {};
  return { gate: { below: gate.below, status: gate.status, applied: !overridden && score < gate.below } };
}

function explanation(
  customerId: string,
  at: ExplainedVersion,
  before: ExplainedVersion | undefined,
  accountWeights: Weights,
  gates: Gates,
) {
  const explained = (v: ExplainedVersion) =>
    explainFactors(v.factors, v.weights ?? effectiveWeights(v.factors, accountWeights), v.inputs);
  const factors = explained(at);
  return {
    customer_id: customerId,
    version: at.version,
    health_score: at.score,
    computed_score: computedOf(at),
    status: at.status,
    reason: at.reason,
    updated_at: iso(at.createdAt),
    override: toOverride(at),
    factors: factors.map((f) => ({
      factor: f.factor,
      score: f.score,
      weight: f.weight,
      contribution: f.contribution,
      source: f.input ? ('metric' as const) : ('posted' as const),
      ...(f.input
        ? {
            metric: {
              name: f.input.metric,
              aggregate: f.input.aggregate,
              window_days: f.input.windowDays,
              value: f.input.value,
              points: f.input.points,
              newest_at: f.input.newestAt === null ? null : iso(f.input.newestAt),
            },
          }
        : {}),
      ...gateOf(
        f.factor,
        f.score,
        f.input !== null,
        at.override !== null && at.override !== undefined,
        gates,
      ),
    })),
    change: before
      ? {
          from_version: before.version,
          previous_score: before.score,
          previous_computed_score: computedOf(before),
          delta: round6(at.score - before.score),
          factors: contributionChanges(explained(before), factors).map((c) => ({
            factor: c.factor,
            previous_contribution: c.previous,
            contribution: c.contribution,
            delta: c.delta,
          })),
        }
      : null,
  };
}

function explain(app: App, { store, now }: Deps): void {
  app.get(
    '/customers/:customer_id/health-score/explanation',
    {
      schema: {
        tags: ['health scores'],
        summary:
          'Why a version of the score is what it is, and what moved it from the version before (or the one standing at `since`)',
        params: IdParams,
        querystring: ExplanationQuery,
        response: { 200: Type.Ref('Explanation'), ...errorResponses(400, 401, 404) },
      },
    },
    async (req) => {
      const { customer_id } = req.params;
      const since = req.query.since === undefined ? undefined : instantOf(req.query.since, 'since');
      const clock = now();
      const current = await currentScore(store, req.accountId, customer_id);
      const version = req.query.version ?? current.version;
      if (version > current.version) throw notFound.version(customer_id, version);
      const from = await comparedWith(store, req.accountId, customer_id, version, since);
      const [rows, rules] = await Promise.all([
        store.explainedVersions(
          req.accountId,
          customer_id,
          from === undefined || from === version ? [version] : [version, from],
        ),
        store.listFactorRules(req.accountId),
      ]);
      const gates = gatesOf(rules);
      let at = rows.find((r) => r.version === version);
      if (!at) throw notFound.version(customer_id, version);
      // Versions kept before explanations were have no weights (the account's current ones stand
      // in), and the current version of a score whose override has ended shows as GET shows it.
      const ended = version === current.version && overrideEnded(at, clock);
      const settings =
        ended || rows.some((r) => r.weights === null) ? await store.getSettings(req.accountId) : null;
      if (ended && settings) at = withoutOverride(at, { thresholds: settings.thresholds, gates });
      // Compared with itself (a `since` at or after it), the version is as shown: no change.
      const before = from === version ? at : rows.find((r) => r.version === from);
      return explanation(customer_id, at, before, settings?.weights ?? {}, gates);
    },
  );
}

/**
 * The version `change` measures from (docs/api.md, "Explanations and overrides"): without `since`,
 * the one before; with it, the one that stood at `since` (store.versionAt: the first version when
 * `since` is earlier), never later than the version explained, so a `since` after it, the future
 * included, compares the version with itself. Undefined: none (below the lowest version a request
 * can name, which no version is).
 */
async function comparedWith(
  store: Store,
  accountId: string,
  customerId: string,
  version: number,
  since: number | undefined,
): Promise<number | undefined> {
  if (since === undefined) return version > VersionNumber.minimum ? version - 1 : undefined;
  const stood = await store.versionAt(accountId, customerId, since);
  return stood === null ? version : Math.min(stood, version);
}

function setOverride(app: App, { store, now }: Deps): void {
  app.put(
    '/customers/:customer_id/health-score/override',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['health scores'],
        summary:
          'Pin the score everything shows, with a reason and an end; the computed score keeps moving underneath',
        params: IdParams,
        body: OverrideBody,
        response: { 200: Type.Ref('HealthScore'), ...errorResponses(400, 401, 404, 413, 415) },
      },
    },
    async (req, reply) => {
      const { body } = req;
      const expiresAt = body.expires_at === undefined ? null : instantOf(body.expires_at, 'expires_at');
      const record = await store.run(
        putOverride,
        req.accountId,
        req.params.customer_id,
        {
          score: body.health_score,
          reason: body.reason,
          expiresAt,
          setBy: req.actor.label,
          actor: { ...req.actor },
        },
        now(),
      );
      return sendJson(reply, healthScoreJson(record));
    },
  );
}

function removeOverride(app: App, { store, now }: Deps): void {
  app.delete(
    '/customers/:customer_id/health-score/override',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['health scores'],
        summary: 'Remove the override: the computed score shows again',
        params: IdParams,
        response: { 200: Type.Ref('HealthScore'), ...errorResponses(401, 404) },
      },
    },
    async (req, reply) => {
      const record = await store.run(
        deleteOverride,
        req.accountId,
        req.params.customer_id,
        { ...req.actor },
        now(),
      );
      return sendJson(reply, healthScoreJson(record));
    },
  );
}

/** In this order: the OpenAPI document lists the routes as they are registered. */
const ROUTES = [explain, setOverride, removeOverride];

export const explanationRoutes =
  (store: Store, now: () => number): Routes =>
  async (app) => {
    const deps: Deps = { store, now };
    for (const route of ROUTES) route(app, deps);
  };
