// Backfill (docs/api.md, "Backfill"; docs/scoring.md, "Backfilling history"): metrics imported on
// the first day give scores for the past days, numbered below each customer's first version, in
// the history and the trend; a second run fills only what precedes the history; every refusal
// leaves nothing behind.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type TestApp, TestClock } from '../helpers/app.ts';
import { transaction } from '../helpers/transaction.ts';

const DAY = 86_400_000;

/**
 * Today is 2026-06-10 (12:00). Rules: usage = sum of `logins` over 7 days on 0–7; billing = the
 * last `paid` on 0–1, absent once older than 3 days.
 *   a  one login a day at noon, Jun 1–9
 *   b  nothing
 *   c  7 logins on Jun 5
 *   e  paid 1 on Jun 1 (absent by now: no live score)
 */
describe('backfill', () => {
  const clock = new TestClock('2026-06-10T12:00:00.000Z');
  let t: TestApp;
  let accountId: string;
  let run: Record<string, unknown>;
  before(async () => {
    t = await buildTestApp({ now: clock.now });
    accountId = (await t.store.ensureAccount('default', 0)).id;
    const put = (factor: string, rule: unknown) =>
      t.api.request('PUT', `/api/settings/health-score/factors/${factor}`, rule);
    let res = await put('usage', {
      metric: 'logins',
      aggregate: 'sum',
      window_days: 7,
      scale: { type: 'linear', from: 0, to: 7 },
    });
    assert.equal(res.status, 200, res.raw);
    res = await put('billing', {
      metric: 'paid',
      aggregate: 'last',
      max_age_days: 3,
      scale: { type: 'linear', from: 0, to: 1 },
    });
    assert.equal(res.status, 200, res.raw);
    for (const id of ['a', 'b', 'c', 'e']) {
      assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
    }
    const metric = async (id: string, values: Record<string, number>, at: string) => {
      const r = await t.api.post(`/api/customers/${id}/metrics`, { values, at });
      assert.ok(r.status < 300, r.raw);
    };
    for (let d = 1; d <= 9; d++) await metric('a', { logins: 1 }, `2026-06-0${d}T12:00:00Z`);
    await metric('c', { logins: 7 }, '2026-06-05T12:00:00Z');
    await metric('e', { paid: 1 }, '2026-06-01T12:00:00Z');
  });
  after(() => t.close());

  const history = async (id: string) => {
    const res = await t.api.get(`/api/customers/${id}/health-score/history?limit=100`);
    assert.equal(res.status, 200, res.raw);
    return res.body.data as { version: number; health_score: number; reason: string; created_at: string }[];
  };
  const backfills = async () => (await t.api.get('/api/health-scores/backfill')).body.data;

  test('202 with a running run; it goes on in the background and ends done', async () => {
    const res = await t.api.post('/api/health-scores/backfill', { from: '2026-06-01' });
    assert.equal(res.status, 202, res.raw);
    assert.equal(res.body.status, 'running');
    assert.match(res.body.id, /^bf_/);
    assert.deepEqual(
      { ...res.body, id: undefined, started_at: undefined },
      {
        id: undefined,
        status: 'running',
        from: '2026-06-01',
        customers_total: 4,
        customers_done: 0,
        versions_written: 0,
        started_at: undefined,
        finished_at: null,
        error: null,
      },
    );
    await t.app.backfills.settled(res.body.id);
    const done = await t.api.get(`/api/health-scores/backfill/${res.body.id}`);
    assert.equal(done.status, 200, done.raw);
    run = done.body;
    assert.equal(run.status, 'done');
    assert.equal(run.customers_done, 4);
    assert.equal(run.versions_written, 7 + 1 + 1);
    assert.equal(run.finished_at, '2026-06-10T12:00:00.000Z');
    assert.deepEqual(await backfills(), [run]);
  });

  test('each past day that changed a factor is a version, dated its end, numbered below the first', async () => {
    const a = await history('a');
    const past = a.filter((h) => h.reason === 'backfill');
    assert.deepEqual(
      past.map((h) => [h.version, h.health_score, h.created_at]),
      [
        [0, 1, '2026-06-07T23:59:59.999Z'],
        [-1, 0.857143, '2026-06-06T23:59:59.999Z'],
        [-2, 0.714286, '2026-06-05T23:59:59.999Z'],
        [-3, 0.571429, '2026-06-04T23:59:59.999Z'],
        [-4, 0.428571, '2026-06-03T23:59:59.999Z'],
        [-5, 0.285714, '2026-06-02T23:59:59.999Z'],
        [-6, 0.142857, '2026-06-01T23:59:59.999Z'],
      ],
    );
    // The live versions keep their numbers, 1 and up, and come first (newest first).
    assert.ok(a.slice(0, a.length - 7).every((h) => h.version >= 1 && h.reason !== 'backfill'));
    assert.deepEqual(
      (await history('c')).filter((h) => h.reason === 'backfill').map((h) => [h.version, h.created_at]),
      [[0, '2026-06-05T23:59:59.999Z']],
    );
    assert.deepEqual(await history('b'), []);
  });

  test('the history pages down through the backfilled versions; each explains, from the one before', async () => {
    const whole = await history('a');
    const paged: number[] = [];
    let after: number | undefined;
    for (;;) {
      const res = await t.api.get(
        `/api/customers/a/health-score/history?limit=3${after === undefined ? '' : `&starting_after=${after}`}`,
      );
      assert.equal(res.status, 200, res.raw);
      paged.push(...res.body.data.map((h: { version: number }) => h.version));
      if (!res.body.has_more) break;
      after = paged.at(-1);
    }
    assert.deepEqual(
      paged,
      whole.map((h) => h.version),
    );
    const explain = async (version: number) => {
      const res = await t.api.get(`/api/customers/a/health-score/explanation?version=${version}`);
      assert.equal(res.status, 200, res.raw);
      return res.body;
    };
    const first = await explain(1);
    assert.equal(first.change.from_version, 0);
    assert.equal(first.change.previous_score, 1);
    const zero = await explain(0);
    assert.equal(zero.health_score, 1);
    assert.deepEqual([zero.change.from_version, zero.change.previous_score], [-1, 0.857143]);
    assert.equal((await explain(-6)).change, null);
    const below = await t.api.get('/api/customers/a/health-score/explanation?version=-7');
    assert.equal(below.status, 404, below.raw);
    assert.equal(below.body.error.code, 'version_not_found');
  });

  test('a customer with no history gets its last backfilled version as its score', async () => {
    const e = await history('e');
    assert.deepEqual(
      e.map((h) => [h.version, h.reason, h.created_at]),
      [[1, 'backfill', '2026-06-01T23:59:59.999Z']],
    );
    const score = await t.api.get('/api/customers/e/health-score');
    assert.equal(score.status, 200, score.raw);
    assert.equal(score.body.health_score, 1);
    assert.equal(score.body.updated_at, '2026-06-01T23:59:59.999Z');
  });

  test('the trend covers the backfilled days, and its last day is the summary', async () => {
    const res = await t.api.get('/api/health-scores/trend?days=11');
    assert.equal(res.status, 200, res.raw);
    const days = res.body.data as { date: string; total: number; counts: Record<string, number> }[];
    assert.deepEqual(
      days.map((d) => d.total),
      [0, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3],
    );
    assert.deepEqual(days[1]?.counts, { healthy: 1, at_risk: 0, critical: 1 });
    assert.deepEqual(days[3]?.counts, { healthy: 1, at_risk: 1, critical: 0 });
    const summary = (await t.api.get('/api/health-scores/summary')).body;
    assert.equal(summary.total, days.at(-1)?.total);
    assert.deepEqual(summary.counts, days.at(-1)?.counts);
  });

  test('a second run fills only what precedes the history', async () => {
    const before = await history('a');
    const res = await t.api.post('/api/health-scores/backfill', {
      from: '2026-05-20',
      customer_ids: ['a', 'c'],
    });
    assert.equal(res.status, 202, res.raw);
    assert.equal(res.body.customers_total, 2);
    await t.app.backfills.settled(res.body.id);
    const done = (await t.api.get(`/api/health-scores/backfill/${res.body.id}`)).body;
    assert.equal(done.status, 'done');
    assert.equal(done.versions_written, 0);
    assert.deepEqual(await history('a'), before);
  });

  describe('what POST refuses, storing nothing', () => {
    const refused = async (body: unknown, status: number, code: string, param?: string) => {
      const runs = await backfills();
      const res = await t.api.post('/api/health-scores/backfill', body);
      assert.equal(res.status, status, res.raw);
      assert.equal(res.body.error.code, code, res.raw);
      assert.equal(res.body.error.param, param, res.raw);
      assert.deepEqual(await backfills(), runs);
      return res;
    };
    const ago = (days: number) => new Date(clock.ms - days * DAY).toISOString().slice(0, 10);

    for (const from of ['2026-13-01', '2026-02-30', '2026-6-1', 'yesterday', '2026-06-01T00:00:00Z', '']) {
      test(`from ${JSON.stringify(from)}: 400 parameter_invalid (from)`, async () => {
        await refused({ from }, 400, 'parameter_invalid', 'from');
      });
    }
    test('from missing: 400 parameter_missing (from)', async () => {
      await refused({}, 400, 'parameter_missing', 'from');
    });
    test('from after today: 400; today is accepted', async () => {
      await refused({ from: '2026-06-11' }, 400, 'parameter_invalid', 'from');
    });
    test('from more than 730 days back: 400; 730 is accepted', async () => {
      const res = await refused({ from: ago(731) }, 400, 'parameter_invalid', 'from');
      assert.match(res.body.error.message, /730 days/);
      const ok = await t.api.post('/api/health-scores/backfill', { from: ago(730), customer_ids: ['b'] });
      assert.equal(ok.status, 202, ok.raw);
      await t.app.backfills.settled(ok.body.id);
    });
    test('customer_ids empty, over 1,000, not strings: 400 parameter_invalid (customer_ids)', async () => {
      await refused({ from: '2026-06-01', customer_ids: [] }, 400, 'parameter_invalid', 'customer_ids');
      const many = Array.from({ length: 1001 }, (_, i) => `c${i}`);
      await refused({ from: '2026-06-01', customer_ids: many }, 400, 'parameter_invalid', 'customer_ids');
      await refused({ from: '2026-06-01', customer_ids: [1] }, 400, 'parameter_invalid', 'customer_ids.0');
    });
    test('unknown customer_ids: 400 naming them', async () => {
      const res = await refused(
        { from: '2026-06-01', customer_ids: ['a', 'nobody', 'ghost'] },
        400,
        'parameter_invalid',
        'customer_ids',
      );
      assert.match(res.body.error.message, /'ghost', 'nobody'/);
    });
    test('an unknown field: 400 parameter_unknown', async () => {
      await refused({ from: '2026-06-01', to: '2026-06-05' }, 400, 'parameter_unknown', 'to');
    });
    test('a second backfill while one runs: 409 backfill_running, naming it', async () => {
      const held = {
        id: 'bf_heldelsewhere',
        status: 'running' as const,
        fromDay: 20_600,
        customerIds: null,
        customersTotal: 4,
        customersDone: 0,
        versionsWritten: 0,
        cursor: null,
        startedAt: clock.ms,
        finishedAt: null,
        error: null,
        leaseOwner: 'another process',
        leaseExpiresAt: clock.ms + 60_000,
      };
      assert.equal(await transaction(t.store, (tx) => tx.insertBackfill(accountId, held)), true);
      const res = await refused({ from: '2026-06-01' }, 409, 'backfill_running');
      assert.match(res.body.error.message, /bf_heldelsewhere/);
      await transaction(t.store, (tx) =>
        tx.updateBackfill(accountId, { ...held, status: 'done', finishedAt: clock.ms }),
      );
    });
  });

  describe('one account never sees another’s', () => {
    let other: Client;
    before(async () => {
      other = await t.newAccount('other');
    });
    test('another account’s backfill is 404 backfill_not_found, and its list is empty', async () => {
      const res = await other.get(`/api/health-scores/backfill/${run.id}`);
      assert.equal(res.status, 404, res.raw);
      assert.equal(res.body.error.code, 'backfill_not_found');
      assert.deepEqual((await other.get('/api/health-scores/backfill')).body.data, []);
    });
    test('a backfill of another account’s customer ids: 400 naming them', async () => {
      const res = await other.post('/api/health-scores/backfill', {
        from: '2026-06-01',
        customer_ids: ['a'],
      });
      assert.equal(res.status, 400, res.raw);
      assert.equal(res.body.error.param, 'customer_ids');
    });
  });
});
