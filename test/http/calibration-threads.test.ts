// The calibration off the main thread and bounded per account (docs/api.md, "Outcomes and
// calibration"; docs/operations.md, "The calibration threads"): the threads answer exactly what
// calibrate() answers on the main thread; identical requests in flight share one computation;
// five different ones at once are all answered; a thread that dies fails its request alone; and
// while one account runs eight calibrations, another account's list and its own calibration are
// not held behind them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, type Response, type TestApp } from '../helpers/app.ts';
import { calibrationHere, seedJudgedOutcomes } from '../helpers/judged-outcomes.ts';

const CALIBRATION = '/api/health-scores/calibration';

/** vitals_calibrations_computed_total so far. */
async function computed(t: TestApp): Promise<number> {
  const text = await t.metrics.registry.getSingleMetricAsString('vitals_calibrations_computed_total');
  return Number(/^vitals_calibrations_computed_total (\d+)$/m.exec(text)?.[1]);
}

describe('calibration threads', () => {
  let t: TestApp;
  let a: string;
  let other: Client;
  let b: string;
  before(async () => {
    // Keys cached: requests sent at once reach the route within a few turns of the event loop,
    // well inside one calibration, without a database round trip each first.
    t = await buildTestApp({ keyCacheTtlMs: 60_000 });
    a = (await t.store.ensureAccount('default', Date.now())).id;
    // 2,000 outcomes of 30 factors: pages of the reads, a factor only the later pages have, a fit
    // of 30 columns.
    await seedJudgedOutcomes(t.store, a, { customers: 2000, factors: 30 });
    other = await t.newAccount('other');
    b = (await t.store.ensureAccount('other', Date.now())).id;
    await seedJudgedOutcomes(t.store, b, { customers: 60, factors: 3, prefix: 'b' });
  });
  after(() => t.close());

  test('the report is what calibrate() answers on the main thread, bit for bit', async () => {
    for (const [query, horizon, segment] of [
      ['', 0, undefined],
      ['?horizon_days=7&metadata[plan]=pro', 7, { metadata: [{ key: 'plan', value: 'pro' }] }],
    ] as const) {
      const res = await t.api.get(CALIBRATION + query);
      assert.equal(res.status, 200, res.raw);
      assert.ok(res.body.outcomes.unscored > 0, 'some outcomes have no score then');
      assert.ok(
        res.body.factors.some((f: { factor: string }) => f.factor === 'f29'),
        'a factor of later pages',
      );
      assert.deepEqual(res.body, await calibrationHere(t.store, a, horizon, segment));
    }
  });

  test('identical requests at once share one computation', async () => {
    const before = await computed(t);
    const answers = await Promise.all(
      // The same segment spelled in two orders is the same calibration.
      Array.from({ length: 6 }, (_, i) =>
        t.api.get(
          `${CALIBRATION}?horizon_days=3&${i % 2 ? 'metadata[plan]=basic&metadata[region]=emea' : 'metadata[region]=emea&metadata[plan]=basic'}`,
        ),
      ),
    );
    for (const res of answers) {
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body, answers[0]?.body);
    }
    assert.ok((answers[0]?.body.outcomes.churned ?? 0) > 0, 'a calibration with outcomes to judge');
    assert.equal(await computed(t), before + 1);
    // Once answered, the next identical request is computed anew (nothing is cached).
    assert.equal(
      (await t.api.get(`${CALIBRATION}?horizon_days=3&metadata[plan]=basic&metadata[region]=emea`)).status,
      200,
    );
    assert.equal(await computed(t), before + 2);
  });

  test('five different at once from one account: each answered with its own report', async () => {
    const before = await computed(t);
    const queries: [string, number, { metadata: { key: string; value: string }[] } | undefined][] = [
      ['?horizon_days=0', 0, undefined],
      ['?horizon_days=1', 1, undefined],
      ['?horizon_days=2', 2, undefined],
      ['?horizon_days=30', 30, undefined],
      ['?metadata[plan]=basic', 0, { metadata: [{ key: 'plan', value: 'basic' }] }],
    ];
    const answers = await Promise.all(queries.map(([query]) => t.api.get(CALIBRATION + query)));
    for (const [i, res] of answers.entries()) {
      const [, horizon, segment] = queries[i] as (typeof queries)[number];
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body, await calibrationHere(t.store, a, horizon, segment));
    }
    assert.equal(await computed(t), before + 5);
  });

  test("another account's list and calibration are answered while one account runs eight", async () => {
    const order: string[] = [];
    const answered = async (name: string, p: Promise<Response>) => {
      const res = await p;
      assert.equal(res.status, 200, res.raw);
      order.push(name);
      return res;
    };
    const calibrations = Promise.all(
      Array.from({ length: 8 }, (_, h) => answered(`a${h}`, t.api.get(`${CALIBRATION}?horizon_days=${h}`))),
    );
    let finished = false;
    void calibrations.finally(() => {
      finished = true;
    });
    // The other account reads its list one request after another for as long as A's run.
    const lists = (async () => {
      let n = 0;
      do {
        // Each request comes as a client's would, from the event loop (inject alone would keep
        // the loop in microtasks, where nothing else, the threads' answers included, ever runs).
        await new Promise((resolve) => setImmediate(resolve));
        const res = await answered('list', other.get('/api/customers?limit=100'));
        assert.equal(res.body.customers.length, 60);
        n++;
      } while (!finished);
      return n;
    })();
    const own = answered('other calibration', other.get(CALIBRATION));
    await Promise.all([calibrations, lists, own]);
    assert.deepEqual((await own).body, await calibrationHere(t.store, b, 0));
    const firstOfA = order.findIndex((name) => name.startsWith('a'));
    const summary = `answered in the order ${order.join(', ')}`;
    // On the main thread, A's reports held every other request from the first one's computation on.
    assert.ok(order.slice(0, firstOfA).filter((n) => n === 'list').length >= 5, summary);
    // Two of A's run at once; the other account's turn comes before A's third.
    assert.ok(order.indexOf('other calibration') < order.indexOf('a2'), summary);
  });
});

describe('a calibration thread that dies', () => {
  let t: TestApp;
  let small: Client;
  let smallId: string;
  before(async () => {
    // A heap of 16 MB: room for a few hundred outcomes of 50 factors, not for 3,000.
    t = await buildTestApp({ calibration: { threads: 1, heapMb: 16 } });
    await seedJudgedOutcomes(t.store, (await t.store.ensureAccount('default', Date.now())).id, {
      customers: 3000,
      factors: 50,
    });
    small = await t.newAccount('small');
    smallId = (await t.store.ensureAccount('small', Date.now())).id;
    await seedJudgedOutcomes(t.store, smallId, { customers: 60, factors: 3, prefix: 's' });
  });
  after(() => t.close());

  test('fails its own request (500), and the next is computed on a new thread', async () => {
    const before = await computed(t);
    const big = await t.api.get(CALIBRATION);
    assert.equal(big.status, 500, big.raw);
    assert.equal(big.body.error.code, 'internal_error');
    const next = await small.get(CALIBRATION);
    assert.equal(next.status, 200, next.raw);
    assert.deepEqual(next.body, await calibrationHere(t.store, smallId, 0));
    assert.match(t.logs(), /memory limit/);
    assert.equal(await computed(t), before + 1);
  });
});
