import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';

describe('Idempotency-Key on POST', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const post = (url: string, body: unknown, key?: string) =>
    t.api.request('POST', url, body, key === undefined ? {} : { 'idempotency-key': key });

  test('a retried create returns the first answer and creates nothing new', async () => {
    const first = await post('/api/customers', customerBody('cus_idem'), 'key-1');
    assert.equal(first.status, 201);
    const eventsBefore = (await t.api.get('/api/events?limit=100')).body.data.length;
    const again = await post('/api/customers', customerBody('cus_idem'), 'key-1');
    assert.equal(again.status, 201, 'not 409: the first answer is replayed');
    assert.equal(again.raw, first.raw);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(
      (await t.api.get('/api/events?limit=100')).body.data.length,
      eventsBefore,
      'no second event',
    );
  });

  test('the same key with a different body is a 400 and changes nothing', async () => {
    await post('/api/customers', customerBody('cus_idem2'), 'key-2');
    const before = await t.api.get('/api/customers?limit=100');
    const res = await post('/api/customers', customerBody('cus_idem3'), 'key-2');
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'idempotency_key_reused');
    assert.equal(res.body.error.param, 'Idempotency-Key');
    assert.deepEqual((await t.api.get('/api/customers?limit=100')).body, before.body);
  });

  test('the same key on another path is a different request', async () => {
    await post('/api/customers', customerBody('cus_idem4'), 'key-3');
    const res = await post('/api/customers/cus_idem4/health-score', { factors: { usage: 0.5 } }, 'key-3');
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'idempotency_key_reused');
    assert.equal((await t.api.get('/api/customers/cus_idem4/health-score')).status, 404);
  });

  test('an error answer from the operation is replayed too (Stripe semantics)', async () => {
    await t.api.post('/api/customers', customerBody('cus_taken'));
    const first = await post('/api/customers', customerBody('cus_taken'), 'key-4');
    assert.equal(first.status, 409);
    await t.api.delete('/api/customers/cus_taken');
    const again = await post('/api/customers', customerBody('cus_taken'), 'key-4');
    assert.equal(again.status, 409);
    assert.equal(again.raw, first.raw);
    assert.equal((await t.api.get('/api/customers/cus_taken')).status, 404, 'the retry did not run');
  });

  test('a request refused by validation is not recorded: a corrected retry with the key runs', async () => {
    const bad = await post('/api/customers', { customer_id: 'cus_fix', name: 'x' }, 'key-5');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'parameter_missing');
    const good = await post('/api/customers', customerBody('cus_fix'), 'key-5');
    assert.equal(good.status, 201);
  });

  test('keys are per account', async () => {
    const other = await t.newAccount('idem-other');
    await post('/api/customers', customerBody('cus_acct'), 'key-6');
    const res = await other.request('POST', '/api/customers', customerBody('cus_acct'), {
      'idempotency-key': 'key-6',
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers['idempotent-replayed'], undefined);
  });

  test('a malformed key is a 400 naming the header, and nothing is created', async () => {
    const res = await post('/api/customers', customerBody('cus_badkey'), 'x'.repeat(256));
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'parameter_invalid');
    assert.equal(res.body.error.param, 'Idempotency-Key');
    assert.equal((await t.api.get('/api/customers/cus_badkey')).status, 404);
  });

  test('concurrent requests with one key: one runs, the other waits its turn or is told it is in progress', async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, () => post('/api/customers', customerBody('cus_race'), 'key-race')),
    );
    for (const r of results) assert.ok([201, 409].includes(r.status), `status ${r.status}`);
    const created = results.filter((r) => r.status === 201);
    // How many wait (a replayed 201) rather than hear 409 depends on timing; exactly one runs.
    assert.equal(created.filter((r) => r.headers['idempotent-replayed'] === undefined).length, 1, 'one ran');
    for (const r of created) assert.equal(r.raw, created[0]?.raw, 'every 201 is the same answer');
    const listed = await t.api.get('/api/customers?search=cus_race');
    assert.deepEqual(
      listed.body.customers.map((c: { id: string }) => c.id),
      ['cus_race'],
    );
    for (const r of results.filter((x) => x.status === 409)) {
      assert.equal(r.body.error.code, 'idempotency_request_in_progress');
    }
  });
});
