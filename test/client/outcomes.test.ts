// client.outcomes and client.healthScores.calibration against the real app over HTTP: each method,
// the outcomes iterator across pages (by the last outcome's id), a batch's per-item results, the
// calibration's horizon and segment sent as the API reads them, and each refusal as a VitalsError.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Outcome, type VitalsClient, VitalsError } from '../../src/client/index.ts';
import { customerBody, TestClock } from '../helpers/app.ts';
import { all, type ClientApp, clientApp } from './harness.ts';

const DAY = 86_400_000;
const clock = new TestClock('2026-06-30T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

let app: ClientApp;
before(async () => {
  app = await clientApp({ now: clock.now });
});
after(() => app.close());

let accounts = 0;
async function withCustomers(...ids: string[]): Promise<VitalsClient> {
  const client = await app.newClient(`outcomes ${++accounts}`);
  for (const id of ids) await client.customers.create(customerBody(id));
  return client;
}

test('create answers the Outcome; list yields every outcome newest first across pages; delete removes one', async () => {
  const client = await withCustomers('acme', 'other');
  const renewed = await client.outcomes.create('acme', {
    outcome: 'retained',
    at: iso(clock.ms - 365 * DAY),
    note: 'renewed for 2 years',
  });
  assert.match(renewed.id, /^out_/);
  assert.deepEqual(renewed, {
    id: renewed.id,
    customer_id: 'acme',
    outcome: 'retained',
    at: iso(clock.ms - 365 * DAY),
    note: 'renewed for 2 years',
    created_at: iso(clock.ms),
  });
  const middle = await client.outcomes.create('acme', { outcome: 'retained', at: iso(clock.ms - 30 * DAY) });
  assert.equal(middle.note, null, 'null unless given');
  const churned = await client.outcomes.create('acme', { outcome: 'churned' });
  assert.equal(churned.at, iso(clock.ms), 'now unless given');
  await client.outcomes.create('other', { outcome: 'churned' });

  const listed: Outcome[] = await all(client.outcomes.list('acme', { limit: 1 }));
  assert.deepEqual(
    listed,
    [churned, middle, renewed],
    'every page, by the last id, nothing of another customer',
  );
  const page = await client.outcomes.listPage('acme', { limit: 2 });
  assert.deepEqual(page, { data: [churned, middle], has_more: true });
  assert.deepEqual(await all(client.outcomes.list('acme', { starting_after: middle.id })), [renewed]);

  assert.deepEqual(await client.outcomes.delete('acme', churned.id), { id: churned.id, deleted: true });
  assert.deepEqual(await all(client.outcomes.list('acme')), [middle, renewed]);
  const again = await client.outcomes.delete('acme', churned.id).catch((e: unknown) => e);
  assert.ok(again instanceof VitalsError);
  assert.equal(again.status, 404);
  assert.equal(again.code, 'outcome_not_found');
  assert.ok(again.requestId, 'the request id that finds it in the log');
});

test('refusals are VitalsErrors naming their field, and store nothing', async () => {
  const client = await withCustomers('acme');
  await assert.rejects(client.outcomes.create('acme', { outcome: 'retained', at: iso(clock.ms + 60_000) }), {
    name: 'VitalsError',
    status: 400,
    code: 'parameter_invalid',
    param: 'at',
  });
  await assert.rejects(client.outcomes.create('acme', { outcome: 'lost' as never }), {
    status: 400,
    code: 'parameter_invalid',
    param: 'outcome',
  });
  await assert.rejects(client.outcomes.create('acme', { outcome: 'churned', note: 'x'.repeat(501) }), {
    status: 400,
    code: 'parameter_invalid',
    param: 'note',
  });
  await assert.rejects(client.outcomes.create('nobody', { outcome: 'churned' }), {
    status: 404,
    code: 'customer_not_found',
  });
  await assert.rejects(all(client.outcomes.list('nobody')), { status: 404, code: 'customer_not_found' });
  await assert.rejects(client.outcomes.delete('nobody', 'out_x'), {
    status: 404,
    code: 'customer_not_found',
  });
  assert.deepEqual(await all(client.outcomes.list('acme')), []);
});

test('a customer id with characters a URL gives a meaning to is addressed encoded', async () => {
  const client = await withCustomers('a%2F&b=ü');
  const made = await client.outcomes.create('a%2F&b=ü', { outcome: 'retained' });
  assert.equal(made.customer_id, 'a%2F&b=ü');
  assert.deepEqual(await all(client.outcomes.list('a%2F&b=ü')), [made]);
  assert.deepEqual(await client.outcomes.delete('a%2F&b=ü', made.id), { id: made.id, deleted: true });
});

test('batch records each item in order, a refused item answered alone', async () => {
  const client = await withCustomers('acme');
  const { results } = await client.outcomes.batch([
    { customer_id: 'acme', outcome: 'retained', at: iso(clock.ms - DAY), note: 'renewed' },
    { customer_id: 'nobody', outcome: 'churned' },
    { customer_id: 'acme', outcome: 'lost' as never },
    { customer_id: 'acme', outcome: 'churned', at: iso(clock.ms + DAY) },
    { customer_id: 'acme', outcome: 'churned' },
  ]);
  assert.deepEqual(
    results.map((r) => [r.customer_id, r.status, 'error' in r ? [r.error.code, r.error.param] : null]),
    [
      ['acme', 201, null],
      ['nobody', 404, ['customer_not_found', undefined]],
      ['acme', 400, ['parameter_invalid', 'outcome']],
      ['acme', 400, ['parameter_invalid', 'at']],
      ['acme', 201, null],
    ],
  );
  const [first, , , , last] = results;
  assert.ok(first && 'outcome' in first && last && 'outcome' in last);
  assert.equal(first.outcome.note, 'renewed');
  assert.deepEqual(await all(client.outcomes.list('acme')), [last.outcome, first.outcome]);
  await assert.rejects(client.outcomes.batch([]), {
    status: 400,
    code: 'parameter_invalid',
    param: 'outcomes',
  });
});

test('calibration: horizon_days and the metadata segment go as the API reads them', async () => {
  const client = await app.newClient(`outcomes ${++accounts}`);
  const start = clock.ms;
  try {
    // Scored 100 days before the outcome: low for those who churned, high for those who stayed.
    const people: [string, string, number, 'churned' | 'retained'][] = [
      ['c_pro', 'pro', 0.2, 'churned'],
      ['c_free', 'free', 0.3, 'churned'],
      ['r_pro', 'pro', 0.9, 'retained'],
      ['r_free', 'free', 0.8, 'retained'],
    ];
    await client.customers.batch(people.map(([id, plan]) => ({ ...customerBody(id), metadata: { plan } })));
    clock.ms = start - 100 * DAY;
    await client.healthScores.batch(
      people.map(([id, , score]) => ({ customer_id: id, factors: { usage: score } })),
    );
    clock.ms = start;
    await client.outcomes.batch(people.map(([id, , , outcome]) => ({ customer_id: id, outcome })));

    const report = await client.healthScores.calibration({ horizon_days: 90 });
    assert.equal(report.horizon_days, 90);
    assert.deepEqual(report.outcomes, { churned: 2, retained: 2, unscored: 0 });
    assert.equal(report.auc, 1);
    assert.deepEqual(
      report.bands.map((b) => [b.status, b.outcomes, b.churned, b.churn_rate]),
      [
        ['healthy', 2, 0, 0],
        ['at_risk', 0, 0, null],
        ['critical', 2, 2, 1],
      ],
    );
    assert.deepEqual(report.factors, [{ factor: 'usage', outcomes: 4, auc: 1 }]);
    assert.equal(report.suggested_weights, null);

    // 120 days before, no one had a score yet; the default horizon is 0.
    assert.deepEqual((await client.healthScores.calibration({ horizon_days: 120 })).outcomes, {
      churned: 0,
      retained: 0,
      unscored: 4,
    });
    assert.equal((await client.healthScores.calibration()).horizon_days, 0);
    const pro = await client.healthScores.calibration({ horizon_days: 90, metadata: { plan: 'pro' } });
    assert.deepEqual(pro.outcomes, { churned: 1, retained: 1, unscored: 0 });
    const none = await client.healthScores.calibration({ metadata: { plan: 'enterprise' } });
    assert.deepEqual(none.outcomes, { churned: 0, retained: 0, unscored: 0 });
    assert.equal(none.auc, null);

    await assert.rejects(client.healthScores.calibration({ horizon_days: 366 }), {
      status: 400,
      code: 'parameter_invalid',
      param: 'horizon_days',
    });
  } finally {
    clock.ms = start;
  }
});
