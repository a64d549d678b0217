// Following the events feed forward with ending_before (docs/api.md, "Events"): the events just
// newer than an id, still newest first, has_more while newer ones remain; and its refusals.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';

const ids = (page: { data: { id: string }[] }) => page.data.map((e) => e.id);

describe('events feed: ending_before', () => {
  let t: TestApp;
  let api: Client;
  /** Every event of the account, oldest first. */
  let all: string[];
  before(async () => {
    t = await buildTestApp();
    api = await t.newAccount('feed');
    for (let i = 0; i < 12; i++) {
      assert.equal((await api.post('/api/customers', customerBody(`cus_${i}`))).status, 201);
    }
    const page = await api.get('/api/events?limit=100');
    all = ids(page.body).reverse();
    assert.equal(all.length, 12);
  });
  after(() => t.close());

  test('the limit events just newer than the id, newest first, has_more while newer remain', async () => {
    const first = await api.get(`/api/events?limit=5&ending_before=${all[0]}`);
    assert.equal(first.status, 200, first.raw);
    assert.deepEqual(ids(first.body), all.slice(1, 6).reverse());
    assert.equal(first.body.has_more, true);
    const second = await api.get(`/api/events?limit=5&ending_before=${all[5]}`);
    assert.deepEqual(ids(second.body), all.slice(6, 11).reverse());
    assert.equal(second.body.has_more, true);
    const last = await api.get(`/api/events?limit=5&ending_before=${all[10]}`);
    assert.deepEqual(ids(last.body), [all[11]]);
    assert.equal(last.body.has_more, false);
    const none = await api.get(`/api/events?limit=5&ending_before=${all[11]}`);
    assert.deepEqual(none.body, { data: [], has_more: false });
  });

  test('a follower passing the newest id it has seen gets each event once, then new ones as they come', async () => {
    const seen: string[] = [all[0] as string];
    for (;;) {
      const page = await api.get(`/api/events?limit=3&ending_before=${seen.at(-1)}`);
      seen.push(...ids(page.body).reverse());
      if (!page.body.has_more) break;
    }
    assert.deepEqual(seen, all);
    assert.equal((await api.delete('/api/customers/cus_0')).status, 200);
    const next = await api.get(`/api/events?limit=3&ending_before=${seen.at(-1)}`);
    assert.equal(next.body.data.length, 1);
    assert.equal(next.body.data[0].type, 'customer.deleted');
    assert.equal(next.body.has_more, false);
  });

  test('with a type filter, only that type, in the same order', async () => {
    const res = await api.get(`/api/events?limit=100&type=customer.created&ending_before=${all[2]}`);
    assert.deepEqual(ids(res.body), all.slice(3).reverse());
  });

  const refusals: [string, string, string][] = [
    ['an id that is no event', 'ending_before=evt_nope', 'ending_before'],
    ['both cursors at once', 'starting_after=E&ending_before=E', 'ending_before'],
    ['an empty id', 'ending_before=', 'ending_before'],
  ];
  for (const [what, query, param] of refusals) {
    test(`${what}: 400 parameter_invalid (${param})`, async () => {
      const res = await api.get(`/api/events?${query.replaceAll('E', all[3] as string)}`);
      assert.equal(res.status, 400, res.raw);
      assert.equal(res.body.error.code, 'parameter_invalid');
      assert.equal(res.body.error.param, param);
    });
  }

  test('another account’s event id is no event here', async () => {
    const other = await t.newAccount('feed-other');
    const res = await other.get(`/api/events?ending_before=${all[0]}`);
    assert.equal(res.status, 400, res.raw);
    assert.equal(res.body.error.param, 'ending_before');
  });
});
