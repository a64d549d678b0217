// Who may see what: bearer keys, revoked keys, one account never seeing another's
// customers, and keys never written to the logs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/keys.ts';
import { buildTestApp, type Client, customerBody, type Response, type TestApp } from '../helpers/app.ts';

function assertUnauthorized(res: Response, code: 'api_key_missing' | 'api_key_invalid'): void {
  assert.equal(res.status, 401, res.raw);
  assert.equal(res.headers['www-authenticate'], 'Bearer');
  assert.equal(res.body.error.type, 'authentication_error');
  assert.equal(res.body.error.code, code);
  assert.equal(res.body.error.param, undefined);
  assert.ok(res.body.error.message.length > 0);
  assert.match(String(res.headers['x-request-id']), /^req_/);
}

function assertNotFound(res: Response): void {
  assert.equal(res.status, 404, res.raw);
  assert.equal(res.body.error.type, 'invalid_request_error');
  assert.equal(res.body.error.code, 'customer_not_found');
  assert.equal(res.body.error.param, undefined);
}

describe('authentication', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    assert.equal((await t.api.post('/api/customers', customerBody('cus_1'))).status, 201);
  });
  after(() => t.close());

  const stored = async () => (await t.api.get('/api/customers?limit=100')).body;

  test('no Authorization header: 401 api_key_missing with WWW-Authenticate: Bearer', async () => {
    assertUnauthorized(await t.as(undefined).get('/api/customers'), 'api_key_missing');
  });

  test('an empty Authorization header: 401 api_key_missing', async () => {
    assertUnauthorized(await t.as('').get('/api/customers'), 'api_key_missing');
  });

  test('every customer route needs the key, and a refused write stores nothing', async () => {
    const anonymous = t.as(undefined);
    const before = await stored();
    for (const res of [
      await anonymous.get('/api/customers'),
      await anonymous.get('/api/customers/cus_1'),
      await anonymous.post('/api/customers', customerBody('cus_anon')),
      await anonymous.patch('/api/customers/cus_1', { name: 'Anon' }),
      await anonymous.delete('/api/customers/cus_1'),
    ]) {
      assertUnauthorized(res, 'api_key_missing');
    }
    assert.deepEqual(await stored(), before);
  });

  const malformed = (key: string): [string, string][] => [
    ['Basic credentials', `Basic ${Buffer.from(`user:${key}`).toString('base64')}`],
    ['the key without a scheme', key],
    ["'Bearer' with no key", 'Bearer'],
    ["'Bearer ' with only spaces", 'Bearer    '],
    ['junk after the key', `Bearer ${key} junk`],
    ['two keys', `Bearer ${key} ${key}`],
    ['a comma-joined second scheme', `Bearer ${key}, Basic abc`],
    ['another scheme named like Bearer', `Bearerx ${key}`],
    ['a key with a character outside the token range', `Bearer ${key}\u00e9`],
  ];
  for (const [what, header] of malformed('KEY')) {
    test(`${what}: 401 api_key_invalid with WWW-Authenticate: Bearer`, async () => {
      const value = header.replaceAll('KEY', t.api.key);
      assertUnauthorized(await t.as(value).get('/api/customers'), 'api_key_invalid');
    });
  }

  test('a key in the query string does not authenticate', async () => {
    const res = await t.as(undefined).get(`/api/customers?api_key=${t.api.key}`);
    assertUnauthorized(res, 'api_key_missing');
  });

  test('an unknown key of the right shape: 401 api_key_invalid', async () => {
    const unknown = `vk_${'A'.repeat(32)}`;
    assertUnauthorized(await t.as(`Bearer ${unknown}`).get('/api/customers'), 'api_key_invalid');
  });

  test('a key that differs from a real one in its last character: 401 api_key_invalid', async () => {
    const key = t.api.key;
    const near = key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');
    assertUnauthorized(await t.as(`Bearer ${near}`).get('/api/customers'), 'api_key_invalid');
  });

  test('the scheme is case-insensitive (RFC 9110)', async () => {
    assert.equal((await t.as(`bearer ${t.api.key}`).get('/api/customers')).status, 200);
    assert.equal((await t.as(`BEARER ${t.api.key}`).get('/api/customers')).status, 200);
  });

  test('a revoked key: 401 api_key_invalid; the account’s other keys keep working', async () => {
    const { id, key } = await createApiKey(t.store, 'default');
    const client = t.as(`Bearer ${key}`);
    assert.equal((await client.get('/api/customers/cus_1')).status, 200);
    assert.equal(await t.store.revokeApiKey(id, Date.now()), true);
    assertUnauthorized(await client.get('/api/customers/cus_1'), 'api_key_invalid');
    const before = await stored();
    assertUnauthorized(await client.post('/api/customers', customerBody('cus_revoked')), 'api_key_invalid');
    assertUnauthorized(await client.delete('/api/customers/cus_1'), 'api_key_invalid');
    assert.deepEqual(await stored(), before);
    assert.equal((await t.api.get('/api/customers/cus_1')).status, 200);
  });
});

describe('tenant isolation', () => {
  let t: TestApp;
  let other: Client;
  let mine: unknown;
  before(async () => {
    t = await buildTestApp();
    for (const id of ['cus_a', 'cus_b', 'shared']) {
      const res = await t.api.post('/api/customers', customerBody(id, { metadata: { owner: 'first' } }));
      assert.equal(res.status, 201);
    }
    mine = (await t.api.get('/api/customers?limit=100')).body;
    other = await t.newAccount('other');
  });
  after(() => t.close());

  const firstUnchanged = async () =>
    assert.deepEqual((await t.api.get('/api/customers?limit=100')).body, mine, "the first account's data");

  test("another account cannot get the first account's customer (404, not 403)", async () => {
    assertNotFound(await other.get('/api/customers/cus_a'));
  });

  test('another account cannot patch it', async () => {
    assertNotFound(await other.patch('/api/customers/cus_a', { name: 'Stolen', metadata: { owner: null } }));
    await firstUnchanged();
  });

  test('another account cannot delete it', async () => {
    assertNotFound(await other.delete('/api/customers/cus_a'));
    await firstUnchanged();
  });

  test('another account lists none of them, from any starting point', async () => {
    for (const query of ['', '?limit=100', '?starting_after=cus_a', '?starting_after=']) {
      const res = await other.get(`/api/customers${query}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { customers: [], has_more: false }, query);
    }
  });

  test('another account may create a customer with the same id, independently', async () => {
    const res = await other.post('/api/customers', customerBody('shared', { metadata: { owner: 'other' } }));
    assert.equal(res.status, 201, res.raw);
    assert.deepEqual((await other.get('/api/customers/shared')).body.metadata, { owner: 'other' });
    assert.deepEqual((await t.api.get('/api/customers/shared')).body.metadata, { owner: 'first' });

    const patched = await other.patch('/api/customers/shared', { name: 'Theirs' });
    assert.equal(patched.status, 200);
    const listed = await other.get('/api/customers');
    assert.deepEqual(
      listed.body.customers.map((c: { id: string }) => c.id),
      ['shared'],
    );
    await firstUnchanged();

    assert.equal((await other.delete('/api/customers/shared')).status, 200);
    await firstUnchanged();
  });

  test("a duplicate is judged per account: the other account's own duplicate is 409", async () => {
    assert.equal((await other.post('/api/customers', customerBody('dup'))).status, 201);
    const again = await other.post('/api/customers', customerBody('dup'));
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'customer_exists');
    assert.equal(again.body.error.param, 'customer_id');
    assert.equal((await t.api.post('/api/customers', customerBody('dup'))).status, 201);
    assert.equal((await t.api.delete('/api/customers/dup')).status, 200);
    await firstUnchanged();
  });
});

describe('logs', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('never contain an API key or Authorization header value, even for refused requests', async () => {
    const second = await t.newAccount('second');
    const unknown = `vk_${'Z'.repeat(32)}`;
    const basic = `Basic ${Buffer.from(`user:${t.api.key}`).toString('base64')}`;
    const headers = [
      `Bearer ${t.api.key}`,
      `Bearer ${second.key}`,
      `Bearer ${unknown}`,
      `Bearer ${t.api.key} junk`,
      basic,
      t.api.key,
    ];
    for (const header of headers) {
      const client = t.as(header);
      await client.get('/api/customers');
      await client.post('/api/customers', customerBody('cus_log'));
      await client.get('/api/customers/none');
      await client.request('POST', '/api/customers', '{bad json');
    }
    const logs = t.logs();
    assert.match(logs, /"statusCode":401/, 'refused requests were logged');
    assert.match(logs, /"statusCode":201/, 'accepted requests were logged');
    for (const secret of [
      t.api.key,
      second.key,
      unknown,
      basic,
      Buffer.from(`user:${t.api.key}`).toString('base64'),
    ]) {
      assert.equal(logs.includes(secret), false, 'a key or header value leaked into the logs');
    }
    assert.equal(logs.includes(t.api.key.slice(3)), false);
  });
});
