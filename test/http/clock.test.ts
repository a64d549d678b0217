// Every write is stamped with the app's injected clock, never the machine's: the customer and
// webhook routes, their events and deliveries, the batches and an Idempotency-Key's claim.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, type TestApp, TestClock } from '../helpers/app.ts';

describe("writes are stamped with the app's clock", () => {
  const clock = new TestClock('2024-02-29T12:00:00.000Z');
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ now: clock.now });
  });
  after(() => t.close());

  const eventsOf = async (type: string) =>
    ((await t.api.get(`/api/events?type=${type}&limit=100`)).body.data as { created_at: string }[]).map(
      (e) => e.created_at,
    );

  test('a customer created, changed and deleted, and its events', async () => {
    const created = await t.api.post('/api/customers', customerBody('cus_clock'));
    assert.equal(created.status, 201);
    assert.equal(created.body.created_at, '2024-02-29T12:00:00.000Z');
    clock.advance(60_000);
    const changed = await t.api.patch('/api/customers/cus_clock', { name: 'Renamed' });
    assert.equal(changed.body.created_at, '2024-02-29T12:00:00.000Z');
    assert.equal(changed.body.updated_at, '2024-02-29T12:01:00.000Z');
    clock.advance(60_000);
    assert.equal((await t.api.delete('/api/customers/cus_clock')).status, 200);
    assert.deepEqual(await eventsOf('customer.created'), ['2024-02-29T12:00:00.000Z']);
    assert.deepEqual(await eventsOf('customer.updated'), ['2024-02-29T12:01:00.000Z']);
    assert.deepEqual(await eventsOf('customer.deleted'), ['2024-02-29T12:02:00.000Z']);
  });

  test('a customer batch', async () => {
    clock.set('2024-03-01T08:00:00.000Z');
    const res = await t.api.post('/api/customers/batch', { customers: [customerBody('cus_batch')] });
    assert.equal(res.status, 200);
    assert.equal(res.body.results[0].customer.created_at, '2024-03-01T08:00:00.000Z');
  });

  test('a webhook created, changed, its secret rotated, and a test event', async () => {
    clock.set('2024-03-02T09:00:00.000Z');
    const created = await t.api.post('/api/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: ['customer.created'],
    });
    assert.equal(created.body.created_at, '2024-03-02T09:00:00.000Z');
    clock.advance(1_000);
    const changed = await t.api.patch(`/api/webhooks/${created.body.id}`, { description: 'x' });
    assert.equal(changed.body.updated_at, '2024-03-02T09:00:01.000Z');
    clock.advance(1_000);
    const rotated = await t.api.post(`/api/webhooks/${created.body.id}/rotate-secret`);
    assert.equal(rotated.body.updated_at, '2024-03-02T09:00:02.000Z');
    clock.advance(1_000);
    const sent = await t.api.post(`/api/webhooks/${created.body.id}/test`);
    assert.equal(sent.status, 200);
    assert.equal(sent.body.created_at, '2024-03-02T09:00:03.000Z');
  });
});
