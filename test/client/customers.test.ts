// client.customers against the real app over HTTP (docs/client.md): each method, the list
// iterator across pages, and VitalsError as the API's error answers make it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { VitalsClient, VitalsError } from '../../src/client/index.ts';
import { customerBody } from '../helpers/app.ts';
import { all, type ClientApp, clientApp } from './harness.ts';

let app: ClientApp;
before(async () => {
  app = await clientApp();
});
after(() => app.close());

let accounts = 0;
const newClient = (opts = {}) => app.newClient(`customers ${++accounts}`, opts);

test('create, retrieve, update and delete a customer', async () => {
  const client = await newClient();
  const created = await client.customers.create(customerBody('acme', { metadata: { plan: 'pro' } }));
  assert.equal(created.id, 'acme');
  assert.deepEqual(created.metadata, { plan: 'pro' });
  assert.deepEqual(await client.customers.retrieve('acme'), created);

  const updated = await client.customers.update('acme', { name: 'Acme Corp', metadata: { plan: null } });
  assert.equal(updated.name, 'Acme Corp');
  assert.deepEqual(updated.metadata, {});
  assert.ok(updated.updated_at > created.updated_at);

  assert.deepEqual(await client.customers.delete('acme'), { id: 'acme', deleted: true });
  await assert.rejects(client.customers.retrieve('acme'), { status: 404, code: 'customer_not_found' });
});

test('an id with characters that mean something in a URL is sent as one path segment', async () => {
  const client = await newClient();
  const id = 'a%2Fb:c&d=e+f';
  await client.customers.create(customerBody(id));
  assert.equal((await client.customers.retrieve(id)).id, id);
});

test('list follows starting_after across pages until has_more is false', async () => {
  const urls: string[] = [];
  const client = await newClient({
    fetch: (url: string | URL | Request, init?: RequestInit) => {
      urls.push(String(url));
      return fetch(url, init);
    },
  });
  const ids = ['c1', 'c2', 'c3', 'c4', 'c5'];
  for (const id of ids) await client.customers.create(customerBody(id));
  urls.length = 0;

  const listed = await all(client.customers.list({ limit: 2 }));
  assert.deepEqual(
    listed.map((c) => c.id),
    ids,
  );
  assert.deepEqual(
    urls.map((u) => new URL(u).search),
    ['?limit=2', '?limit=2&starting_after=c2', '?limit=2&starting_after=c4'],
  );
});

test('list passes search on every page, and listPage answers one raw page', async () => {
  const client = await newClient();
  for (const id of ['north-1', 'south-1', 'north-2', 'north-3'])
    await client.customers.create(customerBody(id));
  const found = await all(client.customers.list({ search: 'NORTH', limit: 1 }));
  assert.deepEqual(
    found.map((c) => c.id),
    ['north-1', 'north-2', 'north-3'],
  );
  const page = await client.customers.listPage({ limit: 2, starting_after: 'north-1' });
  assert.deepEqual(
    page.customers.map((c) => c.id),
    ['north-2', 'north-3'],
  );
  assert.equal(page.has_more, true);
});

test('stopping the iterator early loads no further page', async () => {
  let requests = 0;
  const client = await newClient({
    fetch: (url: string | URL | Request, init?: RequestInit) => {
      requests++;
      return fetch(url, init);
    },
  });
  for (const id of ['a', 'b', 'c', 'd']) await client.customers.create(customerBody(id));
  requests = 0;
  for await (const c of client.customers.list({ limit: 2 })) {
    if (c.id === 'a') break;
  }
  assert.equal(requests, 1);
});

test('a 400 is a VitalsError with status, type, code, param, request id and the whole envelope', async () => {
  const client = await newClient();
  const err = await client.customers.create({ customer_id: 'x', name: 'X', email: 'not-an-email' }).then(
    () => assert.fail('created'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof VitalsError);
  assert.ok(err instanceof Error);
  assert.equal(err.name, 'VitalsError');
  assert.equal(err.status, 400);
  assert.equal(err.type, 'invalid_request_error');
  assert.equal(err.code, 'parameter_invalid');
  assert.equal(err.param, 'email');
  assert.match(err.requestId ?? '', /^req_/);
  assert.equal(err.message, err.envelope.error.message);
  assert.deepEqual(Object.keys(err.envelope.error).sort(), ['code', 'message', 'param', 'type']);
});

test('a 404 is a VitalsError without param', async () => {
  const client = await newClient();
  const err = await client.customers.update('ghost', { name: 'G' }).catch((e: unknown) => e);
  assert.ok(err instanceof VitalsError);
  assert.equal(err.status, 404);
  assert.equal(err.code, 'customer_not_found');
  assert.equal(err.param, undefined);
  assert.match(err.requestId ?? '', /^req_/);
});

test('a bad API key is a 401 VitalsError', async () => {
  const client = new VitalsClient({ url: app.url, key: 'vk_wrong' });
  await assert.rejects(client.customers.listPage(), {
    name: 'VitalsError',
    status: 401,
    type: 'authentication_error',
    code: 'api_key_invalid',
  });
});

test('the same idempotencyKey replays the first answer instead of creating again', async () => {
  const client = await newClient();
  const first = await client.customers.create(customerBody('once'), { idempotencyKey: 'create-once' });
  const again = await client.customers.create(customerBody('once'), { idempotencyKey: 'create-once' });
  assert.deepEqual(again, first);
  // Without a key of the caller's, each call gets a fresh one: the second create is refused.
  await assert.rejects(client.customers.create(customerBody('once')), {
    status: 409,
    code: 'customer_exists',
  });
});

test('rollup reads a customer with its descendants; an unknown id is a VitalsError', async () => {
  const client = await newClient();
  await client.customers.create(customerBody('parent', { arr: 300 }));
  await client.customers.create(customerBody('child', { arr: 100, parent_id: 'parent' }));
  await client.healthScores.set('parent', { usage: 0.9 });
  await client.healthScores.set('child', { usage: 0.1 });
  // (30000 × 0.9 + 10000 × 0.1) / 40000, weighted by ARR.
  assert.deepEqual(await client.customers.rollup('parent'), {
    customer_id: 'parent',
    descendants: 1,
    arr: 400,
    health_score: 0.7,
    status: 'healthy',
    counts: { healthy: 1, at_risk: 0, critical: 1 },
  });
  await assert.rejects(client.customers.rollup('nobody'), { status: 404, code: 'customer_not_found' });
});

test('timeline follows starting_after across pages, sends types as one list, and is typed by type', async () => {
  const urls: string[] = [];
  const client = await newClient({
    fetch: (url: string | URL | Request, init?: RequestInit) => {
      urls.push(String(url));
      return fetch(url, init);
    },
  });
  await client.customers.create(customerBody('told'));
  await client.healthScores.set('told', { usage: 0.9 });
  await client.healthScores.set('told', { usage: 0.2 });
  await client.notes.create('told', 'They asked for SSO.');
  urls.length = 0;
  const entries = await all(client.customers.timeline('told', { limit: 2 }));
  assert.deepEqual(
    entries.map((e) => e.type),
    ['note', 'status_changed', 'score_changed', 'status_changed', 'score_changed'],
  );
  assert.equal(urls.length, 3);
  assert.equal(new URL(urls[1] as string).searchParams.get('starting_after'), entries[1]?.id);
  const notes = await all(client.customers.timeline('told', { types: ['note', 'task_done'] }));
  assert.equal(new URL(urls.at(-1) as string).searchParams.get('types'), 'note,task_done');
  const note = notes[0];
  assert.ok(note?.type === 'note');
  // Narrowed by its type: the note's data has its body.
  assert.equal(note.data.body, 'They asked for SSO.');
  const page = await client.customers.timelinePage('told', { limit: 1, starting_after: entries[0]?.id });
  assert.deepEqual(page.data, [entries[1]]);
  assert.equal(page.has_more, true);
  await assert.rejects(client.customers.timelinePage('told', { starting_after: 'nope' }), {
    status: 400,
    code: 'parameter_invalid',
    param: 'starting_after',
  });
});
