// The health score against a reference written here from docs/scoring.md alone: the weighted mean
// over the supplied factors that have a weight above 0 (weights renormalized over them), else
// the plain mean, rounded to 6 places; its status band; and the PATCH merge law for factors.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { buildTestApp, type Client, type TestApp } from '../helpers/app.ts';
import { params } from './rules.ts';

type Numbers = Record<string, number>;
/** As the value arrives after JSON (a plain object; -0 is 0). */
const viaJson = <T>(v: T): T => JSON.parse(JSON.stringify(v));

/** The unrounded score. */
function reference(factors: Numbers, weights: Numbers): number {
  const names = Object.keys(factors);
  const covered = names.filter((n) => (weights[n] ?? 0) > 0);
  if (covered.length === 0) return names.reduce((sum, n) => sum + (factors[n] as number), 0) / names.length;
  let weighted = 0;
  let total = 0;
  for (const n of covered) {
    weighted += (weights[n] as number) * (factors[n] as number);
    total += weights[n] as number;
  }
  return weighted / total;
}

/**
 * The answer is the reference rounded to 6 places. Summing in another order may move the exact
 * value by a few ulps, so only where it sits on a rounding tie may either neighbour be right.
 */
function assertScore(actual: number, factors: Numbers, weights: Numbers, what: string): void {
  const exact = reference(factors, weights);
  const scaled = exact * 1e6;
  const what2 = `${what}: factors ${JSON.stringify(factors)} weights ${JSON.stringify(weights)}, exact ${exact}`;
  assert.ok(actual >= 0 && actual <= 1, what2);
  assert.ok(
    Math.abs(actual * 1e6 - Math.round(actual * 1e6)) < 1e-6,
    `${what2}: ${actual} has more than 6 places`,
  );
  const nearTie = Math.abs(scaled - Math.floor(scaled) - 0.5) < 1e-6;
  if (nearTie) assert.ok(Math.abs(actual - exact) <= 5e-7 + 1e-12, `${what2}: ${actual}`);
  else assert.equal(actual, Math.round(scaled) / 1e6, what2);
}

const band = (score: number, t = { healthy: 0.7, at_risk: 0.4 }) =>
  score >= t.healthy ? 'healthy' : score >= t.at_risk ? 'at_risk' : 'critical';

const COMMON = ['usage', 'support', 'billing', 'nps', 'adoption', 'seats_used', 'a', 'z9_'];
const factorName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...COMMON) },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_]{0,63}$/) },
);
const factorValue = fc.oneof(
  fc.double({ min: 0, max: 1, noNaN: true }),
  fc.constantFrom(0, 1, 0.5, 0.7, 0.4, 0.6999995, 0.3999995, 1e-7, 0.1 + 0.2 - 0.3),
  fc.integer({ min: 0, max: 1_000_000 }).map((n) => n / 1_000_000),
);
const factors = fc.dictionary(factorName, factorValue, { minKeys: 1, maxKeys: 50 });

/** Weights that sum to 1 (within floating error): shares of a whole, some of them 0. */
const weights = fc
  .dictionary(factorName, fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.constant(0)), {
    minKeys: 1,
    maxKeys: 50,
  })
  .filter((w) => Object.values(w).some((n) => n > 0))
  .map((w) => {
    const total = Object.values(w).reduce((a, b) => a + b, 0);
    return Object.fromEntries(Object.entries(w).map(([k, n]) => [k, n / total]));
  })
  .filter((w) => Math.abs(Object.values(w).reduce((a, b) => a + b, 0) - 1) <= 1e-6);

describe('round trips: health scores', () => {
  let t: TestApp;
  let accounts = 0;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  /** A new account (no weights yet) with one customer. */
  async function fresh(): Promise<Client> {
    const api = await t.newAccount(`scores${++accounts}`);
    const res = await api.post('/api/customers', { customer_id: 'cus', name: 'C', email: 'c@example.com' });
    assert.equal(res.status, 201, res.raw);
    return api;
  }

  const score = '/api/customers/cus/health-score';

  test('the score follows the reference: without weights, after weights are set, and for new factors', async () => {
    await fc.assert(
      fc.asyncProperty(factors, weights, factors, async (first, w, second) => {
        const api = await fresh();
        const plain = await api.post(score, { factors: first });
        assert.equal(plain.status, 200, plain.raw);
        assert.deepEqual(plain.body.factors, viaJson(first));
        assertScore(plain.body.health_score, first, {}, 'no weights configured');
        assert.equal(plain.body.status, band(plain.body.health_score));

        const set = await api.patch('/api/settings/health-score/weights', { weights: w });
        assert.equal(set.status, 200, set.raw);
        assert.deepEqual(set.body.weights, viaJson(w));
        const recomputed = await api.get(score);
        assertScore(recomputed.body.health_score, first, w, 'recomputed after the weights changed');
        assert.equal(recomputed.body.status, band(recomputed.body.health_score));

        const next = await api.post(score, { factors: second });
        assert.equal(next.status, 200, next.raw);
        assertScore(next.body.health_score, second, w, 'new factors under the weights');
        assert.deepEqual((await api.get(score)).body, next.body, 'GET returns what the POST answered');
      }),
      params(40),
    );
  });

  test('PATCH merges factors (null removes one) and recomputes, or changes nothing', async () => {
    const patch = fc.dictionary(factorName, fc.option(factorValue, { nil: null, freq: 3 }), {
      minKeys: 1,
      maxKeys: 50,
    });
    await fc.assert(
      fc.asyncProperty(factors, weights, patch, async (current, w, change) => {
        const api = await fresh();
        assert.equal((await api.patch('/api/settings/health-score/weights', { weights: w })).status, 200);
        const first = await api.post(score, { factors: current });
        assert.equal(first.status, 200, first.raw);

        const expected: Numbers = {};
        for (const [k, v] of Object.entries(current)) if (!Object.hasOwn(change, k)) expected[k] = v;
        for (const [k, v] of Object.entries(change)) if (v !== null) expected[k] = v;
        const count = Object.keys(expected).length;

        const res = await api.patch(score, { factors: change });
        if (count === 0 || count > 50) {
          assert.equal(res.status, 400, res.raw);
          assert.equal(res.body.error.code, 'parameter_invalid');
          assert.equal(res.body.error.param, 'factors');
          assert.deepEqual((await api.get(score)).body, first.body, 'a refused PATCH changes nothing');
          return;
        }
        assert.equal(res.status, 200, res.raw);
        assert.deepEqual(res.body.factors, viaJson(expected));
        assertScore(res.body.health_score, expected, w, 'after the merge');
        assert.equal(res.body.status, band(res.body.health_score));
        assert.ok(res.body.updated_at > first.body.updated_at);
      }),
      params(40),
    );
  });
});
