// The rescore job (docs/scoring.md, "Factors from metrics"): as time passes, a point leaves its
// rule's window or ages past max_age_days, and the job derives the customers due again (history
// reason time_passed), and only those: a customer whose factors cannot have moved is not touched.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { RescoreJob } from '../../src/rescore-job.ts';
import { buildTestApp, customerBody, type TestApp, TestClock } from '../helpers/app.ts';

const DAY = 86_400_000;
const quiet = { info: () => {}, error: () => {} };

describe('the rescore job', () => {
  const clock = new TestClock('2026-03-01T00:00:00.000Z');
  let t: TestApp;
  let job: RescoreJob;
  before(async () => {
    t = await buildTestApp({ now: clock.now });
    job = new RescoreJob({ store: t.store, intervalMs: 3_600_000, log: quiet, now: clock.now, batch: 2 });
    const put = (factor: string, rule: unknown) =>
      t.api.request('PUT', `/api/settings/health-score/factors/${factor}`, rule);
    const linear = { type: 'linear', from: 0, to: 10 };
    assert.equal(
      (await put('usage', { metric: 'logins', aggregate: 'sum', window_days: 7, scale: linear })).status,
      200,
    );
    assert.equal(
      (
        await put('billing', {
          metric: 'paid',
          aggregate: 'last',
          max_age_days: 10,
          scale: { type: 'linear', from: 0, to: 1 },
        })
      ).status,
      200,
    );
    for (const id of ['sliding', 'aging', 'steady', 'other']) {
      assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
    }
    const at = (daysAgo: number) => new Date(clock.ms - daysAgo * DAY).toISOString();
    await t.api.post('/api/customers/sliding/metrics', { values: { logins: 6 }, at: at(5) });
    await t.api.post('/api/customers/sliding/metrics', { values: { logins: 4 }, at: at(1) });
    await t.api.post('/api/customers/aging/metrics', { values: { paid: 1 }, at: at(1) });
    await t.api.post('/api/customers/steady/metrics', { values: { seats: 3 } });
    await t.api.post('/api/customers/other/metrics', { values: { logins: 2 }, at: at(6) });
  });
  after(() => t.close());

  const factors = async (id: string) => (await t.api.get(`/api/customers/${id}/health-score`)).body.factors;
  const reasons = async (id: string) =>
    (await t.api.get(`/api/customers/${id}/health-score/history`)).body.data.map(
      (h: { reason: string }) => h.reason,
    );

  test('nothing is due before a point leaves its window', async () => {
    assert.deepEqual(await factors('sliding'), { usage: 1 });
    assert.deepEqual(await job.runOnce(), { checked: 0, rescored: 0, opened: 0 });
  });

  test('a point leaving the window moves the factor, with history reason time_passed, and only the customers due are taken', async () => {
    clock.advance(2 * DAY + 1); // the point of 5 days ago is now 7 days and 1 ms old; other's, 8 days
    const pass = await job.runOnce();
    assert.deepEqual(pass, { checked: 2, rescored: 2, opened: 0 });
    assert.deepEqual(await factors('sliding'), { usage: 0.4 });
    assert.deepEqual(await factors('other'), { usage: 0 });
    assert.equal((await reasons('sliding'))[0], 'time_passed');
    assert.deepEqual(await factors('aging'), { billing: 1 }, 'not due yet');
    assert.deepEqual(
      await job.runOnce(),
      { checked: 0, rescored: 0, opened: 0 },
      'a second pass finds nothing due',
    );
  });

  test('a newest point older than max_age_days makes the factor absent (a score with no factor left keeps its last version)', async () => {
    clock.advance(9 * DAY);
    const pass = await job.runOnce();
    assert.ok(pass.checked >= 2, JSON.stringify(pass));
    assert.deepEqual(await factors('sliding'), { usage: 0 }, 'every point out of the window: a sum of 0');
    assert.deepEqual(
      await factors('aging'),
      { billing: 1 },
      'billing absent leaves no factor: the score stays',
    );
    assert.deepEqual(await reasons('steady'), [], 'no rule reads seats: never scored, never due');
  });

  test('transactions side by side (as on PostgreSQL) take every customer due once', async (t2) => {
    const own = await buildTestApp({ now: clock.now });
    t2.after(() => own.close());
    const rule = {
      metric: 'logins',
      aggregate: 'sum',
      window_days: 7,
      scale: { type: 'linear', from: 0, to: 10 },
    };
    assert.equal(
      (await own.api.request('PUT', '/api/settings/health-score/factors/usage', rule)).status,
      200,
    );
    const ids = Array.from({ length: 9 }, (_, i) => `p${i}`);
    const at = (daysAgo: number) => new Date(clock.ms - daysAgo * DAY).toISOString();
    for (const id of ids) {
      assert.equal((await own.api.post('/api/customers', customerBody(id))).status, 201);
      await own.api.post(`/api/customers/${id}/metrics`, { values: { logins: 5 }, at: at(6) });
    }
    const side = new RescoreJob({
      store: own.store,
      intervalMs: 3_600_000,
      log: quiet,
      now: clock.now,
      batch: 2,
      parallel: 3,
    });
    clock.advance(DAY + 1);
    assert.deepEqual(await side.runOnce(), { checked: 9, rescored: 9, opened: 0 });
    assert.deepEqual(await side.runOnce(), { checked: 0, rescored: 0, opened: 0 });
    for (const id of ids) {
      const history = (await own.api.get(`/api/customers/${id}/health-score/history`)).body.data;
      assert.deepEqual(
        history.map((h: { reason: string }) => h.reason),
        ['time_passed', 'metrics_updated'],
        id,
      );
    }
  });

  test('VITALS_RESCORE_INTERVAL defaults to 1 hour and is at least 1 second', () => {
    assert.equal(loadConfig({}).rescoreIntervalMs, 3_600_000);
    assert.equal(loadConfig({ VITALS_RESCORE_INTERVAL: '5s' }).rescoreIntervalMs, 5000);
    assert.throws(
      () => loadConfig({ VITALS_RESCORE_INTERVAL: '500ms' }),
      /^ConfigError: VITALS_RESCORE_INTERVAL=/,
    );
    assert.throws(
      () => loadConfig({ VITALS_RESCORE_INTERVAL: 'off' }),
      /^ConfigError: VITALS_RESCORE_INTERVAL=/,
    );
  });
});
