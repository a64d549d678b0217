// Drop alerts (docs/scoring.md, "Drop alerts"): the setting, and customer.health_score.dropped
// exactly once per window, never on a first score, never for a band move alone, and measured
// against a peak that starts again at every settings change. The clock is the test's.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type TestApp, TestClock } from '../helpers/app.ts';
import { TestReceiver } from '../helpers/receiver.ts';

const DAY = 86_400_000;
const RULE = { drop: { delta: 0.2, days: 7 } };

async function customer(api: Client, id: string) {
  assert.equal((await api.post('/api/customers', customerBody(id))).status, 201);
}

async function score(api: Client, id: string, factors: Record<string, number>) {
  const res = await api.post(`/api/customers/${id}/health-score`, { factors });
  assert.equal(res.status, 200, res.raw);
}

/** The dropped events of the account, oldest first. */
async function drops(api: Client): Promise<Record<string, unknown>[]> {
  const res = await api.get('/api/events?type=customer.health_score.dropped&limit=100');
  assert.equal(res.status, 200, res.raw);
  return res.body.data.map((e: { data: Record<string, unknown> }) => e.data).reverse();
}

describe('drop alerts: the setting', () => {
  let t: TestApp;
  const clock = new TestClock('2026-04-01T00:00:00.000Z');
  before(async () => {
    t = await buildTestApp({ now: clock.now });
  });
  after(() => t.close());

  test('off until set; set, read back, turned off again', async () => {
    assert.deepEqual((await t.api.get('/api/settings/health-score/alerts')).body, {
      drop: null,
      updated_at: null,
    });
    const set = await t.api.patch('/api/settings/health-score/alerts', RULE);
    assert.equal(set.status, 200, set.raw);
    assert.deepEqual(set.body, { ...RULE, updated_at: '2026-04-01T00:00:00.000Z' });
    assert.deepEqual((await t.api.get('/api/settings/health-score/alerts')).body, set.body);
    clock.advance(1000);
    const off = await t.api.patch('/api/settings/health-score/alerts', { drop: null });
    assert.deepEqual(off.body, { drop: null, updated_at: '2026-04-01T00:00:01.000Z' });
  });

  for (const [name, body, param] of [
    ['delta 0', { drop: { delta: 0, days: 7 } }, 'drop.delta'],
    ['delta over 1', { drop: { delta: 1.01, days: 7 } }, 'drop.delta'],
    ['days 0', { drop: { delta: 0.2, days: 0 } }, 'drop.days'],
    ['days 91', { drop: { delta: 0.2, days: 91 } }, 'drop.days'],
    ['days not whole', { drop: { delta: 0.2, days: 1.5 } }, 'drop.days'],
    ['no days', { drop: { delta: 0.2 } }, 'drop.days'],
    ['an unknown field in drop', { drop: { delta: 0.2, days: 7, email: true } }, 'drop.email'],
    ['an unknown field', { drop: null, rise: null }, 'rise'],
    ['no drop', {}, 'drop'],
    ['drop a string', { drop: 'off' }, 'drop'],
  ] as const) {
    test(`${name}: 400 naming ${param}, and the rule stays as it was`, async () => {
      const set = await t.api.patch('/api/settings/health-score/alerts', RULE);
      assert.equal(set.status, 200);
      const res = await t.api.patch('/api/settings/health-score/alerts', body);
      assert.equal(res.status, 400, res.raw);
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.equal(res.body.error.param, param, res.raw);
      assert.deepEqual((await t.api.get('/api/settings/health-score/alerts')).body, set.body);
    });
  }

  test('each account has its own rule', async () => {
    await t.api.patch('/api/settings/health-score/alerts', RULE);
    const other = await t.newAccount('alerts-other');
    assert.deepEqual((await other.get('/api/settings/health-score/alerts')).body, {
      drop: null,
      updated_at: null,
    });
  });
});

describe('drop alerts: customer.health_score.dropped', () => {
  let t: TestApp;
  const clock = new TestClock('2026-04-01T00:00:00.000Z');
  before(async () => {
    t = await buildTestApp({ now: clock.now });
  });
  after(() => t.close());
  let api: Client;
  let n = 0;
  beforeEach(async () => {
    api = await t.newAccount(`drops-${++n}`);
    clock.set('2026-04-01T00:00:00.000Z');
    assert.equal((await api.patch('/api/settings/health-score/alerts', RULE)).status, 200);
  });

  test('a churned customer has left the portfolio: its fall alerts nobody (docs/api.md)', async () => {
    await customer(api, 'gone');
    await customer(api, 'kept');
    for (const id of ['gone', 'kept']) await score(api, id, { usage: 0.9 });
    const churned = await api.patch('/api/customers/gone', { lifecycle: 'churned' });
    assert.equal(churned.status, 200, churned.raw);
    clock.advance(DAY);
    for (const id of ['gone', 'kept']) await score(api, id, { usage: 0.5 });
    assert.deepEqual(
      (await drops(api)).map((d) => d.customer_id),
      ['kept'],
    );
    // Active again, it is watched again: the same fall, still in the window, alerts.
    assert.equal((await api.patch('/api/customers/gone', { lifecycle: 'active' })).status, 200);
    clock.advance(DAY);
    await score(api, 'gone', { usage: 0.4 });
    assert.deepEqual(
      (await drops(api)).map((d) => d.customer_id),
      ['kept', 'gone'],
    );
  });

  test('once the score is delta below its peak in the window, and not again within it', async () => {
    await customer(api, 'x');
    await score(api, 'x', { usage: 0.9 }); // the first score: nothing to fall from
    clock.advance(DAY);
    await score(api, 'x', { usage: 0.8 }); // 0.1 below the peak
    clock.advance(DAY);
    await score(api, 'x', { usage: 0.7 }); // exactly 0.2 below: "at least delta"
    clock.advance(DAY);
    await score(api, 'x', { usage: 0.3 }); // further down, the same window: no second alert
    assert.deepEqual(await drops(api), [
      {
        customer_id: 'x',
        health_score: 0.7,
        peak_score: 0.9,
        change: -0.2,
        days: 7,
        status: 'healthy',
        updated_at: '2026-04-03T00:00:00.000Z',
      },
    ]);
    // Exactly seven days after the alert the next window opens, on the 0.7 the score stood at
    // then: a fall to 0.5 is 0.2 below it, and alerts again; a further fall, in that window, does not.
    clock.set('2026-04-10T00:00:00.000Z');
    await score(api, 'x', { usage: 0.5 });
    clock.advance(1);
    await score(api, 'x', { usage: 0.29 });
    const later = await drops(api);
    assert.equal(later.length, 2);
    assert.deepEqual(later[1], {
      customer_id: 'x',
      health_score: 0.5,
      peak_score: 0.7,
      change: -0.2,
      days: 7,
      status: 'at_risk',
      updated_at: '2026-04-10T00:00:00.000Z',
    });
  });

  test('the peak is forgotten once it leaves the window', async () => {
    await customer(api, 'y');
    await score(api, 'y', { usage: 0.9 });
    clock.advance(DAY);
    await score(api, 'y', { usage: 0.75 });
    clock.advance(7 * DAY);
    // 0.9 was last held 7 days ago, when the window opens on 0.75: 0.6 is 0.15 below that.
    await score(api, 'y', { usage: 0.6 });
    assert.deepEqual(await drops(api), []);
  });

  test('a band move alone is no drop: neither a small fall across a bound nor a thresholds change', async () => {
    await customer(api, 'z');
    await score(api, 'z', { usage: 0.72 });
    await score(api, 'z', { usage: 0.68 });
    const thresholds = await api.patch('/api/settings/health-score/thresholds', {
      healthy: 0.9,
      at_risk: 0.69,
    });
    assert.equal(thresholds.status, 200, thresholds.raw);
    const changed = await api.get('/api/events?type=customer.status.changed&limit=10');
    assert.equal(changed.body.data.length, 3, 'the band moved twice after the first score');
    assert.deepEqual(await drops(api), []);
  });

  test('a weights change recomputes without alerting, and the peak starts again from it', async () => {
    await customer(api, 'w');
    await score(api, 'w', { usage: 1, support: 0 }); // 0.5, the mean
    clock.advance(DAY);
    const w = await api.patch('/api/settings/health-score/weights', {
      weights: { usage: 0.2, support: 0.8 },
    });
    assert.equal(w.status, 200, w.raw);
    assert.equal((await api.get('/api/customers/w/health-score')).body.health_score, 0.2);
    clock.advance(DAY);
    await score(api, 'w', { usage: 0.9, support: 0.05 }); // 0.22: up from 0.2, though 0.28 below 0.5
    assert.deepEqual(await drops(api), []);
    clock.advance(DAY);
    await score(api, 'w', { usage: 0, support: 0 }); // 0 is 0.22 below the peak since the weights change
    assert.deepEqual(
      (await drops(api)).map((d) => [d.peak_score, d.change]),
      [[0.22, -0.22]],
    );
  });

  test('a thresholds change does not start the peak again: it moves bands, not scores', async () => {
    await customer(api, 't');
    await score(api, 't', { usage: 0.9 });
    clock.advance(DAY);
    await score(api, 't', { usage: 0.75 }); // 0.15 below the peak
    const thresholds = await api.patch('/api/settings/health-score/thresholds', { healthy: 0.8 });
    assert.equal(thresholds.status, 200, thresholds.raw);
    const history = await api.get('/api/customers/t/health-score/history?limit=1');
    assert.deepEqual(
      history.body.data.map((v: { reason: string; health_score: number }) => [v.reason, v.health_score]),
      [['thresholds_changed', 0.75]],
      're-banded to at_risk: a version of the settings, not of the customer',
    );
    clock.advance(DAY);
    await score(api, 't', { usage: 0.6 }); // 0.3 below the 0.9 it stood at: the customer fell
    assert.deepEqual(
      (await drops(api)).map((d) => [d.peak_score, d.change]),
      [[0.9, -0.3]],
    );
  });

  test('no alerts when the rule is off; batches alert as their single calls would', async () => {
    await customer(api, 'v');
    await customer(api, 'u');
    assert.equal((await api.patch('/api/settings/health-score/alerts', { drop: null })).status, 200);
    await score(api, 'v', { usage: 0.9 });
    await score(api, 'v', { usage: 0.1 });
    assert.deepEqual(await drops(api), []);
    assert.equal((await api.patch('/api/settings/health-score/alerts', RULE)).status, 200);
    // One batch a version: a batch's items for one customer make one version (docs/api.md, "One
    // customer, one instant, one version"), so each step of the drop is a batch of its own.
    for (const scores of [
      [
        { customer_id: 'u', factors: { usage: 0.8 } },
        { customer_id: 'v', factors: { usage: 0.95 } },
      ],
      [{ customer_id: 'u', factors: { usage: 0.5 } }],
      [{ customer_id: 'u', factors: { usage: 0.1 } }],
    ]) {
      const batch = await api.post('/api/health-scores/batch', { scores });
      assert.equal(batch.status, 200, batch.raw);
    }
    assert.deepEqual(
      (await drops(api)).map((d) => [d.customer_id, d.health_score, d.peak_score]),
      [['u', 0.5, 0.8]],
    );
  });
});

describe('drop alerts: delivered to a subscribed webhook', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  before(async () => {
    t = await buildTestApp({ dispatcher: true });
    receiver = await TestReceiver.start();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  test('a webhook subscribed to customer.health_score.dropped gets it, signed, and nothing else', async () => {
    const hook = await t.api.post('/api/webhooks', {
      url: `${receiver.url}/drops`,
      events: ['customer.health_score.dropped'],
    });
    assert.equal(hook.status, 201, hook.raw);
    assert.equal(
      (await t.api.patch('/api/settings/health-score/alerts', { drop: { delta: 0.5, days: 1 } })).status,
      200,
    );
    await customer(t.api, 'cliff');
    await score(t.api, 'cliff', { usage: 1 });
    await score(t.api, 'cliff', { usage: 0.4 });
    const [got] = await receiver.waitFor(1);
    assert.ok(got);
    assert.equal(got.headers['x-vitals-event'], 'customer.health_score.dropped');
    assert.match(String(got.headers['x-vitals-signature']), /^[0-9a-f]{64}$/);
    const body = JSON.parse(got.body);
    assert.equal(body.type, 'customer.health_score.dropped');
    assert.deepEqual(
      [body.data.customer_id, body.data.health_score, body.data.peak_score, body.data.change, body.data.days],
      ['cliff', 0.4, 1, -0.6, 1],
    );
    assert.equal(receiver.requests.length, 1);
  });
});
