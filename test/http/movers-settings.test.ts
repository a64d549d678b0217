// The movers judge the customer, not the settings (docs/api.md, "Segments, trends and movers"): a
// mover's change adds up the moves of its own versions in the window, so the versions a weights,
// thresholds or rules change writes move no one, neither making a mover nor hiding a real fall,
// and a customer's first version moves nothing. Every figure is worked out by hand from the
// timelines below, on a clock the test sets.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type TestApp, TestClock } from '../helpers/app.ts';

async function customer(api: Client, id: string) {
  const res = await api.post('/api/customers', customerBody(id));
  assert.equal(res.status, 201, res.raw);
}

async function score(api: Client, id: string, usage: number, support: number) {
  const res = await api.post(`/api/customers/${id}/health-score`, { factors: { usage, support } });
  assert.equal(res.status, 200, res.raw);
}

async function movers(api: Client, query: string) {
  const res = await api.get(`/api/health-scores/movers?${query}`);
  assert.equal(res.status, 200, res.raw);
  return res.body.data;
}

const mover = (id: string, health: number, baseline: number, change: number, status: string) => ({
  customer_id: id,
  name: `Customer ${id}`,
  health_score: health,
  status,
  baseline_score: baseline,
  change,
});

/*
 * The timeline (UTC), read on Mar 10 10:00 with days=7: the window opens on Mar 3 10:00. Factors
 * are {usage, support}; with no weights the score is their mean.
 *   Mar 1 10:00  w (1, 0) 0.5   r (0.9, 0.9) 0.9   h (0.9, 0.9) 0.9   k (0.6, 0.6) 0.6   u (0.3, 0.3) 0.3
 *   Mar 5 10:00  r (0.8, 0.4) 0.6: a real fall of 0.3   h (1, 0.6) 0.8: a real fall of 0.1
 *                n is scored for the first time ever: (0.5, 0.5) 0.5
 *   Mar 6 10:00  n (0.4, 0.4) 0.4: a fall of 0.1 from its first version
 *   Mar 7 10:00  weights usage 0.75, support 0.25: w 0.75 (+0.25), r 0.7 (+0.1), h 0.9 (+0.1);
 *                k, u and n, whose factors are equal, stay
 *   Mar 8 10:00  u (0.5, 0.5) 0.5: a real rise of 0.2
 *   Mar 9 10:00  thresholds healthy 0.85: w, h and r are re-banded (a version each, no score moved)
 */
describe('movers: the settings move no one', () => {
  let t: TestApp;
  const clock = new TestClock('2026-03-01T10:00:00.000Z');
  before(async () => {
    t = await buildTestApp({ now: clock.now });
    const api = t.api;
    for (const id of ['w', 'r', 'h', 'k', 'u']) await customer(api, id);
    await score(api, 'w', 1, 0);
    await score(api, 'r', 0.9, 0.9);
    await score(api, 'h', 0.9, 0.9);
    await score(api, 'k', 0.6, 0.6);
    await score(api, 'u', 0.3, 0.3);
    clock.set('2026-03-05T10:00:00.000Z');
    await score(api, 'r', 0.8, 0.4);
    await score(api, 'h', 1, 0.6);
    await customer(api, 'n');
    await score(api, 'n', 0.5, 0.5);
    clock.set('2026-03-06T10:00:00.000Z');
    await score(api, 'n', 0.4, 0.4);
    clock.set('2026-03-07T10:00:00.000Z');
    const w = await api.patch('/api/settings/health-score/weights', {
      weights: { usage: 0.75, support: 0.25 },
    });
    assert.equal(w.status, 200, w.raw);
    clock.set('2026-03-08T10:00:00.000Z');
    await score(api, 'u', 0.5, 0.5);
    clock.set('2026-03-09T10:00:00.000Z');
    const th = await api.patch('/api/settings/health-score/thresholds', { healthy: 0.85 });
    assert.equal(th.status, 200, th.raw);
    clock.set('2026-03-10T10:00:00.000Z');
  });
  after(() => t.close());

  test('the recomputations are in the history, as the movers must leave them out', async () => {
    const reasons = async (id: string) =>
      (await t.api.get(`/api/customers/${id}/health-score/history`)).body.data.map(
        (v: { reason: string; health_score: number }) => [v.reason, v.health_score],
      );
    assert.deepEqual(await reasons('w'), [
      ['thresholds_changed', 0.75],
      ['weights_changed', 0.75],
      ['factors_updated', 0.5],
    ]);
    assert.deepEqual(await reasons('r'), [
      ['thresholds_changed', 0.7],
      ['weights_changed', 0.7],
      ['factors_updated', 0.6],
      ['factors_updated', 0.9],
    ]);
  });

  test('down: the sum of the customer’s own moves; the baseline is still the score the window opened on', async () => {
    // r fell 0.3 and the weights gave 0.1 back: −0.3, not 0.7 − 0.9. h fell 0.1 and the weights
    // gave it back: a mover at its baseline. n's first version moves nothing: −0.1, not −0.5.
    assert.deepEqual(await movers(t.api, 'days=7'), [
      mover('r', 0.7, 0.9, -0.3, 'at_risk'),
      mover('h', 0.9, 0.9, -0.1, 'healthy'),
      mover('n', 0.4, 0.5, -0.1, 'at_risk'),
    ]);
    assert.deepEqual(
      (await movers(t.api, 'days=7&limit=2')).map((m: { customer_id: string }) => m.customer_id),
      ['r', 'h'],
    );
  });

  test('up: a score moved by the weights alone is not a mover; a real rise is', async () => {
    assert.deepEqual(await movers(t.api, 'days=7&direction=up'), [mover('u', 0.5, 0.3, 0.2, 'at_risk')]);
  });

  test('a window holding only settings changes has no movers; one opening after a fall forgets it', async () => {
    // From Mar 6 12:00: n's and r's falls are before; only the weights, u's rise and the thresholds follow.
    clock.set('2026-03-10T12:00:00.000Z');
    try {
      assert.deepEqual(await movers(t.api, 'days=4'), []);
      assert.deepEqual(await movers(t.api, 'days=4&direction=up'), [mover('u', 0.5, 0.3, 0.2, 'at_risk')]);
      // From Mar 8 12:00: nothing but the thresholds change, which moves no score and no one.
      assert.deepEqual(await movers(t.api, 'days=2'), []);
      assert.deepEqual(await movers(t.api, 'days=2&direction=up'), []);
    } finally {
      clock.set('2026-03-10T10:00:00.000Z');
    }
  });
});

/*
 * A factor rule (engagement: the last logins on a scale of 0–10) in an account of its own.
 *   Mar 1 10:00  m logs 8: its first score 0.8   q logs 6: 0.6
 *   Mar 6 10:00  the rule's scale becomes 0–16: m 0.5, q 0.375 (rules_changed)
 *   Mar 8 10:00  m logs 4: 0.25, a real fall of 0.25
 */
describe('movers: a rules change moves no one', () => {
  let t: TestApp;
  let api: Client;
  const clock = new TestClock('2026-03-01T10:00:00.000Z');
  const rule = (to: number) => ({
    metric: 'logins',
    aggregate: 'last',
    scale: { type: 'linear', from: 0, to },
  });
  const logins = async (id: string, n: number) => {
    const res = await api.post(`/api/customers/${id}/metrics`, { values: { logins: n } });
    assert.equal(res.status, 200, res.raw);
  };
  before(async () => {
    t = await buildTestApp({ now: clock.now });
    api = await t.newAccount('movers-rules');
    const put = await api.request('PUT', '/api/settings/health-score/factors/engagement', rule(10));
    assert.equal(put.status, 200, put.raw);
    for (const id of ['m', 'q']) await customer(api, id);
    await logins('m', 8);
    await logins('q', 6);
    clock.set('2026-03-06T10:00:00.000Z');
    const again = await api.request('PUT', '/api/settings/health-score/factors/engagement', rule(16));
    assert.equal(again.status, 200, again.raw);
    clock.set('2026-03-08T10:00:00.000Z');
    await logins('m', 4);
    clock.set('2026-03-10T10:00:00.000Z');
  });
  after(() => t.close());

  test('the rule’s recomputation is left out: q is no mover, m fell 0.25 (not 0.55)', async () => {
    const history = await api.get('/api/customers/q/health-score/history');
    assert.deepEqual(
      history.body.data.map((v: { reason: string; health_score: number }) => [v.reason, v.health_score]),
      [
        ['rules_changed', 0.375],
        ['metrics_updated', 0.6],
      ],
    );
    assert.deepEqual(await movers(api, 'days=7'), [mover('m', 0.25, 0.8, -0.25, 'critical')]);
    assert.deepEqual(await movers(api, 'days=7&direction=up'), []);
  });
});
