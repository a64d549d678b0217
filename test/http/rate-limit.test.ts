import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';

const LIMIT = 5;
const WINDOW_MS = 60_000;

describe('rate limiting per API key', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ rateLimit: { max: LIMIT, windowMs: WINDOW_MS } });
  });
  after(() => t.close());

  test('past the limit a key gets 429 rate_limited with Retry-After, and the write is not done', async () => {
    for (let i = 0; i < LIMIT; i++) {
      const res = await t.api.get('/api/customers');
      assert.equal(res.status, 200);
    }
    const refused = await t.api.post('/api/customers', customerBody('cus_limited'));
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.type, 'rate_limit_error');
    assert.equal(refused.body.error.code, 'rate_limited');
    // The configured rate (5/min), not the time the window has left.
    assert.match(refused.body.error.message, /at most 5 per minute\./);
    // Seconds left in the window, which opened a moment ago: a bound, since the clock runs meanwhile.
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(
      Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= WINDOW_MS / 1000,
      `${retryAfter}`,
    );
    assert.ok(refused.headers['x-request-id']);
    const other = await t.newAccount('other-limit');
    assert.equal((await other.get('/api/customers/cus_limited')).status, 404, 'another key is counted apart');
    const stored = await t.store.listCustomers((await t.store.ensureAccount('default', 0)).id, { limit: 10 });
    assert.equal(
      stored.data.some((c) => c.id === 'cus_limited'),
      false,
    );
  });

  test('unauthenticated requests are refused by authentication, not counted against a key', async () => {
    const client = await t.newAccount('anonymous-limit');
    // Twice the limit without a key, and with a wrong one: every one a 401, none a 429.
    for (let i = 0; i < 2 * LIMIT; i++) {
      const missing = await t.as(undefined).get('/api/customers');
      assert.equal(missing.status, 401);
      assert.equal(missing.body.error.code, 'api_key_missing');
      const invalid = await t.as(`Bearer ${client.key.slice(0, -1)}x`).get('/api/customers');
      assert.equal(invalid.status, 401);
      assert.equal(invalid.body.error.code, 'api_key_invalid');
    }
    // The key still has its whole window: exactly LIMIT requests pass, the next is refused.
    const statuses: number[] = [];
    for (let i = 0; i <= LIMIT; i++) statuses.push((await client.get('/api/customers')).status);
    assert.deepEqual(statuses, [...Array(LIMIT).fill(200), 429]);
  });
});
