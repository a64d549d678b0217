// The webhook address guard at delivery time (docs/webhooks.md, "URL rules"): with
// VITALS_WEBHOOK_BLOCK_PRIVATE on the dispatcher, a URL whose host is a loopback address in any
// spelling, or a name that RESOLVES to one when the connection is made, is refused with
// EADDRBLOCKED, and the receiver behind it gets nothing. The API here accepts such URLs (its own
// check is off), which stands in for a name whose DNS answer changed after the webhook was created
// (DNS rebinding). A control app without the guard delivers to the same URLs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';
import { waitForDeliveries } from '../helpers/deliveries.ts';
import { TestReceiver } from '../helpers/receiver.ts';

let receiver: TestReceiver;
let port: number;
before(async () => {
  receiver = await TestReceiver.start();
  port = Number(new URL(receiver.url).port);
});
after(() => receiver.close());

/** Host spellings that all reach the receiver on 127.0.0.1; `resolved` when DNS is involved. */
const HOSTS: { host: string; resolved: boolean }[] = [
  { host: 'localhost', resolved: true },
  { host: 'LocalHost', resolved: true },
  { host: '127.0.0.1', resolved: false },
  { host: '127.1', resolved: false },
  { host: '2130706433', resolved: false },
  { host: '0x7f.0.0.1', resolved: false },
  { host: '[::ffff:127.0.0.1]', resolved: false },
];

async function subscribeAll(api: Client): Promise<string[]> {
  const ids: string[] = [];
  for (const { host } of HOSTS) {
    const res = await api.post('/api/webhooks', {
      url: `http://${host}:${port}/guard/${encodeURIComponent(host)}`,
      events: ['customer.created'],
    });
    assert.equal(res.status, 201, `${host}: ${res.raw}`);
    ids.push(res.body.id);
  }
  return ids;
}

describe('with blockPrivate on the dispatcher', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({
      blockPrivate: false,
      dispatcher: { blockPrivate: true, maxRetries: 0, pollMs: 3_600_000 },
    });
  });
  after(() => t.close());

  test('every loopback spelling, and every name that resolves to loopback, is refused at delivery', async () => {
    const ids = await subscribeAll(t.api);
    assert.equal((await t.api.post('/api/customers', customerBody('cus_guarded'))).status, 201);
    for (const [i, id] of ids.entries()) {
      const { host, resolved } = HOSTS[i] as (typeof HOSTS)[number];
      const [d] = await waitForDeliveries(t.api, id, (l) => l.length === 1 && l[0]?.status === 'failed');
      const attempt = d?.attempts[0];
      assert.equal(attempt?.status_code, null, host);
      assert.match(attempt?.error ?? '', /^EADDRBLOCKED: /, `${host}: ${attempt?.error}`);
      assert.match(attempt?.error ?? '', /loopback or private/, host);
      // A name is judged by the address DNS gave for it, when the connection is made.
      if (resolved) assert.match(attempt?.error ?? '', /resolves to 127\.0\.0\.1/, host);
      assert.equal(attempt?.response_body, null);
    }
    assert.equal(receiver.requests.length, 0, 'the receiver behind them got nothing');
  });

  test('the API of a blockPrivate deployment refuses them at creation already', async () => {
    const strict = await buildTestApp({ blockPrivate: true });
    try {
      for (const { host } of HOSTS) {
        const res = await strict.api.post('/api/webhooks', {
          url: `http://${host}:${port}/`,
          events: ['customer.created'],
        });
        assert.equal(res.status, 400, `${host}: ${res.raw}`);
        assert.equal(res.body.error.param, 'url');
      }
    } finally {
      await strict.close();
    }
  });
});

describe('control: without the guard', () => {
  test('the same URLs are delivered to', async () => {
    const t = await buildTestApp({ dispatcher: { maxRetries: 0, pollMs: 3_600_000 } });
    try {
      const before = receiver.requests.length;
      const ids = await subscribeAll(t.api);
      assert.equal((await t.api.post('/api/customers', customerBody('cus_open'))).status, 201);
      await receiver.waitFor(before + ids.length);
      for (const id of ids) {
        const [d] = await waitForDeliveries(t.api, id, (l) => l[0]?.status === 'succeeded');
        assert.equal(d?.attempts[0]?.status_code, 200);
      }
    } finally {
      await t.close();
    }
  });
});
