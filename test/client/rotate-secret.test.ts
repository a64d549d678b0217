// client.webhooks.rotateSecret with an overlap, and verifyWebhook on what a real receiver got
// (docs/webhooks.md, "Rotating the secret"): the old secret verifies while the overlap lasts and
// is refused once it has ended. The app and its dispatcher share a clock the test moves.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type VitalsClient, verifyWebhook, WebhookVerificationError } from '../../src/client/index.ts';
import { Dispatcher } from '../../src/webhooks/dispatcher.ts';
import { TEST_WEBHOOK_CONFIG, TestClock } from '../helpers/app.ts';
import { type Received, TestReceiver } from '../helpers/receiver.ts';
import { type ClientApp, clientApp } from './harness.ts';

const clock = new TestClock(new Date().toISOString());
let app: ClientApp;
let dispatcher: Dispatcher;
let receiver: TestReceiver;
let accounts = 0;
before(async () => {
  app = await clientApp({ now: clock.now });
  dispatcher = new Dispatcher({
    store: app.t.store,
    config: { ...TEST_WEBHOOK_CONFIG, pollMs: 3_600_000 },
    log: app.t.app.log,
    now: clock.now,
  });
  dispatcher.start();
  receiver = await TestReceiver.start();
});
after(async () => {
  await dispatcher.stop();
  await app.close();
  await receiver.close();
});

/** A test event's request as the receiver got it. */
async function delivered(client: VitalsClient, id: string): Promise<Received> {
  const { event_id } = await client.webhooks.test(id);
  const byEvent = (r: Received) => r.headers['x-vitals-event-id'] === event_id;
  await receiver.until((all) => all.some(byEvent));
  return receiver.requests.find(byEvent) as Received;
}

const refused = (fn: () => unknown) =>
  assert.throws(
    fn,
    (err: unknown) => err instanceof WebhookVerificationError && /does not match/.test(err.message),
  );

test('rotateSecret with expire_previous_in: verifyWebhook takes the old secret until the overlap ends', async () => {
  const client = await app.newClient(`rotate ${++accounts}`);
  const created = await client.webhooks.create({
    url: `${receiver.url}/rotate`,
    events: ['customer.created'],
  });
  const rotated = await client.webhooks.rotateSecret(created.id, { expire_previous_in: 300 });
  assert.notEqual(rotated.secret, created.secret);
  assert.equal(rotated.previous_secret_expires_at, new Date(clock.ms + 300_000).toISOString());
  assert.equal(
    (await client.webhooks.retrieve(created.id)).previous_secret_expires_at,
    rotated.previous_secret_expires_at,
  );

  const during = await delivered(client, created.id);
  const opts = { now: clock.ms };
  assert.equal(verifyWebhook(created.secret, during.body, during.headers, opts).type, 'webhook.test');
  assert.equal(verifyWebhook(rotated.secret, during.body, during.headers, opts).type, 'webhook.test');
  // As fetch's Headers hands them over too.
  const headers = new Headers(Object.entries(during.headers).map(([k, v]) => [k, String(v)]));
  assert.equal(verifyWebhook(created.secret, during.body, headers, opts).type, 'webhook.test');

  clock.advance(300_000);
  const afterwards = await delivered(client, created.id);
  refused(() => verifyWebhook(created.secret, afterwards.body, afterwards.headers, { now: clock.ms }));
  assert.equal(
    verifyWebhook(rotated.secret, afterwards.body, afterwards.headers, { now: clock.ms }).type,
    'webhook.test',
  );
  assert.equal((await client.webhooks.retrieve(created.id)).previous_secret_expires_at, null);
});

test('rotateSecret without an overlap: the old secret is refused at once', async () => {
  const client = await app.newClient(`rotate ${++accounts}`);
  const created = await client.webhooks.create({ url: `${receiver.url}/now`, events: ['customer.created'] });
  const rotated = await client.webhooks.rotateSecret(created.id);
  assert.equal(rotated.previous_secret_expires_at, null);
  const got = await delivered(client, created.id);
  refused(() => verifyWebhook(created.secret, got.body, got.headers, { now: clock.ms }));
  assert.equal(verifyWebhook(rotated.secret, got.body, got.headers, { now: clock.ms }).type, 'webhook.test');
});

test('rotateSecret refuses an overlap past a week: 400 naming expire_previous_in', async () => {
  const client = await app.newClient(`rotate ${++accounts}`);
  const created = await client.webhooks.create({ url: `${receiver.url}/long`, events: ['customer.created'] });
  await assert.rejects(client.webhooks.rotateSecret(created.id, { expire_previous_in: 604_801 }), {
    status: 400,
    code: 'parameter_invalid',
    param: 'expire_previous_in',
  });
  const got = await delivered(client, created.id);
  assert.equal(verifyWebhook(created.secret, got.body, got.headers, { now: clock.ms }).type, 'webhook.test');
});
