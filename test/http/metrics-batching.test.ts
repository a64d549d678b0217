// Group commit of single metric writes (docs/postgresql.md, "Reads and writes under load"): writes
// of one account that arrive together are written as one batch in one transaction, and each
// still gets the answer it would get alone — its own points and score, in order for one customer,
// its own 404, and its own Idempotency-Key answer. (A batch the database refuses is written again
// one item at a time by the same group writer as score updates: health-scores-batching.test.ts.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, histogramTotals, type TestApp, TestClock } from '../helpers/app.ts';

const HOUR = 3_600_000;
const clock = new TestClock('2026-03-31T12:00:00.000Z');
const hoursAgo = (n: number) => new Date(clock.ms - n * HOUR).toISOString();

/** Batches written so far and writes in them. */
const batches = (t: TestApp) => histogramTotals(t, 'vitals_metric_batch_size');

describe('single metric writes written in batches', () => {
  let t: TestApp;
  const post = (id: string, body: unknown, headers: Record<string, string> = {}) =>
    t.api.request('POST', `/api/customers/${id}/metrics`, body, headers);

  before(async () => {
    t = await buildTestApp({ now: clock.now });
    for (const id of ['solo', 'a', 'b']) {
      assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
    }
    // engagement: the sum of the last 30 days' logins, 0 at none and 1 at 1,000.
    const rule = {
      metric: 'logins',
      aggregate: 'sum',
      window_days: 30,
      scale: { type: 'linear', from: 0, to: 1000 },
    };
    assert.equal(
      (await t.api.request('PUT', '/api/settings/health-score/factors/engagement', rule)).status,
      200,
    );
  });
  after(() => t.close());

  test('40 writes of one customer at once: 40 points, each answer the score its write made, fewer batches than writes', async () => {
    const before = await batches(t);
    // Logins 1 to 40, each at its own hour: every write moves the sum, so each makes a version.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => post('solo', { values: { logins: i + 1 }, at: hoursAgo(40 - i) })),
    );
    for (const res of answers) assert.equal(res.status, 200, res.raw);
    for (const [i, res] of answers.entries()) {
      assert.deepEqual(res.body.values, { logins: i + 1 });
      assert.equal(res.body.at, hoursAgo(40 - i));
    }
    const points = await t.api.get('/api/customers/solo/metrics?metric=logins&limit=100');
    assert.equal(points.body.data.length, 40);
    // One version per write; each answer is a version the history holds, the last one the score now.
    const history = await t.api.get('/api/customers/solo/health-score/history?limit=100');
    assert.deepEqual(
      history.body.data.map((h: { version: number }) => h.version),
      Array.from({ length: 40 }, (_, i) => 40 - i),
    );
    // The factor sets the answers carry are the 40 versions', one each.
    const engagement = (f: { engagement: number }) => f.engagement;
    assert.deepEqual(
      answers.map((r) => engagement(r.body.health_score.factors)).sort(),
      history.body.data.map((h: { factors: { engagement: number } }) => engagement(h.factors)).sort(),
    );
    const stored = await t.api.get('/api/customers/solo/health-score');
    assert.deepEqual(stored.body.factors, { engagement: (40 * 41) / 2 / 1000 });
    const newest = answers.find(
      (r) => r.body.health_score.factors.engagement === stored.body.factors.engagement,
    );
    assert.deepEqual(
      newest?.body.health_score,
      stored.body,
      'the score now is the answer of the write that made it',
    );
    const after = await batches(t);
    assert.equal(after.sum - before.sum, 40, 'every write went through a batch');
    assert.ok(after.count - before.count < 40, `40 writes took ${after.count - before.count} batches`);
  });

  test('in one batch, an unknown customer gets its 404 and stores nothing; the rest apply', async () => {
    const answers = await Promise.all([
      post('a', { values: { logins: 5 }, at: hoursAgo(1) }),
      post('nobody', { values: { logins: 5 }, at: hoursAgo(1) }),
      post('b', { values: { logins: 7 }, at: hoursAgo(1) }),
    ]);
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 404, 200],
    );
    assert.equal(answers[1]?.body.error.code, 'customer_not_found');
    assert.deepEqual(answers[0]?.body.health_score.factors, { engagement: 0.005 });
    assert.deepEqual(answers[2]?.body.health_score.factors, { engagement: 0.007 });
    assert.equal((await t.api.get('/api/customers/nobody/metrics')).status, 404);
    assert.equal((await t.api.get('/api/customers/a/metrics')).body.data.length, 1);
  });

  test('an Idempotency-Key in a burst: its answer is the one its write made, replayed as it was', async () => {
    const keyed = { 'idempotency-key': 'metric-burst-1' };
    const answers = await Promise.all([
      post('a', { values: { logins: 1 }, at: hoursAgo(2) }),
      post('b', { values: { logins: 3 }, at: hoursAgo(2) }, keyed),
      post('a', { values: { logins: 2 }, at: hoursAgo(3) }),
    ]);
    for (const res of answers) assert.equal(res.status, 200, res.raw);
    const pointsBefore = (await t.api.get('/api/customers/b/metrics')).body.data;
    const replay = await post('b', { values: { logins: 3 }, at: hoursAgo(2) }, keyed);
    assert.equal(replay.status, 200);
    assert.equal(replay.raw, answers[1]?.raw, 'the stored answer, byte for byte');
    assert.deepEqual(replay.body.health_score.factors, { engagement: 0.01 });
    assert.deepEqual((await t.api.get('/api/customers/b/metrics')).body.data, pointsBefore, 'written once');
    const history = await t.api.get('/api/customers/b/health-score/history');
    assert.equal(history.body.data.length, 2, 'one version per write, none for the replay');
  });
});
