// client.healthScores.backfill, getBackfill and listBackfills against the real app over HTTP
// (docs/client.md; docs/api.md, "Backfill"): a run started, followed to `done`, listed, and the
// history it wrote; each refusal a VitalsError with the server's status, code and param, and
// nothing started.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { VitalsClient } from '../../src/client/index.ts';
import { customerBody, TestClock } from '../helpers/app.ts';
import { transaction } from '../helpers/transaction.ts';
import { all, type ClientApp, clientApp } from './harness.ts';

// Today is 2026-06-10 (12:00): one login a day at noon from Jun 1 to Jun 9 scores usage (the sum
// over 7 days, on 0–7) from 1/7 on Jun 1 up to 1 on Jun 7.
const clock = new TestClock('2026-06-10T12:00:00.000Z');
let app: ClientApp;
before(async () => {
  app = await clientApp({ now: clock.now });
});
after(() => app.close());

let accounts = 0;
async function withLogins(): Promise<{ client: VitalsClient; name: string }> {
  const name = `backfill ${++accounts}`;
  const client = await app.newClient(name);
  await client.settings.putFactorRule('usage', {
    metric: 'logins',
    aggregate: 'sum',
    window_days: 7,
    scale: { type: 'linear', from: 0, to: 7 },
  });
  await client.customers.create(customerBody('acme'));
  await client.customers.create(customerBody('quiet'));
  await client.metrics.batch(
    Array.from({ length: 9 }, (_, i) => ({
      customer_id: 'acme',
      values: { logins: 1 },
      at: `2026-06-0${i + 1}T12:00:00Z`,
    })),
  );
  return { client, name };
}

test('backfill starts a run; getBackfill follows it to done; listBackfills lists it; the history has the past', async () => {
  const { client } = await withLogins();
  const started = await client.healthScores.backfill({ from: '2026-06-01' });
  assert.match(started.id, /^bf_/);
  assert.deepEqual(
    { ...started, id: undefined },
    {
      id: undefined,
      status: 'running',
      from: '2026-06-01',
      customers_total: 2,
      customers_done: 0,
      versions_written: 0,
      started_at: '2026-06-10T12:00:00.000Z',
      finished_at: null,
      error: null,
    },
  );
  await app.t.app.backfills.settled(started.id);

  const done = await client.healthScores.getBackfill(started.id);
  assert.deepEqual(done, {
    ...started,
    status: 'done',
    customers_done: 2,
    versions_written: 7,
    finished_at: '2026-06-10T12:00:00.000Z',
  });
  assert.deepEqual(await client.healthScores.listBackfills(), [done]);
  const past = (await all(client.healthScores.history('acme'))).filter((h) => h.reason === 'backfill');
  assert.deepEqual(
    past.map((h) => [h.version, h.created_at]),
    [
      [0, '2026-06-07T23:59:59.999Z'],
      [-1, '2026-06-06T23:59:59.999Z'],
      [-2, '2026-06-05T23:59:59.999Z'],
      [-3, '2026-06-04T23:59:59.999Z'],
      [-4, '2026-06-03T23:59:59.999Z'],
      [-5, '2026-06-02T23:59:59.999Z'],
      [-6, '2026-06-01T23:59:59.999Z'],
    ],
  );
});

test('customer_ids backfills those customers alone', async () => {
  const { client } = await withLogins();
  const started = await client.healthScores.backfill({ from: '2026-06-01', customer_ids: ['quiet'] });
  assert.equal(started.customers_total, 1);
  await app.t.app.backfills.settled(started.id);
  const done = await client.healthScores.getBackfill(started.id);
  assert.deepEqual([done.status, done.customers_done, done.versions_written], ['done', 1, 0]);
  assert.deepEqual(
    (await all(client.healthScores.history('acme'))).filter((h) => h.reason === 'backfill'),
    [],
  );
});

test('refusals: 400 naming from or the unknown customers, 404 for an unknown id; nothing is started', async () => {
  const { client } = await withLogins();
  await assert.rejects(client.healthScores.backfill({ from: '2026-06-11' }), {
    status: 400,
    code: 'parameter_invalid',
    param: 'from',
  });
  await assert.rejects(client.healthScores.backfill({ from: '2024-06-01' }), {
    status: 400,
    code: 'parameter_invalid',
    param: 'from',
    message: /730 days/,
  });
  await assert.rejects(client.healthScores.backfill({ from: '2026-06-01', customer_ids: ['ghost'] }), {
    status: 400,
    code: 'parameter_invalid',
    param: 'customer_ids',
    message: /'ghost'/,
  });
  assert.deepEqual(await client.healthScores.listBackfills(), []);
  await assert.rejects(client.healthScores.getBackfill('bf_nope'), {
    status: 404,
    code: 'backfill_not_found',
  });
});

test('a second backfill while one runs: 409 backfill_running naming it', async () => {
  const { client, name } = await withLogins();
  const accountId = (await app.t.store.ensureAccount(name, 0)).id;
  const held = {
    id: 'bf_heldelsewhere',
    status: 'running' as const,
    fromDay: Date.parse('2026-06-01') / 86_400_000,
    customerIds: null,
    customersTotal: 2,
    customersDone: 0,
    versionsWritten: 0,
    cursor: null,
    startedAt: clock.ms,
    finishedAt: null,
    error: null,
    leaseOwner: 'another process',
    leaseExpiresAt: clock.ms + 60_000,
  };
  assert.equal(await transaction(app.t.store, (tx) => tx.insertBackfill(accountId, held)), true);
  await assert.rejects(client.healthScores.backfill({ from: '2026-06-01' }), {
    status: 409,
    code: 'backfill_running',
    message: /bf_heldelsewhere/,
  });
  assert.deepEqual(
    (await client.healthScores.listBackfills()).map((b) => [b.id, b.status]),
    [['bf_heldelsewhere', 'running']],
  );
});
