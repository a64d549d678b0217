// GET /api/customers/{id}/rollup (docs/api.md, "Customers", "Rollup"): a customer with all its
// descendants, their ARR summed, their scores' ARR-weighted mean (the plain mean when none of the
// scored ones has ARR) banded under the account's thresholds, their stored statuses counted;
// unknown and other accounts' customers are 404 and never counted. Each test works in an account
// of its own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/keys.ts';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';
import { personWithPassword } from '../helpers/people.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

let accounts = 0;
const account = () => t.newAccount(`rollup ${++accounts}`);

interface Spec {
  id: string;
  parent?: string;
  arr?: number | null;
  /** The score (one factor, so the score is its value under the default weights); absent: unscored. */
  score?: number;
}

/** The customers in order (parents first), each with its ARR and, when given, its score. */
async function plant(api: Client, specs: Spec[]): Promise<void> {
  for (const s of specs) {
    const body = customerBody(s.id, { parent_id: s.parent ?? null, arr: s.arr ?? null });
    const created = await api.post('/api/customers', body);
    assert.equal(created.status, 201, created.raw);
    if (s.score === undefined) continue;
    const scored = await api.post(`/api/customers/${s.id}/health-score`, { factors: { usage: s.score } });
    assert.equal(scored.status, 200, scored.raw);
  }
}

const rollupOf = async (api: Client, id: string) => {
  const res = await api.get(`/api/customers/${encodeURIComponent(id)}/rollup`);
  assert.equal(res.status, 200, res.raw);
  return res.body;
};

const counts = (healthy: number, at_risk: number, critical: number) => ({ healthy, at_risk, critical });

/**
 * Three levels, mixed ARR: r (1000.00, 0.9) over a (250.50, 0.5) and b (0, 0.3); a over a1 (no
 * ARR, 0.2) and a2 (99.99, unscored).
 */
const TREE: Spec[] = [
  { id: 'r', arr: 1000, score: 0.9 },
  { id: 'a', parent: 'r', arr: 250.5, score: 0.5 },
  { id: 'b', parent: 'r', arr: 0, score: 0.3 },
  { id: 'a1', parent: 'a', arr: null, score: 0.2 },
  { id: 'a2', parent: 'a', arr: 99.99 },
];

describe('GET /api/customers/{id}/rollup', () => {
  test('a three-level tree: ARR summed, the ARR-weighted mean banded, stored statuses counted', async () => {
    const api = await account();
    await plant(api, TREE);
    // Weighted by cents over the scored ones with ARR: r and a. (100000 × 0.9 + 25050 × 0.5) / 125050.
    const mean = (100000 * 0.9 + 25050 * 0.5) / 125050;
    assert.equal(Math.round(mean * 1e6) / 1e6, 0.819872);
    assert.deepEqual(await rollupOf(api, 'r'), {
      customer_id: 'r',
      descendants: 4,
      arr: 1350.49,
      health_score: 0.819872,
      status: 'healthy',
      counts: counts(1, 1, 2),
    });
    // The middle level: only a has ARR among its scored ones, so the mean is its score.
    assert.deepEqual(await rollupOf(api, 'a'), {
      customer_id: 'a',
      descendants: 2,
      arr: 350.49,
      health_score: 0.5,
      status: 'at_risk',
      counts: counts(0, 1, 1),
    });
  });

  test("the status is the mean's band under the account's current thresholds", async () => {
    const api = await account();
    await plant(api, TREE);
    const changed = await api.patch('/api/settings/health-score/thresholds', { healthy: 0.85, at_risk: 0.5 });
    assert.equal(changed.status, 200, changed.raw);
    const r = await rollupOf(api, 'r');
    assert.equal(r.health_score, 0.819872);
    assert.equal(r.status, 'at_risk', 'below the new healthy bound');
    assert.deepEqual(r.counts, counts(1, 1, 2), 'the stored statuses, re-banded: 0.9, 0.5, 0.3, 0.2');
  });

  test("the counts are the stored statuses: an override's status counts as set", async () => {
    const api = await account();
    await plant(api, TREE);
    const pinned = await api.request('PUT', '/api/customers/b/health-score/override', {
      health_score: 0.95,
      reason: 'the renewal is signed',
    });
    assert.equal(pinned.status, 200, pinned.raw);
    // b has no ARR: the weighted mean is unchanged, its status moves from critical to healthy.
    const r = await rollupOf(api, 'r');
    assert.equal(r.health_score, 0.819872);
    assert.deepEqual(r.counts, counts(2, 1, 1));
  });

  test('all ARR zero or unset: the plain mean of the scores', async () => {
    const api = await account();
    await plant(api, [
      { id: 'p', arr: 0, score: 0.6 },
      { id: 'c1', parent: 'p', score: 0.9 },
      { id: 'c2', parent: 'p', arr: 0, score: 0.31 },
      { id: 'c3', parent: 'c1', arr: 12.34 },
    ]);
    // c3 has ARR but no score: it counts in the ARR and the descendants, never in the mean.
    assert.deepEqual(await rollupOf(api, 'p'), {
      customer_id: 'p',
      descendants: 3,
      arr: 12.34,
      health_score: 0.603333,
      status: 'at_risk',
      counts: counts(1, 1, 1),
    });
  });

  test('nothing scored: null score and status, zero counts; ARR and descendants still counted', async () => {
    const api = await account();
    await plant(api, [
      { id: 'n', arr: 0.1 },
      { id: 'n1', parent: 'n', arr: 0.2 },
    ]);
    assert.deepEqual(await rollupOf(api, 'n'), {
      customer_id: 'n',
      descendants: 1,
      arr: 0.3,
      health_score: null,
      status: null,
      counts: counts(0, 0, 0),
    });
  });

  test('a leaf is its own rollup', async () => {
    const api = await account();
    await plant(api, TREE);
    assert.deepEqual(await rollupOf(api, 'a1'), {
      customer_id: 'a1',
      descendants: 0,
      arr: 0,
      health_score: 0.2,
      status: 'critical',
      counts: counts(0, 0, 1),
    });
    assert.deepEqual(await rollupOf(api, 'a2'), {
      customer_id: 'a2',
      descendants: 0,
      arr: 99.99,
      health_score: null,
      status: null,
      counts: counts(0, 0, 0),
    });
  });

  test('the longest chain, 5 customers, is counted whole', async () => {
    const api = await account();
    await plant(api, [
      { id: 'l0', arr: 1, score: 0.1 },
      { id: 'l1', parent: 'l0', arr: 1, score: 0.2 },
      { id: 'l2', parent: 'l1', arr: 1, score: 0.3 },
      { id: 'l3', parent: 'l2', arr: 1, score: 0.4 },
      { id: 'l4', parent: 'l3', arr: 1, score: 0.5 },
    ]);
    const r = await rollupOf(api, 'l0');
    assert.equal(r.descendants, 4);
    assert.equal(r.arr, 5);
    assert.equal(r.health_score, 0.3);
  });

  test("404 for an unknown id and for another account's customer; neither counts the other's", async () => {
    const api = await account();
    const other = await account();
    await plant(api, TREE);
    // The other account has customers of the same ids, with children of its own below them.
    await plant(other, [
      { id: 'a2', arr: 500, score: 0.1 },
      { id: 'z', parent: 'a2', arr: 7, score: 0.1 },
      { id: 'r', arr: 3, score: 0.95 },
      { id: 'a', parent: 'r', score: 0.95 },
    ]);
    const r = await rollupOf(api, 'r');
    assert.equal(r.descendants, 4);
    assert.equal(r.arr, 1350.49);
    assert.equal(r.health_score, 0.819872);
    assert.deepEqual(r.counts, counts(1, 1, 2));
    assert.deepEqual(await rollupOf(other, 'a2'), {
      customer_id: 'a2',
      descendants: 1,
      arr: 507,
      health_score: 0.1,
      status: 'critical',
      counts: counts(0, 0, 2),
    });
    for (const id of ['nobody', 'z']) {
      const missing = await api.get(`/api/customers/${id}/rollup`);
      assert.equal(missing.status, 404, missing.raw);
      assert.equal(missing.body.error.code, 'customer_not_found');
    }
  });

  test('a read key and a viewer may read it; no key is 401', async () => {
    await plant(t.api, [{ id: 'readable', arr: 1, score: 0.5 }]);
    const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
    const byKey = await t.as(`Bearer ${key}`).get('/api/customers/readable/rollup');
    assert.equal(byKey.status, 200, byKey.raw);
    await personWithPassword(t, {
      email: 'viewer@example.com',
      role: 'viewer',
      password: 'a long passphrase 1',
    });
    const signIn = await t.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'viewer@example.com', password: 'a long passphrase 1' },
    });
    assert.equal(signIn.status, 200, signIn.raw);
    const cookie = /vitals_session=[^;]+/.exec(String(signIn.headers['set-cookie']))?.[0] as string;
    const byViewer = await t.inject({
      method: 'GET',
      url: '/api/customers/readable/rollup',
      headers: { cookie },
    });
    assert.equal(byViewer.status, 200, byViewer.raw);
    assert.equal(byViewer.body.health_score, 0.5);
    const none = await t.as(undefined).get('/api/customers/readable/rollup');
    assert.equal(none.status, 401);
  });
});
