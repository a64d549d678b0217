// client.healthScores and client.settings against the real app over HTTP: each method, and the
// iterators of the history (by version) and of the portfolio (by next_cursor).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { VitalsClient } from '../../src/client/index.ts';
import { customerBody } from '../helpers/app.ts';
import { all, type ClientApp, clientApp } from './harness.ts';

let app: ClientApp;
before(async () => {
  app = await clientApp();
});
after(() => app.close());

let accounts = 0;
async function withCustomers(...ids: string[]): Promise<VitalsClient> {
  const client = await app.newClient(`scores ${++accounts}`);
  for (const id of ids) await client.customers.create(customerBody(id));
  return client;
}

test('set replaces the factors, merge merges them, retrieve reads the score', async () => {
  const client = await withCustomers('acme');
  const set = await client.healthScores.set('acme', { usage: 0.9, support: 0.6 });
  assert.equal(set.customer_id, 'acme');
  assert.equal(set.health_score, 0.75);
  assert.equal(set.status, 'healthy');

  const merged = await client.healthScores.merge('acme', { support: null, billing: 0.1 });
  assert.deepEqual(merged.factors, { usage: 0.9, billing: 0.1 });
  assert.equal(merged.status, 'at_risk');
  assert.deepEqual(await client.healthScores.retrieve('acme'), merged);
});

test('retrieve of a customer without a score is a 404 health_score_not_found', async () => {
  const client = await withCustomers('new');
  await assert.rejects(client.healthScores.retrieve('new'), { status: 404, code: 'health_score_not_found' });
});

test('history yields every version, newest first, across pages', async () => {
  const client = await withCustomers('acme');
  for (let i = 1; i <= 5; i++) await client.healthScores.set('acme', { usage: i / 10 });
  const history = await all(client.healthScores.history('acme', { limit: 2 }));
  assert.deepEqual(
    history.map((h) => [h.version, h.factors.usage]),
    [
      [5, 0.5],
      [4, 0.4],
      [3, 0.3],
      [2, 0.2],
      [1, 0.1],
    ],
  );
  assert.ok(history.every((h) => h.reason === 'factors_updated'));
});

test('list yields every score of the portfolio lowest first, following next_cursor', async () => {
  const ids = ['a', 'b', 'c', 'd', 'e'];
  const client = await withCustomers(...ids);
  const scores = [0.9, 0.2, 0.5, 0.8, 0.1];
  for (const [i, id] of ids.entries()) await client.healthScores.set(id, { usage: scores[i] ?? 0 });

  const listed = await all(client.healthScores.list({ limit: 2 }));
  assert.deepEqual(
    listed.map((s) => s.customer_id),
    ['e', 'b', 'c', 'd', 'a'],
  );
  const healthy = await all(client.healthScores.list({ status: 'healthy', limit: 1 }));
  assert.deepEqual(
    healthy.map((s) => s.customer_id),
    ['d', 'a'],
  );
});

test('summary counts the customers per band', async () => {
  const client = await withCustomers('a', 'b', 'c');
  await client.healthScores.set('a', { usage: 0.9 });
  await client.healthScores.set('b', { usage: 0.5 });
  assert.deepEqual(await client.healthScores.summary(), {
    total: 2,
    counts: { healthy: 1, at_risk: 1, critical: 0 },
    average: 0.7,
    arr: { total: 0, healthy: 0, at_risk: 0, critical: 0 },
    arr_at_risk: 0,
  });
});

test('settings: weights, their preview and thresholds', async () => {
  const client = await withCustomers('acme');
  await client.healthScores.set('acme', { usage: 0.9, support: 0.3 });
  assert.deepEqual(await client.settings.weights(), { weights: {}, updated_at: null });

  const preview = await client.settings.previewWeights({ usage: 0.5, support: 0.5 });
  assert.deepEqual(preview, {
    customers: 1,
    scores_changed: 0,
    band_changes: 0,
    bands: { healthy: 0, at_risk: 1, critical: 0 },
  });
  const weights = await client.settings.updateWeights({ usage: 0.75, support: 0.25 });
  assert.deepEqual(weights.weights, { usage: 0.75, support: 0.25 });
  assert.ok(weights.updated_at);
  assert.equal((await client.healthScores.retrieve('acme')).health_score, 0.75);
  await assert.rejects(client.settings.updateWeights({ usage: 0.5 }), {
    status: 400,
    code: 'weights_sum_invalid',
    param: 'weights',
  });

  assert.deepEqual(await client.settings.thresholds(), { healthy: 0.7, at_risk: 0.4, updated_at: null });
  const thresholds = await client.settings.updateThresholds({ healthy: 0.8 });
  assert.equal(thresholds.healthy, 0.8);
  assert.equal((await client.healthScores.retrieve('acme')).status, 'at_risk');
});

test('segments, the grouped summary, the distribution, the trend and the movers: metadata goes as metadata[KEY]', async () => {
  const client = await app.newClient(`scores ${++accounts}`);
  await client.customers.batch([
    { ...customerBody('p1'), metadata: { plan: 'pro', seats: 10 } },
    { ...customerBody('p2'), metadata: { plan: 'pro', seats: 3 } },
    { ...customerBody('f1'), metadata: { plan: 'free' } },
  ]);
  await client.healthScores.batch([
    { customer_id: 'p1', factors: { usage: 0.9 } },
    { customer_id: 'p2', factors: { usage: 0.5 } },
    { customer_id: 'f1', factors: { usage: 0.2 } },
  ]);
  const pro = await all(client.healthScores.list({ metadata: { plan: 'pro' }, limit: 1 }));
  assert.deepEqual(
    pro.map((s) => [s.customer_id, s.name]),
    [
      ['p2', 'Customer p2'],
      ['p1', 'Customer p1'],
    ],
  );
  const tenSeats = await all(client.customers.list({ metadata: { seats: 10 } }));
  assert.deepEqual(
    tenSeats.map((c) => c.id),
    ['p1'],
  );
  const summary = await client.healthScores.summary({ group_by: 'metadata.plan' });
  assert.deepEqual(
    summary.groups?.map((g) => [g.value, g.total, g.average]),
    [
      ['free', 1, 0.2],
      ['pro', 2, 0.7],
    ],
  );
  const distribution = await client.healthScores.distribution({ bins: 2, metadata: { plan: 'pro' } });
  assert.deepEqual(
    distribution.bins.map((b) => [b.from, b.to, b.total, b.average]),
    [
      [0, 0.5, 0, null],
      [0.5, 1, 2, 0.7],
    ],
  );
  const trend = await client.healthScores.trend({ days: 2, metadata: { plan: 'free' } });
  assert.equal(trend.data.length, 2);
  assert.deepEqual(trend.data.at(-1)?.counts, { healthy: 0, at_risk: 0, critical: 1 });
  await client.healthScores.set('p1', { usage: 0.1 });
  const movers = await client.healthScores.movers({ days: 1 });
  assert.deepEqual(
    movers.data.map((m) => [m.customer_id, m.baseline_score, m.change]),
    [['p1', 0.9, -0.8]],
  );
});

test('settings: the drop alert rule', async () => {
  const client = await app.newClient(`scores ${++accounts}`);
  assert.deepEqual(await client.settings.alerts(), { drop: null, updated_at: null });
  const set = await client.settings.updateAlerts({ drop: { delta: 0.3, days: 14 } });
  assert.deepEqual(set.drop, { delta: 0.3, days: 14 });
  await assert.rejects(client.settings.updateAlerts({ drop: { delta: 2, days: 14 } }), {
    status: 400,
    param: 'drop.delta',
  });
  assert.deepEqual(await client.settings.alerts(), set);
});

test('the book: filters and sorts as query parameters, entries and the summary carry it (docs/api.md)', async () => {
  const client = await app.newClient(`scores ${++accounts}`);
  await client.customers.batch([
    { ...customerBody('x'), owner: 'ann@example.com', arr: 0.1, renewal_at: '2027-02-01T00:00:00Z' },
    { ...customerBody('y'), owner: 'ann@example.com', arr: 0.2 },
    { ...customerBody('z'), arr: 50, lifecycle: 'churned', renewal_at: '2027-01-01T00:00:00Z' },
  ]);
  await client.healthScores.batch(
    ['x', 'y', 'z'].map((id) => ({ customer_id: id, factors: { usage: 0.5 } })),
  );
  const byArr = await all(client.healthScores.list({ sort: '-arr', lifecycle: 'all', limit: 1 }));
  assert.deepEqual(
    byArr.map((e) => [e.customer_id, e.arr, e.owner, e.lifecycle]),
    [
      ['z', 50, null, 'churned'],
      ['y', 0.2, 'ann@example.com', 'active'],
      ['x', 0.1, 'ann@example.com', 'active'],
    ],
  );
  const byRenewal = await all(client.healthScores.list({ sort: 'renewal_at', limit: 1 }));
  assert.deepEqual(
    byRenewal.map((e) => [e.customer_id, e.renewal_at]),
    [
      ['x', '2027-02-01T00:00:00.000Z'],
      ['y', null],
    ],
  );
  const summary = await client.healthScores.summary({ owner: 'ann@example.com', group_by: 'owner' });
  assert.deepEqual([summary.total, summary.arr.total, summary.arr_at_risk], [2, 0.3, 0.3]);
  assert.deepEqual(
    summary.groups?.map((g) => [g.value, g.arr.total]),
    [['ann@example.com', 0.3]],
  );
  const renewing = await all(client.customers.list({ renewal_before: '2027-01-15T00:00:00Z' }));
  assert.deepEqual(
    renewing.map((c) => c.id),
    ['z'],
  );
  await assert.rejects(client.healthScores.list({ owner: 'me' }).next(), {
    status: 400,
    code: 'parameter_invalid',
    param: 'owner',
  });
});
