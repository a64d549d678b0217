import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';

describe('rate limiting per API key', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ rateLimit: { max: 5, windowMs: 60_000 } });
  });
  after(() => t.close());

  test('past the limit a key gets 429 rate_limited with Retry-After, and the write is not done', async () => {
    for (let i = 0; i < 5; i++) {
      const res = await t.api.get('/api/customers');
      assert.equal(res.status, 200);
    }
    const refused = await t.api.post('/api/customers', customerBody('cus_limited'));
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.type, 'rate_limit_error');
    assert.equal(refused.body.error.code, 'rate_limited');
    assert.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After in seconds');
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
    const res = await t.as(undefined).get('/api/customers');
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'api_key_missing');
  });
});
