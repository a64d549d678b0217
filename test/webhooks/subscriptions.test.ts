// Webhook subscriptions through HTTP (docs/api.md, "Webhooks"): create, read, change, delete, rotate the
// secret; what the API refuses and that a refusal stores nothing; one account never sees
// another's webhooks or deliveries.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { verifyVitalsSignature } from '../../src/domain/signing.ts';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';
import { waitForDelivery } from '../helpers/deliveries.ts';
import { TestReceiver } from '../helpers/receiver.ts';

/** What GET /api/webhooks/{id} adds for a webhook with nothing pending. */
const NO_BACKLOG = { pending: 0, pending_truncated: false, oldest_pending_at: null };

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const WEBHOOK_KEYS = [
  'created_at',
  'description',
  'disabled_reason',
  'enabled',
  'events',
  'format',
  'id',
  'previous_secret_expires_at',
  'updated_at',
  'url',
];

async function subscribe(api: Client, body: Record<string, unknown>) {
  const res = await api.post('/api/webhooks', body);
  assert.equal(res.status, 201, res.raw);
  return res.body;
}

async function listIds(api: Client): Promise<string[]> {
  const res = await api.get('/api/webhooks');
  assert.equal(res.status, 200, res.raw);
  return res.body.webhooks.map((w: { id: string }) => w.id);
}

function assertError(
  res: { status: number; body: any; raw: string },
  status: number,
  code: string,
  param?: string,
): void {
  assert.equal(res.status, status, res.raw);
  assert.equal(res.body.error.code, code, res.raw);
  assert.equal(res.body.error.type, 'invalid_request_error');
  assert.equal(typeof res.body.error.message, 'string');
  assert.ok(res.body.error.message.length > 0);
  if (param === undefined) assert.equal('param' in res.body.error, false, res.raw);
  else assert.equal(res.body.error.param, param, res.raw);
}

describe('webhooks: create, read, change, delete', () => {
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

  test('POST answers 201 with the webhook and its secret (whsec_ + base64 of 32 bytes)', async () => {
    const res = await t.api.post('/api/webhooks', {
      url: 'https://example.com/hooks/vitals',
      events: ['customer.health_score.updated', 'customer.status.changed'],
      description: 'CRM sync',
    });
    assert.equal(res.status, 201, res.raw);
    assert.deepEqual(Object.keys(res.body).sort(), [...WEBHOOK_KEYS, 'secret'].sort());
    assert.match(res.body.id, /^whk_[0-9A-Za-z]+$/);
    assert.equal(res.body.url, 'https://example.com/hooks/vitals');
    assert.deepEqual(res.body.events, ['customer.health_score.updated', 'customer.status.changed']);
    assert.equal(res.body.description, 'CRM sync');
    assert.equal(res.body.enabled, true);
    assert.equal(res.body.disabled_reason, null);
    assert.match(res.body.created_at, ISO_MS);
    assert.equal(res.body.updated_at, res.body.created_at);
    assert.match(res.body.secret, SECRET);
    assert.equal(Buffer.from(res.body.secret.slice(6), 'base64').length, 32);
  });

  test('description is optional (null), and every subscription gets its own id and secret', async () => {
    const a = await subscribe(t.api, { url: 'https://example.com/a', events: ['customer.created'] });
    const b = await subscribe(t.api, { url: 'https://example.com/a', events: ['customer.created'] });
    assert.equal(a.description, null);
    assert.notEqual(a.id, b.id);
    assert.notEqual(a.secret, b.secret);
  });

  test('every event type can be subscribed to', async () => {
    const events = [
      'customer.created',
      'customer.updated',
      'customer.deleted',
      'customer.health_score.updated',
      'customer.status.changed',
    ];
    const created = await subscribe(t.api, { url: 'https://example.com/all', events });
    assert.deepEqual(created.events, events);
  });

  test('GET /api/webhooks lists them oldest first and never carries a secret', async () => {
    const created = await subscribe(t.api, {
      url: 'https://example.com/listed',
      events: ['customer.created'],
    });
    const res = await t.api.get('/api/webhooks');
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body), ['webhooks']);
    const listed = res.body.webhooks.find((w: { id: string }) => w.id === created.id);
    const { secret, ...rest } = created;
    assert.deepEqual(listed, rest);
    for (const w of res.body.webhooks) assert.deepEqual(Object.keys(w).sort(), WEBHOOK_KEYS);
    assert.equal(res.raw.includes('"secret"'), false);
    assert.equal(res.raw.includes('whsec_'), false);
    assert.equal(res.raw.includes(secret.slice(6)), false);
    const times = res.body.webhooks.map((w: { created_at: string }) => w.created_at);
    assert.deepEqual(times, [...times].sort());
  });

  test('GET /api/webhooks/{id} returns the webhook without its secret', async () => {
    const created = await subscribe(t.api, { url: 'https://example.com/one', events: ['customer.updated'] });
    const res = await t.api.get(`/api/webhooks/${created.id}`);
    assert.equal(res.status, 200);
    const { secret, ...rest } = created;
    assert.deepEqual(res.body, { ...rest, ...NO_BACKLOG });
    assert.equal(res.raw.includes('whsec_'), false);
  });

  test('PATCH changes url, events and description, keeps the rest, and moves updated_at forward', async () => {
    const created = await subscribe(t.api, {
      url: 'https://example.com/before',
      events: ['customer.created'],
      description: 'before',
    });
    const res = await t.api.patch(`/api/webhooks/${created.id}`, {
      url: 'https://example.com/after',
      events: ['customer.deleted', 'customer.updated'],
      description: 'after',
    });
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.url, 'https://example.com/after');
    assert.deepEqual(res.body.events, ['customer.deleted', 'customer.updated']);
    assert.equal(res.body.description, 'after');
    assert.equal(res.body.enabled, true);
    assert.equal(res.body.created_at, created.created_at);
    assert.ok(res.body.updated_at > created.updated_at, 'updated_at is strictly later');
    assert.equal('secret' in res.body, false);
    assert.deepEqual((await t.api.get(`/api/webhooks/${created.id}`)).body, { ...res.body, ...NO_BACKLOG });

    const cleared = await t.api.patch(`/api/webhooks/${created.id}`, { description: null });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.description, null);
    assert.equal(cleared.body.url, 'https://example.com/after', 'fields not given stay');
  });

  test('PATCH enabled: false switches it off, true back on; disabled_reason stays null for a person', async () => {
    const created = await subscribe(t.api, {
      url: 'https://example.com/toggle',
      events: ['customer.created'],
    });
    const off = await t.api.patch(`/api/webhooks/${created.id}`, { enabled: false });
    assert.equal(off.status, 200);
    assert.equal(off.body.enabled, false);
    assert.equal(off.body.disabled_reason, null);
    const on = await t.api.patch(`/api/webhooks/${created.id}`, { enabled: true });
    assert.equal(on.body.enabled, true);
    assert.equal(on.body.disabled_reason, null);
  });

  test('PATCH with an empty body is refused', async () => {
    const created = await subscribe(t.api, {
      url: 'https://example.com/empty',
      events: ['customer.created'],
    });
    assertError(await t.api.patch(`/api/webhooks/${created.id}`, {}), 400, 'parameter_missing');
  });

  test('PATCH is validated like POST, and a refused PATCH changes nothing', async () => {
    const created = await subscribe(t.api, { url: 'https://example.com/keep', events: ['customer.created'] });
    const { secret, ...before } = created;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ url: 'ftp://example.com/' }, 'parameter_invalid', 'url'],
      [{ url: 'http://169.254.169.254/' }, 'parameter_invalid', 'url'],
      [{ url: 'https://u:p@example.com/' }, 'parameter_invalid', 'url'],
      [{ events: [] }, 'parameter_invalid', 'events'],
      [{ events: ['customer.exploded'] }, 'parameter_invalid', 'events.0'],
      [{ enabled: 'false' }, 'parameter_invalid', 'enabled'],
      [{ description: 'x'.repeat(1025) }, 'parameter_invalid', 'description'],
      [{ secret: 'whsec_mine' }, 'parameter_unknown', 'secret'],
      [{ url: 'https://example.com/ok', id: 'whk_other' }, 'parameter_unknown', 'id'],
    ];
    for (const [body, code, param] of cases) {
      assertError(await t.api.patch(`/api/webhooks/${created.id}`, body), 400, code, param);
    }
    assert.deepEqual((await t.api.get(`/api/webhooks/${created.id}`)).body, { ...before, ...NO_BACKLOG });
  });

  test('DELETE answers {id, deleted: true}; later reads, changes and deletes are 404', async () => {
    const created = await subscribe(t.api, { url: 'https://example.com/gone', events: ['customer.created'] });
    const res = await t.api.delete(`/api/webhooks/${created.id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { id: created.id, deleted: true });
    assert.equal((await listIds(t.api)).includes(created.id), false);
    assertError(await t.api.get(`/api/webhooks/${created.id}`), 404, 'webhook_not_found');
    assertError(
      await t.api.patch(`/api/webhooks/${created.id}`, { enabled: false }),
      404,
      'webhook_not_found',
    );
    assertError(await t.api.delete(`/api/webhooks/${created.id}`), 404, 'webhook_not_found');
    assertError(await t.api.get(`/api/webhooks/${created.id}/deliveries`), 404, 'webhook_not_found');
  });

  test('unknown webhook ids are 404 webhook_not_found on every route', async () => {
    const id = 'whk_doesnotexist';
    assertError(await t.api.get(`/api/webhooks/${id}`), 404, 'webhook_not_found');
    assertError(await t.api.patch(`/api/webhooks/${id}`, { enabled: false }), 404, 'webhook_not_found');
    assertError(await t.api.delete(`/api/webhooks/${id}`), 404, 'webhook_not_found');
    assertError(await t.api.post(`/api/webhooks/${id}/rotate-secret`), 404, 'webhook_not_found');
    assertError(await t.api.get(`/api/webhooks/${id}/deliveries`), 404, 'webhook_not_found');
    assertError(await t.api.post(`/api/webhooks/${id}/deliveries/dlv_x/retry`), 404, 'webhook_not_found');
  });

  test('retrying an unknown delivery, or one of another webhook, is 404 delivery_not_found', async () => {
    const a = await subscribe(t.api, { url: receiver.url, events: ['customer.created'] });
    const b = await subscribe(t.api, { url: 'https://example.com/b', events: ['customer.updated'] });
    const seen = receiver.requests.length;
    assert.equal((await t.api.post('/api/customers', customerBody('cus_dlv'))).status, 201);
    await receiver.waitFor(seen + 1);
    const deliveries = await t.api.get(`/api/webhooks/${a.id}/deliveries`);
    const delivery = deliveries.body.data[0];
    assert.match(delivery.id, /^dlv_/);

    assertError(
      await t.api.post(`/api/webhooks/${a.id}/deliveries/dlv_doesnotexist/retry`),
      404,
      'delivery_not_found',
    );
    assertError(
      await t.api.post(`/api/webhooks/${b.id}/deliveries/${delivery.id}/retry`),
      404,
      'delivery_not_found',
    );
  });

  test('rotate-secret answers a new secret; later deliveries are signed with it, not the old one', async () => {
    const own = await TestReceiver.start();
    try {
      const created = await subscribe(t.api, { url: own.url, events: ['customer.updated'] });
      const res = await t.api.post(`/api/webhooks/${created.id}/rotate-secret`);
      assert.equal(res.status, 200, res.raw);
      assert.match(res.body.secret, SECRET);
      assert.notEqual(res.body.secret, created.secret);
      assert.equal(res.body.id, created.id);
      assert.ok(res.body.updated_at > created.updated_at);
      assert.equal((await t.api.get(`/api/webhooks/${created.id}`)).raw.includes('whsec_'), false);

      assert.equal((await t.api.post('/api/customers', customerBody('cus_rotated'))).status, 201);
      assert.equal((await t.api.patch('/api/customers/cus_rotated', { name: 'Renamed' })).status, 200);
      const [delivery] = await own.waitFor(1);
      assert.ok(delivery);
      assert.equal(delivery.headers['x-vitals-event'], 'customer.updated');
      const signature = delivery.headers['x-vitals-signature'] as string;
      assert.equal(verifyVitalsSignature(res.body.secret, delivery.body, signature), true);
      assert.equal(verifyVitalsSignature(created.secret, delivery.body, signature), false);
      const headers = delivery.headers as Record<string, string>;
      assert.doesNotThrow(() => new Webhook(res.body.secret).verify(delivery.body, headers));
      assert.throws(() => new Webhook(created.secret).verify(delivery.body, headers));
    } finally {
      await own.close();
    }
  });
});

describe('webhooks: what POST refuses (and stores nothing)', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const events = ['customer.created'];
  const cases: [string, unknown, string, string | undefined][] = [
    ['url missing', { events }, 'parameter_missing', 'url'],
    ['url not a string', { url: 42, events }, 'parameter_invalid', 'url'],
    ['url empty', { url: '', events }, 'parameter_invalid', 'url'],
    ['url not absolute', { url: 'example.com/hook', events }, 'parameter_invalid', 'url'],
    ['url relative', { url: '/hooks/vitals', events }, 'parameter_invalid', 'url'],
    ['url ftp:', { url: 'ftp://example.com/hook', events }, 'parameter_invalid', 'url'],
    [
      'url over 2048 characters',
      { url: `https://example.com/${'a'.repeat(2029)}`, events },
      'parameter_invalid',
      'url',
    ],
    ['url with credentials', { url: 'https://user:pass@example.com/', events }, 'parameter_invalid', 'url'],
    ['url with a user name', { url: 'https://user@example.com/', events }, 'parameter_invalid', 'url'],
    [
      'url at the metadata address',
      { url: 'http://169.254.169.254/latest', events },
      'parameter_invalid',
      'url',
    ],
    ['url link-local IPv6', { url: 'http://[fe80::1]:8080/', events }, 'parameter_invalid', 'url'],
    [
      'url link-local, IPv4-mapped',
      { url: 'http://[::ffff:169.254.1.1]/', events },
      'parameter_invalid',
      'url',
    ],
    ['url link-local, decimal', { url: 'http://2852039166/', events }, 'parameter_invalid', 'url'],
    ['url 0.0.0.0', { url: 'http://0.0.0.0:3000/', events }, 'parameter_invalid', 'url'],
    ['url [::]', { url: 'http://[::]/', events }, 'parameter_invalid', 'url'],
    ['events missing', { url: 'https://example.com/' }, 'parameter_missing', 'events'],
    ['events empty', { url: 'https://example.com/', events: [] }, 'parameter_invalid', 'events'],
    [
      'events unknown type',
      { url: 'https://example.com/', events: ['customer.exploded'] },
      'parameter_invalid',
      'events.0',
    ],
    [
      'events unknown type after a good one',
      { url: 'https://example.com/', events: ['customer.created', 'customer.*'] },
      'parameter_invalid',
      'events.1',
    ],
    [
      'events duplicated',
      { url: 'https://example.com/', events: ['customer.created', 'customer.created'] },
      'parameter_invalid',
      'events',
    ],
    [
      'events not an array',
      { url: 'https://example.com/', events: 'customer.created' },
      'parameter_invalid',
      'events',
    ],
    ['events of non-strings', { url: 'https://example.com/', events: [1] }, 'parameter_invalid', 'events.0'],
    [
      'unknown field',
      { url: 'https://example.com/', events, secret: 'whsec_mine' },
      'parameter_unknown',
      'secret',
    ],
    [
      'enabled on create',
      { url: 'https://example.com/', events, enabled: false },
      'parameter_unknown',
      'enabled',
    ],
    [
      'description too long',
      { url: 'https://example.com/', events, description: 'd'.repeat(1025) },
      'parameter_invalid',
      'description',
    ],
    [
      'description not a string',
      { url: 'https://example.com/', events, description: 5 },
      'parameter_invalid',
      'description',
    ],
    ['body not an object', ['https://example.com/'], 'parameter_invalid', undefined],
  ];
  for (const [what, body, code, param] of cases) {
    test(`${what}: 400 ${code}${param ? ` (${param})` : ''}`, async () => {
      assertError(await t.api.post('/api/webhooks', body), 400, code, param);
      assert.deepEqual(await listIds(t.api), []);
    });
  }

  test('the message for an unknown event type lists the valid ones', async () => {
    const res = await t.api.post('/api/webhooks', {
      url: 'https://example.com/',
      events: ['customer.exploded'],
    });
    assert.match(res.body.error.message, /customer\.health_score\.updated/);
    assert.match(res.body.error.message, /customer\.status\.changed/);
  });

  test('the message for a refused address says why', async () => {
    const res = await t.api.post('/api/webhooks', { url: 'http://169.254.169.254/', events });
    assert.equal(
      res.body.error.message,
      "'url' must not point at a link-local, metadata or unspecified address (169.254.169.254).",
    );
  });

  test('a URL of exactly 2048 characters and a description of 1024 are accepted', async () => {
    const url = `https://example.com/${'a'.repeat(2028)}`;
    assert.equal(url.length, 2048);
    const created = await subscribe(t.api, { url, events, description: 'd'.repeat(1024) });
    assert.equal(created.url, url);
    await t.api.delete(`/api/webhooks/${created.id}`);
  });

  test('loopback and private URLs are allowed by default (self-hosted receivers)', async () => {
    for (const url of [
      'http://127.0.0.1:9000/',
      'http://localhost:9000/',
      'http://10.0.0.5/',
      'http://[::1]/',
    ]) {
      const created = await subscribe(t.api, { url, events });
      await t.api.delete(`/api/webhooks/${created.id}`);
    }
  });

  test('a body that is not JSON is 415', async () => {
    const res = await t.api.request('POST', '/api/webhooks', 'url=https://example.com', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    assertError(res, 415, 'unsupported_media_type');
    assert.deepEqual(await listIds(t.api), []);
  });
});

describe('webhooks with VITALS_WEBHOOK_BLOCK_PRIVATE=true', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ blockPrivate: true });
  });
  after(() => t.close());

  const events = ['customer.created'];

  test('loopback and private URLs, in any spelling, are refused', async () => {
    for (const url of [
      'http://127.0.0.1:9000/',
      'http://localhost:9000/',
      'http://localhost.:9000/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://10.1.2.3/',
      'http://172.16.5.4/',
      'http://192.168.0.10/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[fc00::1]/',
    ]) {
      const res = await t.api.post('/api/webhooks', { url, events });
      assertError(res, 400, 'parameter_invalid', 'url');
      assert.match(res.body.error.message, /loopback or private|localhost/, url);
    }
    assert.deepEqual(await listIds(t.api), []);
  });

  test('public URLs are still accepted; a PATCH to a private URL is refused', async () => {
    const created = await subscribe(t.api, { url: 'https://example.com/hook', events });
    assertError(
      await t.api.patch(`/api/webhooks/${created.id}`, { url: 'http://192.168.1.1/' }),
      400,
      'parameter_invalid',
      'url',
    );
    assert.equal((await t.api.get(`/api/webhooks/${created.id}`)).body.url, 'https://example.com/hook');
  });
});

describe('webhooks: one account never sees another’s', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  let other: Client;
  let webhook: { id: string; secret: string; [k: string]: unknown };
  let deliveryId: string;
  before(async () => {
    t = await buildTestApp({ dispatcher: true });
    receiver = await TestReceiver.start();
    other = await t.newAccount('other');
    webhook = await subscribe(t.api, { url: receiver.url, events: ['customer.created'] });
    assert.equal((await t.api.post('/api/customers', customerBody('cus_mine'))).status, 201);
    await receiver.waitFor(1);
    deliveryId = (await waitForDelivery(t.api, webhook.id, (d) => d.status === 'succeeded')).id;
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  test('the other account lists none', async () => {
    const res = await other.get('/api/webhooks');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { webhooks: [] });
  });

  test('every route answers 404 webhook_not_found to the other account', async () => {
    const id = webhook.id;
    assertError(await other.get(`/api/webhooks/${id}`), 404, 'webhook_not_found');
    assertError(
      await other.patch(`/api/webhooks/${id}`, { url: 'https://evil.example/' }),
      404,
      'webhook_not_found',
    );
    assertError(await other.delete(`/api/webhooks/${id}`), 404, 'webhook_not_found');
    assertError(await other.post(`/api/webhooks/${id}/rotate-secret`), 404, 'webhook_not_found');
    assertError(await other.get(`/api/webhooks/${id}/deliveries`), 404, 'webhook_not_found');
    assertError(
      await other.post(`/api/webhooks/${id}/deliveries/${deliveryId}/retry`),
      404,
      'webhook_not_found',
    );
  });

  test('nothing the other account tried changed the webhook, its secret or its deliveries', async () => {
    const { secret, ...rest } = webhook;
    const {
      pending: _p,
      pending_truncated: _t,
      oldest_pending_at: _o,
      ...now
    } = (await t.api.get(`/api/webhooks/${webhook.id}`)).body;
    assert.deepEqual(now, rest);
    const deliveries = await t.api.get(`/api/webhooks/${webhook.id}/deliveries`);
    assert.equal(deliveries.body.data.length, 1);
    assert.equal(deliveries.body.data[0].attempt_count, 1);
    assert.equal(receiver.requests.length, 1, 'the retry was not sent');
    assert.equal(
      verifyVitalsSignature(
        secret,
        receiver.requests[0]?.body ?? '',
        receiver.requests[0]?.headers['x-vitals-signature'] as string,
      ),
      true,
    );
  });

  test('the other account’s events do not reach this account’s webhook', async () => {
    const mine = await subscribe(other, { url: receiver.url, events: ['customer.created'] });
    assert.equal((await other.post('/api/customers', customerBody('cus_theirs'))).status, 201);
    const [, theirs] = await receiver.waitFor(2);
    assert.equal(JSON.parse(theirs?.body ?? '{}').data.id, 'cus_theirs');
    assert.equal(
      verifyVitalsSignature(mine.secret, theirs?.body ?? '', theirs?.headers['x-vitals-signature'] as string),
      true,
    );
    const deliveries = await t.api.get(`/api/webhooks/${webhook.id}/deliveries`);
    assert.equal(deliveries.body.data.length, 1, 'only its own event');
  });
});
