// POST /api/health-scores/batch (docs/api.md, "Batches"): factor sets replaced or merged in
// input order, one result per item with the status its single call would give, refused items
// alone, and exactly the events and history the single calls would make.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

let accounts = 0;
/** A new account with customers `a`, `b` and `c`; `c` has a score of {usage: 0.9}. */
async function account(): Promise<Client> {
  const api = await t.newAccount(`scores batch ${++accounts}`);
  for (const id of ['a', 'b', 'c'])
    assert.equal((await api.post('/api/customers', customerBody(id))).status, 201);
  assert.equal((await api.post('/api/customers/c/health-score', { factors: { usage: 0.9 } })).status, 200);
  return api;
}

const batch = (api: Client, scores: unknown) => api.post('/api/health-scores/batch', { scores });

/** Each customer's history, and the account's events, as the API shows them. */
async function stored(api: Client) {
  const histories: Record<string, unknown> = {};
  for (const id of ['a', 'b', 'c']) {
    histories[id] = (await api.get(`/api/customers/${id}/health-score/history?limit=100`)).body.data;
  }
  return { histories, events: (await api.get('/api/events?limit=100')).body.data };
}

const withoutTimes = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (key, v) =>
    ['created_at', 'updated_at', 'id'].includes(key) ? undefined : v,
  );

describe('apply', () => {
  test('replaces and merges in input order; a later item for the same customer folds into the earlier, one version', async () => {
    const api = await account();
    const res = await batch(api, [
      { customer_id: 'a', factors: { usage: 0.5, support: 0.5 } },
      { customer_id: 'c', factors: { support: 0.1 }, merge: true },
      { customer_id: 'a', factors: { support: null, billing: 1 }, merge: true },
      { customer_id: 'b', factors: { usage: 0.2 }, merge: false },
    ]);
    assert.equal(res.status, 200, res.raw);
    const results = res.body.results;
    assert.deepEqual(
      results.map((r: { customer_id: string; status: number }) => [r.customer_id, r.status]),
      [
        ['a', 200],
        ['c', 200],
        ['a', 200],
        ['b', 200],
      ],
    );
    assert.deepEqual(results[1].health_score.factors, { usage: 0.9, support: 0.1 });
    // The items of one request stand at one instant: a's two are one version (docs/api.md, "One
    // customer, one instant, one version"), which both answer.
    assert.deepEqual(results[2].health_score.factors, { usage: 0.5, billing: 1 });
    assert.deepEqual(results[0].health_score, results[2].health_score);
    const a = await api.get('/api/customers/a/health-score');
    assert.deepEqual(a.body, results[2].health_score);
    const history = (await api.get('/api/customers/a/health-score/history')).body.data;
    assert.deepEqual(
      history.map((h: { version: number }) => h.version),
      [1],
    );
  });

  test('makes exactly the events and history the single calls would, one item per customer', async () => {
    const viaBatch = await account();
    const viaSingles = await account();
    const items = [
      { customer_id: 'a', factors: { usage: 0.8 } },
      { customer_id: 'c', factors: { usage: 0.1 }, merge: true },
      { customer_id: 'zz', factors: { usage: 0.5 } },
      { customer_id: 'b', factors: { usage: 0.5 }, merge: true },
    ];
    assert.equal((await batch(viaBatch, items)).status, 200);
    for (const item of items) {
      const url = `/api/customers/${item.customer_id}/health-score`;
      const body = { factors: item.factors };
      await (item.merge ? viaSingles.patch(url, body) : viaSingles.post(url, body));
    }
    assert.deepEqual(withoutTimes(await stored(viaBatch)), withoutTimes(await stored(viaSingles)));
  });
});

describe('refused items', () => {
  const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`f${i}`, 0.5]));
  const cases: [string, unknown, number, string, string | undefined][] = [
    ['not an object', 7, 400, 'parameter_invalid', undefined],
    ['no customer_id', { factors: { usage: 1 } }, 400, 'parameter_missing', 'customer_id'],
    ['no factors', { customer_id: 'c' }, 400, 'parameter_missing', 'factors'],
    [
      'an unknown customer',
      { customer_id: 'nobody', factors: { usage: 1 } },
      404,
      'customer_not_found',
      undefined,
    ],
    [
      'a factor above 1',
      { customer_id: 'c', factors: { usage: 1.5 } },
      400,
      'parameter_invalid',
      'factors.usage',
    ],
    [
      'a factor that is text',
      { customer_id: 'c', factors: { usage: '0.5' } },
      400,
      'parameter_invalid',
      'factors.usage',
    ],
    [
      'a bad factor name',
      { customer_id: 'c', factors: { Usage: 0.5 } },
      400,
      'parameter_invalid',
      'factors.Usage',
    ],
    ['empty factors', { customer_id: 'c', factors: {} }, 400, 'parameter_invalid', 'factors'],
    ['51 factors', { customer_id: 'c', factors: many }, 400, 'parameter_invalid', 'factors'],
    [
      'a null in a replace',
      { customer_id: 'c', factors: { usage: null } },
      400,
      'parameter_invalid',
      'factors.usage',
    ],
    [
      'merge that is not a boolean',
      { customer_id: 'c', factors: { usage: 1 }, merge: 'yes' },
      400,
      'parameter_invalid',
      'merge',
    ],
    [
      'a merge leaving no factor',
      { customer_id: 'c', factors: { usage: null }, merge: true },
      400,
      'parameter_invalid',
      'factors',
    ],
    [
      'an unknown field',
      { customer_id: 'c', factors: { usage: 1 }, weight: 2 },
      400,
      'parameter_unknown',
      'weight',
    ],
  ];
  for (const [what, item, status, code, param] of cases) {
    test(`${what}: refused alone, its neighbours applied, nothing else changed`, async () => {
      const api = await account();
      const before = await stored(api);
      const res = await batch(api, [
        { customer_id: 'a', factors: { usage: 0.3 } },
        item,
        { customer_id: 'b', factors: { usage: 0.6 }, merge: true },
      ]);
      assert.equal(res.status, 200, res.raw);
      const [left, refused, right] = res.body.results;
      assert.equal(refused.status, status, JSON.stringify(refused));
      assert.equal(refused.error.code, code);
      assert.equal(refused.error.param, param);
      assert.equal(refused.health_score, undefined);
      assert.equal(left.status, 200);
      assert.equal(right.status, 200);
      const after = await stored(api);
      // Customer c (the refused items' target) is untouched; a and b have their first score.
      assert.deepEqual(after.histories.c, before.histories.c);
      assert.equal((after.histories.a as unknown[]).length, 1);
      assert.equal((after.histories.b as unknown[]).length, 1);
      const fresh = after.events.slice(0, after.events.length - before.events.length);
      assert.deepEqual(fresh.map((e: { data: { customer_id: string } }) => e.data.customer_id).sort(), [
        'a',
        'a',
        'b',
        'b',
      ]);
      assert.deepEqual(after.events.slice(fresh.length), before.events);
    });
  }
});

describe('request-level errors', () => {
  const cases: [string, unknown, string, string | undefined][] = [
    ['no scores', {}, 'parameter_missing', 'scores'],
    ['an empty array', { scores: [] }, 'parameter_invalid', 'scores'],
    ['scores not an array', { scores: 'a' }, 'parameter_invalid', 'scores'],
    [
      '1,001 items',
      { scores: Array.from({ length: 1001 }, () => ({ customer_id: 'a', factors: { usage: 1 } })) },
      'parameter_invalid',
      'scores',
    ],
  ];
  for (const [what, body, code, param] of cases) {
    test(`${what}: 400 ${code}, nothing stored`, async () => {
      const api = await account();
      const before = await stored(api);
      const res = await api.post('/api/health-scores/batch', body);
      assert.equal(res.status, 400, res.raw);
      assert.equal(res.body.error.code, code);
      assert.equal(res.body.error.param, param);
      assert.deepEqual(await stored(api), before);
    });
  }

  test('a body over 8 MiB: 413 body_too_large naming the 8 MiB limit, nothing stored', async () => {
    const api = await account();
    const before = await stored(api);
    const item = { customer_id: 'a', factors: { usage: 0.5 }, pad: 'p'.repeat(9000) };
    const res = await api.post('/api/health-scores/batch', { scores: Array(1000).fill(item) });
    assert.equal(res.status, 413, res.raw.slice(0, 200));
    assert.equal(res.body.error.code, 'body_too_large');
    assert.match(res.body.error.message, /\b8 MiB\b/);
    assert.deepEqual(await stored(api), before);
  });
});

describe('Idempotency-Key', () => {
  test('a retry replays the answer and writes nothing twice', async () => {
    const api = await account();
    const body = {
      scores: [
        { customer_id: 'a', factors: { usage: 0.4 } },
        { customer_id: 'x', factors: { usage: 1 } },
      ],
    };
    const headers = { 'idempotency-key': 'scores-1', 'content-type': 'application/json' };
    const first = await api.request('POST', '/api/health-scores/batch', body, headers);
    assert.equal(first.status, 200);
    const snapshot = await stored(api);
    const retry = await api.request('POST', '/api/health-scores/batch', body, headers);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.equal(retry.raw, first.raw);
    assert.deepEqual(await stored(api), snapshot);
  });
});
