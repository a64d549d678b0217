import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('customers: happy paths', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('create answers 201 with the Customer object', async () => {
    const res = await t.api.post(
      '/api/customers',
      customerBody('cus_1', { metadata: { plan: 'pro', seats: 5 } }),
    );
    assert.equal(res.status, 201);
    assert.equal(res.body.id, 'cus_1');
    assert.equal(res.body.name, 'Customer cus_1');
    assert.equal(res.body.email, 'cus1@example.com');
    assert.deepEqual(res.body.metadata, { plan: 'pro', seats: 5 });
    assert.match(res.body.created_at, ISO_MS);
    assert.equal(res.body.created_at, res.body.updated_at);
    assert.deepEqual(Object.keys(res.body).sort(), [
      'arr',
      'created_at',
      'email',
      'id',
      'lifecycle',
      'metadata',
      'name',
      'owner',
      'parent_id',
      'renewal_at',
      'updated_at',
    ]);
    // The book fields unset: null, and the lifecycle active (docs/api.md, "Customers").
    assert.deepEqual(
      [res.body.owner, res.body.arr, res.body.renewal_at, res.body.lifecycle, res.body.parent_id],
      [null, null, null, 'active', null],
    );
  });

  test('metadata absent on input is {} on output', async () => {
    const res = await t.api.post('/api/customers', customerBody('cus_nometa'));
    assert.equal(res.status, 201);
    assert.deepEqual(res.body.metadata, {});
  });

  test('get returns what create stored', async () => {
    const created = await t.api.post(
      '/api/customers',
      customerBody('cus_get', { metadata: { nested: { a: [1, 'b'] } } }),
    );
    const res = await t.api.get('/api/customers/cus_get');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, created.body);
  });

  test('ids with unicode and punctuation round-trip through the path', async () => {
    const id = 'ünï.cøde-ID_9:@+';
    assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
    const res = await t.api.get(`/api/customers/${encodeURIComponent(id)}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.id, id);
  });

  test('patch changes only the supplied fields and merges metadata', async () => {
    const created = await t.api.post(
      '/api/customers',
      customerBody('cus_patch', { metadata: { plan: 'pro', region: 'eu', seats: 5 } }),
    );
    const res = await t.api.patch('/api/customers/cus_patch', {
      name: 'Renamed',
      metadata: { plan: 'enterprise', region: null, owner: 'ana' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Renamed');
    assert.equal(res.body.email, created.body.email);
    assert.deepEqual(res.body.metadata, { plan: 'enterprise', seats: 5, owner: 'ana' });
    assert.equal(res.body.created_at, created.body.created_at);
    assert.ok(res.body.updated_at > created.body.updated_at, 'updated_at moves forward');
    assert.deepEqual((await t.api.get('/api/customers/cus_patch')).body, res.body);
  });

  test('updated_at strictly increases across back-to-back updates', async () => {
    await t.api.post('/api/customers', customerBody('cus_fast'));
    let previous = (await t.api.get('/api/customers/cus_fast')).body.updated_at;
    for (let i = 0; i < 20; i++) {
      const res = await t.api.patch('/api/customers/cus_fast', { name: `n${i}` });
      assert.ok(res.body.updated_at > previous, `${res.body.updated_at} > ${previous}`);
      previous = res.body.updated_at;
    }
  });

  test('delete answers {id, deleted: true}; later reads are 404 and the id can be reused', async () => {
    await t.api.post('/api/customers', customerBody('cus_del'));
    const res = await t.api.delete('/api/customers/cus_del');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { id: 'cus_del', deleted: true });
    const get = await t.api.get('/api/customers/cus_del');
    assert.equal(get.status, 404);
    assert.equal(get.body.error.code, 'customer_not_found');
    assert.equal((await t.api.post('/api/customers', customerBody('cus_del'))).status, 201);
  });

  test('every response carries X-Request-Id, and a sane incoming one is echoed', async () => {
    const mine = await t.api.request('GET', '/api/customers', undefined, { 'x-request-id': 'trace-123' });
    assert.equal(mine.headers['x-request-id'], 'trace-123');
    const generated = await t.api.get('/api/customers/none');
    assert.match(String(generated.headers['x-request-id']), /^req_[0-9A-Za-z]{20}$/);
    const hostile = await t.api.request('GET', '/api/customers', undefined, {
      'x-request-id': 'bad id\twith space',
    });
    assert.match(String(hostile.headers['x-request-id']), /^req_/);
  });
});

describe('customers: listing', () => {
  let t: TestApp;
  const ids = ['B', 'a', 'a-1', 'a_1', 'b', 'z', 'Z', '0', '~', 'é', 'aa', 'ab'];
  before(async () => {
    t = await buildTestApp();
    for (const id of ids) assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
  });
  after(() => t.close());

  const byteOrder = [...ids].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));

  test('default page is 10, byte-wise ascending by id, with has_more', async () => {
    const res = await t.api.get('/api/customers');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.customers.map((c: { id: string }) => c.id),
      byteOrder.slice(0, 10),
    );
    assert.equal(res.body.has_more, true);
  });

  test('walking pages with starting_after visits every customer once', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const q = cursor === undefined ? '' : `&starting_after=${encodeURIComponent(cursor)}`;
      const res = await t.api.get(`/api/customers?limit=5${q}`);
      assert.equal(res.status, 200);
      seen.push(...res.body.customers.map((c: { id: string }) => c.id));
      if (!res.body.has_more) break;
      cursor = seen.at(-1);
    }
    assert.deepEqual(seen, byteOrder);
  });

  test('has_more is false when the page ends exactly at the last customer', async () => {
    const res = await t.api.get(`/api/customers?limit=${ids.length}`);
    assert.equal(res.body.customers.length, ids.length);
    assert.equal(res.body.has_more, false);
  });

  test('starting_after need not exist (a deleted id still works)', async () => {
    const res = await t.api.get('/api/customers?starting_after=a0&limit=100');
    assert.deepEqual(
      res.body.customers.map((c: { id: string }) => c.id),
      byteOrder.filter((id) => Buffer.compare(Buffer.from(id), Buffer.from('a0')) > 0),
    );
  });

  test('limit 1 and limit 100 are accepted', async () => {
    assert.equal((await t.api.get('/api/customers?limit=1')).body.customers.length, 1);
    assert.equal((await t.api.get('/api/customers?limit=100')).body.customers.length, ids.length);
  });
});

describe('customers: search', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    await t.api.post('/api/customers', { customer_id: 'acme', name: 'Acme Corp', email: 'ops@acme.io' });
    await t.api.post('/api/customers', { customer_id: 'globex', name: 'Globex', email: 'it@globex.com' });
    await t.api.post('/api/customers', {
      customer_id: 'initech',
      name: 'Initech ACME reseller',
      email: 'x@initech.com',
    });
    await t.api.post('/api/customers', { customer_id: 'pct_100%', name: 'Percent', email: 'p@q.rs' });
  });
  after(() => t.close());

  const ids = (res: { body: { customers: { id: string }[] } }) => res.body.customers.map((c) => c.id);

  test('matches id, name or email, ignoring case, in id order', async () => {
    assert.deepEqual(ids(await t.api.get('/api/customers?search=acme')), ['acme', 'initech']);
    assert.deepEqual(ids(await t.api.get('/api/customers?search=GLOBEX.COM')), ['globex']);
  });

  test('LIKE wildcards in the search are taken literally', async () => {
    assert.deepEqual(ids(await t.api.get('/api/customers?search=%25')), ['pct_100%']);
    assert.deepEqual(ids(await t.api.get('/api/customers?search=_')), ['pct_100%']);
  });

  test('pages with starting_after and limit like the plain list', async () => {
    const first = await t.api.get('/api/customers?search=acme&limit=1');
    assert.deepEqual(ids(first), ['acme']);
    assert.equal(first.body.has_more, true);
    const second = await t.api.get('/api/customers?search=acme&limit=1&starting_after=acme');
    assert.deepEqual(ids(second), ['initech']);
    assert.equal(second.body.has_more, false);
  });

  test('an empty search is a 400', async () => {
    const res = await t.api.get('/api/customers?search=');
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'search');
  });

  test('a search holding a NUL is a 400 naming search, on both backends', async () => {
    const res = await t.api.get('/api/customers?search=a%00b');
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'parameter_invalid');
    assert.equal(res.body.error.param, 'search');
    assert.equal((await t.api.get('/api/customers?search=%00')).status, 400);
  });
});
