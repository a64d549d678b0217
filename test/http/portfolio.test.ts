// Segments, the grouped summary, the trend and the movers (docs/api.md, "Segments, trends and
// movers"), on a history built with a clock the test sets: every figure below is worked out by
// hand from the timeline, including customers deleted since, days without a change, scores
// recomputed by a weights change and the edges of the window.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type TestApp, TestClock } from '../helpers/app.ts';

async function customer(api: Client, id: string, metadata: Record<string, unknown> = {}) {
  const res = await api.post('/api/customers', customerBody(id, { metadata }));
  assert.equal(res.status, 201, res.raw);
}

async function score(api: Client, id: string, usage: number, support = usage) {
  const res = await api.post(`/api/customers/${encodeURIComponent(id)}/health-score`, {
    factors: { usage, support },
  });
  assert.equal(res.status, 200, res.raw);
}

/** The ARR sums of customers without ARR (docs/api.md, "Segments, trends and movers"). */
const NO_ARR = { total: 0, healthy: 0, at_risk: 0, critical: 0 };
const NO_ARR_SUMMARY = { arr: NO_ARR, arr_at_risk: 0 };

const ids = (res: { body: { data?: { customer_id: string }[]; customers?: { id: string }[] } }) =>
  res.body.data ? res.body.data.map((d) => d.customer_id) : (res.body.customers ?? []).map((c) => c.id);

describe('segments: metadata[KEY]=VALUE on the lists', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    await customer(t.api, 'a', { plan: 'pro', seats: 10, active: true, 'a.b': 'dot', 'q"k': 'quote' });
    await customer(t.api, 'b', { plan: 'pro', seats: '10', active: false });
    await customer(t.api, 'c', { plan: 'free', seats: 10.5, nested: { x: 1 } });
    await customer(t.api, 'd', { plan: 'Pro' });
    await customer(t.api, 'e', {});
    for (const [id, s] of [
      ['a', 0.9],
      ['b', 0.2],
      ['c', 0.5],
      ['d', 0.1],
    ] as const)
      await score(t.api, id, s);
  });
  after(() => t.close());

  test('a string value matches exactly (case included); a number or boolean by its JSON text', async () => {
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata[plan]=pro')), ['a', 'b']);
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata%5Bplan%5D=Pro')), ['d']);
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata[seats]=10')), ['a', 'b']);
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata[seats]=10.5')), ['c']);
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata[seats]=10.0')), []);
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata[active]=true')), ['a']);
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata[active]=false')), ['b']);
    assert.deepEqual(
      ids(await t.api.get(`/api/customers?metadata[nested]=${encodeURIComponent('{"x":1}')}`)),
      [],
    );
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata[missing]=')), []);
  });

  test('keys with dots and quotes are one key; several filters are ANDed', async () => {
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata[a.b]=dot')), ['a']);
    assert.deepEqual(ids(await t.api.get(`/api/customers?${encodeURIComponent('metadata[q"k]')}=quote`)), [
      'a',
    ]);
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata[plan]=pro&metadata[active]=false')), ['b']);
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata[plan]=pro&metadata[plan2]=x')), []);
  });

  test('pagination walks the segment alone, and search narrows it further', async () => {
    const first = await t.api.get('/api/customers?metadata[plan]=pro&limit=1');
    assert.deepEqual(ids(first), ['a']);
    assert.equal(first.body.has_more, true);
    const second = await t.api.get('/api/customers?metadata[plan]=pro&limit=1&starting_after=a');
    assert.deepEqual(ids(second), ['b']);
    assert.equal(second.body.has_more, false);
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata[plan]=pro&search=B')), ['b']);
  });

  test('the health-score list filters by segment and band, with each customer name', async () => {
    const res = await t.api.get('/api/health-scores?metadata[plan]=pro');
    assert.deepEqual(
      res.body.data.map((d: { customer_id: string; name: string }) => [d.customer_id, d.name]),
      [
        ['b', 'Customer b'],
        ['a', 'Customer a'],
      ],
    );
    assert.deepEqual(ids(await t.api.get('/api/health-scores?metadata[plan]=pro&status=healthy')), ['a']);
    const page = await t.api.get('/api/health-scores?metadata[seats]=10&limit=1');
    assert.deepEqual(ids(page), ['b']);
    const next = await t.api.get(
      `/api/health-scores?metadata[seats]=10&limit=1&cursor=${page.body.next_cursor}`,
    );
    assert.deepEqual(ids(next), ['a']);
    assert.equal(next.body.next_cursor, null);
  });

  test('another account with the same metadata sees only its own customers', async () => {
    const other = await t.newAccount('segments-other');
    await customer(other, 'z', { plan: 'pro' });
    assert.deepEqual(ids(await other.get('/api/customers?metadata[plan]=pro')), ['z']);
    assert.deepEqual(ids(await other.get('/api/health-scores?metadata[plan]=pro')), []);
    assert.deepEqual(ids(await t.api.get('/api/customers?metadata[plan]=pro')), ['a', 'b']);
  });

  for (const [name, query, param] of [
    ['an empty key', 'metadata[]=x', 'metadata[]'],
    ['a key over 64 characters', `metadata[${'k'.repeat(65)}]=x`, `metadata[${'k'.repeat(65)}]`],
    ['a NUL in the value', 'metadata[plan]=a%00b', 'metadata[plan]'],
    ['a NUL in the key', 'metadata[pl%00an]=x', 'metadata[pl\u0000an]'],
    ['the same key twice', 'metadata[plan]=pro&metadata[plan]=free', 'metadata[plan]'],
    ['metadata without a key', 'metadata=pro', 'metadata'],
  ] as const) {
    test(`${name}: 400 on every list, naming the parameter`, async () => {
      for (const path of ['/api/customers', '/api/health-scores', '/api/health-scores/summary']) {
        const res = await t.api.get(`${path}?${query}`);
        assert.equal(res.status, 400, `${path}: ${res.raw}`);
        assert.equal(res.body.error.type, 'invalid_request_error');
        assert.equal(res.body.error.param, param, `${path}: ${res.raw}`);
      }
    });
  }

  test('more than 50 filters: 400 parameter_invalid on metadata', async () => {
    const query = Array.from({ length: 51 }, (_, i) => `metadata[k${i}]=v`).join('&');
    const res = await t.api.get(`/api/customers?${query}`);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'parameter_invalid');
    assert.equal(res.body.error.param, 'metadata');
  });
});

describe('summary grouped by a metadata key', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    const rows = [
      ['a', { plan: 'pro', tier: 1 }, 0.9],
      ['b', { plan: 'pro', tier: 2 }, 0.3],
      ['c', { plan: 'free', tier: 1 }, 0.2],
      ['d', { plan: 'free' }, 0.1],
      ['e', { tier: 1 }, 0.8],
      ['f', { plan: 'team' }, 0.5],
    ] as const;
    for (const [id, metadata, s] of rows) {
      await customer(t.api, id, metadata);
      await score(t.api, id, s);
    }
    await customer(t.api, 'no_score', { plan: 'pro' });
  });
  after(() => t.close());

  test('per value: counts and average, worst average first; customers without the key as null', async () => {
    const res = await t.api.get('/api/health-scores/summary?group_by=metadata.plan');
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, {
      total: 6,
      counts: { healthy: 2, at_risk: 1, critical: 3 },
      average: 0.466667,
      ...NO_ARR_SUMMARY,
      groups: [
        {
          value: 'free',
          total: 2,
          counts: { healthy: 0, at_risk: 0, critical: 2 },
          average: 0.15,
          arr: NO_ARR,
        },
        {
          value: 'team',
          total: 1,
          counts: { healthy: 0, at_risk: 1, critical: 0 },
          average: 0.5,
          arr: NO_ARR,
        },
        {
          value: 'pro',
          total: 2,
          counts: { healthy: 1, at_risk: 0, critical: 1 },
          average: 0.6,
          arr: NO_ARR,
        },
        { value: null, total: 1, counts: { healthy: 1, at_risk: 0, critical: 0 }, average: 0.8, arr: NO_ARR },
      ],
      groups_truncated: false,
    });
  });

  test('number values stay numbers; a segment filter narrows the groups', async () => {
    const res = await t.api.get('/api/health-scores/summary?group_by=metadata.tier&metadata[plan]=pro');
    assert.deepEqual(res.body, {
      total: 2,
      counts: { healthy: 1, at_risk: 0, critical: 1 },
      average: 0.6,
      ...NO_ARR_SUMMARY,
      groups: [
        { value: 2, total: 1, counts: { healthy: 0, at_risk: 0, critical: 1 }, average: 0.3, arr: NO_ARR },
        { value: 1, total: 1, counts: { healthy: 1, at_risk: 0, critical: 0 }, average: 0.9, arr: NO_ARR },
      ],
      groups_truncated: false,
    });
  });

  test('object and array values are shown as stored, beside strings, numbers and null', async () => {
    const api = await t.newAccount('grouped objects');
    const shapes: Record<string, unknown> = {
      o1: { tier: { level: 2, name: 'gold' } },
      o2: { tier: { level: 3, flags: [true, null], nested: { deep: 'x' } } },
      arr: { tier: ['a', 1, { b: 2 }] },
      str: { tier: 'plain' },
      num: { tier: 7 },
      none: {},
    };
    const scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6];
    for (const [i, [id, metadata]] of Object.entries(shapes).entries()) {
      await customer(api, id, metadata as Record<string, unknown>);
      await score(api, id, scores[i] as number);
    }
    const res = await api.get('/api/health-scores/summary?group_by=metadata.tier');
    assert.equal(res.status, 200, res.raw);
    const groups: [unknown, number][] = res.body.groups.map((g: { value: unknown; average: number }) => [
      g.value,
      g.average,
    ]);
    assert.deepEqual(groups, [
      [{ level: 2, name: 'gold' }, 0.1],
      [{ level: 3, flags: [true, null], nested: { deep: 'x' } }, 0.2],
      [['a', 1, { b: 2 }], 0.3],
      ['plain', 0.4],
      [7, 0.5],
      [null, 0.6],
    ]);
    for (const [i, id] of ['o1', 'o2', 'arr'].entries()) {
      assert.deepEqual(groups[i]?.[0], (await api.get(`/api/customers/${id}`)).body.metadata.tier, id);
    }
  });

  for (const groupBy of ['plan', 'metadata.', `metadata.${'k'.repeat(65)}`, 'metadata.a%00b']) {
    test(`group_by=${groupBy.slice(0, 20)}: 400 naming group_by`, async () => {
      const res = await t.api.get(`/api/health-scores/summary?group_by=${groupBy}`);
      assert.equal(res.status, 400, res.raw);
      assert.equal(res.body.error.param, 'group_by');
    });
  }
});

/*
 * The timeline (UTC). Factors are {usage, support}; with no weights the score is their mean.
 *   Mar 1 10:00  a 0.9 healthy, b 0.5 at_risk, c 0.2 critical, d (1, 0) 0.5 at_risk
 *   Mar 2 23:59:59.999  e 0.7 healthy          Mar 3 00:00:00.000  e 0.1 critical
 *   Mar 3 12:00  a 0.3 critical
 *   Mar 4 09:00  weights usage 0.8, support 0.2: d is recomputed to 0.8 healthy (the others stay)
 *   Mar 5 09:00  c is deleted                  Mar 6 08:00  b 0.6 at_risk (today)
 * a and b are plan "pro"; c, d and e "free"; everyone has tenant "x".
 */
describe('trend and movers, from the history', () => {
  let t: TestApp;
  const clock = new TestClock('2026-03-01T10:00:00.000Z');
  before(async () => {
    t = await buildTestApp({ now: clock.now });
    const api = t.api;
    for (const [id, plan] of [
      ['a', 'pro'],
      ['b', 'pro'],
      ['c', 'free'],
      ['d', 'free'],
      ['e', 'free'],
    ]) {
      await customer(api, id as string, { plan, tenant: 'x' });
    }
    await score(api, 'a', 0.9);
    await score(api, 'b', 0.5);
    await score(api, 'c', 0.2);
    await score(api, 'd', 1, 0);
    clock.set('2026-03-02T23:59:59.999Z');
    await score(api, 'e', 0.7);
    clock.set('2026-03-03T00:00:00.000Z');
    await score(api, 'e', 0.1);
    clock.set('2026-03-03T12:00:00.000Z');
    await score(api, 'a', 0.3);
    clock.set('2026-03-04T09:00:00.000Z');
    const w = await api.patch('/api/settings/health-score/weights', {
      weights: { usage: 0.8, support: 0.2 },
    });
    assert.equal(w.status, 200, w.raw);
    clock.set('2026-03-05T09:00:00.000Z');
    assert.equal((await api.delete('/api/customers/c')).status, 200);
    clock.set('2026-03-06T08:00:00.000Z');
    await score(api, 'b', 0.6);
  });
  after(() => t.close());

  const day = (date: string, h: number, a: number, c: number, average: number | null) => ({
    date,
    total: h + a + c,
    counts: { healthy: h, at_risk: a, critical: c },
    average,
  });

  test('each UTC day as it ended (today so far), oldest first; deleted customers are left out', async () => {
    clock.set('2026-03-06T08:00:00.000Z');
    const res = await t.api.get('/api/health-scores/trend?days=7');
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body.data, [
      day('2026-02-28', 0, 0, 0, null),
      day('2026-03-01', 1, 2, 0, 0.633333),
      day('2026-03-02', 2, 2, 0, 0.65),
      day('2026-03-03', 0, 2, 2, 0.35),
      day('2026-03-04', 1, 1, 2, 0.425),
      day('2026-03-05', 1, 1, 2, 0.425),
      day('2026-03-06', 1, 1, 2, 0.45),
    ]);
  });

  test('the window: days=1 is today alone; the default is 30 days ending today', async () => {
    assert.deepEqual((await t.api.get('/api/health-scores/trend?days=1')).body.data, [
      day('2026-03-06', 1, 1, 2, 0.45),
    ]);
    const month = (await t.api.get('/api/health-scores/trend')).body.data;
    assert.equal(month.length, 30);
    assert.equal(month[0].date, '2026-02-05');
    assert.equal(month.at(-1).date, '2026-03-06');
  });

  test('a trend read on a later day ends there and keeps the past as it was', async () => {
    clock.set('2026-03-09T00:00:00.000Z');
    const res = await t.api.get('/api/health-scores/trend?days=5');
    clock.set('2026-03-06T08:00:00.000Z');
    assert.deepEqual(res.body.data, [
      day('2026-03-05', 1, 1, 2, 0.425),
      day('2026-03-06', 1, 1, 2, 0.45),
      day('2026-03-07', 1, 1, 2, 0.45),
      day('2026-03-08', 1, 1, 2, 0.45),
      day('2026-03-09', 1, 1, 2, 0.45),
    ]);
  });

  test('a segment has a trend of its own; one that holds everyone equals the whole portfolio', async () => {
    const pro = await t.api.get('/api/health-scores/trend?days=7&metadata[plan]=pro');
    assert.equal(pro.status, 200, pro.raw);
    assert.deepEqual(pro.body.data, [
      day('2026-02-28', 0, 0, 0, null),
      day('2026-03-01', 1, 1, 0, 0.7),
      day('2026-03-02', 1, 1, 0, 0.7),
      day('2026-03-03', 0, 1, 1, 0.4),
      day('2026-03-04', 0, 1, 1, 0.4),
      day('2026-03-05', 0, 1, 1, 0.4),
      day('2026-03-06', 0, 1, 1, 0.45),
    ]);
    // The whole portfolio comes from the daily rollup, a segment from the history itself.
    for (const days of [1, 3, 7, 30]) {
      const everyone = await t.api.get(`/api/health-scores/trend?days=${days}&metadata[tenant]=x`);
      const all = await t.api.get(`/api/health-scores/trend?days=${days}`);
      assert.deepEqual(everyone.body, all.body);
    }
  });

  test('movers: against the score as it stood N days ago, or the first score since', async () => {
    const down = await t.api.get('/api/health-scores/movers?days=7');
    assert.equal(down.status, 200, down.raw);
    assert.deepEqual(down.body.data, [
      {
        customer_id: 'a',
        name: 'Customer a',
        health_score: 0.3,
        status: 'critical',
        baseline_score: 0.9,
        change: -0.6,
      },
      {
        customer_id: 'e',
        name: 'Customer e',
        health_score: 0.1,
        status: 'critical',
        baseline_score: 0.7,
        change: -0.6,
      },
    ]);
    // d rose 0.3 by the weights change alone: the settings moved, not d (movers-settings.test.ts).
    const up = await t.api.get('/api/health-scores/movers?days=7&direction=up');
    assert.deepEqual(
      up.body.data.map((m: { customer_id: string; change: number }) => [m.customer_id, m.change]),
      [['b', 0.1]],
    );
    assert.deepEqual(ids(await t.api.get('/api/health-scores/movers?days=7&limit=1')), ['a']);
    assert.deepEqual(ids(await t.api.get('/api/health-scores/movers?days=7&metadata[plan]=free')), ['e']);
  });

  test('movers: a score unchanged since the window opened is not a mover; the edge counts as before', async () => {
    // Mar 3 08:00: a's baseline is 0.9 (its change came at 12:00); e had reached 0.1 at midnight.
    const three = await t.api.get('/api/health-scores/movers?days=3');
    assert.deepEqual(
      three.body.data.map((m: { customer_id: string; baseline_score: number }) => [
        m.customer_id,
        m.baseline_score,
      ]),
      [['a', 0.9]],
    );
    // Mar 6 00:00 less 3 days is the very instant of e's drop: the drop is part of its baseline.
    clock.set('2026-03-06T00:00:00.000Z');
    assert.deepEqual(ids(await t.api.get('/api/health-scores/movers?days=3')), ['a']);
    // One millisecond earlier the window opens on e's 0.7.
    clock.set('2026-03-05T23:59:59.999Z');
    assert.deepEqual(ids(await t.api.get('/api/health-scores/movers?days=3')), ['a', 'e']);
    clock.set('2026-03-06T08:00:00.000Z');
    assert.deepEqual((await t.api.get('/api/health-scores/movers?days=1')).body.data, []);
  });

  for (const [path, query, param] of [
    ['trend', 'days=0', 'days'],
    ['trend', 'days=366', 'days'],
    ['trend', 'days=1.5', 'days'],
    ['trend', 'from=2026-01-01', 'from'],
    ['movers', 'days=91', 'days'],
    ['movers', 'direction=sideways', 'direction'],
    ['movers', 'limit=0', 'limit'],
    ['movers', 'limit=101', 'limit'],
  ] as const) {
    test(`${path}?${query}: 400 naming ${param}`, async () => {
      const res = await t.api.get(`/api/health-scores/${path}?${query}`);
      assert.equal(res.status, 400, res.raw);
      assert.equal(res.body.error.param, param);
    });
  }
});

describe('score distribution: every current score in equal bins', () => {
  let t: TestApp;
  // Edges on purpose: a bin holds its `from`, not its `to`; 1 is in the last bin.
  const edges: [string, number, Record<string, unknown>][] = [
    ['zero', 0, { plan: 'free' }],
    ['just_under', 0.049999, { plan: 'free' }],
    ['at_005', 0.05, { plan: 'pro' }],
    ['mid', 0.5, { plan: 'pro' }],
    ['top_bin', 0.999999, { plan: 'pro' }],
    ['one', 1, {}],
  ];
  before(async () => {
    t = await buildTestApp();
    for (const [id, s, metadata] of edges) {
      await customer(t.api, id, metadata);
      await score(t.api, id, s);
    }
    await customer(t.api, 'no_score', { plan: 'pro' });
  });
  after(() => t.close());

  const nonEmpty = (body: { bins: { from: number; total: number }[] }) =>
    body.bins.filter((b) => b.total > 0).map((b) => [b.from, b.total]);

  test('20 bins of 0.05 by default, each [from, to) with its band counts and average; 1 in the last', async () => {
    const res = await t.api.get('/api/health-scores/distribution');
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.total, 6);
    assert.equal(res.body.bins.length, 20);
    assert.deepEqual(res.body.bins[0], {
      from: 0,
      to: 0.05,
      total: 2,
      counts: { healthy: 0, at_risk: 0, critical: 2 },
      average: 0.025,
    });
    assert.deepEqual(res.body.bins[1], {
      from: 0.05,
      to: 0.1,
      total: 1,
      counts: { healthy: 0, at_risk: 0, critical: 1 },
      average: 0.05,
    });
    assert.deepEqual(res.body.bins[2], {
      from: 0.1,
      to: 0.15,
      total: 0,
      counts: { healthy: 0, at_risk: 0, critical: 0 },
      average: null,
    });
    assert.deepEqual(nonEmpty(res.body), [
      [0, 2],
      [0.05, 1],
      [0.5, 1],
      [0.95, 2],
    ]);
    assert.deepEqual(res.body.bins[19].counts, { healthy: 2, at_risk: 0, critical: 0 });
    assert.equal(res.body.bins[19].to, 1);
  });

  test('bins=N from 1 to 100; a segment counts its own customers only', async () => {
    const one = await t.api.get('/api/health-scores/distribution?bins=1');
    assert.deepEqual(one.body.bins, [
      { from: 0, to: 1, total: 6, counts: { healthy: 2, at_risk: 1, critical: 3 }, average: 0.433333 },
    ]);
    const hundred = await t.api.get('/api/health-scores/distribution?bins=100');
    assert.equal(hundred.body.bins.length, 100);
    assert.deepEqual(nonEmpty(hundred.body), [
      [0, 1],
      [0.04, 1],
      [0.05, 1],
      [0.5, 1],
      [0.99, 2],
    ]);
    const three = await t.api.get('/api/health-scores/distribution?bins=3');
    assert.deepEqual(
      three.body.bins.map((b: { from: number; to: number; total: number }) => [b.from, b.to, b.total]),
      [
        [0, 0.333333, 3],
        [0.333333, 0.666667, 1],
        [0.666667, 1, 2],
      ],
    );
    const pro = await t.api.get('/api/health-scores/distribution?bins=2&metadata[plan]=pro');
    assert.deepEqual(
      pro.body.bins.map((b: { total: number }) => b.total),
      [1, 2],
    );
    assert.equal(pro.body.total, 3);
  });

  test('exact at any size: the same counts as working each score out by hand, and the summary’s total', async () => {
    const api = await t.newAccount('distribution at size');
    // 500 scores from a fixed sequence, many of them on a bin's edge.
    const scores = Array.from({ length: 500 }, (_, i) =>
      i % 7 === 0 ? (i % 21) / 20 : ((i * 7919) % 1000) / 999,
    );
    const customers = scores.map((_, i) => customerBody(`c${i}`));
    for (let i = 0; i < customers.length; i += 500) {
      const res = await api.post('/api/customers/batch', { customers: customers.slice(i, i + 500) });
      assert.equal(res.status, 200, res.raw);
    }
    const res = await api.post('/api/health-scores/batch', {
      scores: scores.map((s, i) => ({ customer_id: `c${i}`, factors: { usage: s } })),
    });
    assert.equal(res.status, 200, res.raw);
    for (const bins of [20, 7, 100]) {
      const expected = new Array<number>(bins).fill(0);
      for (const s of scores) {
        const micros = Math.round((Math.round(s * 1e6) / 1e6) * 1e6);
        expected[Math.min(bins - 1, Math.floor((micros * bins) / 1e6))]! += 1;
      }
      const got = await api.get(`/api/health-scores/distribution?bins=${bins}`);
      assert.deepEqual(
        got.body.bins.map((b: { total: number }) => b.total),
        expected,
        `bins=${bins}`,
      );
      assert.equal(got.body.total, (await api.get('/api/health-scores/summary')).body.total);
    }
  });

  for (const [query, code, param] of [
    ['bins=0', 'parameter_invalid', 'bins'],
    ['bins=101', 'parameter_invalid', 'bins'],
    ['bins=2.5', 'parameter_invalid', 'bins'],
    ['bins=many', 'parameter_invalid', 'bins'],
    ['bins=20&group_by=metadata.plan', 'parameter_unknown', 'group_by'],
    ['metadata[plan]=a%00b', 'parameter_invalid', 'metadata[plan]'],
  ] as const) {
    test(`distribution?${query}: 400 ${code} naming ${param}`, async () => {
      const res = await t.api.get(`/api/health-scores/distribution?${query}`);
      assert.equal(res.status, 400, res.raw);
      assert.deepEqual([res.body.error.code, res.body.error.param], [code, param]);
    });
  }
});
