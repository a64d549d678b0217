// Secrets stay put: neither the logs nor any error answer ever carries an API key, a webhook
// secret, SQL text or a stack trace. Keys are stored only as hashes and another account's objects
// are 404s (docs/api.md, "General"); a 500 carries no internal details (docs/errors.md); the logs
// redact the Authorization header, secrets and keys pasted into URLs, and never hold the SQL that
// failed (docs/operations.md, "Logs and request ids"). Each test builds an app of its own, drives
// its own failing requests (bad and revoked keys, keys in query strings and bodies, refused
// webhook URLs with secrets in them, other accounts' ids, failing deliveries, a store broken under
// the running app) and checks its own answers and its own app's logs.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, type TestContext, test } from 'node:test';
import type { Config } from '../../src/config.ts';
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

/** An app of one test's own: two accounts, a revoked key, webhooks with (rotated) secrets. */
interface World {
  t: TestApp;
  a: Client;
  b: Client;
  /** a's key, b's key, and a revoked key of a's account. */
  keys: [string, string, string];
  /** Every API key and webhook secret of this world. */
  secrets: string[];
  /** a's webhook; its first secret was rotated. */
  aWebhook: string;
  aFirstSecret: string;
  /** Every answer `send` got, with what it was. */
  answers: { what: string; res: Response }[];
  /** Sends a request, asserts its status, and keeps the answer for assertAnswersClean. */
  send(what: string, res: Promise<Response>, status: number): Promise<Response>;
}

async function world(ctx: TestContext, dispatcher?: Partial<Config['webhook']>): Promise<World> {
  const t = await buildTestApp(dispatcher ? { dispatcher } : {});
  ctx.after(() => t.close());
  const a = t.api;
  const b = await t.newAccount('other');
  const revoked = await createApiKey(t.store, 'default');
  assert.equal(await t.store.revokeApiKey(revoked.id, Date.now()), true);
  const webhook = await a.post('/api/webhooks', {
    url: 'http://127.0.0.1:9/unreachable',
    events: ['customer.created', 'customer.updated'],
  });
  assert.equal(webhook.status, 201, webhook.raw);
  const rotated = await a.post(`/api/webhooks/${webhook.body.id}/rotate-secret`);
  assert.equal(rotated.status, 200, rotated.raw);
  const bWebhook = await b.post('/api/webhooks', {
    url: 'http://127.0.0.1:9/b',
    events: ['customer.created'],
  });
  assert.equal(bWebhook.status, 201, bWebhook.raw);
  assert.equal((await a.post('/api/customers', customerBody('cus_a'))).status, 201);
  const answers: World['answers'] = [];
  return {
    t,
    a,
    b,
    keys: [a.key, b.key, revoked.key],
    secrets: [a.key, b.key, revoked.key, webhook.body.secret, rotated.body.secret, bWebhook.body.secret],
    aWebhook: webhook.body.id,
    aFirstSecret: webhook.body.secret,
    answers,
    send: async (what, res, status) => {
      const r = await res;
      assert.equal(r.status, status, `${what}: ${r.raw}`);
      answers.push({ what, res: r });
      return r;
    },
  };
}

function assertClean(w: World, text: string, where: string): void {
  for (const secret of w.secrets) {
    assert.ok(!text.includes(secret), `${where} carries a secret (${secret.slice(0, 9)}…)`);
  }
  assert.doesNotMatch(text, /whsec_/, `${where} carries a webhook secret`);
  assert.doesNotMatch(text, /\bvk_[0-9A-Za-z]{32}\b/, `${where} carries an API key`);
  for (const sql of SQL) assert.doesNotMatch(text, sql, `${where} carries SQL text`);
}

/** No answer this test got carries a key, a secret, SQL text or a stack trace; each has an X-Request-Id. */
function assertAnswersClean(w: World, expected: number): void {
  assert.equal(w.answers.length, expected, 'answers checked');
  for (const { what, res } of w.answers) {
    assertClean(w, res.raw, `the answer to ${what}`);
    assert.doesNotMatch(res.raw, STACK_FRAME, `the answer to ${what}`);
    assert.match(String(res.headers['x-request-id']), /^req_/, `${what}: X-Request-Id`);
  }
}

describe('failing requests', () => {
  test('broken, foreign and revoked credentials: 401s carrying no key, and no key in the logs', async (ctx) => {
    const w = await world(ctx);
    for (const key of w.keys) {
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
        await w.send(`auth ${header.slice(0, 12)}`, w.t.as(header).get('/api/customers'), 401);
        await w.send(
          `auth ${header.slice(0, 12)}`,
          w.t.as(header).post('/api/customers', customerBody('cus_x')),
          401,
        );
      }
    }
    await w.send('revoked', w.t.as(`Bearer ${w.keys[2]}`).get('/api/webhooks'), 401);
    assertAnswersClean(w, 3 * 8 * 2 + 1);
    assertClean(w, w.t.logs(), 'the logs');
  });

  test('keys and secrets in query strings, bodies and refused webhook URLs: not echoed, and redacted in the logs', async (ctx) => {
    const w = await world(ctx);
    const { a, send, aWebhook } = w;
    const [key] = w.keys;
    const secret = w.aFirstSecret;
    await send('key in the query', w.t.as(undefined).get(`/api/customers?api_key=${key}`), 401);
    await send('key in the query of an unknown path', a.get(`/api/nothing?token=${key}`), 404);
    await send('key as a query value', a.get(`/api/customers?limit=${key}`), 400);
    await send('secret as a cursor', a.get(`/api/health-scores?cursor=${secret}`), 400);
    await send(
      'key in an invalid body',
      a.post('/api/customers', { customer_id: 'cus_k', name: key, email: 'nope' }),
      400,
    );
    await send('secret in broken JSON', a.request('POST', '/api/customers', `{"name":"${secret}"`), 400);
    await send(
      'key in an unknown field',
      a.post('/api/customers', { ...customerBody('cus_k'), api_key: key }),
      400,
    );
    await send(
      'secret in a huge body',
      a.post('/api/customers', { name: secret, pad: 'x'.repeat(1024 * 1024) }),
      413,
    );
    await send(
      'secret as text/plain',
      a.request('POST', '/api/webhooks', secret, { 'content-type': 'text/plain' }),
      415,
    );
    const urls = [
      `http://user:${secret}@example.com/hook`,
      `http://${key}:x@example.com/hook`,
      `http://169.254.169.254/latest?key=${key}`,
      `ftp://example.com/${secret}`,
      `not a url ${secret}`,
    ];
    for (const url of urls) {
      await send(
        `webhook url ${url.slice(0, 20)}`,
        a.post('/api/webhooks', { url, events: ['customer.created'] }),
        400,
      );
      await send(`webhook patch ${url.slice(0, 20)}`, a.patch(`/api/webhooks/${aWebhook}`, { url }), 400);
    }
    await send(
      'secret as an event type',
      a.post('/api/webhooks', { url: 'http://example.com/', events: [secret] }),
      400,
    );
    await send(
      'weights sum',
      a.patch('/api/settings/health-score/weights', { weights: { usage: 0.5 } }),
      400,
    );
    await send(
      'idempotency key, first use',
      a.request('POST', '/api/customers', customerBody('cus_i1'), { 'idempotency-key': 'leak-1' }),
      201,
    );
    await send(
      'idempotency key reused',
      a.request('POST', '/api/customers', customerBody('cus_i2'), { 'idempotency-key': 'leak-1' }),
      400,
    );
    assertAnswersClean(w, 9 + urls.length * 2 + 4);
    const logs = w.t.logs();
    assert.match(
      logs,
      /"url":"\/api\/customers\?api_key=\[redacted\]"/,
      'the key in a query string was replaced',
    );
    assertClean(w, logs, 'the logs');
  });

  test('another account’s resources: 404s that carry nothing of the owner’s', async (ctx) => {
    const w = await world(ctx);
    for (const path of [
      `/api/webhooks/${w.aWebhook}`,
      `/api/webhooks/${w.aWebhook}/deliveries`,
      '/api/customers/cus_a',
      '/api/customers/cus_a/health-score',
    ]) {
      await w.send(`other account ${path}`, w.b.get(path), 404);
    }
    await w.send('other account rotate', w.b.post(`/api/webhooks/${w.aWebhook}/rotate-secret`), 404);
    await w.send('other account patch', w.b.patch(`/api/webhooks/${w.aWebhook}`, { enabled: false }), 404);
    assertAnswersClean(w, 6);
    assertClean(w, w.t.logs(), 'the logs');
  });

  test('a failed delivery is logged without the webhook’s secret or the key', async (ctx) => {
    // Deliveries to a port nobody listens on fail, and the dispatcher logs each failed attempt.
    const w = await world(ctx, { backoffMs: [5], maxRetries: 1, pollMs: 3_600_000 });
    const failed = await waitForDelivery(w.a, w.aWebhook, (d) => d.status === 'failed');
    assert.equal(failed.attempt_count, 2, 'the first attempt and its one retry');
    const logs = w.t.logs();
    assert.equal(logs.match(/webhook delivery attempt failed/g)?.length, 2, logs);
    assertClean(w, logs, 'the logs');
  });
});

describe('when the store fails under the running app', () => {
  const sqlite = appBackend() === 'sqlite';

  /** Every route once, with a valid-looking request; returns "METHOD path status" per route. */
  async function hitEverything(w: World, label: string): Promise<string[]> {
    const ids: Record<string, string> = {
      customer_id: 'cus_a',
      webhook_id: w.aWebhook,
      delivery_id: 'dlv_x',
      event_id: 'evt_x',
      factor: 'engagement',
    };
    const out: string[] = [];
    for (const route of Object.values(ROUTES).flat()) {
      const url = route.path.replace(/:(\w+)/g, (_, k: string) => ids[k] as string);
      const body = route.body ? `{${route.body.map(([k, v]) => `"${k}":${v}`).join(',')}}` : undefined;
      const res = await w.a.request(route.method, url, body);
      if (res.status >= 400) w.answers.push({ what: `${label}: ${route.method} ${route.path}`, res });
      out.push(`${route.method} ${route.path} ${res.status} ${res.body?.error?.code ?? ''}`.trim());
    }
    return out;
  }

  test('a failing trigger and a dropped table: opaque 500s, the cause logged without SQL', {
    skip: !sqlite && 'reads the SQLite file',
  }, async (ctx) => {
    const w = await world(ctx);
    const db = new DatabaseSync(join(w.t.dir, 'vitals.db'));
    try {
      db.exec(`CREATE TRIGGER refuse BEFORE INSERT ON customers BEGIN SELECT RAISE(ABORT, 'refused'); END`);
      db.exec('DROP TABLE webhook_subscriptions');
    } finally {
      db.close();
    }
    const answers = await hitEverything(w, 'broken schema');
    // What writes a customer hits the trigger; what records events or webhooks hits the dropped table.
    assert.deepEqual(
      answers.filter((a) => / 5\d\d /.test(a)),
      [
        'POST /api/customers 500 internal_error',
        'PATCH /api/customers/:customer_id 500 internal_error',
        'DELETE /api/customers/:customer_id 500 internal_error',
        'POST /api/customers/batch 500 internal_error',
        'POST /api/customers/:customer_id/health-score 500 internal_error',
        'PATCH /api/customers/:customer_id/health-score 500 internal_error',
        // A rule's rescore records the moved scores' events.
        'PUT /api/settings/health-score/factors/:factor 500 internal_error',
        'POST /api/webhooks 500 internal_error',
        'PATCH /api/webhooks/:webhook_id 500 internal_error',
      ],
    );
    assertAnswersClean(w, 16);
    const logs = w.t.logs();
    assert.match(logs, /unhandled error/);
    assertClean(w, logs, 'the logs');
  });

  test('a closed store: 500 internal_error on the API, 503 on /readyz, /healthz alive', async (ctx) => {
    const w = await world(ctx);
    await w.t.store.close();
    const answers = await hitEverything(w, 'closed store');
    const api = Object.values(ROUTES)
      .flat()
      .filter((r) => r.path.startsWith('/api/'));
    assert.deepEqual(answers, [
      ...api.map((r) => `${r.method} ${r.path} 500 internal_error`),
      'GET /healthz 200',
      'GET /readyz 503 service_unavailable',
      'GET /openapi.json 200',
    ]);
    assertAnswersClean(w, api.length + 1);
    assertClean(w, w.t.logs(), 'the logs');
  });
});
