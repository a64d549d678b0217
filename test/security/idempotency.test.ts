// Idempotency-Key as a security boundary (the basics are in test/http/idempotency.test.ts): a
// replay is a request of its own (its own X-Request-Id, authentication first), and a key is
// scoped to its account, so no other account can replay, probe or collide with it — in
// particular it can never be handed another account's webhook secret.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/keys.ts';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';

describe('Idempotency-Key across requests and accounts', () => {
  let t: TestApp;
  let b: Client;
  before(async () => {
    t = await buildTestApp();
    b = await t.newAccount('b');
  });
  after(() => t.close());

  const post = (
    client: Client,
    url: string,
    body: unknown,
    key: string,
    headers: Record<string, string> = {},
  ) => client.request('POST', url, body, { 'idempotency-key': key, ...headers });

  test('a replay has an X-Request-Id of its own (or the one the client sent), not the first one’s', async () => {
    const first = await post(t.api, '/api/customers', customerBody('cus_rid'), 'rid-1');
    assert.equal(first.status, 201);
    const replay = await post(t.api, '/api/customers', customerBody('cus_rid'), 'rid-1');
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.raw, first.raw);
    assert.match(String(replay.headers['x-request-id']), /^req_/);
    assert.notEqual(replay.headers['x-request-id'], first.headers['x-request-id']);
    const named = await post(t.api, '/api/customers', customerBody('cus_rid'), 'rid-1', {
      'x-request-id': 'client-retry-7',
    });
    assert.equal(named.headers['x-request-id'], 'client-retry-7');
    assert.equal(named.raw, first.raw);
  });

  test('another account with the same key and body gets its own webhook and secret, never A’s', async () => {
    const body = { url: 'http://127.0.0.1:9/same', events: ['customer.created'] };
    const mine = await post(t.api, '/api/webhooks', body, 'hook-1');
    assert.equal(mine.status, 201);
    const theirs = await post(b, '/api/webhooks', body, 'hook-1');
    assert.equal(theirs.status, 201, theirs.raw);
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
    assert.notEqual(theirs.body.id, mine.body.id);
    assert.notEqual(theirs.body.secret, mine.body.secret);
    assert.ok(!theirs.raw.includes(mine.body.secret));
    // Each account's retry replays its own answer.
    assert.equal((await post(t.api, '/api/webhooks', body, 'hook-1')).raw, mine.raw);
    assert.equal((await post(b, '/api/webhooks', body, 'hook-1')).raw, theirs.raw);
    assert.equal((await b.get('/api/webhooks')).body.webhooks.length, 1);
    assert.equal((await t.api.get(`/api/webhooks/${theirs.body.id}`)).status, 404);
  });

  test('another account with the same key and another body is not told the key was used', async () => {
    const first = await post(t.api, '/api/customers', customerBody('cus_probe_a'), 'probe-1');
    assert.equal(first.status, 201);
    const res = await post(b, '/api/customers', customerBody('cus_probe_b'), 'probe-1');
    assert.equal(res.status, 201, 'not 400 idempotency_key_reused: that would reveal A’s key');
    assert.equal(res.headers['idempotent-replayed'], undefined);
    assert.equal((await b.get('/api/customers/cus_probe_a')).status, 404);
    assert.equal((await t.api.get('/api/customers/cus_probe_b')).status, 404);
  });

  test('authentication comes before a replay: no key, a bad key or a revoked one gets 401, not the answer', async () => {
    const extra = await createApiKey(t.store, 'default');
    const client = t.as(`Bearer ${extra.key}`);
    const first = await post(client, '/api/customers', customerBody('cus_auth'), 'auth-1');
    assert.equal(first.status, 201);
    assert.equal(await t.store.revokeApiKey(extra.id, Date.now()), true);
    for (const who of [t.as(undefined), t.as('Bearer vk_00000000000000000000000000000000'), client]) {
      const res = await post(who, '/api/customers', customerBody('cus_auth'), 'auth-1');
      assert.equal(res.status, 401, res.raw);
      assert.equal(res.headers['idempotent-replayed'], undefined);
      assert.ok(!res.raw.includes('cus_auth'));
    }
    // Keys belong to the account, not to the API key that first used them.
    const sameAccount = await post(t.api, '/api/customers', customerBody('cus_auth'), 'auth-1');
    assert.equal(sameAccount.headers['idempotent-replayed'], 'true');
    assert.equal(sameAccount.raw, first.raw);
  });

  test('a request refused before it ran (401, 415, 400) leaves the key free for the real one', async () => {
    assert.equal(
      (await post(t.as(undefined), '/api/customers', customerBody('cus_free'), 'free-1')).status,
      401,
    );
    const wrongType = await t.api.request(
      'POST',
      '/api/customers',
      JSON.stringify(customerBody('cus_free')),
      {
        'idempotency-key': 'free-1',
        'content-type': 'text/plain',
      },
    );
    assert.equal(wrongType.status, 415);
    assert.equal((await post(t.api, '/api/customers', '{"customer_id":', 'free-1')).status, 400);
    const real = await post(t.api, '/api/customers', customerBody('cus_free'), 'free-1');
    assert.equal(real.status, 201, real.raw);
    assert.equal(real.headers['idempotent-replayed'], undefined);
  });
});
