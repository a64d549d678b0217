// The retention job end to end (docs/operations.md, "Event retention"): the real app and store, events
// made through the API, and the job run with its clock moved forward instead of waiting a month.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { RetentionJob } from '../../src/retention.ts';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';
import { deliveries, waitForDeliveries } from '../helpers/deliveries.ts';
import { TestReceiver } from '../helpers/receiver.ts';
import { closedPort } from '../helpers/server.ts';

const DAY = 86_400_000;
const quiet = { info: () => {}, error: () => {} };

describe('retention job', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  before(async () => {
    t = await buildTestApp({ dispatcher: { pollMs: 3_600_000, backoffMs: [3_600_000] } });
    receiver = await TestReceiver.start();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  test('31 days on: events and finished deliveries are gone, pending ones and score history stay', async () => {
    const api = await t.newAccount('retention');
    const ok = await api.post('/api/webhooks', { url: `${receiver.url}/ok`, events: ['customer.created'] });
    const down = await api.post('/api/webhooks', {
      url: `http://127.0.0.1:${await closedPort()}/down`,
      events: ['customer.health_score.updated'],
    });
    assert.equal(ok.status, 201);
    assert.equal(down.status, 201);
    assert.equal((await api.post('/api/customers', customerBody('cus_r'))).status, 201);
    const scored = await api.post('/api/customers/cus_r/health-score', { factors: { usage: 0.2 } });
    assert.equal(scored.status, 200);
    await waitForDeliveries(api, ok.body.id, (l) => l.length === 1 && l[0]?.status === 'succeeded');
    // The receiver that is down failed once and waits an hour for its retry: still pending.
    await waitForDeliveries(api, down.body.id, (l) => l.length === 1 && l[0]?.attempt_count === 1);
    const events = (await api.get('/api/events?limit=100')).body.data;
    assert.deepEqual(
      events.map((e: { type: string }) => e.type),
      ['customer.status.changed', 'customer.health_score.updated', 'customer.created'],
    );
    const history = (await api.get('/api/customers/cus_r/health-score/history')).body;

    const job = new RetentionJob({
      store: t.store,
      keepMs: 30 * DAY,
      log: quiet,
      metrics: t.metrics,
      now: () => Date.now() + 31 * DAY,
    });
    assert.deepEqual(await job.runOnce(), {
      events: 2,
      deliveries: 1,
      batches: 1,
      audit: 0,
      metricPoints: 0,
      sourceActivity: 0,
    });

    const left = (await api.get('/api/events?limit=100')).body.data;
    assert.deepEqual(
      left.map((e: { type: string }) => e.type),
      ['customer.health_score.updated'],
      'the event with a pending delivery stays',
    );
    assert.equal((await api.get(`/api/events/${events[2].id}`)).status, 404);
    assert.deepEqual(await deliveries(api, ok.body.id), []);
    assert.equal((await deliveries(api, down.body.id))[0]?.status, 'pending');
    assert.deepEqual((await api.get('/api/customers/cus_r/health-score/history')).body, history);
    const metrics = (await t.inject({ method: 'GET', url: '/metrics' })).raw;
    assert.match(metrics, /vitals_retention_pruned_total\{kind="events"\} 2/);
    assert.match(metrics, /vitals_retention_pruned_total\{kind="deliveries"\} 1/);
  });

  test('29 days on nothing is old enough; two jobs at once remove each event exactly once', async () => {
    const api = await t.newAccount('retention-2');
    for (let i = 0; i < 30; i++) {
      assert.equal((await api.post('/api/customers', customerBody(`cus_${i}`))).status, 201);
    }
    const at = (days: number) => () => Date.now() + days * DAY;
    const early = new RetentionJob({ store: t.store, keepMs: 30 * DAY, log: quiet, now: at(29) });
    assert.deepEqual(await early.runOnce(), {
      events: 0,
      deliveries: 0,
      batches: 1,
      audit: 0,
      metricPoints: 0,
      sourceActivity: 0,
    });
    const jobs = [t.store, t.store].map(
      (store) => new RetentionJob({ store, keepMs: 30 * DAY, log: quiet, now: at(31), batch: 7, pauseMs: 0 }),
    );
    const results = await Promise.all(jobs.map((j) => j.runOnce()));
    assert.equal(
      results.reduce((n, r) => n + r.events, 0),
      30,
      'every event removed once, whichever job removed it',
    );
    assert.deepEqual((await api.get('/api/events')).body.data, []);
    assert.equal(
      (await api.get('/api/customers?limit=100')).body.customers.length,
      30,
      'customers are untouched',
    );
  });

  test('stop() lets the running batch finish and ends the pass', async () => {
    const api = await t.newAccount('retention-3');
    for (let i = 0; i < 20; i++) {
      assert.equal((await api.post('/api/customers', customerBody(`cus_${i}`))).status, 201);
    }
    const job = new RetentionJob({
      store: t.store,
      keepMs: DAY,
      log: quiet,
      now: () => Date.now() + 2 * DAY,
      batch: 1,
      pauseMs: 0,
    });
    const pass = job.runOnce();
    await job.stop();
    const result = await pass;
    // stop() was called while the first batch ran: that batch finishes, and no other starts.
    assert.equal(result.batches, 1);
    // The one batch looks at the database's oldest event, which may be another test's (kept for
    // its pending delivery): at most one of these 20 is gone.
    const left = (await api.get('/api/events?limit=100')).body.data.length;
    assert.equal(left + result.events, 20, 'the other events are left for the next pass');
  });
});

describe('audit log retention', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('entries older than VITALS_AUDIT_RETENTION go, in batches, from every account; newer ones stay', async () => {
    const api = await t.newAccount('audit-retention');
    const other = await t.newAccount('audit-retention-2');
    for (let i = 0; i < 5; i++)
      assert.equal((await api.post('/api/customers', customerBody(`cus_${i}`))).status, 201);
    assert.equal((await other.post('/api/customers', customerBody('cus_o'))).status, 201);
    const job = (days: number) =>
      new RetentionJob({
        store: t.store,
        keepMs: null,
        auditKeepMs: 365 * DAY,
        log: quiet,
        batch: 2,
        pauseMs: 0,
        now: () => Date.now() + days * DAY,
      });
    assert.deepEqual(await job(364).runOnce(), {
      events: 0,
      deliveries: 0,
      batches: 0,
      audit: 0,
      metricPoints: 0,
      sourceActivity: 0,
    });
    assert.equal((await api.get('/api/audit-log?limit=100')).body.data.length, 5);
    assert.equal((await job(366).runOnce()).audit, 6);
    assert.deepEqual((await api.get('/api/audit-log')).body, { data: [], has_more: false });
    assert.deepEqual((await other.get('/api/audit-log')).body, { data: [], has_more: false });
    assert.equal((await api.get('/api/customers?limit=100')).body.customers.length, 5, 'only the log goes');
  });

  test('VITALS_AUDIT_RETENTION defaults to 365 days; off keeps everything', () => {
    assert.equal(loadConfig({}).auditRetentionMs, 365 * DAY);
    assert.equal(loadConfig({ VITALS_AUDIT_RETENTION: '90d' }).auditRetentionMs, 90 * DAY);
    assert.equal(loadConfig({ VITALS_AUDIT_RETENTION: 'off' }).auditRetentionMs, null);
    assert.throws(
      () => loadConfig({ VITALS_AUDIT_RETENTION: 'forever' }),
      /^ConfigError: VITALS_AUDIT_RETENTION=/,
    );
  });
});

describe('metric point retention', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('points dated before VITALS_METRIC_RETENTION go, in batches, from every account; newer ones stay', async () => {
    const api = await t.newAccount('metric-retention');
    const other = await t.newAccount('metric-retention-2');
    const now = Date.now();
    const at = (daysAgo: number) => new Date(now - daysAgo * DAY).toISOString();
    assert.equal((await api.post('/api/customers', customerBody('m1'))).status, 201);
    assert.equal((await other.post('/api/customers', customerBody('m2'))).status, 201);
    for (const days of [500, 450, 401, 399, 10]) {
      assert.equal(
        (await api.post('/api/customers/m1/metrics', { values: { logins: days }, at: at(days) })).status,
        200,
      );
    }
    assert.equal(
      (await other.post('/api/customers/m2/metrics', { values: { logins: 1 }, at: at(420) })).status,
      200,
    );
    const job = new RetentionJob({
      store: t.store,
      keepMs: null,
      metricKeepMs: 400 * DAY,
      log: quiet,
      batch: 2,
      pauseMs: 0,
      now: () => now,
    });
    assert.equal((await job.runOnce()).metricPoints, 4);
    const left = (await api.get('/api/customers/m1/metrics?limit=100')).body.data.map(
      (p: { value: number }) => p.value,
    );
    assert.deepEqual(left, [10, 399]);
    assert.deepEqual((await other.get('/api/customers/m2/metrics')).body.data, []);
    assert.equal((await job.runOnce()).metricPoints, 0, 'a second pass finds nothing');
  });

  test('VITALS_METRIC_RETENTION defaults to 400 days; off keeps everything', () => {
    assert.equal(loadConfig({}).metricRetentionMs, 400 * DAY);
    assert.equal(loadConfig({ VITALS_METRIC_RETENTION: '30d' }).metricRetentionMs, 30 * DAY);
    assert.equal(loadConfig({ VITALS_METRIC_RETENTION: 'off' }).metricRetentionMs, null);
    assert.throws(
      () => loadConfig({ VITALS_METRIC_RETENTION: '1y' }),
      /^ConfigError: VITALS_METRIC_RETENTION=/,
    );
  });
});

describe('VITALS_EVENT_RETENTION', () => {
  test('defaults to 30 days; takes d, h, m, s periods or off', () => {
    assert.equal(loadConfig({}).eventRetentionMs, 30 * DAY);
    assert.equal(loadConfig({ VITALS_EVENT_RETENTION: '7d' }).eventRetentionMs, 7 * DAY);
    assert.equal(loadConfig({ VITALS_EVENT_RETENTION: '12h' }).eventRetentionMs, 12 * 3_600_000);
    assert.equal(loadConfig({ VITALS_EVENT_RETENTION: '90m' }).eventRetentionMs, 90 * 60_000);
    assert.equal(loadConfig({ VITALS_EVENT_RETENTION: 'off' }).eventRetentionMs, null);
  });

  for (const bad of ['30', '-1d', '0d', '1.5d', '3651d', 'forever', '30 days']) {
    test(`${JSON.stringify(bad)} is refused, naming the variable`, () => {
      assert.throws(
        () => loadConfig({ VITALS_EVENT_RETENTION: bad }),
        /^ConfigError: VITALS_EVENT_RETENTION=".*" is invalid: must be a period such as 30d/,
      );
    });
  }
});
