// Metric values are bounded (docs/scoring.md, "Metric values"): a value beyond ±1e15 is refused
// with a 400 naming it, alone in a batch, and stores nothing; points stored before the bound (put
// here through the store, as an older release kept them) count as the bound in every aggregate,
// so a sum never overflows (PostgreSQL: `value out of range`, a 500 for every write and rule of the
// account) nor becomes Infinity (SQLite: an explanation showing 0 beside a factor of 1), and the
// explanation's value is the one the factor was computed from.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { METRIC_VALUE_MAX, scaleScore } from '../../src/domain/rules.ts';
import { buildTestApp, customerBody, type Response, type TestApp, TestClock } from '../helpers/app.ts';
import { onDatabase } from '../helpers/database.ts';
import { refusedWithoutChange } from '../helpers/refusals.ts';
import { transaction } from '../helpers/transaction.ts';

const DAY = 86_400_000;
const clock = new TestClock('2026-03-31T12:00:00.000Z');
const linear = (to: number) => ({ type: 'linear', from: 0, to });
let t: TestApp;
let accountId: string;
before(async () => {
  t = await buildTestApp({ now: clock.now });
  for (const id of ['plain', 'legacy', 'stale']) {
    assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
  }
  const rule = { metric: 'logins', aggregate: 'sum', window_days: 30, scale: linear(20) };
  assert.equal((await t.api.request('PUT', '/api/settings/health-score/factors/usage', rule)).status, 200);
  assert.equal((await t.api.post('/api/customers/plain/metrics', { values: { logins: 5 } })).status, 200);
  accountId = (await t.store.dueForRederive(clock.ms + 365 * DAY, 10))[0]?.accountId as string;
  assert.ok(accountId);
});
after(() => t.close());

const isoAgo = (days: number) => new Date(clock.ms - days * DAY).toISOString();
const put = (factor: string, rule: unknown) =>
  t.api.request('PUT', `/api/settings/health-score/factors/${factor}`, rule);
const stored = async () => [
  (await t.api.get('/api/customers/plain/metrics?limit=100')).body,
  (await t.api.get('/api/customers/plain/health-score')).body,
  (await t.api.get('/api/customers/plain/health-score/history')).body,
];

/** Points as a release before the bound stored them: through the store, which takes any double. */
async function storeOld(customerId: string, values: number[]): Promise<void> {
  await transaction(t.store, (tx) =>
    tx.insertMetricPoints(
      accountId,
      values.map((value, i) => ({ customerId, metric: 'logins', at: clock.ms - (i + 1) * DAY, value })),
    ),
  );
}

describe('a metric value beyond ±1e15', () => {
  // As text: JSON.stringify would write these as the server reads them, but 1e309 not at all.
  const beyond = ['1.7e308', '-1.7e308', '1e309', '2e15', '-1000000000000000.2', '1000000000000000.2'];
  for (const value of beyond) {
    test(`${value} on POST …/metrics: 400 parameter_invalid (values.logins), nothing stored`, async () => {
      await refusedWithoutChange(
        stored,
        () => t.api.post('/api/customers/plain/metrics', `{"values":{"tickets":1,"logins":${value}}}`),
        400,
        'parameter_invalid',
        'values.logins',
      );
    });
  }

  test('the bound itself is accepted, either sign', async () => {
    for (const value of [METRIC_VALUE_MAX, -METRIC_VALUE_MAX]) {
      const res = await t.api.post('/api/customers/stale/metrics', { values: { seats: value } });
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body.values, { seats: value });
    }
  });

  test('in a batch the item is refused alone (param from the item), the others applied', async () => {
    const before = await stored();
    const res = await t.api.post(
      '/api/metrics/batch',
      `{"metrics":[{"customer_id":"stale","values":{"tickets":2},"at":"${isoAgo(3)}"},
        {"customer_id":"plain","values":{"logins":1.7e308}},
        {"customer_id":"plain","values":{"tickets":1,"logins":-2e15}},
        {"customer_id":"stale","values":{"tickets":3},"at":"${isoAgo(2)}"}]}`,
    );
    assert.equal(res.status, 200, res.raw);
    const [first, huge, negative, last] = res.body.results;
    assert.equal(first.status, 200, res.raw);
    assert.equal(last.status, 200, res.raw);
    for (const refused of [huge, negative]) {
      assert.equal(refused.status, 400, res.raw);
      assert.equal(refused.customer_id, 'plain');
      assert.equal(refused.error.code, 'parameter_invalid');
      assert.equal(refused.error.param, 'values.logins');
    }
    assert.deepEqual(await stored(), before, "the refused items stored nothing of plain's");
    const tickets = (await t.api.get('/api/customers/stale/metrics?metric=tickets')).body.data;
    assert.deepEqual(
      tickets.map((p: { value: number }) => p.value),
      [3, 2],
    );
  });
});

describe('points stored beyond the bound before it was checked', () => {
  const explained = async (id: string) =>
    (await t.api.get(`/api/customers/${id}/health-score/explanation`)).body.factors.find(
      (f: { factor: string }) => f.factor === 'usage',
    );

  test('a write beside them succeeds; the sum counts each as the bound; the explanation shows the value the factor used', async () => {
    await storeOld('legacy', [1.7e308, 1.7e308, -5]);
    // PostgreSQL answered 500 (value out of range); SQLite derived 1 from Infinity.
    const res = await t.api.post('/api/customers/legacy/metrics', { values: { logins: 7 } });
    assert.equal(res.status, 200, res.raw);
    const item = await explained('legacy');
    const value = 2 * METRIC_VALUE_MAX - 5 + 7;
    assert.deepEqual(item.metric, {
      name: 'logins',
      aggregate: 'sum',
      window_days: 30,
      value,
      points: 4,
      newest_at: new Date(clock.ms).toISOString(),
    });
    assert.equal(item.score, scaleScore({ type: 'linear', from: 0, to: 20 }, value));
  });

  test('a rule put on their metric succeeds, and its factor is its explained value on its scale', async () => {
    const res = await put('usage_avg', { metric: 'logins', aggregate: 'avg', scale: linear(4e14) });
    assert.equal(res.status, 200, res.raw);
    const explanation = (await t.api.get('/api/customers/legacy/health-score/explanation')).body;
    const avg = explanation.factors.find((f: { factor: string }) => f.factor === 'usage_avg');
    assert.equal(avg.metric.value, (2 * METRIC_VALUE_MAX + 2) / 4);
    assert.equal(avg.score, 1);
    assert.equal((await t.api.delete('/api/settings/health-score/factors/usage_avg')).status, 200);
  });

  test('a new scale alone gives what reading the points gives, even over an input stored as null', async () => {
    await storeOld('stale', [1.7e308]);
    assert.equal((await t.api.post('/api/customers/stale/metrics', { values: { logins: 1 } })).status, 200);
    // What an older release stored for an aggregate of Infinity: JSON has none, so null.
    await onDatabase(t, {
      sqlite: `UPDATE health_scores SET inputs = json_set(inputs, '$.usage.value', json('null'))
               WHERE customer_id = 'stale'`,
      postgres: `UPDATE health_scores SET inputs = jsonb_set(inputs::jsonb, '{usage,value}', 'null')::json
                 WHERE customer_id = 'stale'`,
    });
    const rescaled = await put('usage', {
      metric: 'logins',
      aggregate: 'sum',
      window_days: 30,
      scale: linear(4e15),
    });
    assert.equal(rescaled.status, 200, rescaled.raw);
    const factors = async () => {
      const scores = await Promise.all(
        ['plain', 'legacy', 'stale'].map((id) => t.api.get(`/api/customers/${id}/health-score`)),
      );
      return scores.map((r: Response) => r.body.factors.usage);
    };
    const kept = await factors();
    // Read from the points again: the rule deleted and put anew with the same scale.
    assert.equal((await t.api.delete('/api/settings/health-score/factors/usage')).status, 200);
    const again = await put('usage', {
      metric: 'logins',
      aggregate: 'sum',
      window_days: 30,
      scale: linear(4e15),
    });
    assert.equal(again.status, 200, again.raw);
    assert.deepEqual(kept, await factors());
    assert.equal(kept[2], scaleScore({ type: 'linear', from: 0, to: 4e15 }, METRIC_VALUE_MAX + 1));
    const item = await explained('stale');
    assert.equal(item.metric.value, METRIC_VALUE_MAX + 1);
  });
});
