// A webhook's backlog (docs/webhooks.md, "Backlog"): GET /api/webhooks/{id} counts its
// deliveries not yet finished and says when the oldest was made. No dispatcher runs here, so
// what is queued stays queued until the test finishes it through the store, as a dispatcher would.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { event } from '../../src/domain/events.ts';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';
import { transaction } from '../helpers/transaction.ts';

let t: TestApp;
let webhookId = '';

before(async () => {
  t = await buildTestApp();
  const made = await t.api.post('/api/webhooks', {
    url: 'http://127.0.0.1:9/hook',
    events: ['customer.created'],
  });
  assert.equal(made.status, 201, made.raw);
  webhookId = made.body.id;
});
after(() => t.close());

describe('a webhook’s backlog', () => {
  test('is 0 and null before any event', async () => {
    const res = await t.api.get(`/api/webhooks/${webhookId}`);
    assert.deepEqual(
      [res.body.pending, res.body.pending_truncated, res.body.oldest_pending_at],
      [0, false, null],
    );
  });

  test('counts the deliveries queued, names the oldest, and shrinks as they finish', async () => {
    for (const id of ['cus_1', 'cus_2', 'cus_3']) {
      assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
    }
    const events = (await t.api.get('/api/events?limit=3')).body.data as { created_at: string }[];
    const [third, second, first] = events;
    let res = await t.api.get(`/api/webhooks/${webhookId}`);
    assert.deepEqual(
      [res.body.pending, res.body.pending_truncated, res.body.oldest_pending_at],
      [3, false, first?.created_at],
    );

    const now = Date.now();
    const [oldest] = await t.store.claimDeliveries({
      owner: 'test',
      now,
      leaseUntil: now + 60_000,
      limit: 1,
      perWebhook: { default: 1 },
      perAccount: 1,
    });
    assert.ok(oldest);
    res = await t.api.get(`/api/webhooks/${webhookId}`);
    assert.equal(res.body.pending, 3, 'one in flight is still unfinished');
    await t.store.recordAttempts([
      {
        deliveryId: oldest.id,
        accountId: oldest.accountId,
        webhookId,
        owner: 'test',
        attempt: 1,
        startedAt: now,
        durationMs: 1,
        statusCode: 200,
        error: null,
        responseBody: 'ok',
        next: { status: 'succeeded' },
        disableWebhook: false,
      },
    ]);
    res = await t.api.get(`/api/webhooks/${webhookId}`);
    assert.equal(res.body.pending, 2);
    assert.ok(
      [second?.created_at, third?.created_at].includes(res.body.oldest_pending_at),
      res.body.oldest_pending_at,
    );
  });

  test('past 10,000 it says 10,000 and that there are more (the count costs no more than that)', async () => {
    const big = await t.api.post('/api/webhooks', {
      url: 'http://127.0.0.1:9/big',
      events: ['customer.deleted'],
    });
    const accountId = (await t.store.ensureAccount('default', Date.now())).id;
    const events = Array.from({ length: 10_001 }, (_, i) =>
      event('customer.deleted', { id: `c${i}`, deleted: true }, Date.now()),
    );
    await transaction(t.store, (tx) => tx.insertEvents(accountId, events));
    const res = await t.api.get(`/api/webhooks/${big.body.id}`);
    assert.deepEqual([res.body.pending, res.body.pending_truncated], [10_000, true]);
    assert.equal(typeof res.body.oldest_pending_at, 'string');
  });

  test('is per webhook and per account: another account’s webhook shows none of it', async () => {
    const other = await t.newAccount('backlog-other');
    const theirs = await other.post('/api/webhooks', {
      url: 'http://127.0.0.1:9/x',
      events: ['customer.created'],
    });
    const res = await other.get(`/api/webhooks/${theirs.body.id}`);
    assert.deepEqual([res.body.pending, res.body.oldest_pending_at], [0, null]);
    assert.equal((await other.get(`/api/webhooks/${webhookId}`)).status, 404);
  });
});
