// Secrets stay put (DESIGN §3, §4, §7): neither the logs nor any error answer ever carries an API
// key, a webhook secret or SQL text. Many failing requests are driven (bad and revoked keys, keys
// in query strings and bodies, refused webhook URLs with secrets in them, other accounts' ids,
// failing deliveries), then the store is broken under the running app (a failing trigger, a
// dropped table, a closed database) and every endpoint is hit again.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/keys.ts';
import { ROUTES } from '../fuzz/harness.ts';
import { buildTestApp, type Client, customerBody, type Response, type TestApp } from '../helpers/app.ts';
import { waitForDelivery } from '../helpers/deliveries.ts';
import { appBackend } from '../helpers/stores.ts';

const SQL = [
  /\bSELECT\b[\s\S]{0,300}?\bFROM\b/i,
  /\bINSERT\s+(OR\s+\w+\s+)?INTO\b/i,
  /\bUPDATE\s+"?\w+"?\s+SET\b/i,
  /\bDELETE\s+FROM\b/i,
  /\b(CREATE|DROP|ALTER)\s+(TABLE|INDEX|TRIGGER)\b/i,
  /\bWHERE\s+"?\w+"?\s*(=|IN\b|<|>)/i,
  /\bRETURNING\b/i,
];
const STACK_FRAME = /\n\s+at |\.ts:\d+:\d+/;

let t: TestApp;
let a: Client;
let b: Client;
/** Every API key and webhook secret this file ever saw. */
const secrets: string[] = [];
const errors: { what: string; res: Response }[] = [];
let aWebhook = '';

async function send(what: string, res: Promise<Response>): Promise<Response> {
  const r = await res;
  if (r.status >= 400) errors.push({ what, res: r });
  return r;
}

function assertClean(text: string, where: string): void {
  for (const secret of secrets) {
    assert.ok(!text.includes(secret), `${where} carries a secret (${secret.slice(0, 9)}…)`);
  }
  assert.doesNotMatch(text, /whsec_/, `${where} carries a webhook secret`);
  assert.doesNotMatch(text, /\bvk_[0-9A-Za-z]{32}\b/, `${where} carries an API key`);
  for (const sql of SQL) assert.doesNotMatch(text, sql, `${where} carries SQL text`);
}

before(async () => {
  // Deliveries to a port nobody listens on fail, and the dispatcher logs each failure.
  t = await buildTestApp({ dispatcher: { backoffMs: [5], maxRetries: 1, pollMs: 3_600_000 } });
  a = t.api;
  b = await t.newAccount('other');
  const revoked = await createApiKey(t.store, 'default');
  assert.equal(await t.store.revokeApiKey(revoked.id, Date.now()), true);
  secrets.push(a.key, b.key, revoked.key);

  const webhook = await a.post('/api/webhooks', {
    url: 'http://127.0.0.1:9/unreachable',
    events: ['customer.created', 'customer.updated'],
  });
  assert.equal(webhook.status, 201, webhook.raw);
  aWebhook = webhook.body.id;
  secrets.push(webhook.body.secret);
  const rotated = await a.post(`/api/webhooks/${aWebhook}/rotate-secret`);
  secrets.push(rotated.body.secret);
  const bWebhook = await b.post('/api/webhooks', {
    url: 'http://127.0.0.1:9/b',
    events: ['customer.created'],
  });
  secrets.push(bWebhook.body.secret);
  assert.equal((await a.post('/api/customers', customerBody('cus_a'))).status, 201);
  await waitForDelivery(a, aWebhook, (d) => d.status === 'failed');
});
after(() => t.close());

describe('failing requests', () => {
  test('broken, foreign and revoked credentials', async () => {
    for (const key of secrets.slice(0, 3)) {
      for (const header of [
        `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
        `Basic ${key}`,
        `Token ${key}`,
        `Bearer ${key} ${key}`,
        `Bearer ${key},`,
        `Bearer ${key}\u00e9`,
        key,
        `Bearer ${key.slice(0, -1)}`,
      ]) {
        await send(`auth ${header.slice(0, 12)}`, t.as(header).get('/api/customers'));
        await send(`auth ${header.slice(0, 12)}`, t.as(header).post('/api/customers', customerBody('cus_x')));
      }
    }
    await send('revoked', t.as(`Bearer ${secrets[2]}`).get('/api/webhooks'));
    assert.ok(errors.every((e) => e.res.status === 401));
  });

  test('keys and secrets in query strings, bodies and refused webhook URLs', async () => {
    const [key, , , secret] = secrets as [string, string, string, string];
    await send('key in the query', t.as(undefined).get(`/api/customers?api_key=${key}`));
    await send('key in the query of an unknown path', a.get(`/api/nothing?token=${key}`));
    await send('key as a query value', a.get(`/api/customers?limit=${key}`));
    await send('secret as a cursor', a.get(`/api/health-scores?cursor=${secret}`));
    await send(
      'key in an invalid body',
      a.post('/api/customers', { customer_id: 'cus_k', name: key, email: 'nope' }),
    );
    await send('secret in broken JSON', a.request('POST', '/api/customers', `{"name":"${secret}"`));
    await send(
      'key in an unknown field',
      a.post('/api/customers', { ...customerBody('cus_k'), api_key: key }),
    );
    await send(
      'secret in a huge body',
      a.post('/api/customers', { name: secret, pad: 'x'.repeat(1024 * 1024) }),
    );
    await send(
      'secret as text/plain',
      a.request('POST', '/api/webhooks', secret, { 'content-type': 'text/plain' }),
    );
    for (const url of [
      `http://user:${secret}@example.com/hook`,
      `http://${key}:x@example.com/hook`,
      `http://169.254.169.254/latest?key=${key}`,
      `ftp://example.com/${secret}`,
      `not a url ${secret}`,
    ]) {
      await send(
        `webhook url ${url.slice(0, 20)}`,
        a.post('/api/webhooks', { url, events: ['customer.created'] }),
      );
      await send(`webhook patch ${url.slice(0, 20)}`, a.patch(`/api/webhooks/${aWebhook}`, { url }));
    }
    await send(
      'secret as an event type',
      a.post('/api/webhooks', { url: 'http://example.com/', events: [secret] }),
    );
    await send('weights sum', a.patch('/api/settings/health-score/weights', { weights: { usage: 0.5 } }));
    await send(
      'idempotency key reuse',
      a.request('POST', '/api/customers', customerBody('cus_i1'), { 'idempotency-key': 'leak-1' }),
    );
    await send(
      'idempotency key reuse',
      a.request('POST', '/api/customers', customerBody('cus_i2'), { 'idempotency-key': 'leak-1' }),
    );
    assert.ok(errors.length > 20);
  });

  test('another account’s resources', async () => {
    for (const path of [
      `/api/webhooks/${aWebhook}`,
      `/api/webhooks/${aWebhook}/deliveries`,
      '/api/customers/cus_a',
      '/api/customers/cus_a/health-score',
    ]) {
      const res = await send(`other account ${path}`, b.get(path));
      assert.equal(res.status, 404);
    }
    await send('other account rotate', b.post(`/api/webhooks/${aWebhook}/rotate-secret`));
    await send('other account patch', b.patch(`/api/webhooks/${aWebhook}`, { enabled: false }));
  });

  test('no error answer carries a key, a secret, SQL text or a stack trace', () => {
    for (const { what, res } of errors) {
      assertClean(res.raw, `the answer to ${what}`);
      assert.doesNotMatch(res.raw, STACK_FRAME, `the answer to ${what}`);
      assert.ok(res.headers['x-request-id'], `${what}: X-Request-Id`);
    }
  });

  test('the logs carry no key, secret or SQL text, though they record every request and failed delivery', () => {
    const logs = t.logs();
    assert.match(logs, /webhook delivery attempt failed/);
    assert.match(logs, /\[redacted\]/, 'the key in a query string was replaced');
    assertClean(logs, 'the logs');
  });
});

describe('when the store fails under the running app', () => {
  const sqlite = appBackend() === 'sqlite';

  /** Every route once, with a valid-looking request; collects the answers. */
  async function hitEverything(label: string): Promise<Response[]> {
    const ids: Record<string, string> = {
      customer_id: 'cus_a',
      webhook_id: aWebhook,
      delivery_id: 'dlv_x',
      event_id: 'evt_x',
    };
    const out: Response[] = [];
    for (const route of Object.values(ROUTES).flat()) {
      const url = route.path.replace(/:(\w+)/g, (_, k: string) => ids[k] as string);
      const body = route.body ? `{${route.body.map(([k, v]) => `"${k}":${v}`).join(',')}}` : undefined;
      out.push(await send(`${label}: ${route.method} ${route.path}`, a.request(route.method, url, body)));
    }
    return out;
  }

  test('a failing trigger and a dropped table: opaque 500s, the cause logged without SQL', {
    skip: !sqlite,
  }, async () => {
    const db = new DatabaseSync(join(t.dir, 'vitals.db'));
    try {
      db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON customers BEGIN SELECT RAISE(ABORT, 'refused'); END`);
      db.exec('DROP TABLE webhook_subscriptions');
    } finally {
      db.close();
    }
    const answers = await hitEverything('broken schema');
    const failed = answers.filter((r) => r.status >= 500);
    assert.ok(failed.length >= 2, 'some routes failed');
    for (const r of failed) {
      assert.equal(r.status, 500, r.raw);
      assert.equal(r.body.error.code, 'internal_error');
    }
    assert.match(t.logs(), /unhandled error/);
  });

  test('a closed store: 500 internal_error on the API, 503 on /readyz, /healthz alive', async () => {
    await t.store.close();
    const answers = await hitEverything('closed store');
    for (const r of answers.filter((x) => x.status >= 500)) {
      assert.ok([500, 503].includes(r.status), r.raw);
      assert.ok(['internal_error', 'service_unavailable'].includes(r.body.error.code), r.raw);
    }
    assert.ok(answers.some((r) => r.status === 500));
    assert.equal((await t.inject({ method: 'GET', url: '/readyz' })).status, 503);
    assert.equal((await t.inject({ method: 'GET', url: '/healthz' })).status, 200);
  });

  test('still no key, secret, SQL text or stack trace in any answer or in the logs', () => {
    for (const { what, res } of errors) {
      assertClean(res.raw, `the answer to ${what}`);
      assert.doesNotMatch(res.raw, STACK_FRAME, `the answer to ${what}`);
    }
    assertClean(t.logs(), 'the logs');
  });
});
