// client.customers.batch and client.healthScores.batch against the real app (docs/api.md,
// "Batches"): one result per item, in order, a refused item answered on its own.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { customerBody } from '../helpers/app.ts';
import { type ClientApp, clientApp } from './harness.ts';

let app: ClientApp;
before(async () => {
  app = await clientApp();
});
after(() => app.close());

let accounts = 0;
const newClient = () => app.newClient(`batch ${++accounts}`);

test('customers.batch creates and updates in order, refusing a bad item alone', async () => {
  const client = await newClient();
  await client.customers.create(customerBody('old'));
  const { results } = await client.customers.batch([
    customerBody('new'),
    { customer_id: 'old', name: 'Renamed' },
    { customer_id: 'bad', name: 'Bad', email: 'nope' },
  ]);
  assert.deepEqual(
    results.map((r) => [r.customer_id, r.status]),
    [
      ['new', 201],
      ['old', 200],
      ['bad', 400],
    ],
  );
  const [created, updated, refused] = results;
  assert.ok(created && 'customer' in created && updated && 'customer' in updated);
  assert.equal(created.customer.id, 'new');
  assert.equal(updated.customer.name, 'Renamed');
  assert.ok(refused && 'error' in refused);
  assert.equal(refused.error.code, 'parameter_invalid');
  assert.equal(refused.error.param, 'email');
  await assert.rejects(client.customers.retrieve('bad'), { status: 404 });
});

test('healthScores.batch sets and merges factor sets in order', async () => {
  const client = await newClient();
  await client.customers.create(customerBody('acme'));
  const { results } = await client.healthScores.batch([
    { customer_id: 'acme', factors: { usage: 0.9, support: 0.5 } },
    { customer_id: 'acme', factors: { support: null }, merge: true },
    { customer_id: 'ghost', factors: { usage: 1 } },
  ]);
  assert.deepEqual(
    results.map((r) => [r.customer_id, r.status]),
    [
      ['acme', 200],
      ['acme', 200],
      ['ghost', 404],
    ],
  );
  const merged = results[1];
  assert.ok(merged && 'health_score' in merged);
  assert.deepEqual(merged.health_score.factors, { usage: 0.9 });
  assert.deepEqual(await client.healthScores.retrieve('acme'), merged.health_score);
  const missing = results[2];
  assert.ok(missing && 'error' in missing);
  assert.equal(missing.error.code, 'customer_not_found');
});

test('a batch request refused as a whole is a VitalsError', async () => {
  const client = await newClient();
  await assert.rejects(client.customers.batch([]), { status: 400, param: 'customers' });
});
