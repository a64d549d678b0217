// The book's filters, sorts and money over the portfolio (docs/api.md, "Segments, trends and
// movers" and "Health scores"): owner, renewal_after/renewal_before, parent_id and lifecycle on
// every list and figure that takes metadata[KEY] filters, ANDed with them; churned customers out
// of the portfolio by default, in the customer list and the calibration; the sorts by ARR and
// renewal paged across the customers without the field; the summary's ARR; every refusal.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  buildTestApp,
  type Client,
  customerBody,
  type Response,
  type TestApp,
  TestClock,
} from '../helpers/app.ts';

const clock = new TestClock('2026-06-30T12:00:00.000Z');
let t: TestApp;

/**
 * The book (scores: 0.9 healthy, 0.5 at_risk, under 0.4 critical):
 *   a  Ann@Example.com   0.1   2027-01-10   plan pro    0.9
 *   b  ann@example.com   0.2   2027-02-01   plan pro    0.5
 *   c  bob@example.com   100   (none)       plan free   0.2
 *   d  (none)            (none) 2027-01-10  plan pro    0.3 → 0.25, child of a
 *   e  (none)            100   2027-03-01   plan pro    0.1 → 0.02, child of a, churned
 *   f  ann@example.com   5     (none)       (none)      no score
 */
const BOOK: [string, Record<string, unknown>, number[]][] = [
  [
    'a',
    { owner: 'Ann@Example.com', arr: 0.1, renewal_at: '2027-01-10T00:00:00Z', metadata: { plan: 'pro' } },
    [0.9],
  ],
  [
    'b',
    { owner: 'ann@example.com', arr: 0.2, renewal_at: '2027-02-01T00:00:00Z', metadata: { plan: 'pro' } },
    [0.5],
  ],
  ['c', { owner: 'bob@example.com', arr: 100, metadata: { plan: 'free' } }, [0.2]],
  ['d', { renewal_at: '2027-01-10T00:00:00Z', parent_id: 'a', metadata: { plan: 'pro' } }, [0.3, 0.25]],
  [
    'e',
    {
      arr: 100,
      renewal_at: '2027-03-01T00:00:00Z',
      parent_id: 'a',
      lifecycle: 'churned',
      metadata: { plan: 'pro' },
    },
    [0.1, 0.02],
  ],
  ['f', { owner: 'ann@example.com', arr: 5 }, []],
];

before(async () => {
  t = await buildTestApp({ now: clock.now });
  for (const [id, fields] of BOOK) {
    const res = await t.api.post('/api/customers', customerBody(id, fields));
    assert.equal(res.status, 201, res.raw);
  }
  for (const [id, , scores] of BOOK) {
    const first = scores[0];
    if (first === undefined) continue;
    const res = await t.api.post(`/api/customers/${id}/health-score`, {
      factors: { usage: first, support: first },
    });
    assert.equal(res.status, 200, res.raw);
  }
  // A day later d and e fall: the movers' window sees it.
  clock.advance(86_400_000);
  for (const [id, , scores] of BOOK) {
    const second = scores[1];
    if (second === undefined) continue;
    const res = await t.api.post(`/api/customers/${id}/health-score`, {
      factors: { usage: second, support: second },
    });
    assert.equal(res.status, 200, res.raw);
  }
});
after(() => t.close());

type Listed = { id?: string; customer_id?: string };
const ids = (res: { status: number; raw: string; body: { data?: Listed[]; customers?: Listed[] } }) => {
  assert.equal(res.status, 200, res.raw);
  return (res.body.data ?? res.body.customers ?? []).map((d) => (d.customer_id ?? d.id) as string);
};

const customers = async (query: string) => ids(await t.api.get(`/api/customers?${query}`));
const scores = async (query: string) => ids(await t.api.get(`/api/health-scores?${query}`));

describe('filters on the customer list (every lifecycle unless filtered)', () => {
  test('owner: an email ignoring case, none; ANDed with metadata filters', async () => {
    assert.deepEqual(await customers(''), ['a', 'b', 'c', 'd', 'e', 'f']);
    assert.deepEqual(await customers('owner=ANN%40example.COM'), ['a', 'b', 'f']);
    assert.deepEqual(await customers('owner=none'), ['d', 'e']);
    assert.deepEqual(await customers('owner=bob%40example.com&metadata[plan]=free'), ['c']);
    assert.deepEqual(await customers('owner=bob%40example.com&metadata[plan]=pro'), []);
    assert.deepEqual(await customers('owner=ann%40example.com&metadata[plan]=pro'), ['a', 'b']);
  });

  test('renewal_after/renewal_before: [after, before), customers without a renewal never match', async () => {
    assert.deepEqual(
      await customers('renewal_after=2027-01-10T00:00:00Z&renewal_before=2027-02-01T00:00:00Z'),
      ['a', 'd'],
    );
    assert.deepEqual(await customers('renewal_after=2027-01-10T00:00:00.001Z'), ['b', 'e']);
    assert.deepEqual(await customers('renewal_before=2027-01-10T01:00:00%2B01:00'), []);
    assert.deepEqual(await customers('renewal_before=2099-01-01T00:00:00Z&metadata[plan]=pro'), [
      'a',
      'b',
      'd',
      'e',
    ]);
  });

  test('parent_id: the direct children; lifecycle: active, churned, all', async () => {
    assert.deepEqual(await customers('parent_id=a'), ['d', 'e']);
    assert.deepEqual(await customers('parent_id=d'), []);
    assert.deepEqual(await customers('lifecycle=churned'), ['e']);
    assert.deepEqual(await customers('lifecycle=active'), ['a', 'b', 'c', 'd', 'f']);
    assert.deepEqual(await customers('lifecycle=all&parent_id=a&owner=none'), ['d', 'e']);
  });
});

describe('the portfolio counts active customers unless lifecycle is given', () => {
  test('the health-scores list: churned left out by default, filters ANDed', async () => {
    assert.deepEqual(await scores(''), ['c', 'd', 'b', 'a']);
    assert.deepEqual(await scores('lifecycle=all'), ['e', 'c', 'd', 'b', 'a']);
    assert.deepEqual(await scores('lifecycle=churned'), ['e']);
    assert.deepEqual(await scores('owner=ann%40example.com'), ['b', 'a']);
    assert.deepEqual(await scores('parent_id=a'), ['d']);
    assert.deepEqual(await scores('parent_id=a&lifecycle=all&metadata[plan]=pro'), ['e', 'd']);
    assert.deepEqual(await scores('renewal_before=2027-02-01T00:00:00Z&status=critical'), ['d']);
  });

  test("entries carry the customer's book and metadata as the customer does", async () => {
    const res = await t.api.get('/api/health-scores?lifecycle=all&limit=100');
    for (const entry of res.body.data) {
      const customer = (await t.api.get(`/api/customers/${entry.customer_id}`)).body;
      for (const field of ['owner', 'arr', 'renewal_at', 'lifecycle', 'parent_id', 'metadata']) {
        assert.deepEqual(entry[field], customer[field], `${entry.customer_id}.${field}`);
      }
    }
    const a = res.body.data.find((e: { customer_id: string }) => e.customer_id === 'a');
    assert.equal(a.owner, 'Ann@Example.com');
    assert.equal(a.arr, 0.1);
    assert.equal(a.renewal_at, '2027-01-10T00:00:00.000Z');
  });

  test('the summary: counts and ARR (exact cents), arr_at_risk; all with lifecycle=all', async () => {
    const summary = async (query: string) => {
      const res = await t.api.get(`/api/health-scores/summary?${query}`);
      assert.equal(res.status, 200, res.raw);
      return res.body;
    };
    assert.deepEqual(await summary(''), {
      total: 4,
      counts: { healthy: 1, at_risk: 1, critical: 2 },
      average: 0.4625,
      arr: { total: 100.3, healthy: 0.1, at_risk: 0.2, critical: 100 },
      arr_at_risk: 100.2,
    });
    const all = await summary('lifecycle=all');
    assert.equal(all.total, 5);
    assert.deepEqual(all.arr, { total: 200.3, healthy: 0.1, at_risk: 0.2, critical: 200 });
    assert.equal(all.arr_at_risk, 200.2);
    // 0.1 + 0.2 in doubles is 0.30000000000000004: the cents are summed.
    const ann = await summary('owner=ann%40example.com');
    assert.deepEqual(ann.arr, { total: 0.3, healthy: 0.1, at_risk: 0.2, critical: 0 });
    assert.equal(ann.arr_at_risk, 0.2);
    const none = await summary('owner=none&metadata[plan]=pro&lifecycle=all');
    assert.equal(none.total, 2);
    assert.deepEqual(none.arr, { total: 100, healthy: 0, at_risk: 0, critical: 100 });
  });

  test('the summary grouped by owner: per owner (ignoring case; null for none), with ARR', async () => {
    const res = await t.api.get('/api/health-scores/summary?group_by=owner');
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body.groups, [
      {
        value: 'bob@example.com',
        total: 1,
        counts: { healthy: 0, at_risk: 0, critical: 1 },
        average: 0.2,
        arr: { total: 100, healthy: 0, at_risk: 0, critical: 100 },
      },
      {
        value: null,
        total: 1,
        counts: { healthy: 0, at_risk: 0, critical: 1 },
        average: 0.25,
        arr: { total: 0, healthy: 0, at_risk: 0, critical: 0 },
      },
      {
        value: 'ann@example.com',
        total: 2,
        counts: { healthy: 1, at_risk: 1, critical: 0 },
        average: 0.7,
        arr: { total: 0.3, healthy: 0.1, at_risk: 0.2, critical: 0 },
      },
    ]);
    assert.equal(res.body.groups_truncated, false);
    const all = await t.api.get('/api/health-scores/summary?group_by=owner&lifecycle=all&metadata[plan]=pro');
    assert.deepEqual(
      all.body.groups.map((g: { value: string | null; total: number }) => [g.value, g.total]),
      [
        [null, 2],
        ['ann@example.com', 2],
      ],
    );
  });

  test('the distribution, the trend and the movers', async () => {
    const total = async (path: string) => (await t.api.get(path)).body.total;
    assert.equal(await total('/api/health-scores/distribution'), 4);
    assert.equal(await total('/api/health-scores/distribution?lifecycle=all'), 5);
    assert.equal(await total('/api/health-scores/distribution?owner=none&lifecycle=all'), 2);
    assert.equal(await total('/api/health-scores/distribution?renewal_after=2027-02-01T00:00:00Z'), 1);
    const today = async (query: string) =>
      (await t.api.get(`/api/health-scores/trend?days=2&${query}`)).body.data.at(-1);
    assert.equal((await today('')).total, 4);
    assert.equal((await today('lifecycle=all')).total, 5);
    assert.deepEqual((await today('lifecycle=churned')).counts, { healthy: 0, at_risk: 0, critical: 1 });
    assert.equal((await today('owner=ann%40example.com&metadata[plan]=pro')).total, 2);
    const movers = async (query: string) => ids(await t.api.get(`/api/health-scores/movers?${query}`));
    assert.deepEqual(await movers(''), ['d']);
    assert.deepEqual(await movers('lifecycle=all'), ['e', 'd']);
    assert.deepEqual(await movers('lifecycle=all&owner=none&parent_id=a'), ['e', 'd']);
    assert.deepEqual(await movers('owner=bob%40example.com'), []);
  });

  test('the calibration counts every lifecycle unless filtered', async () => {
    for (const [id, outcome] of [
      ['a', 'retained'],
      ['e', 'churned'],
    ]) {
      const res = await t.api.post(`/api/customers/${id}/outcomes`, { outcome });
      assert.equal(res.status, 201, res.raw);
    }
    const outcomes = async (query: string) => {
      const res = await t.api.get(`/api/health-scores/calibration?${query}`);
      assert.equal(res.status, 200, res.raw);
      return res.body.outcomes;
    };
    assert.deepEqual(await outcomes(''), { churned: 1, retained: 1, unscored: 0 });
    assert.deepEqual(await outcomes('lifecycle=active'), { churned: 0, retained: 1, unscored: 0 });
    assert.deepEqual(await outcomes('lifecycle=churned&parent_id=a'), {
      churned: 1,
      retained: 0,
      unscored: 0,
    });
    assert.deepEqual(await outcomes('owner=ann%40example.com'), { churned: 0, retained: 1, unscored: 0 });
  });
});

describe('sorts of the health-scores list', () => {
  /** Every page of the list with this query, `limit` at a time. */
  async function pages(query: string, limit: number): Promise<string[][]> {
    const out: string[][] = [];
    let cursor: string | null = null;
    do {
      const res: Response = await t.api.get(
        `/api/health-scores?${query}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      out.push(ids(res));
      cursor = res.body.next_cursor;
      assert.equal(res.body.has_more, cursor !== null);
    } while (cursor !== null && out.length < 20);
    return out;
  }

  test('sort=-arr: highest first, ties by id, no ARR last, across pages', async () => {
    assert.deepEqual(await scores('sort=-arr'), ['c', 'b', 'a', 'd']);
    assert.deepEqual(await pages('sort=-arr&lifecycle=all', 2), [['c', 'e'], ['b', 'a'], ['d']]);
    assert.deepEqual(await pages('sort=-arr&lifecycle=all', 1), [['c'], ['e'], ['b'], ['a'], ['d']]);
    assert.deepEqual(await pages('sort=-arr&lifecycle=all&status=critical', 2), [['c', 'e'], ['d']]);
    assert.deepEqual(await pages('sort=-arr&metadata[plan]=pro', 1), [['b'], ['a'], ['d']]);
  });

  test('sort=renewal_at: soonest first, ties by id, no renewal last, across pages', async () => {
    assert.deepEqual(await scores('sort=renewal_at&lifecycle=all'), ['a', 'd', 'b', 'e', 'c']);
    assert.deepEqual(await pages('sort=renewal_at&lifecycle=all', 2), [['a', 'd'], ['b', 'e'], ['c']]);
    assert.deepEqual(await pages('sort=renewal_at&lifecycle=all', 4), [['a', 'd', 'b', 'e'], ['c']]);
    assert.deepEqual(await pages('sort=renewal_at', 1), [['a'], ['d'], ['b'], ['c']]);
    assert.deepEqual(await pages('sort=score&lifecycle=all', 2), [['e', 'c'], ['d', 'b'], ['a']]);
  });

  test('a cursor is refused with another sort than its own', async () => {
    const cursorOf = async (sort: string) =>
      (await t.api.get(`/api/health-scores?sort=${sort}&limit=1`)).body.next_cursor as string;
    for (const [made, used] of [
      ['-arr', 'renewal_at'],
      ['renewal_at', '-arr'],
      ['score', '-arr'],
      ['-arr', 'score'],
    ]) {
      const cursor = encodeURIComponent(await cursorOf(made as string));
      const res = await t.api.get(`/api/health-scores?sort=${used}&cursor=${cursor}`);
      assert.equal(res.status, 400, res.raw);
      assert.equal(res.body.error.code, 'parameter_invalid');
      assert.equal(res.body.error.param, 'cursor');
    }
    const plain = encodeURIComponent(await cursorOf('-arr'));
    const res = await t.api.get(`/api/health-scores?cursor=${plain}`);
    assert.equal(res.body.error.param, 'cursor', 'no sort is sort=score');
  });
});

describe('owner=me', () => {
  test("a session's own email (ignoring case); with an API key it is refused", async () => {
    const created = await t.api.post('/api/users', { email: 'ANN@example.com', role: 'viewer' });
    assert.equal(created.status, 201, created.raw);
    const token = /#token=([A-Za-z0-9_-]{43})$/.exec(created.body.sign_in_link)?.[1];
    const password = 'a long enough password';
    const set = await t.inject({ method: 'POST', url: '/auth/password', payload: { token, password } });
    assert.equal(set.status, 200, set.raw);
    const login = await t.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'ann@example.com', password },
    });
    assert.equal(login.status, 200, login.raw);
    const cookie = /vitals_session=[^;]+/.exec(String(login.headers['set-cookie']))?.[0] as string;
    const get = (url: string) => t.inject({ method: 'GET', url, headers: { cookie } });
    assert.deepEqual(ids(await get('/api/customers?owner=me')), ['a', 'b', 'f']);
    assert.deepEqual(ids(await get('/api/health-scores?owner=me')), ['b', 'a']);
    assert.equal((await get('/api/health-scores/summary?owner=me')).body.arr.total, 0.3);
  });
});

describe('refusals: 400 parameter_invalid naming the parameter', () => {
  const ROUTES = [
    '/api/customers',
    '/api/health-scores',
    '/api/health-scores/summary',
    '/api/health-scores/distribution',
    '/api/health-scores/trend',
    '/api/health-scores/movers',
    '/api/health-scores/calibration',
  ];
  const BAD: [string, string][] = [
    ['owner=me', 'owner'],
    ['owner=not-an-email', 'owner'],
    ['owner=someone%40localhost', 'owner'],
    ['owner=', 'owner'],
    ['renewal_after=next+year', 'renewal_after'],
    ['renewal_after=2027-01-01', 'renewal_after'],
    ['renewal_before=2027-02-30T00:00:00Z', 'renewal_before'],
    ['lifecycle=paused', 'lifecycle'],
    ['lifecycle=Active', 'lifecycle'],
    ['parent_id=a%2Fb', 'parent_id'],
  ];

  async function refused(api: Client, url: string, param: string) {
    const res = await api.get(url);
    assert.equal(res.status, 400, `${url}: ${res.raw}`);
    assert.equal(res.body.error.code, 'parameter_invalid', url);
    assert.equal(res.body.error.param, param, url);
  }

  test('each bad filter on each route', async () => {
    for (const route of ROUTES) {
      for (const [query, param] of BAD) await refused(t.api, `${route}?${query}&metadata[plan]=pro`, param);
    }
  });

  test('an unknown sort; a cursor not made by the list', async () => {
    await refused(t.api, '/api/health-scores?sort=arr', 'sort');
    await refused(t.api, '/api/health-scores?sort=-renewal_at', 'sort');
    await refused(t.api, '/api/health-scores?sort=-arr&cursor=bm9wZQ', 'cursor');
    const forged = Buffer.from(JSON.stringify(['-arr', 1.5, 'a'])).toString('base64url');
    await refused(t.api, `/api/health-scores?sort=-arr&cursor=${forged}`, 'cursor');
  });
});
