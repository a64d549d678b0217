// Explanations and overrides through HTTP (docs/scoring.md, "Why this score" and "Overrides";
// docs/api.md, "Explanations and overrides"): every version explains itself by the weights and
// inputs it was computed from; an override pins what every read shows while the computed score
// moves underneath, and setting, removing and its end are versions with events and audit entries.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RescoreJob } from '../../src/rescore-job.ts';
import { buildTestApp, customerBody, type TestApp, TestClock } from '../helpers/app.ts';
import { refusedWithoutChange } from '../helpers/refusals.ts';

const DAY = 86_400_000;
const quiet = { info: () => {}, error: () => {} };
const clock = new TestClock('2026-03-31T12:00:00.000Z');
let t: TestApp;
before(async () => {
  t = await buildTestApp({ now: clock.now });
});
after(() => t.close());

async function customer(id: string, factors?: Record<string, number>): Promise<void> {
  assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
  if (factors) assert.equal((await t.api.post(`/api/customers/${id}/health-score`, { factors })).status, 200);
}
const explain = (id: string, query = '') =>
  t.api.get(`/api/customers/${id}/health-score/explanation${query}`);
const override = (id: string, body: unknown) =>
  t.api.request('PUT', `/api/customers/${id}/health-score/override`, body);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('explanations', () => {
  before(async () => {
    const weights = await t.api.request('PATCH', '/api/settings/health-score/weights', {
      weights: { usage: 0.5, support: 0.3, billing: 0.2 },
    });
    assert.equal(weights.status, 200, weights.raw);
  });

  test('each factor with its effective weight and contribution; the contributions add up to the score', async () => {
    await customer('ex_a', { usage: 0.9, support: 0.5, other: 1 });
    const res = await explain('ex_a');
    assert.equal(res.status, 200, res.raw);
    const e = res.body;
    assert.equal(e.customer_id, 'ex_a');
    assert.equal(e.version, 1);
    assert.equal(e.reason, 'factors_updated');
    assert.equal(e.override, null);
    assert.equal(e.change, null, 'version 1 has nothing before it');
    // usage and support weighted 0.5 and 0.3: renormalized over the two present; `other` has no weight.
    assert.deepEqual(e.factors, [
      { factor: 'other', score: 1, weight: 0, contribution: 0, source: 'posted' },
      { factor: 'support', score: 0.5, weight: 0.375, contribution: 0.1875, source: 'posted' },
      { factor: 'usage', score: 0.9, weight: 0.625, contribution: 0.5625, source: 'posted' },
    ]);
    assert.equal(e.health_score, 0.75);
    assert.equal(e.computed_score, 0.75);
    assert.ok(Math.abs(sum(e.factors.map((f: { contribution: number }) => f.contribution)) - 0.75) < 1e-5);
  });

  test('what moved since the version before, biggest mover first', async () => {
    await customer('ex_b', { usage: 0.9, support: 0.5 });
    clock.advance(1000);
    assert.equal(
      (
        await t.api.post('/api/customers/ex_b/health-score', {
          factors: { usage: 0.5, support: 0.6, billing: 1 },
        })
      ).status,
      200,
    );
    const e = (await explain('ex_b')).body;
    assert.equal(e.version, 2);
    assert.equal(e.change.from_version, 1);
    assert.equal(e.change.previous_score, 0.75);
    assert.equal(e.change.previous_computed_score, 0.75);
    assert.equal(e.change.delta, Math.round((e.health_score - 0.75) * 1e6) / 1e6);
    assert.deepEqual(
      e.change.factors.map((f: { factor: string }) => f.factor),
      ['usage', 'billing', 'support'],
    );
    const usage = e.change.factors[0];
    assert.equal(usage.previous_contribution, 0.5625);
    assert.equal(usage.contribution, 0.25);
    assert.equal(usage.delta, -0.3125);
    const billing = e.change.factors[1];
    assert.equal(billing.previous_contribution, 0, 'an added factor moves from 0');
    assert.equal(billing.contribution, 0.2);
  });

  test('any version of the history, explained by the weights it was computed with', async () => {
    await customer('ex_w', { usage: 1, support: 0 });
    clock.advance(1000);
    const changed = await t.api.request('PATCH', '/api/settings/health-score/weights', {
      weights: { usage: 0.2, support: 0.8 },
    });
    assert.equal(changed.status, 200, changed.raw);
    const now = (await explain('ex_w')).body;
    assert.equal(now.reason, 'weights_changed');
    assert.deepEqual(
      now.factors.map((f: { weight: number }) => f.weight),
      [0.8, 0.2],
    );
    assert.equal(now.health_score, 0.2);
    assert.deepEqual(
      now.change.factors.map((f: { factor: string; delta: number }) => [f.factor, f.delta]),
      [['usage', -0.425]],
    );
    const first = (await explain('ex_w', '?version=1')).body;
    assert.equal(first.version, 1);
    assert.deepEqual(
      first.factors.map((f: { weight: number }) => f.weight),
      [0.375, 0.625],
      'version 1 keeps the weights of its time',
    );
    assert.equal(first.health_score, 0.625);
    await t.api.request('PATCH', '/api/settings/health-score/weights', {
      weights: { usage: 0.5, support: 0.3, billing: 0.2 },
    });
  });

  test('a derived factor names its metric, aggregate, window, value, points and newest point', async () => {
    const rule = await t.api.request('PUT', '/api/settings/health-score/factors/engagement', {
      metric: 'logins',
      aggregate: 'sum',
      window_days: 30,
      scale: { type: 'linear', from: 0, to: 20 },
    });
    assert.equal(rule.status, 200, rule.raw);
    await customer('ex_m', { support: 0.5 });
    const at = (daysAgo: number) => new Date(clock.ms - daysAgo * DAY).toISOString();
    await t.api.post('/api/customers/ex_m/metrics', { values: { logins: 6 }, at: at(3) });
    await t.api.post('/api/customers/ex_m/metrics', { values: { logins: 4 }, at: at(1) });
    const e = (await explain('ex_m')).body;
    assert.equal(e.reason, 'metrics_updated');
    const engagement = e.factors.find((f: { factor: string }) => f.factor === 'engagement');
    assert.deepEqual(engagement.metric, {
      name: 'logins',
      aggregate: 'sum',
      window_days: 30,
      value: 10,
      points: 2,
      newest_at: at(1),
    });
    assert.equal(engagement.source, 'metric');
    assert.equal(engagement.score, 0.5);
    // Posting another factor keeps the derived one and what it came from.
    clock.advance(1000);
    await t.api.post('/api/customers/ex_m/health-score', { factors: { support: 0.9 } });
    const later = (await explain('ex_m')).body;
    assert.deepEqual(
      later.factors.find((f: { factor: string }) => f.factor === 'engagement').metric,
      engagement.metric,
    );
    const deleted = await t.api.request('DELETE', '/api/settings/health-score/factors/engagement');
    assert.equal(deleted.status, 200, deleted.raw);
  });

  test('refusals: a version that does not exist, a version that is no integer, unknown customer or score', async () => {
    await customer('ex_r', { usage: 0.4 });
    await customer('ex_none');
    const history = async () => (await t.api.get('/api/customers/ex_r/health-score/history')).body;
    await refusedWithoutChange(
      history,
      () => explain('ex_r', '?version=2'),
      404,
      'version_not_found',
      'version',
    );
    // 0 may name a version (a backfill's, docs/api.md "Backfill"); this customer has none.
    await refusedWithoutChange(
      history,
      () => explain('ex_r', '?version=0'),
      404,
      'version_not_found',
      'version',
    );
    await refusedWithoutChange(
      history,
      () => explain('ex_r', '?version=2147483648'),
      400,
      'parameter_invalid',
      'version',
    );
    await refusedWithoutChange(
      history,
      () => explain('ex_r', '?version=1.5'),
      400,
      'parameter_invalid',
      'version',
    );
    await refusedWithoutChange(
      history,
      () => explain('ex_r', '?version=x'),
      400,
      'parameter_invalid',
      'version',
    );
    await refusedWithoutChange(history, () => explain('ex_r', '?at=1'), 400, 'parameter_unknown', 'at');
    await refusedWithoutChange(history, () => explain('nobody'), 404, 'customer_not_found', undefined);
    await refusedWithoutChange(history, () => explain('ex_none'), 404, 'health_score_not_found', undefined);
  });
});

describe('overrides', () => {
  test('pins what every read shows; the computed score moves underneath; removing it shows the computed one', async () => {
    await customer('ov_a', { usage: 0.9, support: 0.9 });
    clock.advance(1000);
    const set = await override('ov_a', { health_score: 0.2, reason: 'Champion left last week' });
    assert.equal(set.status, 200, set.raw);
    assert.equal(set.body.health_score, 0.2);
    assert.equal(set.body.status, 'critical');
    assert.deepEqual(set.body.override, {
      health_score: 0.2,
      computed_score: 0.9,
      reason: 'Champion left last week',
      expires_at: new Date(clock.ms + 30 * DAY).toISOString(),
      set_at: new Date(clock.ms).toISOString(),
      set_by: set.body.override.set_by,
    });
    assert.match(set.body.override.set_by, /…$/, 'the key, as the audit log names it');
    const got = (await t.api.get('/api/customers/ov_a/health-score')).body;
    assert.deepEqual(got, set.body);
    const critical = (await t.api.get('/api/health-scores?status=critical&limit=100')).body.data;
    assert.ok(critical.some((s: { customer_id: string }) => s.customer_id === 'ov_a'));

    // New factors: the computed score moves, the pinned one stays; the explanation shows both.
    clock.advance(1000);
    const posted = await t.api.post('/api/customers/ov_a/health-score', {
      factors: { usage: 0.5, support: 0.5 },
    });
    assert.equal(posted.body.health_score, 0.2);
    assert.equal(posted.body.override.computed_score, 0.5);
    const e = (await explain('ov_a')).body;
    assert.equal(e.health_score, 0.2);
    assert.equal(e.computed_score, 0.5);
    assert.equal(e.override.reason, 'Champion left last week');
    assert.equal(e.change.delta, 0, 'the score shown did not move');
    assert.equal(e.change.previous_computed_score, 0.9, 'the computed one did: 0.9 → 0.5');
    const moved = e.change.factors.reduce((a: number, f: { delta: number }) => a + f.delta, 0);
    assert.ok(Math.abs(moved - (0.5 - 0.9)) < 1e-5);

    clock.advance(1000);
    const removed = await t.api.request('DELETE', '/api/customers/ov_a/health-score/override');
    assert.equal(removed.status, 200, removed.raw);
    assert.equal(removed.body.health_score, 0.5);
    assert.equal(removed.body.status, 'at_risk');
    assert.equal(removed.body.override, null);

    const history = (await t.api.get('/api/customers/ov_a/health-score/history')).body.data;
    assert.deepEqual(
      history.map((h: { reason: string; health_score: number }) => [h.reason, h.health_score]),
      [
        ['override_removed', 0.5],
        ['factors_updated', 0.2],
        ['override_set', 0.2],
        ['factors_updated', 0.9],
      ],
    );
    const audit = (await t.api.get('/api/audit-log?limit=100')).body.data;
    const actions = audit
      .filter((a: { object_id: string }) => a.object_id === 'ov_a')
      .map((a: { action: string }) => a.action);
    assert.ok(actions.includes('health_score.override_set'), JSON.stringify(actions));
    assert.ok(actions.includes('health_score.override_removed'), JSON.stringify(actions));
    const events = (await t.api.get('/api/events?limit=100')).body.data.filter(
      (ev: { data: { customer_id: string } }) => ev.data.customer_id === 'ov_a',
    );
    const statuses = events
      .filter((ev: { type: string }) => ev.type === 'customer.status.changed')
      .map((ev: { data: { status: string } }) => ev.data.status);
    assert.deepEqual(statuses, ['at_risk', 'critical', 'healthy'], 'newest first: set, removed, created');
  });

  test('its end shows at once on GET and is recorded by the rescore job as a version', async () => {
    await customer('ov_end', { usage: 0.8 });
    const expires = new Date(clock.ms + DAY).toISOString();
    const set = await override('ov_end', {
      health_score: 0.1,
      reason: 'Renewal at risk',
      expires_at: expires,
    });
    assert.equal(set.status, 200, set.raw);
    assert.equal(set.body.override.expires_at, expires);
    clock.advance(DAY);
    const shown = (await t.api.get('/api/customers/ov_end/health-score')).body;
    assert.equal(shown.health_score, 0.8, 'the override ended: the computed score shows');
    assert.equal(shown.override, null);
    assert.equal((await explain('ov_end')).body.health_score, 0.8);
    const job = new RescoreJob({ store: t.store, intervalMs: 3_600_000, log: quiet, now: clock.now });
    await job.runOnce();
    const history = (await t.api.get('/api/customers/ov_end/health-score/history')).body.data;
    assert.equal(history[0].reason, 'override_expired');
    assert.equal(history[0].health_score, 0.8);
    assert.equal((await t.api.get('/api/customers/ov_end/health-score')).body.health_score, 0.8);
    await job.runOnce();
    assert.equal(
      (await t.api.get('/api/customers/ov_end/health-score/history')).body.data.length,
      history.length,
      'recorded once',
    );
  });

  test('a parallel burst of overrides, removals and factor writes: each its own version, none lost or doubled', async () => {
    await customer('ov_burst', { usage: 0.5 });
    const sends = Array.from({ length: 30 }, (_, i) => {
      if (i % 3 === 0) return override('ov_burst', { health_score: (i % 10) / 10, reason: `burst ${i}` });
      if (i % 3 === 1)
        return t.api.post('/api/customers/ov_burst/health-score', { factors: { usage: (i % 7) / 7 } });
      return t.api.request('DELETE', '/api/customers/ov_burst/health-score/override');
    });
    const answers = await Promise.all(sends);
    const applied = answers.filter((r) => r.status === 200).length;
    for (const r of answers)
      assert.ok(r.status === 200 || r.body.error?.code === 'override_not_found', r.raw);
    const history = (await t.api.get('/api/customers/ov_burst/health-score/history?limit=100')).body.data;
    assert.deepEqual(
      history.map((h: { version: number }) => h.version),
      Array.from({ length: applied + 1 }, (_, i) => applied + 1 - i),
      'versions 1…n, one per applied write',
    );
    const shown = (await t.api.get('/api/customers/ov_burst/health-score')).body;
    const e = (await explain('ov_burst')).body;
    assert.equal(e.version, applied + 1);
    assert.equal(e.health_score, shown.health_score);
  });

  test('refusals name their field and change nothing', async () => {
    await customer('ov_r', { usage: 0.6 });
    await customer('ov_none');
    const stored = async () => ({
      score: (await t.api.get('/api/customers/ov_r/health-score')).body,
      history: (await t.api.get('/api/customers/ov_r/health-score/history')).body,
    });
    const iso = (ms: number) => new Date(ms).toISOString();
    const cases: [unknown, number, string, string | undefined][] = [
      [{ health_score: 0.5 }, 400, 'parameter_missing', 'reason'],
      [{ health_score: 0.5, reason: '' }, 400, 'parameter_invalid', 'reason'],
      [{ health_score: 0.5, reason: '   ' }, 400, 'parameter_missing', 'reason'],
      [{ health_score: 0.5, reason: 'x'.repeat(501) }, 400, 'parameter_invalid', 'reason'],
      [{ health_score: 1.5, reason: 'r' }, 400, 'parameter_invalid', 'health_score'],
      [{ health_score: -0.1, reason: 'r' }, 400, 'parameter_invalid', 'health_score'],
      [{ health_score: '0.5', reason: 'r' }, 400, 'parameter_invalid', 'health_score'],
      [{ reason: 'r' }, 400, 'parameter_missing', 'health_score'],
      [
        { health_score: 0.5, reason: 'r', expires_at: iso(clock.ms - 1000) },
        400,
        'parameter_invalid',
        'expires_at',
      ],
      [
        { health_score: 0.5, reason: 'r', expires_at: iso(clock.ms + 366 * DAY) },
        400,
        'parameter_invalid',
        'expires_at',
      ],
      [{ health_score: 0.5, reason: 'r', expires_at: 'tomorrow' }, 400, 'parameter_invalid', 'expires_at'],
      [{ health_score: 0.5, reason: 'r', pinned: true }, 400, 'parameter_unknown', 'pinned'],
    ];
    for (const [body, status, code, param] of cases) {
      await refusedWithoutChange(stored, () => override('ov_r', body), status, code, param);
    }
    const body = { health_score: 0.5, reason: 'r' };
    await refusedWithoutChange(stored, () => override('nobody', body), 404, 'customer_not_found', undefined);
    await refusedWithoutChange(
      stored,
      () => override('ov_none', body),
      404,
      'health_score_not_found',
      undefined,
    );
    await refusedWithoutChange(
      stored,
      () => t.api.request('DELETE', '/api/customers/ov_r/health-score/override'),
      404,
      'override_not_found',
      undefined,
    );
  });
});
