// Webhook delivery end to end (docs/webhooks.md): the real app and dispatcher on real SQLite, sending
// to real local HTTP receivers. What a receiver gets (bytes, headers, signatures), how failures
// are retried and recorded, and that one bad receiver never holds up the others. Each test
// runs in an account of its own, so its webhooks see only its own events.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { verifyVitalsSignature } from '../../src/domain/signing.ts';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';
import { type Delivery, deliveries, waitForDeliveries, waitForDelivery } from '../helpers/deliveries.ts';
import { type Received, type Script, TestReceiver } from '../helpers/receiver.ts';

/** A port nobody listens on: bound by us, then released. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** A test's own account, receiver and subscription. */
interface Setup {
  api: Client;
  receiver: TestReceiver;
  webhook: { id: string; secret: string; url: string };
}

function harness(t: () => TestApp) {
  const receivers: TestReceiver[] = [];
  let accounts = 0;
  const receiver = async (...scripts: Script[]) => {
    const r = await TestReceiver.start();
    receivers.push(r);
    return r.script(...scripts);
  };
  const setup = async (
    events: string[],
    opts: { scripts?: Script[]; always?: Script; url?: string } = {},
  ): Promise<Setup> => {
    const api = await t().newAccount(`acct${++accounts}`);
    const r = await receiver(...(opts.scripts ?? []));
    if (opts.always !== undefined) r.always(opts.always);
    const res = await api.post('/api/webhooks', {
      url: opts.url ?? `${r.url}/hooks/vitals?src=test`,
      events,
    });
    assert.equal(res.status, 201, res.raw);
    return { api, receiver: r, webhook: res.body };
  };
  const closeReceivers = () => Promise.all(receivers.map((r) => r.close()));
  return { receiver, setup, closeReceivers };
}

async function customer(api: Client, id: string, extra: Record<string, unknown> = {}) {
  const res = await api.post('/api/customers', customerBody(id, extra));
  assert.equal(res.status, 201, res.raw);
  return res.body;
}

async function score(api: Client, id: string, factors: Record<string, number>) {
  const res = await api.post(`/api/customers/${id}/health-score`, { factors });
  assert.equal(res.status, 200, res.raw);
  return res.body;
}

async function event(api: Client, id: string) {
  const res = await api.get(`/api/events/${id}`);
  assert.equal(res.status, 200, res.raw);
  return res.body;
}

const header = (r: Received | undefined, name: string) => r?.headers[name] as string;
const attemptsOf = (d: Delivery) => d.attempts.map((a) => [a.attempt, a.status_code]);
const finished = (d: Delivery) => d.status !== 'pending';

describe('webhook delivery', () => {
  let t: TestApp;
  // pollMs is an hour: every delivery and retry below must be driven by a commit or a due time.
  before(async () => {
    t = await buildTestApp({ dispatcher: { pollMs: 3_600_000 } });
  });
  const { setup, receiver, closeReceivers } = harness(() => t);
  after(async () => {
    await closeReceivers();
    await t.close();
  });

  test('a receiver gets {"type","data"} as exact bytes, with every header and both signatures', async () => {
    const { api, receiver: r, webhook } = await setup(['customer.health_score.updated']);
    await customer(api, 'cus_ok');
    const before = Math.floor(Date.now() / 1000);
    await score(api, 'cus_ok', { usage: 0.8, support: 0.5 });
    const [got] = await r.waitFor(1);
    assert.ok(got);

    assert.equal(got.method, 'POST');
    assert.equal(got.path, '/hooks/vitals?src=test', 'the path and query are kept');
    assert.equal(header(got, 'content-type'), 'application/json');
    assert.equal(header(got, 'x-vitals-event'), 'customer.health_score.updated');
    assert.match(header(got, 'x-vitals-event-id'), /^evt_[0-9A-Za-z]+$/);
    assert.equal(header(got, 'x-vitals-delivery-attempt'), '1');

    const e = await event(api, header(got, 'x-vitals-event-id'));
    assert.equal(e.type, 'customer.health_score.updated');
    assert.equal(
      got.body,
      JSON.stringify({ type: e.type, data: e.data }),
      'the body is exactly {type, data}',
    );
    assert.deepEqual(Object.keys(e.data).sort(), [
      'customer_id',
      'factors',
      'health_score',
      'previous_score',
      'status',
      'updated_at',
    ]);
    assert.deepEqual(e.data, {
      customer_id: 'cus_ok',
      health_score: 0.65,
      previous_score: null,
      factors: { usage: 0.8, support: 0.5 },
      updated_at: e.data.updated_at,
      status: 'at_risk',
    });

    assert.equal(verifyVitalsSignature(webhook.secret, got.body, header(got, 'x-vitals-signature')), true);
    assert.match(header(got, 'x-vitals-signature'), /^[0-9a-f]{64}$/);
    assert.equal(header(got, 'webhook-id'), e.id);
    const ts = Number(header(got, 'webhook-timestamp'));
    assert.ok(ts >= before && ts <= Math.ceil(Date.now() / 1000), 'webhook-timestamp is now, in seconds');
    assert.deepEqual(
      new Webhook(webhook.secret).verify(got.body, got.headers as Record<string, string>),
      JSON.parse(got.body),
    );

    const d = await waitForDelivery(api, webhook.id, finished);
    assert.equal(d.status, 'succeeded');
    assert.match(d.id, /^dlv_/);
    assert.equal(d.webhook_id, webhook.id);
    assert.equal(d.event_id, e.id);
    assert.equal(d.event_type, 'customer.health_score.updated');
    assert.equal(d.attempt_count, 1);
    assert.equal(d.next_attempt_at, null);
    assert.equal(d.attempts.length, 1);
    assert.equal(d.attempts[0]?.status_code, 200);
    assert.equal(d.attempts[0]?.error, null);
    assert.equal(d.attempts[0]?.response_body, 'ok');
  });

  test('a delivery starts right after the commit, not on the next poll', async () => {
    const { api, receiver: r } = await setup(['customer.created']);
    const committed = Date.now();
    await customer(api, 'cus_fast');
    const [got] = await r.waitFor(1, 2000);
    assert.ok((got?.receivedAt ?? Infinity) - committed < 1000);
  });

  test('a 500, then success: the same event is sent again as attempt 2, and both attempts are recorded', async () => {
    const {
      api,
      receiver: r,
      webhook,
    } = await setup(['customer.created'], {
      scripts: [{ status: 500, body: 'try later' }],
    });
    await customer(api, 'cus_retry');
    const [first, second] = await r.waitFor(2);
    assert.equal(header(first, 'x-vitals-delivery-attempt'), '1');
    assert.equal(header(second, 'x-vitals-delivery-attempt'), '2');
    assert.equal(header(second, 'x-vitals-event-id'), header(first, 'x-vitals-event-id'));
    assert.equal(second?.body, first?.body, 'the same bytes');
    assert.equal(
      verifyVitalsSignature(webhook.secret, second?.body ?? '', header(second, 'x-vitals-signature')),
      true,
    );

    const d = await waitForDelivery(api, webhook.id, finished);
    assert.equal(d.status, 'succeeded');
    assert.equal(d.attempt_count, 2);
    assert.deepEqual(attemptsOf(d), [
      [1, 500],
      [2, 200],
    ]);
    assert.equal(d.attempts[0]?.response_body, 'try later');
    assert.ok(
      d.attempts[1]?.started_at && d.attempts[0] && d.attempts[1].started_at >= d.attempts[0].started_at,
    );
  });

  test('always 500: exactly 4 attempts (1 + 3 retries), then failed and listed as failed', async () => {
    const { api, receiver: r, webhook } = await setup(['customer.created'], { always: 500 });
    await customer(api, 'cus_fail');
    const d = await waitForDelivery(api, webhook.id, finished);
    assert.equal(d.status, 'failed');
    assert.equal(d.attempt_count, 4);
    assert.equal(d.next_attempt_at, null);
    assert.deepEqual(attemptsOf(d), [
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 500],
    ]);
    assert.equal(r.requests.length, 4);
    assert.deepEqual(
      r.requests.map((q) => header(q, 'x-vitals-delivery-attempt')),
      ['1', '2', '3', '4'],
    );
    assert.equal(new Set(r.requests.map((q) => header(q, 'x-vitals-event-id'))).size, 1);

    const failed = await deliveries(api, webhook.id, 'status=failed');
    assert.deepEqual(
      failed.map((f) => f.id),
      [d.id],
    );
    assert.deepEqual(await deliveries(api, webhook.id, 'status=succeeded'), []);
    assert.deepEqual(await deliveries(api, webhook.id, 'status=pending'), []);
  });

  test('the retry endpoint sends a failed delivery once more (attempt 5, then 6)', async () => {
    const { api, receiver: r, webhook } = await setup(['customer.created'], { always: 500 });
    await customer(api, 'cus_manual');
    const failed = await waitForDelivery(api, webhook.id, finished);
    assert.equal(failed.status, 'failed');

    const res = await api.post(`/api/webhooks/${webhook.id}/deliveries/${failed.id}/retry`);
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.id, failed.id);
    const fifth = (await r.waitFor(5))[4];
    assert.equal(header(fifth, 'x-vitals-delivery-attempt'), '5');
    assert.equal(header(fifth, 'x-vitals-event-id'), failed.event_id);
    const again = await waitForDelivery(api, webhook.id, (d) => d.attempt_count === 5 && finished(d));
    assert.equal(again.status, 'failed', 'one more attempt, not another round of retries');

    r.always(200);
    assert.equal((await api.post(`/api/webhooks/${webhook.id}/deliveries/${failed.id}/retry`)).status, 200);
    const sixth = (await r.waitFor(6))[5];
    assert.equal(header(sixth, 'x-vitals-delivery-attempt'), '6');
    const done = await waitForDelivery(api, webhook.id, (d) => d.attempt_count === 6 && finished(d));
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(attemptsOf(done).at(-1), [6, 200]);
    assert.equal(r.requests.length, 6);
  });

  test('connection refused is recorded as a connection error and retried', async () => {
    const port = await closedPort();
    const { api, webhook } = await setup(['customer.created'], { url: `http://127.0.0.1:${port}/hook` });
    await customer(api, 'cus_refused');
    const d = await waitForDelivery(api, webhook.id, finished);
    assert.equal(d.status, 'failed');
    assert.equal(d.attempt_count, 4);
    for (const a of d.attempts) {
      assert.equal(a.status_code, null);
      assert.match(a.error ?? '', /ECONNREFUSED/);
      assert.equal(a.response_body, null);
    }
  });

  test('a connection reset is recorded as a connection error', async () => {
    const { api, receiver: r, webhook } = await setup(['customer.created'], { scripts: ['reset'] });
    await customer(api, 'cus_reset');
    await r.waitFor(2);
    const d = await waitForDelivery(api, webhook.id, finished);
    assert.equal(d.status, 'succeeded');
    assert.equal(d.attempts[0]?.status_code, null);
    assert.match(d.attempts[0]?.error ?? '', /socket|reset|closed/i);
    assert.deepEqual(attemptsOf(d)[1], [2, 200]);
  });

  test('redirects are not followed: a 302 is a failure and its Location gets nothing', async () => {
    const elsewhere = await receiver();
    const {
      api,
      receiver: r,
      webhook,
    } = await setup(['customer.created'], {
      always: { status: 302, headers: { location: `${elsewhere.url}/stolen` } },
    });
    await customer(api, 'cus_redirect');
    const d = await waitForDelivery(api, webhook.id, finished);
    assert.equal(d.status, 'failed');
    assert.deepEqual(attemptsOf(d), [
      [1, 302],
      [2, 302],
      [3, 302],
      [4, 302],
    ]);
    assert.equal(r.requests.length, 4);
    assert.equal(elsewhere.requests.length, 0);
  });

  test('410 Gone disables the webhook; later events create no deliveries', async () => {
    const {
      api,
      receiver: r,
      webhook,
    } = await setup(['customer.created', 'customer.updated'], {
      always: 410,
    });
    await customer(api, 'cus_gone');
    const d = await waitForDelivery(api, webhook.id, finished);
    assert.equal(d.status, 'failed');
    assert.deepEqual(attemptsOf(d), [[1, 410]], 'no retries');

    const w = await api.get(`/api/webhooks/${webhook.id}`);
    assert.equal(w.body.enabled, false);
    assert.match(w.body.disabled_reason, /410/);

    assert.equal((await api.patch('/api/customers/cus_gone', { name: 'Still here' })).status, 200);
    await customer(api, 'cus_after');
    const events = await api.get('/api/events?limit=100');
    assert.equal(events.body.data.length, 3, 'the events happened');
    assert.deepEqual(
      (await deliveries(api, webhook.id)).map((x) => x.id),
      [d.id],
    );
    assert.equal(r.requests.length, 1);
  });

  test('only subscribed event types are delivered', async () => {
    const { api, receiver: r, webhook } = await setup(['customer.deleted']);
    await customer(api, 'cus_sub');
    assert.equal((await api.patch('/api/customers/cus_sub', { name: 'New name' })).status, 200);
    await score(api, 'cus_sub', { usage: 0.1 });
    assert.equal((await api.delete('/api/customers/cus_sub')).status, 200);
    const [got] = await r.waitFor(1);
    assert.equal(header(got, 'x-vitals-event'), 'customer.deleted');

    const all = await api.get('/api/events?limit=100');
    assert.deepEqual(all.body.data.map((e: { type: string }) => e.type).sort(), [
      'customer.created',
      'customer.deleted',
      'customer.health_score.updated',
      'customer.status.changed',
      'customer.updated',
    ]);
    const list = await deliveries(api, webhook.id);
    assert.deepEqual(
      list.map((x) => x.event_type),
      ['customer.deleted'],
    );
    await waitForDelivery(api, webhook.id, finished);
    assert.equal(r.requests.length, 1);
  });

  test('customer.created, .updated and .deleted are delivered with their payloads', async () => {
    const { api, receiver: r } = await setup(['customer.created', 'customer.updated', 'customer.deleted']);
    const created = await customer(api, 'cus_life', { metadata: { plan: 'pro' } });
    const updated = await api.patch('/api/customers/cus_life', { name: 'Renamed', metadata: { seats: 5 } });
    assert.equal(updated.status, 200);
    const deleted = await api.delete('/api/customers/cus_life');
    assert.equal(deleted.status, 200);

    const got = await r.waitFor(3);
    const byType = new Map(got.map((g) => [header(g, 'x-vitals-event'), JSON.parse(g.body)]));
    assert.deepEqual(byType.get('customer.created'), { type: 'customer.created', data: created });
    assert.deepEqual(byType.get('customer.updated'), { type: 'customer.updated', data: updated.body });
    assert.deepEqual(byType.get('customer.deleted'), {
      type: 'customer.deleted',
      data: { id: 'cus_life', deleted: true },
    });
    assert.deepEqual(updated.body.metadata, { plan: 'pro', seats: 5 });
  });

  test('customer.status.changed is delivered with the band it moved from', async () => {
    const { api, receiver: r } = await setup(['customer.status.changed']);
    await customer(api, 'cus_band');
    await score(api, 'cus_band', { usage: 0.9 });
    await score(api, 'cus_band', { usage: 0.85 });
    await score(api, 'cus_band', { usage: 0.1 });
    const got = (await r.waitFor(2)).map((g) => JSON.parse(g.body).data);
    got.sort((a, b) => (a.updated_at < b.updated_at ? -1 : 1));
    assert.deepEqual(
      got.map((d) => [d.previous_status, d.status, d.health_score]),
      [
        [null, 'healthy', 0.9],
        ['healthy', 'critical', 0.1],
      ],
    );
  });

  test('a huge answer is cut to its first 1 KiB in the record', async () => {
    const big = `${'a'.repeat(1000)}${'b'.repeat(2 * 1024 * 1024)}`;
    const { api, webhook } = await setup(['customer.created'], { always: { status: 200, body: big } });
    await customer(api, 'cus_big');
    const d = await waitForDelivery(api, webhook.id, finished);
    assert.equal(d.status, 'succeeded');
    assert.equal(d.attempts[0]?.response_body, big.slice(0, 1024));
  });

  test('Retry-After on a 503 is honoured when longer than the backoff', async () => {
    const {
      api,
      receiver: r,
      webhook,
    } = await setup(['customer.created'], {
      scripts: [{ status: 503, headers: { 'retry-after': '1' } }],
    });
    await customer(api, 'cus_503');
    const waiting = await waitForDelivery(api, webhook.id, (d) => d.attempt_count === 1);
    assert.equal(waiting.status, 'pending');
    const [first] = waiting.attempts;
    assert.ok(first && waiting.next_attempt_at);
    const delay = Date.parse(waiting.next_attempt_at) - Date.parse(first.started_at);
    assert.ok(delay >= 1000 && delay < 1000 + first.duration_ms + 500, `next attempt after ${delay} ms`);

    const [a, b] = await r.waitFor(2, 5000);
    assert.ok((b?.receivedAt ?? 0) - (a?.receivedAt ?? 0) >= 990, 'the retry waited for Retry-After');
    const d = await waitForDelivery(api, webhook.id, finished);
    assert.deepEqual(attemptsOf(d), [
      [1, 503],
      [2, 200],
    ]);
  });

  test('Retry-After on a 429 is honoured too; on a 500 it is not', async () => {
    const limited = await setup(['customer.created'], {
      scripts: [{ status: 429, headers: { 'retry-after': '30' } }],
    });
    await customer(limited.api, 'cus_429');
    const waiting = await waitForDelivery(limited.api, limited.webhook.id, (d) => d.attempt_count === 1);
    const first = waiting.attempts[0];
    assert.ok(first && waiting.next_attempt_at);
    assert.ok(Date.parse(waiting.next_attempt_at) - Date.parse(first.started_at) >= 30_000);
    // Nothing else to see here: switch it off so it does not fire later.
    assert.equal((await limited.api.delete(`/api/webhooks/${limited.webhook.id}`)).status, 200);

    const plain = await setup(['customer.created'], {
      scripts: [{ status: 500, headers: { 'retry-after': '30' } }],
    });
    await customer(plain.api, 'cus_500');
    const d = await waitForDelivery(plain.api, plain.webhook.id, finished);
    assert.deepEqual(attemptsOf(d), [
      [1, 500],
      [2, 200],
    ]);
  });

  test('a weights change that moves scores delivers one event per changed customer', async () => {
    const { api, receiver: r, webhook } = await setup(['customer.health_score.updated']);
    // Scores before any weights are plain means.
    for (const [id, factors] of [
      ['cus_a', { usage: 0.2, support: 0.8 }], // 0.5 → 0.32
      ['cus_b', { usage: 0.5, support: 0.5 }], // 0.5 → 0.5 (unchanged)
      ['cus_c', { billing: 0.9 }], // no weighted factor: stays 0.9
      ['cus_d', { usage: 1, support: 0 }], // 0.5 → 0.8
    ] as const) {
      await customer(api, id);
      await score(api, id, factors);
    }
    await r.waitFor(4);
    await waitForDeliveries(api, webhook.id, (l) => l.length === 4 && l.every(finished));

    const res = await api.patch('/api/settings/health-score/weights', {
      weights: { usage: 0.8, support: 0.2 },
    });
    assert.equal(res.status, 200, res.raw);
    const list = await deliveries(api, webhook.id);
    assert.equal(list.length, 6, 'two more deliveries, committed with the change');
    const got = (await r.waitFor(6)).slice(4).map((g) => JSON.parse(g.body).data);
    got.sort((a, b) => (a.customer_id < b.customer_id ? -1 : 1));
    assert.deepEqual(
      got.map((d) => [d.customer_id, d.previous_score, d.health_score]),
      [
        ['cus_a', 0.5, 0.32],
        ['cus_d', 0.5, 0.8],
      ],
    );
    await waitForDeliveries(api, webhook.id, (l) => l.every(finished));
    assert.equal(r.requests.length, 6);
  });
});

describe('webhook delivery: timeouts', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ dispatcher: { timeoutMs: 300, maxRetries: 1, backoffMs: [10] } });
  });
  const { setup, closeReceivers } = harness(() => t);
  after(async () => {
    await closeReceivers();
    await t.close();
  });

  test('a receiver that never answers is cut off at the timeout and recorded as a timeout', async () => {
    const { api, receiver: r, webhook } = await setup(['customer.created'], { always: 'hang' });
    await customer(api, 'cus_hang');
    const d = await waitForDelivery(api, webhook.id, finished);
    assert.equal(d.status, 'failed');
    assert.equal(d.attempts.length, 2);
    for (const a of d.attempts) {
      assert.equal(a.status_code, null);
      assert.match(a.error ?? '', /timeout/i);
      assert.ok(a.duration_ms >= 250 && a.duration_ms < 2000, `${a.duration_ms} ms`);
    }
    assert.equal(r.requests.length, 2);
  });

  test('headers sent but the body never finishes is a timeout too', async () => {
    const { api, webhook } = await setup(['customer.created'], {
      always: (res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
      },
    });
    await customer(api, 'cus_trickle');
    const d = await waitForDelivery(api, webhook.id, finished);
    assert.equal(d.status, 'failed');
    assert.match(d.attempts[0]?.error ?? '', /timeout/i);
  });
});

describe('webhook delivery: one slow receiver never holds up the others', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ dispatcher: { perWebhookConcurrency: 2, timeoutMs: 3000 } });
  });
  const { setup, receiver, closeReceivers } = harness(() => t);
  after(async () => {
    await closeReceivers();
    await t.close();
  });

  test('a healthy receiver gets every delivery while another hangs with at most 2 in flight', async () => {
    const { api, receiver: stuck } = await setup(['customer.created'], { always: 'hang' });
    const healthy = await receiver();
    const res = await api.post('/api/webhooks', { url: healthy.url, events: ['customer.created'] });
    assert.equal(res.status, 201);
    for (let i = 0; i < 8; i++) await customer(api, `cus_${i}`);
    const started = Date.now();
    await healthy.waitFor(8, 2500);
    assert.ok(Date.now() - started < 2500, 'long before the stuck attempts time out');
    await stuck.waitFor(2);
    assert.equal(stuck.requests.length, 2, 'the stuck webhook has only its 2 slots');
  });

  test('while a webhook’s slots are full, the dispatcher waits instead of spinning', async () => {
    const { api, receiver: stuck } = await setup(['customer.created'], { always: 'hang' });
    for (let i = 0; i < 4; i++) await customer(api, `cus_spin_${i}`);
    await stuck.waitFor(2);
    // Count claims (a pass-through: behaviour unchanged). Blocked work is woken by the attempt
    // that frees a slot; until then only the poll (200 ms) may look again.
    let claims = 0;
    const store = t.store;
    const claim = store.claimDeliveries.bind(store);
    store.claimDeliveries = (opts) => {
      claims++;
      return claim(opts);
    };
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      store.claimDeliveries = claim;
    }
    assert.ok(claims <= 20, `${claims} claims in 500 ms (a spinning dispatcher makes hundreds)`);
  });

  test('deliveries queued for a stuck webhook do not starve a healthy one', async () => {
    const { api, receiver: stuck } = await setup(['customer.created'], { always: 'hang' });
    for (let i = 0; i < 80; i++) await customer(api, `cus_q${i}`);
    await stuck.waitFor(2);
    const healthy = await receiver();
    const res = await api.post('/api/webhooks', { url: healthy.url, events: ['customer.created'] });
    assert.equal(res.status, 201);
    await customer(api, 'cus_late');
    await healthy.waitFor(1, 1500);
  });
});

describe('webhook metrics', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ dispatcher: true });
  });
  const { setup, closeReceivers } = harness(() => t);
  after(async () => {
    await closeReceivers();
    await t.close();
  });

  async function metrics(): Promise<Map<string, number>> {
    const res = await t.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.status, 200);
    const values = new Map<string, number>();
    for (const line of res.raw.split('\n')) {
      const m =
        /^(vitals_(?:webhook_attempts_total|outbox_backlog|webhook_backlog|webhook_backlog_oldest_seconds|webhook_deliveries_finished_total|webhook_drain_rate)(?:\{[^}]*\})?) (\S+)$/.exec(
          line,
        );
      if (m) values.set(m[1] as string, Number(m[2]));
    }
    return values;
  }

  test('/metrics counts attempts by outcome, and shows the backlog and its drain per account', async () => {
    assert.equal((await metrics()).get('vitals_outbox_backlog'), 0);

    // Three deliveries held open by the receiver: all three are pending until it answers.
    const held: ServerResponse[] = [];
    const hold = (res: ServerResponse) => {
      held.push(res);
    };
    const { api, receiver: r, webhook } = await setup(['customer.created'], { scripts: [hold, hold, hold] });
    for (const id of ['cus_m1', 'cus_m2', 'cus_m3']) await customer(api, id);
    await r.waitFor(3);
    const waiting = await metrics();
    const labelled = [...waiting.keys()].filter((k) => k.startsWith('vitals_webhook_backlog{'));
    assert.equal(labelled.length, 1, 'one account has a backlog');
    const account = /account="([^"]+)"/.exec(labelled[0] as string)?.[1] as string;
    assert.equal(waiting.get('vitals_outbox_backlog'), 3);
    assert.equal(waiting.get(`vitals_webhook_backlog{account="${account}"}`), 3);
    const age = waiting.get(`vitals_webhook_backlog_oldest_seconds{account="${account}"}`);
    assert.ok(age !== undefined && age >= 0 && age < 60, `oldest pending for ${age} s`);
    assert.equal(
      waiting.get(`vitals_webhook_drain_rate{account="${account}"}`),
      undefined,
      'nothing drained yet',
    );
    for (const res of held) res.writeHead(200).end();
    await waitForDeliveries(api, webhook.id, (l) => l.length === 3 && l.every(finished));
    const drained = await metrics();
    assert.equal(drained.get(`vitals_webhook_backlog{account="${account}"}`), undefined, 'no backlog left');
    assert.equal(
      drained.get(`vitals_webhook_deliveries_finished_total{account="${account}",status="succeeded"}`),
      3,
    );
    assert.equal(
      drained.get(`vitals_webhook_drain_rate{account="${account}"}`),
      3 / 60,
      'three in the last minute',
    );

    // One retry then success, and one failure for good (410).
    const retried = await setup(['customer.created'], { scripts: [500] });
    await customer(retried.api, 'cus_m4');
    await waitForDelivery(retried.api, retried.webhook.id, finished);
    const gone = await setup(['customer.created'], { always: 410 });
    await customer(gone.api, 'cus_m5');
    await waitForDelivery(gone.api, gone.webhook.id, finished);

    const m = await metrics();
    assert.equal(m.get('vitals_webhook_attempts_total{outcome="succeeded"}'), 4);
    assert.equal(m.get('vitals_webhook_attempts_total{outcome="retrying"}'), 1);
    assert.equal(m.get('vitals_webhook_attempts_total{outcome="failed"}'), 1);
    assert.equal(m.get('vitals_outbox_backlog'), 0);
  });
});
