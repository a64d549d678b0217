// Rate limiting (VITALS_RATE_LIMIT, counted per API key): on every /api route the request past
// the limit is a 429 rate_limit_error envelope with Retry-After, and a refused write does
// nothing. Another key, requests without a key and the operational endpoints are not held back.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.ts';
import { createApiKey } from '../../src/keys.ts';
import { ROUTES } from '../fuzz/harness.ts';
import { assertEnvelope, snapshot } from '../fuzz/rules.ts';
import { buildTestApp, type Client, type TestApp } from '../helpers/app.ts';

const MAX = 3;
const WINDOW_MS = 60_000;

describe('rate limiting per API key', () => {
  let t: TestApp;
  /** A second API process on the same database, without a limit: it seeds and reads for the test. */
  let unlimited: FastifyInstance;
  let accounts = 0;
  before(async () => {
    t = await buildTestApp({ rateLimit: { max: MAX, windowMs: WINDOW_MS } });
    unlimited = await buildApp({
      store: t.store,
      config: { keyCacheTtlMs: 0, logLevel: 'silent', webhook: { blockPrivate: false } },
    });
  });
  after(async () => {
    await unlimited.close();
    await t.close();
  });

  function clientOf(app: FastifyInstance, key: string): Client {
    const request = async (
      method: string,
      url: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ) => {
      const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const res = await app.inject({
        method: method as 'GET',
        url,
        headers: {
          authorization: `Bearer ${key}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(payload === undefined ? {} : { payload }),
      });
      return {
        status: res.statusCode,
        headers: res.headers,
        body: res.body ? res.json() : undefined,
        raw: res.body,
      };
    };
    return {
      key,
      request,
      get: (url) => request('GET', url),
      post: (url, body) => request('POST', url, body),
      patch: (url, body) => request('PATCH', url, body),
      delete: (url) => request('DELETE', url),
    };
  }

  /**
   * An account with a customer that has a score, and a webhook with a delivery. `seed` reaches
   * it through the unlimited process; `probe` is the limited app with a key of the same account.
   */
  async function account(): Promise<{ seed: Client; probe: Client; ids: Record<string, string> }> {
    const name = `limited${++accounts}`;
    const seed = clientOf(unlimited, (await createApiKey(t.store, name)).key);
    const probe = t.as(`Bearer ${(await createApiKey(t.store, name)).key}`);
    const webhook = await seed.post('/api/webhooks', {
      url: 'http://127.0.0.1:9/x',
      events: ['customer.created'],
    });
    await seed.post('/api/customers', { customer_id: 'cus_1', name: 'One', email: 'one@example.com' });
    await seed.post('/api/customers/cus_1/health-score', { factors: { usage: 0.5 } });
    const rule = { metric: 'logins', aggregate: 'sum', scale: { type: 'linear', from: 0, to: 20 } };
    await seed.request('PUT', '/api/settings/health-score/factors/engagement', rule);
    const delivery = (await seed.get(`/api/webhooks/${webhook.body.id}/deliveries`)).body.data[0].id;
    const event = (await seed.get('/api/events?limit=1')).body.data[0].id;
    return {
      seed,
      probe,
      ids: {
        customer_id: 'cus_1',
        webhook_id: webhook.body.id,
        delivery_id: delivery,
        event_id: event,
        factor: 'engagement',
      },
    };
  }

  const api = Object.entries(ROUTES)
    .filter(([group]) => group !== 'operations')
    .flatMap(([, routes]) => routes);

  for (const route of api) {
    test(`${route.method} ${route.path}: request ${MAX + 1} is a 429 with Retry-After, and does nothing`, async () => {
      const { seed, probe, ids } = await account();
      const url = route.path.replace(/:(\w+)/g, (_, k: string) => ids[k] as string);
      const body = route.body ? `{${route.body.map(([k, v]) => `"${k}":${v}`).join(',')}}` : undefined;
      for (let i = 0; i < MAX; i++) {
        const res = await probe.request(route.method, url, body);
        assert.notEqual(res.status, 429, `request ${i + 1}: ${res.raw}`);
      }
      const before = await snapshot(seed);
      const limited = await probe.request(route.method, url, body);
      assert.equal(limited.status, 429, limited.raw);
      assertEnvelope(limited, 'the 429');
      assert.equal(limited.body.error.type, 'rate_limit_error');
      assert.equal(limited.body.error.code, 'rate_limited');
      // The configured rate, not the time the window has left.
      assert.match(limited.body.error.message, new RegExp(`at most ${MAX} per minute\\.`));
      // Seconds left in the window, which opened a moment ago: a bound, since the clock runs meanwhile.
      const retryAfter = Number(limited.headers['retry-after']);
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= WINDOW_MS / 1000,
        `${retryAfter}`,
      );
      assert.match(String(limited.headers['x-request-id']), /^req_/);
      assert.deepEqual(await snapshot(seed), before, 'the refused request changed nothing');
    });
  }

  test('the account’s other key, requests without a key and the operational endpoints are not held back', async () => {
    const { probe } = await account();
    for (let i = 0; i <= MAX; i++) await probe.get('/api/customers');
    assert.equal((await probe.get('/api/customers')).status, 429);
    const sibling = t.as(`Bearer ${(await createApiKey(t.store, `limited${accounts}`)).key}`);
    const res = await sibling.get('/api/customers');
    assert.equal(res.status, 200, 'another key of the same account is counted apart');
    assert.equal(res.body.customers[0].id, 'cus_1', 'and it is the same account');
    const anonymous = await t.as(undefined).get('/api/customers');
    assert.equal(anonymous.status, 401, 'authentication comes first');
    assert.equal(anonymous.body.error.code, 'api_key_missing');
    for (let i = 0; i <= MAX * 2; i++) {
      for (const path of ['/healthz', '/readyz', '/openapi.json']) {
        assert.equal((await t.inject({ method: 'GET', url: path })).status, 200, path);
      }
    }
  });

  test('requests with no key or a wrong one are refused by authentication and not counted against a key', async () => {
    const { key } = await createApiKey(t.store, `limited${++accounts}`);
    const probe = t.as(`Bearer ${key}`);
    for (let i = 0; i < 2 * MAX; i++) {
      const missing = await t.as(undefined).get('/api/customers');
      assert.equal(missing.body.error.code, 'api_key_missing');
      const invalid = await t
        .as(`Bearer ${key.slice(0, -1)}${key.endsWith('x') ? 'y' : 'x'}`)
        .get('/api/customers');
      assert.equal(invalid.body.error.code, 'api_key_invalid');
    }
    // The key still has its whole window: exactly MAX requests pass, the next is refused.
    const statuses: number[] = [];
    for (let i = 0; i <= MAX; i++) statuses.push((await probe.get('/api/customers')).status);
    assert.deepEqual(statuses, [...Array(MAX).fill(200), 429]);
  });
});
