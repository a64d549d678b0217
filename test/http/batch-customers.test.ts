// POST /api/customers/batch (docs/api.md, "Batches"): upserts in input order, one result per
// item with the status its single call would give, refused items alone, and exactly the events
// the single calls would emit. Each test works in an account of its own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type Response, type TestApp } from '../helpers/app.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

let accounts = 0;
const account = () => t.newAccount(`batch ${++accounts}`);

/** Everything an account has stored: its customers and its events, as the API shows them. */
async function stored(api: Client) {
  const customers = await api.get('/api/customers?limit=100');
  const events = await api.get('/api/events?limit=100');
  return { customers: customers.body.customers, events: events.body.data };
}

/** An event without what differs between two runs (its id and times). */
const eventShape = (e: { type: string; data: Record<string, unknown> }) => {
  const { created_at: _c, updated_at: _u, ...data } = e.data;
  return { type: e.type, data };
};

const batch = (api: Client, customers: unknown) => api.post('/api/customers/batch', { customers });

function assertRefused(result: Record<string, any>, status: number, code: string, param: string | undefined) {
  const shown = JSON.stringify(result).slice(0, 300);
  assert.equal(result.status, status, shown);
  assert.equal(result.error.code, code, shown);
  assert.equal(result.error.param, param, shown);
  assert.equal(result.error.type, 'invalid_request_error');
  assert.ok(result.error.message.length > 0);
  assert.equal(result.customer, undefined);
}

describe('upsert', () => {
  test('creates the missing and updates the existing, in input order, with one result per item', async () => {
    const api = await account();
    await api.post('/api/customers', customerBody('old', { metadata: { plan: 'pro', seats: 5 } }));
    const res = await batch(api, [
      customerBody('new', { metadata: { region: 'eu' } }),
      { customer_id: 'old', name: 'Renamed', metadata: { seats: null, tier: 2 } },
      { customer_id: 'new', email: 'later@example.com' },
    ]);
    assert.equal(res.status, 200, res.raw);
    const [created, updated, again] = res.body.results;
    assert.deepEqual(
      res.body.results.map((r: { customer_id: string; status: number }) => [r.customer_id, r.status]),
      [
        ['new', 201],
        ['old', 200],
        ['new', 200],
      ],
    );
    assert.deepEqual(created.customer.metadata, { region: 'eu' });
    assert.equal(created.customer.email, 'new@example.com');
    assert.equal(updated.customer.name, 'Renamed');
    assert.deepEqual(updated.customer.metadata, { plan: 'pro', tier: 2 });
    // The later item for `new` saw the earlier one.
    assert.equal(again.customer.email, 'later@example.com');
    assert.deepEqual(again.customer.metadata, { region: 'eu' });
    assert.equal(again.customer.created_at, created.customer.created_at);
    assert.ok(again.customer.updated_at > created.customer.updated_at);
    // What is stored is what the last result for each id says.
    assert.deepEqual((await api.get('/api/customers/new')).body, again.customer);
    assert.deepEqual((await api.get('/api/customers/old')).body, updated.customer);
  });

  test('emits exactly the events the single calls would, in the same order', async () => {
    const viaBatch = await account();
    const viaSingles = await account();
    for (const api of [viaBatch, viaSingles]) await api.post('/api/customers', customerBody('old'));
    const items = [
      customerBody('a', { metadata: { k: 1 } }),
      { customer_id: 'old', metadata: { k: 2 } },
      { customer_id: 'a', name: 'A again' },
      { customer_id: 'b', name: 'no email' },
    ];
    assert.equal((await batch(viaBatch, items)).status, 200);
    await viaSingles.post('/api/customers', items[0]);
    await viaSingles.patch('/api/customers/old', { metadata: { k: 2 } });
    await viaSingles.patch('/api/customers/a', { name: 'A again' });
    await viaSingles.post('/api/customers', items[3]);
    const shapes = async (api: Client) => (await stored(api)).events.map(eventShape);
    const events = await shapes(viaBatch);
    assert.deepEqual(
      events.map((e: { type: string }) => e.type),
      ['customer.updated', 'customer.updated', 'customer.created', 'customer.created'],
    );
    assert.deepEqual(events, await shapes(viaSingles));
  });

  test('a customer of another account with the same id is neither seen nor changed', async () => {
    const mine = await account();
    const theirs = await account();
    await theirs.post('/api/customers', customerBody('shared', { metadata: { owner: 'them' } }));
    const before = await stored(theirs);
    const res = await batch(mine, [{ customer_id: 'shared', name: 'Mine' }]);
    // Unknown here, so it is a create, and a create needs an email.
    assertRefused(res.body.results[0], 400, 'parameter_missing', 'email');
    const created = await batch(mine, [customerBody('shared')]);
    assert.equal(created.body.results[0].status, 201);
    assert.deepEqual(await stored(theirs), before);
  });
});

test('a customer whose id is "batch" is still addressed by its own routes', async () => {
  const api = await account();
  assert.equal((await api.post('/api/customers', customerBody('batch'))).status, 201);
  assert.equal((await api.get('/api/customers/batch')).body.id, 'batch');
  assert.equal((await api.patch('/api/customers/batch', { name: 'B' })).body.name, 'B');
  assert.equal((await api.post('/api/customers/batch/health-score', { factors: { usage: 1 } })).status, 200);
  assert.equal((await api.delete('/api/customers/batch')).status, 200);
});

describe('refused items', () => {
  const big = { big: 'x'.repeat(16 * 1024) };
  const cases: [string, unknown, number, string, string | undefined][] = [
    ['not an object', 'cus', 400, 'parameter_invalid', undefined],
    ['null', null, 400, 'parameter_invalid', undefined],
    ['an array', [customerBody('arr')], 400, 'parameter_invalid', undefined],
    ['no customer_id', { name: 'N', email: 'n@example.com' }, 400, 'parameter_missing', 'customer_id'],
    ['a bad customer_id', customerBody('has space'), 400, 'parameter_invalid', 'customer_id'],
    ['a customer_id of .', customerBody('.'), 400, 'parameter_invalid', 'customer_id'],
    ['an unknown field', customerBody('x1', { plan: 'pro' }), 400, 'parameter_unknown', 'plan'],
    [
      'a create without a name',
      { customer_id: 'x2', email: 'x@example.com' },
      400,
      'parameter_missing',
      'name',
    ],
    ['a create without an email', { customer_id: 'x3', name: 'X' }, 400, 'parameter_missing', 'email'],
    ['a blank name', customerBody('x4', { name: '   ' }), 400, 'parameter_invalid', 'name'],
    ['a bad email', customerBody('x5', { email: 'no-at-sign' }), 400, 'parameter_invalid', 'email'],
    [
      'metadata that is not an object',
      customerBody('x6', { metadata: [1] }),
      400,
      'parameter_invalid',
      'metadata',
    ],
    ['metadata over 16 KiB', customerBody('x7', { metadata: big }), 400, 'parameter_invalid', 'metadata'],
    ['an update of nothing', { customer_id: 'keep' }, 400, 'parameter_missing', undefined],
    ['an update with a bad email', { customer_id: 'keep', email: 'bad' }, 400, 'parameter_invalid', 'email'],
    [
      'an update that grows metadata past 16 KiB',
      { customer_id: 'keep', metadata: { more: 'y'.repeat(16 * 1024 - 15) } },
      400,
      'parameter_invalid',
      'metadata',
    ],
  ];
  for (const [what, item, status, code, param] of cases) {
    test(`${what}: refused alone, its neighbours applied, nothing else changed`, async () => {
      const api = await account();
      await api.post('/api/customers', customerBody('keep', { metadata: { k: 'v' } }));
      const before = await stored(api);
      const res = await batch(api, [customerBody('left'), item, { customer_id: 'keep', name: 'Kept' }]);
      assert.equal(res.status, 200, res.raw);
      const [left, refused, right] = res.body.results;
      assertRefused(refused, status, code, param);
      const id = (item as { customer_id?: unknown } | null)?.customer_id;
      assert.equal(refused.customer_id, typeof id === 'string' ? id : null);
      assert.equal(left.status, 201);
      assert.equal(right.status, 200);
      const after = await stored(api);
      // Exactly the neighbours' changes: `left` created, `keep` renamed, one event each.
      assert.deepEqual(
        after.customers.map((c: { id: string }) => c.id),
        ['keep', 'left'],
      );
      const keep = after.customers.find((c: { id: string }) => c.id === 'keep');
      assert.deepEqual(keep, right.customer);
      assert.deepEqual(keep.metadata, { k: 'v' });
      assert.deepEqual(
        after.events.slice(0, 2).map((e: { type: string }) => e.type),
        ['customer.updated', 'customer.created'],
      );
      assert.deepEqual(after.events.slice(2), before.events);
    });
  }
});

describe('request-level errors', () => {
  const over = Array.from({ length: 1001 }, (_, i) => customerBody(`c${i}`));
  const cases: [string, unknown, string, string | undefined][] = [
    ['no body', undefined, 'parameter_missing', undefined],
    ['an array body', [customerBody('a')], 'parameter_invalid', undefined],
    ['no customers', {}, 'parameter_missing', 'customers'],
    ['customers not an array', { customers: customerBody('a') }, 'parameter_invalid', 'customers'],
    ['an empty array', { customers: [] }, 'parameter_invalid', 'customers'],
    ['1,001 items', { customers: over }, 'parameter_invalid', 'customers'],
    [
      'an unknown top-level field',
      { customers: [customerBody('a')], dry_run: true },
      'parameter_unknown',
      'dry_run',
    ],
  ];
  for (const [what, body, code, param] of cases) {
    test(`${what}: 400 ${code}, nothing stored`, async () => {
      const api = await account();
      const res = await api.post('/api/customers/batch', body);
      assert.equal(res.status, 400, res.raw);
      assert.equal(res.body.error.code, code);
      assert.equal(res.body.error.param, param);
      assert.deepEqual(await stored(api), { customers: [], events: [] });
    });
  }

  test('1,000 items are taken', async () => {
    const api = await account();
    const res = await batch(api, over.slice(0, 1000));
    assert.equal(res.status, 200);
    assert.equal(res.body.results.length, 1000);
    assert.ok(res.body.results.every((r: { status: number }) => r.status === 201));
  });
});

describe('body size', () => {
  /** A batch of `n` creates whose body is about `bytes` long. */
  const sized = (n: number, bytes: number) =>
    Array.from({ length: n }, (_, i) =>
      customerBody(`s${i}`, { metadata: { pad: 'p'.repeat(Math.floor(bytes / n) - 100) } }),
    );

  test('a body of 7 MiB is taken; the single routes keep their 1 MiB', async () => {
    const api = await account();
    const res = await batch(api, sized(1000, 7 * 1024 * 1024));
    assert.equal(res.status, 200, res.raw.slice(0, 200));
    assert.equal(res.body.results.filter((r: { status: number }) => r.status === 201).length, 1000);
    const single = await api.post(
      '/api/customers',
      customerBody('one', { metadata: { pad: 'p'.repeat(1100 * 1024) } }),
    );
    assert.equal(single.status, 413);
  });

  test('a body over 8 MiB is 413 body_too_large, nothing stored', async () => {
    const api = await account();
    const res: Response = await batch(api, sized(600, 8.5 * 1024 * 1024));
    assert.equal(res.status, 413, res.raw.slice(0, 200));
    assert.equal(res.body.error.code, 'body_too_large');
    assert.match(res.body.error.message, /\b8 MiB\b/, 'the batch limit, not the 1 MiB of other routes');
    assert.deepEqual(await stored(api), { customers: [], events: [] });
  });
});

describe('Idempotency-Key', () => {
  test('a retry replays the answer and writes nothing twice', async () => {
    const api = await account();
    const body = { customers: [customerBody('a'), customerBody('b'), { customer_id: 'c' }] };
    const headers = { 'idempotency-key': 'batch-1', 'content-type': 'application/json' };
    const first = await api.request('POST', '/api/customers/batch', body, headers);
    assert.equal(first.status, 200);
    const snapshot = await stored(api);
    const retry = await api.request('POST', '/api/customers/batch', body, headers);
    assert.equal(retry.status, 200);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(retry.raw, first.raw);
    assert.deepEqual(await stored(api), snapshot);
    const other = await api.request(
      'POST',
      '/api/customers/batch',
      { customers: [customerBody('d')] },
      headers,
    );
    assert.equal(other.status, 400);
    assert.equal(other.body.error.code, 'idempotency_key_reused');
    assert.deepEqual(await stored(api), snapshot);
  });
});
