// The trend counts a customer on the days it was in a lifecycle (docs/api.md, "Segments, trends
// and movers"): churning takes it out of the active trend from that day on, coming back puts it
// in again with the score it has then, and the scores it gets while churned move only the
// churned trend. The last day of each equals the summary of the same filter.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type TestApp, TestClock } from '../helpers/app.ts';

async function score(api: Client, id: string, value: number) {
  const res = await api.post(`/api/customers/${id}/health-score`, {
    factors: { usage: value, support: value },
  });
  assert.equal(res.status, 200, res.raw);
}

async function lifecycle(api: Client, id: string, value: string) {
  const res = await api.patch(`/api/customers/${id}`, { lifecycle: value });
  assert.equal(res.status, 200, res.raw);
}

const day = (date: string, h: number, a: number, c: number, average: number | null) => ({
  date,
  total: h + a + c,
  counts: { healthy: h, at_risk: a, critical: c },
  average,
});

/**
 *   Jun 1 10:00  x 0.9 healthy, y 0.2 critical (both active); z never scored
 *   Jun 2 10:00  y churns
 *   Jun 3 10:00  y 0.8 (while churned)
 *   Jun 4 10:00  y active again
 *   Jun 5 10:00  x churns;  11:00  x 0.1 (while churned)
 * Both owned by o@example.com.
 */
describe('the trend by lifecycle, on the days each customer was in it', () => {
  let t: TestApp;
  const clock = new TestClock('2026-06-01T10:00:00.000Z');
  before(async () => {
    t = await buildTestApp({ now: clock.now });
    for (const id of ['x', 'y', 'z']) {
      const res = await t.api.post('/api/customers', customerBody(id, { owner: 'o@example.com' }));
      assert.equal(res.status, 201, res.raw);
    }
    await score(t.api, 'x', 0.9);
    await score(t.api, 'y', 0.2);
    clock.set('2026-06-02T10:00:00.000Z');
    await lifecycle(t.api, 'y', 'churned');
    // z churns and comes back unscored: nothing to count on any day.
    await lifecycle(t.api, 'z', 'churned');
    clock.set('2026-06-03T10:00:00.000Z');
    await score(t.api, 'y', 0.8);
    clock.set('2026-06-04T10:00:00.000Z');
    await lifecycle(t.api, 'y', 'active');
    await lifecycle(t.api, 'z', 'active');
    clock.set('2026-06-05T10:00:00.000Z');
    await lifecycle(t.api, 'x', 'churned');
    clock.set('2026-06-05T11:00:00.000Z');
    await score(t.api, 'x', 0.1);
    clock.set('2026-06-05T12:00:00.000Z');
  });
  after(() => t.close());

  const trend = async (query: string) => {
    const res = await t.api.get(`/api/health-scores/trend?days=6&${query}`);
    assert.equal(res.status, 200, res.raw);
    return res.body.data;
  };
  const ACTIVE = [
    day('2026-05-31', 0, 0, 0, null),
    day('2026-06-01', 1, 0, 1, 0.55),
    day('2026-06-02', 1, 0, 0, 0.9),
    day('2026-06-03', 1, 0, 0, 0.9),
    day('2026-06-04', 2, 0, 0, 0.85),
    day('2026-06-05', 1, 0, 0, 0.8),
  ];

  test('active (the default): out from the day it churned, back with the score it has then', async () => {
    assert.deepEqual(await trend(''), ACTIVE);
    assert.deepEqual(await trend('lifecycle=active'), ACTIVE);
    // The same through the segment's other conditions (the owner holds everyone).
    assert.deepEqual(await trend('owner=o%40example.com'), ACTIVE);
    const summary = (await t.api.get('/api/health-scores/summary')).body;
    assert.deepEqual(
      { total: summary.total, counts: summary.counts, average: summary.average },
      { total: 1, counts: { healthy: 1, at_risk: 0, critical: 0 }, average: 0.8 },
    );
  });

  test('churned: the customers on the days they were churned, with the scores they got then', async () => {
    assert.deepEqual(await trend('lifecycle=churned'), [
      day('2026-05-31', 0, 0, 0, null),
      day('2026-06-01', 0, 0, 0, null),
      day('2026-06-02', 0, 0, 1, 0.2),
      day('2026-06-03', 1, 0, 0, 0.8),
      day('2026-06-04', 0, 0, 0, null),
      day('2026-06-05', 0, 0, 1, 0.1),
    ]);
  });

  test('every lifecycle: each customer on every day', async () => {
    assert.deepEqual(await trend('lifecycle=all'), [
      day('2026-05-31', 0, 0, 0, null),
      day('2026-06-01', 1, 0, 1, 0.55),
      day('2026-06-02', 1, 0, 1, 0.55),
      day('2026-06-03', 2, 0, 0, 0.85),
      day('2026-06-04', 2, 0, 0, 0.85),
      day('2026-06-05', 1, 0, 1, 0.45),
    ]);
  });

  test('an account that never had a churned customer has an empty churned trend', async () => {
    const other = await t.newAccount('other');
    assert.equal((await other.post('/api/customers', customerBody('w'))).status, 201);
    await score(other, 'w', 0.5);
    const res = await other.get('/api/health-scores/trend?days=2&lifecycle=churned');
    assert.deepEqual(res.body.data, [day('2026-06-04', 0, 0, 0, null), day('2026-06-05', 0, 0, 0, null)]);
    const active = await other.get('/api/health-scores/trend?days=1');
    assert.deepEqual(active.body.data, [day('2026-06-05', 0, 1, 0, 0.5)]);
  });

  test('a deleted customer leaves every day of every lifecycle', async () => {
    assert.equal((await t.api.delete('/api/customers/y')).status, 200);
    assert.deepEqual(await trend(''), [
      day('2026-05-31', 0, 0, 0, null),
      day('2026-06-01', 1, 0, 0, 0.9),
      day('2026-06-02', 1, 0, 0, 0.9),
      day('2026-06-03', 1, 0, 0, 0.9),
      day('2026-06-04', 1, 0, 0, 0.9),
      day('2026-06-05', 0, 0, 0, null),
    ]);
    assert.deepEqual((await trend('lifecycle=churned')).at(-1), day('2026-06-05', 0, 0, 1, 0.1));
  });
});
