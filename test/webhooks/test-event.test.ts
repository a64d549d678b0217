// POST /api/webhooks/{id}/test (docs/webhooks.md): one webhook.test event to that webhook alone,
// through the normal signed, logged, retried path; and the bodies of the other action POSTs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { SUBSCRIBABLE_EVENT_TYPES } from '../../src/domain/events.ts';
import { verifyVitalsSignature } from '../../src/domain/signing.ts';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';
import { deliveries, waitForDelivery } from '../helpers/deliveries.ts';
import { TestReceiver } from '../helpers/receiver.ts';

/** The delivery once it is no longer pending. */
const outcome = (api: Client, webhookId: string, id: string) =>
  waitForDelivery(api, webhookId, (d) => d.id === id && d.status !== 'pending');

describe('test event', () => {
  let t: TestApp;
  const receivers: TestReceiver[] = [];
  let accounts = 0;
  before(async () => {
    t = await buildTestApp({ dispatcher: { pollMs: 3_600_000 } });
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await t.close();
  });

  const setup = async (events = ['customer.deleted']) => {
    const api = await t.newAccount(`test-event-${++accounts}`);
    const receiver = await TestReceiver.start();
    receivers.push(receiver);
    const res = await api.post('/api/webhooks', { url: `${receiver.url}/in`, events });
    assert.equal(res.status, 201, res.raw);
    return { api, receiver, webhook: res.body as { id: string; secret: string } };
  };

  test('sends one signed webhook.test to that webhook, whatever its subscriptions, and answers its delivery', async () => {
    const { api, receiver, webhook } = await setup(['customer.deleted']);
    const before = Date.now();
    const res = await api.post(`/api/webhooks/${webhook.id}/test`);
    assert.equal(res.status, 200, res.raw);
    assert.match(res.body.id, /^dlv_/);
    assert.equal(res.body.webhook_id, webhook.id);
    assert.equal(res.body.event_type, 'webhook.test');

    const [got] = await receiver.waitFor(1);
    assert.ok(got);
    assert.equal(got.headers['x-vitals-event'], 'webhook.test');
    assert.equal(got.headers['x-vitals-event-id'], res.body.event_id);
    const body = JSON.parse(got.body);
    assert.deepEqual(Object.keys(body), ['type', 'data']);
    assert.equal(body.type, 'webhook.test');
    assert.deepEqual(Object.keys(body.data), ['webhook_id', 'sent_at']);
    assert.equal(body.data.webhook_id, webhook.id);
    assert.ok(Date.parse(body.data.sent_at) >= before - 1);
    assert.ok(verifyVitalsSignature(webhook.secret, got.body, String(got.headers['x-vitals-signature'])));
    new Webhook(webhook.secret.slice('whsec_'.length)).verify(
      got.body,
      got.headers as Record<string, string>,
    );

    const done = await outcome(api, webhook.id, res.body.id);
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(
      done.attempts.map((a) => a.status_code),
      [200],
    );
    const event = await api.get(`/api/events/${res.body.event_id}`);
    assert.equal(event.status, 200, event.raw);
    assert.equal(event.body.type, 'webhook.test');
  });

  test('goes to no other webhook, not even one subscribed to every type', async () => {
    const { api, webhook } = await setup(['customer.created']);
    const other = await TestReceiver.start();
    receivers.push(other);
    const all = await api.post('/api/webhooks', {
      url: `${other.url}/all`,
      events: SUBSCRIBABLE_EVENT_TYPES,
    });
    assert.equal(all.status, 201, all.raw);
    const res = await api.post(`/api/webhooks/${webhook.id}/test`);
    assert.equal(res.status, 200, res.raw);
    await waitForDelivery(api, webhook.id, (d) => d.id === res.body.id && d.status === 'succeeded');
    assert.deepEqual(await deliveries(api, all.body.id), []);
    assert.equal(other.requests.length, 0);
  });

  test('is retried like any other delivery: a 500 then a 200 makes two attempts', async () => {
    const { api, receiver, webhook } = await setup();
    receiver.script(500);
    const res = await api.post(`/api/webhooks/${webhook.id}/test`, {});
    assert.equal(res.status, 200, res.raw);
    const done = await outcome(api, webhook.id, res.body.id);
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(
      done.attempts.map((a) => [a.attempt, a.status_code]),
      [
        [1, 500],
        [2, 200],
      ],
    );
  });

  test('webhook.test cannot be subscribed to: 400 with the list of types', async () => {
    const api = await t.newAccount(`test-event-${++accounts}`);
    const res = await api.post('/api/webhooks', { url: 'http://127.0.0.1:9/x', events: ['webhook.test'] });
    assert.equal(res.status, 400, res.raw);
    assert.equal(res.body.error.code, 'parameter_invalid');
    assert.equal(res.body.error.param, 'events.0');
    assert.deepEqual((await api.get('/api/webhooks')).body.webhooks, []);
  });

  const refusals: [string, (api: Client, id: string) => Promise<unknown>, number, string, string?][] = [
    ['an unknown webhook', (api) => api.post('/api/webhooks/whk_nope/test'), 404, 'webhook_not_found'],
    [
      'a disabled webhook',
      async (api, id) => {
        assert.equal((await api.patch(`/api/webhooks/${id}`, { enabled: false })).status, 200);
        return api.post(`/api/webhooks/${id}/test`);
      },
      409,
      'webhook_disabled',
    ],
    [
      'a body with a field',
      (api, id) => api.post(`/api/webhooks/${id}/test`, { event: 'customer.created' }),
      400,
      'parameter_unknown',
      'event',
    ],
  ];
  for (const [what, send, status, code, param] of refusals) {
    test(`${what}: ${status} ${code}, and no event or delivery is written`, async () => {
      const { api, receiver, webhook } = await setup();
      const res = (await send(api, webhook.id)) as { status: number; body: any; raw: string };
      assert.equal(res.status, status, res.raw);
      assert.equal(res.body.error.code, code);
      assert.equal(res.body.error.param, param);
      assert.deepEqual(await deliveries(api, webhook.id), []);
      assert.deepEqual((await api.get('/api/events')).body.data, []);
      assert.equal(receiver.requests.length, 0);
    });
  }

  test('another account’s webhook is 404, and nothing is sent to it', async () => {
    const { api, receiver, webhook } = await setup();
    const intruder = await t.newAccount(`test-event-${++accounts}`);
    const res = await intruder.post(`/api/webhooks/${webhook.id}/test`);
    assert.equal(res.status, 404, res.raw);
    assert.equal(res.body.error.code, 'webhook_not_found');
    assert.deepEqual(await deliveries(api, webhook.id), []);
    assert.equal(receiver.requests.length, 0);
  });
});

describe('action POSTs and the delivery log (no dispatcher: deliveries stay pending)', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  /** A webhook nobody listens at, subscribed to `events`. */
  const hookTo = async (...events: string[]) => {
    const res = await t.api.post('/api/webhooks', { url: 'http://127.0.0.1:9/x', events });
    assert.equal(res.status, 201, res.raw);
    return res.body as { id: string; secret: string };
  };

  test('rotate-secret: {} and no body rotate; a field is 400 parameter_unknown and the secret stays', async () => {
    const created = { body: await hookTo('customer.created') };
    const id = created.body.id;
    const refused = await t.api.post(`/api/webhooks/${id}/rotate-secret`, { secret: 'whsec_mine' });
    assert.equal(refused.status, 400, refused.raw);
    assert.equal(refused.body.error.code, 'parameter_unknown');
    assert.equal(refused.body.error.param, 'secret');
    const first = await t.api.post(`/api/webhooks/${id}/rotate-secret`, {});
    assert.equal(first.status, 200, first.raw);
    assert.notEqual(first.body.secret, created.body.secret);
    const second = await t.api.post(`/api/webhooks/${id}/rotate-secret`);
    assert.equal(second.status, 200, second.raw);
    assert.notEqual(second.body.secret, first.body.secret);
    const wrongType = await t.api.post(`/api/webhooks/${id}/rotate-secret`, []);
    assert.equal(wrongType.status, 400, wrongType.raw);
    assert.equal(wrongType.body.error.code, 'parameter_invalid');
  });

  test('retry: a field is 400 parameter_unknown and the delivery is not made due', async () => {
    const created = { body: await hookTo('customer.created') };
    assert.equal((await t.api.post('/api/customers', customerBody('cus_retry'))).status, 201);
    const [delivery] = await deliveries(t.api, created.body.id);
    assert.ok(delivery);
    const res = await t.api.post(`/api/webhooks/${created.body.id}/deliveries/${delivery.id}/retry`, {
      now: true,
    });
    assert.equal(res.status, 400, res.raw);
    assert.equal(res.body.error.code, 'parameter_unknown');
    assert.equal(res.body.error.param, 'now');
    assert.deepEqual(await deliveries(t.api, created.body.id), [delivery]);
  });

  test('deliveries made in the same millisecond list newest first in the order they were made', async () => {
    const hook = { body: await hookTo('customer.health_score.updated') };
    // A weights change rescoring 60 customers writes 60 events and deliveries in one transaction,
    // most of them within one millisecond.
    for (let i = 0; i < 60; i++) {
      const id = `cus_${String(i).padStart(2, '0')}`;
      assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
      const res = await t.api.post(`/api/customers/${id}/health-score`, {
        factors: { usage: i / 100, support: 0.99 },
      });
      assert.equal(res.status, 200, res.raw);
    }
    const weights = await t.api.patch('/api/settings/health-score/weights', {
      weights: { usage: 0.7, support: 0.3 },
    });
    assert.equal(weights.status, 200, weights.raw);
    const listed: { event_id: string; created_at: string }[] = [];
    let after = '';
    for (;;) {
      const page = await t.api.get(
        `/api/webhooks/${hook.body.id}/deliveries?limit=100${after ? `&starting_after=${after}` : ''}`,
      );
      listed.push(...page.body.data);
      if (!page.body.has_more) break;
      after = page.body.data.at(-1).id;
    }
    assert.equal(listed.length, 120);
    const events: string[] = [];
    after = '';
    for (;;) {
      const page = await t.api.get(`/api/events?limit=100${after ? `&starting_after=${after}` : ''}`);
      events.push(
        ...page.body.data
          .filter((e: { type: string }) => e.type === 'customer.health_score.updated')
          .map((e: { id: string }) => e.id),
      );
      if (!page.body.has_more) break;
      after = page.body.data.at(-1).id;
    }
    assert.deepEqual(
      listed.map((d) => d.event_id),
      events,
      'deliveries list in the order of their events, newest first',
    );
    const sameMs = listed.filter((d, i) => i > 0 && d.created_at === listed[i - 1]?.created_at).length;
    assert.ok(sameMs > 0, 'some deliveries share a millisecond (else this proves nothing)');
  });
});
