// The webhook address guard at delivery time (docs/webhooks.md, "URL rules"): with
// VITALS_WEBHOOK_BLOCK_PRIVATE on the dispatcher, a URL whose host is a loopback address in any
// spelling, or a name that RESOLVES to one when the connection is made, is refused with
// EADDRBLOCKED, and the receiver behind it gets nothing. The API here accepts such URLs (its own
// check is off), which stands in for a name whose DNS answer changed after the webhook was created
// (DNS rebinding). A control app without the guard delivers to the same URLs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { addressRefusal } from '../../src/webhooks/url-guard.ts';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';
import { waitForDeliveries } from '../helpers/deliveries.ts';
import { TestReceiver } from '../helpers/receiver.ts';
import { refusedWithoutChange } from '../helpers/refusals.ts';

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

// IPv6 addresses that carry an IPv4 address are judged by it (docs/webhooks.md, "URL rules"): a
// NAT64 translator connects 64:ff9b::a9fe:a9fe to 169.254.169.254, the cloud metadata service.
describe('IPv6 spellings of an IPv4 address', () => {
  /** Each reaches (or names) 169.254.169.254. */
  const METADATA = [
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::169.254.169.254',
    '::a9fe:a9fe',
    '::169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::ffff:169.254.169.254',
    '::ffff:0:a9fe:a9fe',
    '64:ff9b:1::a9fe:a9fe',
    '64:ff9b:1:a9fe:a9:fe00::',
  ];
  /** Each reaches (or names) 127.0.0.1, where the test receiver listens. */
  const LOOPBACK = [
    '64:ff9b::7f00:1',
    '64:ff9b::127.0.0.1',
    '::7f00:1',
    '::127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b:1::7f00:1',
  ];

  for (const blockPrivate of [false, true]) {
    test(`metadata in every spelling is refused at subscribe (url), blockPrivate ${blockPrivate}`, async () => {
      const t = await buildTestApp({ blockPrivate });
      try {
        const stored = async () => (await t.api.get('/api/webhooks')).body;
        for (const host of METADATA) {
          const res = await refusedWithoutChange(
            stored,
            () =>
              t.api.post('/api/webhooks', {
                url: `http://[${host}]/latest/meta-data`,
                events: ['customer.created'],
              }),
            400,
            'parameter_invalid',
            'url',
          );
          assert.match(res.body.error.message, /link-local, metadata or unspecified/, host);
        }
      } finally {
        await t.close();
      }
    });
  }

  test('loopback in every spelling is refused at subscribe when private addresses are', async () => {
    const t = await buildTestApp({ blockPrivate: true });
    try {
      const stored = async () => (await t.api.get('/api/webhooks')).body;
      for (const host of LOOPBACK) {
        const res = await refusedWithoutChange(
          stored,
          () =>
            t.api.post('/api/webhooks', { url: `http://[${host}]:${port}/`, events: ['customer.created'] }),
          400,
          'parameter_invalid',
          'url',
        );
        assert.match(res.body.error.message, /loopback or private/, host);
      }
    } finally {
      await t.close();
    }
  });

  test(':: and ::1 keep their IPv6 meaning; a public address behind NAT64 is allowed', async () => {
    const strict = await buildTestApp({ blockPrivate: true });
    const open = await buildTestApp({ blockPrivate: false });
    try {
      const create = (app: TestApp, host: string) =>
        app.api.post('/api/webhooks', { url: `http://[${host}]/`, events: ['customer.created'] });
      const unspecified = await create(open, '::');
      assert.equal(unspecified.status, 400);
      assert.match(unspecified.body.error.message, /unspecified/);
      assert.equal((await create(open, '::1')).status, 201, '::1 is loopback, allowed by default');
      const loopback = await create(strict, '::1');
      assert.equal(loopback.status, 400);
      assert.match(loopback.body.error.message, /loopback or private/);
      for (const host of [
        '64:ff9b::5db8:d822',
        '64:ff9b:1::5db8:d822',
        '64:ff9b:1:5db8:d8:2200::',
        '2606:4700::1111',
      ]) {
        assert.equal((await create(strict, host)).status, 201, host);
      }
    } finally {
      await strict.close();
      await open.close();
    }
  });

  test('at connect: a stored URL of such a spelling is refused with EADDRBLOCKED, and nothing is sent', async () => {
    // The API's own check is off here, standing in for a URL stored before this rule existed.
    const t = await buildTestApp({
      blockPrivate: false,
      dispatcher: { blockPrivate: true, maxRetries: 0, pollMs: 3_600_000 },
    });
    try {
      const ids: string[] = [];
      for (const host of LOOPBACK) {
        const res = await t.api.post('/api/webhooks', {
          url: `http://[${host}]:${port}/nat64`,
          events: ['customer.created'],
        });
        assert.equal(res.status, 201, `${host}: ${res.raw}`);
        ids.push(res.body.id);
      }
      const received = receiver.requests.length;
      assert.equal((await t.api.post('/api/customers', customerBody('cus_nat64'))).status, 201);
      for (const [i, id] of ids.entries()) {
        const [d] = await waitForDeliveries(t.api, id, (l) => l.length === 1 && l[0]?.status === 'failed');
        const error = d?.attempts[0]?.error ?? '';
        assert.match(error, /^EADDRBLOCKED: /, `${LOOPBACK[i]}: ${error}`);
        assert.match(error, /loopback or private/, LOOPBACK[i]);
      }
      assert.equal(receiver.requests.length, received);
    } finally {
      await t.close();
    }
  });

  test('at connect: every address DNS answers is judged the same way', () => {
    // The sender's lookup (src/webhooks/sender.ts) hands each resolved address to addressRefusal.
    for (const address of METADATA) {
      assert.match(addressRefusal(address, false) ?? '', /link-local, metadata or unspecified/, address);
    }
    for (const address of LOOPBACK) {
      assert.equal(addressRefusal(address, false), null, address);
      assert.match(addressRefusal(address, true) ?? '', /loopback or private/, address);
    }
    assert.match(
      addressRefusal('64:ff9b::a00:1', true) ?? '',
      /loopback or private/,
      '10.0.0.1 behind NAT64',
    );
    assert.match(addressRefusal('::', false) ?? '', /unspecified/);
    assert.equal(addressRefusal('::1', false), null);
    assert.match(addressRefusal('::1', true) ?? '', /loopback or private/);
    assert.equal(addressRefusal('64:ff9b::5db8:d822', true), null, '93.184.216.34 behind NAT64');
    assert.equal(addressRefusal('2606:4700::1111', true), null);
  });
});
