// The customer's book fields (docs/api.md, "Customers"): owner, arr, renewal_at, lifecycle and
// parent_id, on create, PATCH and the batch, their refusals (nothing stored), the tree's rules
// (no cycle, chains of at most 5, concurrent changes serialized) and a parent's deletion.
// Each test works in an account of its own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

let accounts = 0;
const account = () => t.newAccount(`book ${++accounts}`);

const book = (c: Record<string, unknown>) => ({
  owner: c.owner,
  arr: c.arr,
  renewal_at: c.renewal_at,
  lifecycle: c.lifecycle,
  parent_id: c.parent_id,
});

/** A refusal as the API gives it: 400 parameter_invalid naming the field. */
function assertInvalid(res: { status: number; body: any }, param: string, what: string) {
  assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.error.code, 'parameter_invalid', what);
  assert.equal(res.body.error.param, param, what);
}

/** Every customer and event of the account, to prove a refusal stored nothing. */
async function everything(api: Client) {
  const customers = (await api.get('/api/customers?limit=100')).raw;
  const events = (await api.get('/api/events?limit=100')).body.data.map((e: { id: string }) => e.id);
  return { customers, events };
}

/** Bad values of each field, with the field the refusal names. */
const BAD: [string, unknown][] = [
  ['arr', '100'],
  ['arr', 'NaN'],
  ['arr', -0.01],
  ['arr', 1e12 + 1],
  ['arr', true],
  ['renewal_at', 'next year'],
  ['renewal_at', '2027-02-30T00:00:00Z'],
  ['renewal_at', '2027-01-01'],
  ['renewal_at', '1969-12-31T23:59:59Z'],
  ['renewal_at', '1970-01-01T00:30:00+01:00'],
  ['renewal_at', '10000-01-01T00:00:00Z'],
  ['renewal_at', 1_800_000_000_000],
  ['owner', 'not-an-email'],
  ['owner', 'someone@localhost'],
  ['owner', 'a b@example.com'],
  ['owner', 7],
  ['lifecycle', 'paused'],
  ['lifecycle', null],
  ['lifecycle', 'Active'],
  ['parent_id', 'nobody'],
  ['parent_id', 5],
];

describe('customers: book fields', () => {
  test('set on create, answered everywhere, changed and cleared by PATCH', async () => {
    const api = await account();
    assert.equal((await api.post('/api/customers', customerBody('parent'))).status, 201);
    const created = await api.post(
      '/api/customers',
      customerBody('child', {
        owner: 'Ana.Owner@Example.com',
        arr: 120000.5,
        renewal_at: '2027-03-31T12:00:00+02:00',
        lifecycle: 'churned',
        parent_id: 'parent',
      }),
    );
    assert.equal(created.status, 201, created.raw);
    assert.deepEqual(book(created.body), {
      owner: 'Ana.Owner@Example.com',
      arr: 120000.5,
      renewal_at: '2027-03-31T10:00:00.000Z',
      lifecycle: 'churned',
      parent_id: 'parent',
    });
    const read = await api.get('/api/customers/child');
    assert.equal(read.raw, created.raw);
    const listed = await api.get('/api/customers?search=child');
    assert.equal(listed.raw, `{"customers":[${created.raw}],"has_more":false}`);

    const patched = await api.patch('/api/customers/child', {
      owner: 'bo@example.org',
      arr: 99.999,
      renewal_at: '9999-12-31T23:59:59.999Z',
      lifecycle: 'active',
    });
    assert.equal(patched.status, 200, patched.raw);
    assert.deepEqual(book(patched.body), {
      owner: 'bo@example.org',
      arr: 100,
      renewal_at: '9999-12-31T23:59:59.999Z',
      lifecycle: 'active',
      parent_id: 'parent',
    });
    assert.equal((await api.get('/api/customers/child')).raw, patched.raw);

    const cleared = await api.patch('/api/customers/child', {
      owner: null,
      arr: null,
      renewal_at: null,
      parent_id: null,
    });
    assert.equal(cleared.status, 200, cleared.raw);
    assert.deepEqual(book(cleared.body), {
      owner: null,
      arr: null,
      renewal_at: null,
      lifecycle: 'active',
      parent_id: null,
    });
    assert.equal(
      (await api.get('/api/customers?search=child')).raw,
      `{"customers":[${cleared.raw}],"has_more":false}`,
    );

    // The events carry the customer as answered; the audit log records each change.
    const events = (await api.get('/api/events?limit=10')).body.data;
    assert.deepEqual(
      events.map((e: { type: string; data: Record<string, unknown> }) => [e.type, e.data.id, book(e.data)]),
      [
        ['customer.updated', 'child', book(cleared.body)],
        ['customer.updated', 'child', book(patched.body)],
        ['customer.created', 'child', book(created.body)],
        [
          'customer.created',
          'parent',
          book({ lifecycle: 'active', owner: null, arr: null, renewal_at: null, parent_id: null }),
        ],
      ],
    );
    const audit = (await api.get('/api/audit-log?limit=10')).body.data;
    assert.deepEqual(
      audit.map((e: { action: string; object_id: string }) => [e.action, e.object_id]),
      [
        ['customer.updated', 'child'],
        ['customer.updated', 'child'],
        ['customer.created', 'child'],
        ['customer.created', 'parent'],
      ],
    );
  });

  test('arr is rounded half away from zero to cents, as its decimal digits say', async () => {
    const api = await account();
    const cases: [number, number][] = [
      [0, 0],
      [1.005, 1.01],
      [1.004, 1],
      [0.005, 0.01],
      [0.0049, 0],
      [123.456, 123.46],
      [2.675, 2.68],
      [1e-7, 0],
      [1e12, 1e12],
      [999_999_999_999.995, 1e12],
      [42, 42],
    ];
    for (const [i, [sent, answered]] of cases.entries()) {
      const res = await api.post('/api/customers', customerBody(`arr${i}`, { arr: sent }));
      assert.equal(res.status, 201, `${sent}: ${res.raw}`);
      assert.equal(res.body.arr, answered, `${sent}`);
      assert.equal((await api.get(`/api/customers/arr${i}`)).body.arr, answered);
    }
  });

  test('each bad value is refused on create, naming the field, and nothing is stored', async () => {
    const api = await account();
    const before = await everything(api);
    for (const [field, value] of BAD) {
      const res = await api.post('/api/customers', customerBody('bad', { [field]: value }));
      assertInvalid(res, field, `create ${field}=${JSON.stringify(value)}`);
    }
    assert.equal((await api.get('/api/customers/bad')).status, 404);
    assert.deepEqual(await everything(api), before);
  });

  test('each bad value is refused by PATCH, naming the field, and nothing is stored', async () => {
    const api = await account();
    const body = customerBody('held', { owner: 'o@example.com', arr: 10, lifecycle: 'churned' });
    assert.equal((await api.post('/api/customers', body)).status, 201);
    const before = await everything(api);
    for (const [field, value] of [...BAD, ['parent_id', 'held'] as [string, unknown]]) {
      const res = await api.patch('/api/customers/held', { [field]: value, name: 'Changed' });
      assertInvalid(res, field, `patch ${field}=${JSON.stringify(value)}`);
    }
    assert.deepEqual(await everything(api), before);
  });

  test('each bad value is refused in the batch as that item alone', async () => {
    const api = await account();
    assert.equal((await api.post('/api/customers', customerBody('old'))).status, 201);
    const before = await everything(api);
    const items = BAD.flatMap(([field, value]) => [
      customerBody('new', { [field]: value }),
      { customer_id: 'old', [field]: value },
    ]);
    const res = await api.post('/api/customers/batch', { customers: items });
    assert.equal(res.status, 200, res.raw);
    for (const [i, result] of res.body.results.entries()) {
      const [field, value] = BAD[Math.floor(i / 2)] as [string, unknown];
      const what = `batch item ${i} ${field}=${JSON.stringify(value)}`;
      assert.equal(result.status, 400, what);
      assert.equal(result.error.code, 'parameter_invalid', what);
      assert.equal(result.error.param, field, what);
    }
    assert.deepEqual(await everything(api), before);
  });

  test('the batch sets the fields, a parent created earlier in it included', async () => {
    const api = await account();
    const res = await api.post('/api/customers/batch', {
      customers: [
        customerBody('kid', { parent_id: 'mum' }),
        customerBody('mum', { owner: 'x@example.com', arr: 5.555, renewal_at: '2030-01-01T00:00:00Z' }),
        customerBody('kid', { parent_id: 'mum', lifecycle: 'churned' }),
        { customer_id: 'mum', parent_id: 'kid' },
      ],
    });
    assert.equal(res.status, 200, res.raw);
    const [first, mum, kid, cycle] = res.body.results;
    assert.equal(first.status, 400);
    assert.equal(first.error.param, 'parent_id');
    assert.equal(mum.status, 201);
    assert.deepEqual(book(mum.customer), {
      owner: 'x@example.com',
      arr: 5.56,
      renewal_at: '2030-01-01T00:00:00.000Z',
      lifecycle: 'active',
      parent_id: null,
    });
    assert.equal(kid.status, 201);
    assert.equal(kid.customer.parent_id, 'mum');
    assert.equal(kid.customer.lifecycle, 'churned');
    assert.equal(cycle.status, 400);
    assert.equal(cycle.error.param, 'parent_id');
    assert.equal((await api.get('/api/customers/kid')).raw, JSON.stringify(kid.customer));
    assert.equal((await api.get('/api/customers/mum')).body.parent_id, null);
  });
});

describe('customers: the tree', () => {
  test('a cycle of three is refused, on PATCH and in the batch', async () => {
    const api = await account();
    assert.equal((await api.post('/api/customers', customerBody('a'))).status, 201);
    assert.equal((await api.post('/api/customers', customerBody('b', { parent_id: 'a' }))).status, 201);
    assert.equal((await api.post('/api/customers', customerBody('c', { parent_id: 'b' }))).status, 201);
    const before = await everything(api);
    assertInvalid(await api.patch('/api/customers/a', { parent_id: 'c' }), 'parent_id', 'a under c');
    assertInvalid(await api.patch('/api/customers/a', { parent_id: 'b' }), 'parent_id', 'a under b');
    assertInvalid(await api.patch('/api/customers/b', { parent_id: 'c' }), 'parent_id', 'b under c');
    const res = await api.post('/api/customers/batch', { customers: [{ customer_id: 'a', parent_id: 'c' }] });
    assert.equal(res.body.results[0].error.param, 'parent_id');
    assert.deepEqual(await everything(api), before);
    // Moving c to the root, then a under c, is no cycle.
    assert.equal((await api.patch('/api/customers/c', { parent_id: null })).status, 200);
    assert.equal((await api.patch('/api/customers/a', { parent_id: 'c' })).status, 200);
  });

  test('a chain holds at most five customers, root included', async () => {
    const api = await account();
    for (let i = 1; i <= 5; i++) {
      const parent = i === 1 ? {} : { parent_id: `l${i - 1}` };
      assert.equal((await api.post('/api/customers', customerBody(`l${i}`, parent))).status, 201);
    }
    const before = await everything(api);
    assertInvalid(
      await api.post('/api/customers', customerBody('l6', { parent_id: 'l5' })),
      'parent_id',
      'a sixth level on create',
    );
    const batch = await api.post('/api/customers/batch', {
      customers: [customerBody('l6', { parent_id: 'l5' })],
    });
    assert.equal(batch.body.results[0].error.param, 'parent_id');
    assert.deepEqual(await everything(api), before);
    // A subtree of two moved under the fourth level would make six; under the third, five.
    assert.equal((await api.post('/api/customers', customerBody('s1'))).status, 201);
    assert.equal((await api.post('/api/customers', customerBody('s2', { parent_id: 's1' }))).status, 201);
    assertInvalid(await api.patch('/api/customers/s1', { parent_id: 'l4' }), 'parent_id', 'subtree too deep');
    assert.equal((await api.get('/api/customers/s1')).body.parent_id, null);
    assert.equal((await api.patch('/api/customers/s1', { parent_id: 'l3' })).status, 200);
  });

  test('two PATCHes at once that would make a cycle: exactly one wins', async () => {
    const api = await account();
    for (let round = 0; round < 8; round++) {
      const [x, y] = [`x${round}`, `y${round}`];
      assert.equal((await api.post('/api/customers', customerBody(x))).status, 201);
      assert.equal((await api.post('/api/customers', customerBody(y))).status, 201);
      const answers = await Promise.all([
        api.patch(`/api/customers/${x}`, { parent_id: y }),
        api.patch(`/api/customers/${y}`, { parent_id: x }),
      ]);
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [200, 400], JSON.stringify(answers.map((a) => a.body)));
      const refused = answers.find((a) => a.status === 400);
      assert.equal(refused?.body.error.param, 'parent_id');
      const parents = [
        (await api.get(`/api/customers/${x}`)).body.parent_id,
        (await api.get(`/api/customers/${y}`)).body.parent_id,
      ];
      assert.equal(parents.filter((p) => p !== null).length, 1, JSON.stringify(parents));
    }
  });

  test('deleting a parent makes its children roots, each with its customer.updated event', async () => {
    const api = await account();
    assert.equal((await api.post('/api/customers', customerBody('root'))).status, 201);
    assert.equal((await api.post('/api/customers', customerBody('mid', { parent_id: 'root' }))).status, 201);
    for (const kid of ['k1', 'k2']) {
      assert.equal((await api.post('/api/customers', customerBody(kid, { parent_id: 'mid' }))).status, 201);
    }
    const deleted = await api.delete('/api/customers/mid');
    assert.equal(deleted.status, 200, deleted.raw);
    for (const kid of ['k1', 'k2']) {
      const read = await api.get(`/api/customers/${kid}`);
      assert.equal(read.body.parent_id, null);
      assert.equal(
        (await api.get(`/api/customers?search=${kid}`)).raw,
        `{"customers":[${read.raw}],"has_more":false}`,
      );
    }
    const events = (await api.get('/api/events?limit=3')).body.data;
    assert.deepEqual(
      events.map((e: { type: string; data: { id: string; parent_id?: unknown } }) => [
        e.type,
        e.data.id,
        e.data.parent_id,
      ]),
      [
        ['customer.deleted', 'mid', undefined],
        ['customer.updated', 'k2', null],
        ['customer.updated', 'k1', null],
      ],
    );
    assert.equal((await api.get('/api/customers/root')).status, 200);
    // The id can come back, with no children.
    assert.equal((await api.post('/api/customers', customerBody('mid', { parent_id: 'k1' }))).status, 201);
    assert.equal((await api.patch('/api/customers/k1', { parent_id: 'mid' })).status, 400);
  });
});
