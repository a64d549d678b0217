// client.healthScores.explain, setOverride and removeOverride against the real app over HTTP
// (docs/client.md, "Methods"; docs/api.md, "Explanations and overrides"): the answers as typed,
// and the refusals as VitalsErrors with their status, code and param.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type {
  Explanation,
  HealthScore,
  Override,
  PortfolioEntry,
  Status,
  VitalsClient,
} from '../../src/client/index.ts';
import { customerBody } from '../helpers/app.ts';
import { all, type ClientApp, clientApp } from './harness.ts';

// What tsc checks here (npm run check): `Static` reads a $ref as `unknown` and a union built from
// an array as `never`, so the hand-written members must be neither.
type IsUnknown<T> = unknown extends T ? true : false;
type IsNever<T> = [T] extends [never] ? true : false;
const typed: {
  scoreOverride: IsUnknown<HealthScore['override']>;
  entryOverride: IsUnknown<PortfolioEntry['override']>;
  explainedOverride: IsUnknown<Explanation['override']>;
  explainedStatus: IsNever<Explanation['status']>;
} = { scoreOverride: false, entryOverride: false, explainedOverride: false, explainedStatus: false };
assert.ok(typed);

const DAY = 86_400_000;

let app: ClientApp;
before(async () => {
  app = await clientApp();
});
after(() => app.close());

let accounts = 0;
/** A client of a new account weighting usage 0.5, support 0.3 and billing 0.2, with customer `id`. */
async function withCustomer(id: string): Promise<VitalsClient> {
  const client = await app.newClient(`explanations ${++accounts}`);
  await client.settings.updateWeights({ usage: 0.5, support: 0.3, billing: 0.2 });
  await client.customers.create(customerBody(id));
  return client;
}

test('explain: each factor with its weight and contribution, what moved since the version before, any version', async () => {
  const client = await withCustomer('acme');
  await client.healthScores.set('acme', { usage: 0.9, support: 0.5 });
  await client.healthScores.set('acme', { usage: 0.5, support: 0.6, billing: 1 });

  const now: Explanation = await client.healthScores.explain('acme');
  assert.equal(now.customer_id, 'acme');
  assert.equal(now.version, 2);
  assert.equal(now.reason, 'factors_updated');
  assert.equal(now.override, null);
  assert.equal(now.health_score, now.computed_score);
  assert.deepEqual(now.factors, [
    { factor: 'billing', score: 1, weight: 0.2, contribution: 0.2, source: 'posted' },
    { factor: 'support', score: 0.6, weight: 0.3, contribution: 0.18, source: 'posted' },
    { factor: 'usage', score: 0.5, weight: 0.5, contribution: 0.25, source: 'posted' },
  ]);
  assert.equal(now.health_score, 0.63);
  assert.deepEqual(now.change, {
    from_version: 1,
    previous_score: 0.75,
    previous_computed_score: 0.75,
    delta: -0.12,
    factors: [
      { factor: 'usage', previous_contribution: 0.5625, contribution: 0.25, delta: -0.3125 },
      { factor: 'billing', previous_contribution: 0, contribution: 0.2, delta: 0.2 },
      { factor: 'support', previous_contribution: 0.1875, contribution: 0.18, delta: -0.0075 },
    ],
  });

  const first = await client.healthScores.explain('acme', { version: 1 });
  assert.equal(first.version, 1);
  assert.equal(first.health_score, 0.75);
  assert.equal(first.change, null, 'nothing before version 1');
  assert.deepEqual(
    first.factors.map((f) => [f.factor, f.weight, f.contribution]),
    [
      ['support', 0.375, 0.1875],
      ['usage', 0.625, 0.5625],
    ],
  );
});

test('explain with since: what moved from the version that stood then, as one change', async () => {
  const client = await withCustomer('acme');
  const before = new Date(Date.now() - DAY).toISOString();
  await client.healthScores.set('acme', { usage: 0.9, support: 0.5 });
  await client.healthScores.set('acme', { usage: 0.7, support: 0.5 });
  await client.healthScores.set('acme', { usage: 0.5, support: 0.5 });
  const sinceYesterday: Explanation = await client.healthScores.explain('acme', { since: before });
  assert.equal(sinceYesterday.version, 3);
  assert.deepEqual(sinceYesterday.change, {
    from_version: 1,
    previous_score: 0.75,
    previous_computed_score: 0.75,
    delta: -0.25,
    factors: [{ factor: 'usage', previous_contribution: 0.5625, contribution: 0.3125, delta: -0.25 }],
  });
  const later = new Date(Date.now() + DAY).toISOString();
  const fromTwo = await client.healthScores.explain('acme', { version: 2, since: later });
  assert.deepEqual([fromTwo.change?.from_version, fromTwo.change?.delta], [2, 0]);
});

test('explain names the metric a derived factor comes from', async () => {
  const client = await withCustomer('acme');
  await client.settings.putFactorRule('billing', {
    metric: 'invoices_paid',
    aggregate: 'sum',
    window_days: 30,
    scale: { type: 'linear', from: 0, to: 4 },
  });
  await client.healthScores.set('acme', { usage: 0.5 });
  const at = new Date(Date.now() - DAY).toISOString();
  await client.metrics.record('acme', { values: { invoices_paid: 3 }, at });
  const e = await client.healthScores.explain('acme');
  assert.equal(e.reason, 'metrics_updated');
  const billing = e.factors.find((f) => f.factor === 'billing');
  // billing and usage weighted 0.2 and 0.5, renormalized over the two present; 6 decimal places.
  assert.deepEqual(billing, {
    factor: 'billing',
    score: 0.75,
    weight: 0.285714,
    contribution: 0.214286,
    source: 'metric',
    metric: { name: 'invoices_paid', aggregate: 'sum', window_days: 30, value: 3, points: 1, newest_at: at },
  });
  assert.equal(e.factors.find((f) => f.factor === 'usage')?.source, 'posted');
});

test('setOverride pins the score every read shows; explain shows both; removeOverride shows the computed one', async () => {
  const client = await withCustomer('acme');
  await client.healthScores.set('acme', { usage: 0.9, support: 0.9 });
  const expires = new Date(Date.now() + 7 * DAY).toISOString();

  const set: HealthScore = await client.healthScores.setOverride('acme', {
    health_score: 0.2,
    reason: 'Champion left',
    expires_at: expires,
  });
  assert.equal(set.health_score, 0.2);
  const status: Status = set.status;
  assert.equal(status, 'critical');
  const pinned: Override | null = set.override;
  assert.ok(pinned);
  assert.equal(pinned.health_score, 0.2);
  assert.equal(pinned.computed_score, 0.9);
  assert.equal(pinned.reason, 'Champion left');
  assert.equal(pinned.expires_at, expires);
  assert.match(pinned.set_by, /…$/);
  assert.ok(Math.abs(Date.parse(pinned.set_at) - Date.now()) < 60_000);
  assert.deepEqual(await client.healthScores.retrieve('acme'), set);
  const listed = await all(client.healthScores.list({ status: 'critical' }));
  assert.deepEqual(
    listed.map((s) => [s.customer_id, s.override?.reason]),
    [['acme', 'Champion left']],
  );

  const e = await client.healthScores.explain('acme');
  assert.equal(e.version, 2);
  assert.equal(e.reason, 'override_set');
  assert.equal(e.health_score, 0.2);
  assert.equal(e.computed_score, 0.9);
  assert.deepEqual(e.override, pinned);
  assert.deepEqual(e.change, {
    from_version: 1,
    previous_score: 0.9,
    previous_computed_score: 0.9,
    delta: -0.7,
    factors: [],
  });

  // Without expires_at: 30 days.
  const again = await client.healthScores.setOverride('acme', {
    health_score: 0.3,
    reason: 'Renewal at risk',
  });
  const ends = Date.parse(again.override?.expires_at ?? '') - Date.parse(again.override?.set_at ?? '');
  assert.equal(ends, 30 * DAY);

  const removed = await client.healthScores.removeOverride('acme');
  assert.equal(removed.override, null);
  assert.equal(removed.health_score, 0.9);
  assert.equal(removed.status, 'healthy');
  const history = await all(client.healthScores.history('acme'));
  assert.deepEqual(
    history.map((h) => [h.version, h.reason, h.health_score]),
    [
      [4, 'override_removed', 0.9],
      [3, 'override_set', 0.3],
      [2, 'override_set', 0.2],
      [1, 'factors_updated', 0.9],
    ],
  );
  // Each version explains as it was: version 2 still shows its override.
  assert.equal((await client.healthScores.explain('acme', { version: 2 })).override?.reason, 'Champion left');
  assert.equal((await client.healthScores.explain('acme')).override, null);
});

test('refusals are VitalsErrors with the status, code and param', async () => {
  const client = await withCustomer('acme');
  await client.customers.create(customerBody('unscored'));
  await client.healthScores.set('acme', { usage: 0.4 });
  const hs = client.healthScores;
  await assert.rejects(hs.explain('acme', { version: 2 }), {
    name: 'VitalsError',
    status: 404,
    code: 'version_not_found',
    param: 'version',
  });
  // Any integer names a version (a backfill numbers them below 1); none is here.
  await assert.rejects(hs.explain('acme', { version: 0 }), {
    status: 404,
    code: 'version_not_found',
    param: 'version',
  });
  await assert.rejects(hs.explain('acme', { version: 1.5 }), {
    status: 400,
    code: 'parameter_invalid',
    param: 'version',
  });
  await assert.rejects(hs.explain('acme', { since: 'last month' }), {
    status: 400,
    code: 'parameter_invalid',
    param: 'since',
  });
  await assert.rejects(hs.explain('nobody'), { status: 404, code: 'customer_not_found' });
  await assert.rejects(hs.explain('unscored'), { status: 404, code: 'health_score_not_found' });
  await assert.rejects(hs.removeOverride('acme'), { status: 404, code: 'override_not_found' });
  await assert.rejects(hs.setOverride('acme', { health_score: 1.5, reason: 'r' }), {
    status: 400,
    code: 'parameter_invalid',
    param: 'health_score',
  });
  await assert.rejects(hs.setOverride('unscored', { health_score: 0.5, reason: 'r' }), {
    status: 404,
    code: 'health_score_not_found',
  });
  // Nothing of that changed the score.
  assert.equal((await all(hs.history('acme'))).length, 1);
  assert.equal((await hs.retrieve('acme')).override, null);
});
