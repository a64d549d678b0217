// verifyWebhook (docs/client.md) on real deliveries: the app's dispatcher sends a webhook.test
// event to a real local receiver, and what arrived is verified, and tampered with, here.
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, test } from 'node:test';
import { verifyWebhook, WebhookVerificationError } from '../../src/client/index.ts';
import type { Received } from '../helpers/receiver.ts';
import { TestReceiver } from '../helpers/receiver.ts';
import { type ClientApp, clientApp } from './harness.ts';

let app: ClientApp;
let receiver: TestReceiver;
let delivery: Received;
let secret: string;
let sentAt: number;

before(async () => {
  app = await clientApp({ dispatcher: true });
  receiver = await TestReceiver.start();
  const webhook = await app.client.webhooks.create({
    url: `${receiver.url}/hook`,
    events: ['customer.created'],
  });
  secret = webhook.secret;
  await app.client.webhooks.test(webhook.id);
  [delivery] = (await receiver.waitFor(1)) as [Received];
  sentAt = Number(delivery.headers['webhook-timestamp']) * 1000;
});
after(async () => {
  await app.close();
  await receiver.close();
});

const without = (headers: IncomingHttpHeaders, ...names: string[]) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)));

const refused = (fn: () => unknown, message: RegExp) =>
  assert.throws(fn, (err: unknown) => err instanceof WebhookVerificationError && message.test(err.message));

test('a real delivery verifies, and its parsed event is returned', () => {
  const event = verifyWebhook(secret, delivery.body, delivery.headers);
  assert.equal(event.type, 'webhook.test');
  assert.deepEqual(Object.keys(event).sort(), ['data', 'type']);
  assert.equal(typeof event.data.webhook_id, 'string');
});

test('the Standard Webhooks signature is required (it binds the time); the hex one must match when present', () => {
  const standardOnly = without(delivery.headers, 'x-vitals-signature');
  assert.equal(verifyWebhook(secret, delivery.body, standardOnly).type, 'webhook.test');
  // The hex signature alone covers the body only: a replay with a fresh timestamp would pass.
  refused(
    () => verifyWebhook(secret, delivery.body, without(delivery.headers, 'webhook-signature')),
    /webhook-signature/,
  );
  const badHex = { ...delivery.headers, 'x-vitals-signature': '0'.repeat(64) };
  refused(() => verifyWebhook(secret, delivery.body, badHex), /X-Vitals-Signature/);
});

test('headers as a fetch Headers or in any case, the body as a Buffer or Uint8Array', () => {
  const headers = new Headers();
  const shouting: Record<string, string> = {};
  for (const [name, value] of Object.entries(delivery.headers)) {
    headers.set(name, String(value));
    shouting[name.toUpperCase()] = String(value);
  }
  const bytes = Buffer.from(delivery.body);
  assert.equal(verifyWebhook(secret, bytes, headers).type, 'webhook.test');
  assert.equal(verifyWebhook(secret, new Uint8Array(bytes), shouting).type, 'webhook.test');
});

test('a changed body is refused', () => {
  const changed = delivery.body.replace('webhook.test', 'webhook.tesT');
  refused(() => verifyWebhook(secret, changed, delivery.headers), /does not match/);
  refused(() => verifyWebhook(secret, `${delivery.body} `, delivery.headers), /does not match/);
});

test('another secret is refused', async () => {
  const other = await app.client.webhooks.create({
    url: `${receiver.url}/other`,
    events: ['customer.created'],
  });
  refused(() => verifyWebhook(other.secret, delivery.body, delivery.headers), /does not match/);
});

test('a delivery sent more than 5 minutes ago, or dated more than 5 minutes ahead, is refused', () => {
  const fiveMinutes = 300_000;
  assert.ok(verifyWebhook(secret, delivery.body, delivery.headers, { now: sentAt + fiveMinutes }));
  assert.ok(verifyWebhook(secret, delivery.body, delivery.headers, { now: sentAt - fiveMinutes }));
  refused(
    () => verifyWebhook(secret, delivery.body, delivery.headers, { now: sentAt + fiveMinutes + 1000 }),
    /too old/,
  );
  refused(
    () => verifyWebhook(secret, delivery.body, delivery.headers, { now: sentAt - fiveMinutes - 1000 }),
    /in the future/,
  );
});

test('a fresh timestamp on an old delivery breaks the Standard Webhooks signature', () => {
  const later = sentAt + 3_600_000;
  const replayed = {
    ...without(delivery.headers, 'x-vitals-signature'),
    'webhook-timestamp': String(later / 1000),
  };
  refused(() => verifyWebhook(secret, delivery.body, replayed, { now: later }), /does not match/);
});

test('no timestamp, or no signature at all, is refused', () => {
  refused(
    () => verifyWebhook(secret, delivery.body, without(delivery.headers, 'webhook-timestamp')),
    /timestamp/,
  );
  refused(
    () =>
      verifyWebhook(
        secret,
        delivery.body,
        without(delivery.headers, 'webhook-signature', 'x-vitals-signature'),
      ),
    /does not match/,
  );
});

test('one valid signature among several in webhook-signature is enough (a rotation)', () => {
  const headers = {
    ...without(delivery.headers, 'x-vitals-signature'),
    'webhook-signature': `v1,c2lnbmVkIHdpdGggdGhlIG9sZCBzZWNyZXQ= ${delivery.headers['webhook-signature']}`,
  };
  assert.equal(verifyWebhook(secret, delivery.body, headers).type, 'webhook.test');
});

test('a renamed Vitals signature header is read when named', () => {
  const headers = {
    ...without(delivery.headers, 'x-vitals-signature'),
    'x-acme-signature': '0'.repeat(64),
  };
  // Unnamed, the renamed header is not read; named, its (wrong) value is checked.
  assert.equal(verifyWebhook(secret, delivery.body, headers).type, 'webhook.test');
  refused(
    () => verifyWebhook(secret, delivery.body, headers, { signatureHeader: 'X-Acme-Signature' }),
    /X-Acme|X-Vitals-Signature/,
  );
  headers['x-acme-signature'] = String(delivery.headers['x-vitals-signature']);
  const event = verifyWebhook(secret, delivery.body, headers, { signatureHeader: 'X-Acme-Signature' });
  assert.equal(event.type, 'webhook.test');
});
