// client.webhooks and client.events against the real app and dispatcher, sending to a real local
// receiver: every webhook route, the delivery log iterator, and the events iterator.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { VitalsClient } from '../../src/client/index.ts';
import { customerBody } from '../helpers/app.ts';
import { TestReceiver } from '../helpers/receiver.ts';
import { all, type ClientApp, clientApp, until } from './harness.ts';

let app: ClientApp;
let receiver: TestReceiver;
before(async () => {
  app = await clientApp({ dispatcher: true });
  receiver = await TestReceiver.start();
});
after(async () => {
  await app.close();
  await receiver.close();
});

let accounts = 0;
const newClient = () => app.newClient(`webhooks ${++accounts}`);

test('create, retrieve, list, update, rotate the secret of and delete a webhook', async () => {
  const client = await newClient();
  const created = await client.webhooks.create({
    url: `${receiver.url}/crud`,
    events: ['customer.created'],
    description: 'CRM sync',
  });
  assert.match(created.id, /^whk_/);
  assert.match(created.secret, /^whsec_/);
  const { secret: _, ...webhook } = created;
  assert.deepEqual(await client.webhooks.retrieve(created.id), {
    ...webhook,
    pending: 0,
    pending_truncated: false,
    oldest_pending_at: null,
  });
  assert.deepEqual(await client.webhooks.list(), [webhook]);

  const updated = await client.webhooks.update(created.id, { enabled: false, description: null });
  assert.equal(updated.enabled, false);
  assert.equal(updated.description, null);

  const rotated = await client.webhooks.rotateSecret(created.id);
  assert.match(rotated.secret, /^whsec_/);
  assert.notEqual(rotated.secret, created.secret);

  assert.deepEqual(await client.webhooks.delete(created.id), { id: created.id, deleted: true });
  assert.deepEqual(await client.webhooks.list(), []);
  await assert.rejects(client.webhooks.retrieve(created.id), { status: 404, code: 'webhook_not_found' });
});

test('an unknown event type is a 400 naming events', async () => {
  const client = await newClient();
  const events = ['customer.exploded'] as unknown as ['customer.created'];
  await assert.rejects(client.webhooks.create({ url: receiver.url, events }), {
    status: 400,
    code: 'parameter_invalid',
    param: 'events.0',
  });
});

test('test sends a delivery, listDeliveries shows its attempts, retryDelivery sends it again', async () => {
  const client = await newClient();
  const webhook = await client.webhooks.create({
    url: `${receiver.url}/deliveries`,
    events: ['customer.created'],
  });
  const sent = await client.webhooks.test(webhook.id);
  assert.equal(sent.event_type, 'webhook.test');
  assert.equal(sent.webhook_id, webhook.id);

  const deliveries = (id: string) => all(client.webhooks.listDeliveries(id, { limit: 1 }));
  const [done] = await until(
    () => deliveries(webhook.id),
    (list) => list[0]?.status === 'succeeded',
  );
  assert.equal(done?.id, sent.id);
  assert.equal(done?.attempts[0]?.status_code, 200);

  const retried = await client.webhooks.retryDelivery(webhook.id, sent.id);
  assert.equal(retried.status, 'pending');
  await until(
    () => deliveries(webhook.id),
    (list) => list[0]?.attempts.length === 2,
  );
  await assert.rejects(client.webhooks.retryDelivery(webhook.id, 'dlv_nope'), {
    status: 404,
    code: 'delivery_not_found',
  });
});

test('listDeliveries pages newest first and filters by status', async () => {
  const client = await newClient();
  const webhook = await client.webhooks.create({
    url: `${receiver.url}/pages`,
    events: ['customer.created'],
  });
  for (const id of ['a', 'b', 'c']) await client.customers.create(customerBody(id));
  const list = await until(
    () => all(client.webhooks.listDeliveries(webhook.id, { limit: 2 })),
    (l) => l.length === 3 && l.every((d) => d.status === 'succeeded'),
  );
  const ids = list.map((d) => d.id);
  assert.deepEqual(ids, [...ids].sort().reverse());
  assert.deepEqual(await all(client.webhooks.listDeliveries(webhook.id, { status: 'failed' })), []);
});

async function eventsOf(client: VitalsClient) {
  for (const id of ['a', 'b', 'c']) await client.customers.create(customerBody(id));
  await client.customers.update('b', { name: 'B' });
  await client.customers.delete('c');
}

test('events.list yields every event newest first across pages, of one type when asked', async () => {
  const client = await newClient();
  await eventsOf(client);
  const events = await all(client.events.list({ limit: 2 }));
  assert.deepEqual(
    events.map((e) => e.type),
    ['customer.deleted', 'customer.updated', 'customer.created', 'customer.created', 'customer.created'],
  );
  const created = await all(client.events.list({ type: 'customer.created', limit: 1 }));
  assert.deepEqual(
    created.map((e) => e.data.id),
    ['c', 'b', 'a'],
  );
  assert.deepEqual(await client.events.retrieve(events[0]?.id ?? ''), events[0]);
});

test('events.listPage follows the feed forward with ending_before', async () => {
  const client = await newClient();
  await client.customers.create(customerBody('first'));
  const [newest] = (await client.events.listPage({ limit: 1 })).data;
  await eventsOf(client);
  const page = await client.events.listPage({ ending_before: newest?.id, limit: 100 });
  assert.equal(page.data.length, 5);
  assert.equal(page.has_more, false);
  await assert.rejects(client.events.retrieve('evt_nope'), { status: 404, code: 'event_not_found' });
});
