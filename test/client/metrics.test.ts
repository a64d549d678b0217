// client.metrics and client.settings' factor rules against the real app over HTTP: each method,
// the points iterator across pages (by its metric@at cursor), and a refusal as a VitalsError.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { customerBody } from '../helpers/app.ts';
import { all, type ClientApp, clientApp } from './harness.ts';

let app: ClientApp;
before(async () => {
  app = await clientApp();
});
after(() => app.close());

test('a rule put, listed, read and deleted; metrics recorded, derived into the score, listed across pages', async () => {
  const client = await app.newClient('metrics');
  await client.customers.create(customerBody('acme'));
  const rule = await client.settings.putFactorRule('usage', {
    metric: 'logins',
    aggregate: 'sum',
    window_days: 30,
    scale: { type: 'linear', from: 0, to: 10 },
  });
  assert.equal(rule.factor, 'usage');
  assert.equal(rule.max_age_days, null);
  assert.deepEqual(await client.settings.factorRules(), [rule]);
  assert.deepEqual(await client.settings.factorRule('usage'), rule);

  const now = Date.now();
  const recorded = await client.metrics.record('acme', { values: { logins: 4, seats: 12 } });
  assert.deepEqual(recorded.values, { logins: 4, seats: 12 });
  assert.deepEqual(recorded.health_score?.factors, { usage: 0.4 });
  const batch = await client.metrics.batch([
    { customer_id: 'acme', values: { logins: 1 }, at: new Date(now - 86_400_000).toISOString() },
    { customer_id: 'nobody', values: { logins: 1 } },
  ]);
  assert.equal(batch.results[0]?.status, 200);
  assert.equal(batch.results[1]?.status, 404);
  const points = await all(client.metrics.list('acme', { limit: 1 }));
  assert.deepEqual(
    points.map((p) => [p.metric, p.value]),
    [
      ['logins', 4],
      ['seats', 12],
      ['logins', 1],
    ],
  );
  assert.deepEqual((await all(client.metrics.list('acme', { metric: 'seats' }))).length, 1);
  const names = await client.metrics.names();
  assert.deepEqual(
    names.map((n) => [n.name, n.customers, n.points]),
    [
      ['logins', 1, 2],
      ['seats', 1, 1],
    ],
  );
  assert.equal(names[1]?.last_at, recorded.at);
  // A one-day window would leave out yesterday's login: the preview counts the score it would move.
  const preview = await client.settings.previewFactorRule('usage', {
    metric: 'logins',
    aggregate: 'sum',
    window_days: 1,
    scale: { type: 'linear', from: 0, to: 10 },
  });
  assert.equal(preview.customers, 1);
  assert.equal(preview.scores_changed, 1);
  assert.equal((await client.healthScores.retrieve('acme')).factors.usage, 0.5, 'the preview saved nothing');

  await assert.rejects(client.metrics.record('acme', { values: {} }), {
    status: 400,
    code: 'parameter_invalid',
    param: 'values',
  });
  assert.deepEqual(await client.settings.deleteFactorRule('usage'), { factor: 'usage', deleted: true });
  await assert.rejects(client.settings.factorRule('usage'), { status: 404, code: 'factor_rule_not_found' });
});
