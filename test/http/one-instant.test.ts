// One customer, one instant, one version (docs/api.md, "One customer, one instant, one version"):
// a batch's items for the same customer and instant are one write at the first one's place —
// one history version, one set of events and webhooks — whatever values each item carries; a
// refused item refuses only itself. Real webhooks to a real receiver.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';
import { TestReceiver } from '../helpers/receiver.ts';

const DAY = 86_400_000;
let t: TestApp;
let receiver: TestReceiver;
before(async () => {
  t = await buildTestApp({ dispatcher: true });
  receiver = await TestReceiver.start();
});
after(async () => {
  await receiver.close();
  await t.close();
});

const at = new Date(Date.now() - 60_000).toISOString();
const dayAgo = new Date(Date.now() - DAY).toISOString();

/**
 * A new account whose `usage` is the last `logins` (0 → 10) and `support` the last `tickets`
 * (10 → 0), with customer `a` healthy at 0.9 (logins 10, tickets 2, a day ago) and a webhook
 * on every score event made after that.
 */
async function account(name: string): Promise<{ api: Client; webhook: string }> {
  const api = await t.newAccount(name);
  const rule = (metric: string, from: number, to: number) => ({
    metric,
    aggregate: 'last',
    scale: { type: 'linear', from, to },
  });
  for (const [factor, body] of [
    ['usage', rule('logins', 0, 10)],
    ['support', rule('tickets', 10, 0)],
  ] as const) {
    const put = await api.request('PUT', `/api/settings/health-score/factors/${factor}`, body);
    assert.equal(put.status, 200, put.raw);
  }
  for (const id of ['a', 'b']) assert.equal((await api.post('/api/customers', customerBody(id))).status, 201);
  const first = await api.post('/api/metrics/batch', {
    metrics: [{ customer_id: 'a', values: { logins: 10, tickets: 2 }, at: dayAgo }],
  });
  assert.equal(first.body.results[0].health_score.health_score, 0.9, first.raw);
  assert.equal(first.body.results[0].health_score.status, 'healthy');
  const hook = await api.post('/api/webhooks', {
    url: `${receiver.url}/${name}`,
    events: ['customer.health_score.updated', 'customer.status.changed'],
  });
  assert.equal(hook.status, 201, hook.raw);
  return { api, webhook: hook.body.id };
}

const history = async (api: Client, id: string) =>
  (await api.get(`/api/customers/${id}/health-score/history?limit=100`)).body.data as {
    version: number;
    health_score: number;
    status: string;
    reason: string;
  }[];

/** The event types the webhook was given deliveries of, oldest first. */
async function delivered(api: Client, webhook: string): Promise<string[]> {
  const res = await api.get(`/api/webhooks/${webhook}/deliveries?limit=100`);
  assert.equal(res.status, 200, res.raw);
  return res.body.data.map((d: { event_type: string }) => d.event_type).reverse();
}

/** The webhook calls the receiver got for `name`'s account, as event types. */
const received = (name: string) =>
  receiver.requests.filter((r) => r.path === `/${name}`).map((r) => JSON.parse(r.body).type as string);

describe('metrics: items of one customer and instant', () => {
  test('a row per source no longer flaps: one version, one score event, no status change', async () => {
    const { api, webhook } = await account('flap');
    // Alone, logins 5 would make a 0.65 (at_risk), and tickets 0 after it a 0.75 (healthy) again.
    const res = await api.post('/api/metrics/batch', {
      metrics: [
        { customer_id: 'a', values: { logins: 5 }, at },
        { customer_id: 'a', values: { tickets: 0 }, at },
      ],
    });
    assert.equal(res.status, 200, res.raw);
    const [logins, tickets] = res.body.results;
    assert.deepEqual(logins.values, { logins: 5 }, 'each result echoes its own item');
    assert.deepEqual(tickets.values, { tickets: 0 });
    assert.equal(logins.health_score.health_score, 0.75);
    assert.equal(logins.health_score.status, 'healthy');
    assert.deepEqual(logins.health_score, tickets.health_score, 'both answer the merged score');
    const versions = await history(api, 'a');
    assert.deepEqual(
      versions.map((v) => [v.version, v.health_score, v.status, v.reason]),
      [
        [2, 0.75, 'healthy', 'metrics_updated'],
        [1, 0.9, 'healthy', 'metrics_updated'],
      ],
    );
    await receiver.until((r) => r.some((x) => x.path === '/flap'));
    assert.deepEqual(await delivered(api, webhook), ['customer.health_score.updated']);
    assert.deepEqual(received('flap'), ['customer.health_score.updated']);
  });

  test('a band truly moved: one status webhook, from the band before to the merged one', async () => {
    const { api, webhook } = await account('band');
    // Alone: 0.45 (at_risk), then 0.1 (critical): two status changes where one happened.
    const res = await api.post('/api/metrics/batch', {
      metrics: [
        { customer_id: 'a', values: { logins: 1 }, at },
        { customer_id: 'a', values: { tickets: 9 }, at },
      ],
    });
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.results[0].health_score.status, 'critical');
    assert.equal((await history(api, 'a')).length, 2, 'one version for the two items');
    await receiver.until((r) => r.filter((x) => x.path === '/band').length >= 2);
    assert.deepEqual(await delivered(api, webhook), [
      'customer.health_score.updated',
      'customer.status.changed',
    ]);
    const status = receiver.requests.find(
      (r) => r.path === '/band' && JSON.parse(r.body).type === 'customer.status.changed',
    );
    assert.ok(status);
    const data = JSON.parse(status.body).data;
    assert.deepEqual([data.previous_status, data.status, data.health_score], ['healthy', 'critical', 0.1]);
    assert.equal(received('band').length, 2);
  });

  test('merge at the first item’s place; a later value of a metric wins; other customers and instants stay apart', async () => {
    const { api } = await account('order');
    const res = await api.post('/api/metrics/batch', {
      metrics: [
        { customer_id: 'a', values: { logins: 2 }, at },
        { customer_id: 'b', values: { logins: 10, tickets: 0 }, at },
        { customer_id: 'a', values: { logins: 8, tickets: 4 }, at },
        { customer_id: 'a', values: { logins: 9 }, at: new Date(Date.parse(at) + 1000).toISOString() },
      ],
    });
    assert.equal(res.status, 200, res.raw);
    const [a1, b, a2, later] = res.body.results;
    // At `at`: logins 8 (the later value), tickets 4 → (0.8 + 0.6) / 2.
    assert.equal(a1.health_score.health_score, 0.7);
    assert.deepEqual(a1.health_score, a2.health_score);
    assert.equal(b.health_score.health_score, 1);
    // The next instant is a write of its own, built on the merged one.
    assert.equal(later.health_score.health_score, 0.75);
    assert.deepEqual(
      (await history(api, 'a')).map((v) => v.health_score),
      [0.75, 0.7, 0.9],
    );
    const points = (await api.get(`/api/customers/a/metrics?limit=100`)).body.data;
    assert.deepEqual(
      points
        .filter((p: { at: string }) => p.at === at)
        .map((p: { metric: string; value: number }) => [p.metric, p.value]),
      [
        ['logins', 8],
        ['tickets', 4],
      ],
    );
  });

  test('a refused item refuses only itself; the others of its customer and instant merge', async () => {
    const { api } = await account('refused');
    const res = await api.post('/api/metrics/batch', {
      metrics: [
        { customer_id: 'a', values: { logins: 5 }, at },
        { customer_id: 'a', values: { tickets: 'many' }, at },
        { customer_id: 'a', values: { tickets: 0 }, at },
      ],
    });
    assert.equal(res.status, 200, res.raw);
    const [first, refused, last] = res.body.results;
    assert.equal(refused.status, 400);
    assert.equal(refused.error.code, 'parameter_invalid');
    assert.equal(refused.error.param, 'values.tickets');
    assert.equal(first.status, 200);
    assert.equal(first.health_score.health_score, 0.75);
    assert.deepEqual(first.health_score, last.health_score);
    assert.equal((await history(api, 'a')).length, 2);
  });
});

describe('health scores: a customer named twice in one batch', () => {
  /** A new account with customers `a` (scored {usage: 0.9}) and `b`. */
  async function scored(name: string): Promise<Client> {
    const api = await t.newAccount(name);
    for (const id of ['a', 'b'])
      assert.equal((await api.post('/api/customers', customerBody(id))).status, 201);
    assert.equal((await api.post('/api/customers/a/health-score', { factors: { usage: 0.9 } })).status, 200);
    return api;
  }

  test('one version at the first item’s place, each item folded into the one before; every item answers it', async () => {
    const api = await scored('scores-merge');
    const res = await api.post('/api/health-scores/batch', {
      scores: [
        { customer_id: 'a', factors: { usage: 0.2 }, merge: true },
        { customer_id: 'b', factors: { usage: 0.5 } },
        { customer_id: 'a', factors: { support: 0.6 }, merge: true },
      ],
    });
    assert.equal(res.status, 200, res.raw);
    const [a1, b, a2] = res.body.results;
    assert.deepEqual(a1.health_score.factors, { usage: 0.2, support: 0.6 });
    assert.deepEqual(a1.health_score, a2.health_score);
    assert.equal(b.status, 200);
    assert.deepEqual(
      (await history(api, 'a')).map((v) => v.version),
      [2, 1],
    );
    const events = (await api.get('/api/events?limit=100')).body.data
      .reverse()
      .map((e: { type: string; data: { customer_id: string } }) => [e.type, e.data.customer_id]);
    // After a's first score: a's one version (at its first item's place), then b's first score.
    assert.deepEqual(events.slice(-4), [
      ['customer.health_score.updated', 'a'],
      ['customer.status.changed', 'a'],
      ['customer.health_score.updated', 'b'],
      ['customer.status.changed', 'b'],
    ]);
  });

  test('a refused item (no factor left) refuses only itself; the others merge', async () => {
    const api = await scored('scores-refused');
    const res = await api.post('/api/health-scores/batch', {
      scores: [
        { customer_id: 'a', factors: { support: 0.4 }, merge: true },
        { customer_id: 'a', factors: { usage: null, support: null }, merge: true },
        { customer_id: 'a', factors: { billing: 1 }, merge: true },
      ],
    });
    assert.equal(res.status, 200, res.raw);
    const [first, refused, last] = res.body.results;
    assert.equal(refused.status, 400);
    assert.equal(refused.error.code, 'parameter_invalid');
    assert.equal(refused.error.param, 'factors');
    assert.deepEqual(first.health_score.factors, { usage: 0.9, support: 0.4, billing: 1 });
    assert.deepEqual(first.health_score, last.health_score);
    assert.deepEqual(
      (await history(api, 'a')).map((v) => v.version),
      [2, 1],
    );
  });
});
