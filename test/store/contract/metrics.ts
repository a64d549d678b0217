// Metric points and factor rules (store.ts: listFactorRules, putFactorRule, deleteFactorRule,
// insertMetricPoints, listMetricPoints, metricSummaries, metricNames), on every backend.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DAY_MS, type FactorRule, METRIC_VALUE_MAX, summarize } from '../../../src/domain/rules.ts';
import { transaction } from '../../helpers/transaction.ts';
import { type ContractContext, customer, score, T0 } from './context.ts';

const rule = (factor: string, extra: Partial<FactorRule> = {}): FactorRule => ({
  factor,
  metric: 'logins',
  aggregate: 'sum',
  windowDays: 30,
  scale: { type: 'linear', from: 0, to: 20 },
  maxAgeDays: null,
  gate: null,
  updatedAt: T0,
  ...extra,
});

export function metricsContract(c: ContractContext): void {
  describe('metrics and factor rules', () => {
    test('factor rules: put creates or replaces, listed by factor name, deleted once; another account sees none', async () => {
      const store = c.store();
      const a = await c.account();
      const steps = {
        type: 'steps' as const,
        steps: [
          { min: 0, score: 0.2 },
          { min: 5, score: 1 },
        ],
      };
      await transaction(store, async (tx) => {
        await tx.putFactorRule(a, rule('usage', { gate: { below: 0.25, status: 'at_risk' } }));
        await tx.putFactorRule(
          a,
          rule('billing', {
            metric: 'days_overdue',
            aggregate: 'last',
            windowDays: null,
            maxAgeDays: 7,
            scale: { type: 'linear', from: 30, to: 0 },
            gate: { below: 0.5, status: 'critical' },
          }),
        );
        // Replaced without a gate: the gate goes with the rest.
        await tx.putFactorRule(a, rule('usage', { aggregate: 'avg', scale: steps, updatedAt: T0 + 1 }));
      });
      assert.deepEqual(await store.listFactorRules(a), [
        rule('billing', {
          metric: 'days_overdue',
          aggregate: 'last',
          windowDays: null,
          maxAgeDays: 7,
          scale: { type: 'linear', from: 30, to: 0 },
          gate: { below: 0.5, status: 'critical' },
        }),
        rule('usage', { aggregate: 'avg', scale: steps, updatedAt: T0 + 1 }),
      ]);
      assert.deepEqual(await store.listFactorRules(await c.account()), []);
      assert.equal(await transaction(store, (tx) => tx.deleteFactorRule(a, 'usage')), true);
      assert.equal(await transaction(store, (tx) => tx.deleteFactorRule(a, 'usage')), false);
      assert.equal(await transaction(store, (tx) => tx.deleteFactorRule(a, 'bill\0ing')), false);
      assert.deepEqual(
        (await store.listFactorRules(a)).map((r) => r.factor),
        ['billing'],
      );
    });

    test('a write of more points than one statement may carry parameters for (a full metric batch: 1,000 × 50)', async () => {
      const store = c.store();
      const a = await c.account();
      // 14,000 points of 5 parameters each: more than PostgreSQL's 65,534 in one statement.
      const points = Array.from({ length: 14_000 }, (_, i) => ({
        customerId: 'bulk',
        metric: `m${i % 50}`,
        at: T0 + Math.floor(i / 50) * 1000,
        value: i,
      }));
      await transaction(store, async (tx) => {
        await tx.insertCustomer(a, customer('bulk'));
        await tx.insertMetricPoints(a, points);
      });
      const listed = await store.listMetricPoints(a, 'bulk', { metric: 'm49', limit: 1 });
      assert.deepEqual(
        listed.data.map((p) => p.value),
        [13_999],
      );
      const count = (metric: string): FactorRule => ({
        factor: metric,
        metric,
        aggregate: 'count',
        windowDays: 1,
        maxAgeDays: null,
        scale: { type: 'linear', from: 0, to: 1 },
        updatedAt: T0,
      });
      const found = await transaction(store, (tx) =>
        tx.metricSummaries(a, ['bulk'], [count('m0'), count('m49')], T0 + 14_000_000, T0 + 14_000_000),
      );
      assert.deepEqual(
        found.get('bulk')?.map((s) => s.count),
        [280, 280],
      );
    });

    test('points are sent when insertMetricPoints is called: reads called after it, before it settles, see them', async () => {
      const store = c.store();
      const a = await c.account();
      await transaction(store, (tx) => tx.insertCustomer(a, customer('sent')));
      const rules = [rule('usage'), rule('seats', { metric: 'seats', aggregate: 'last', windowDays: null })];
      const [, summaries, listed] = await transaction(store, async (tx) => {
        // Not awaited between: a metric write reads its rules' windows in the same round trip.
        const inserting = tx.insertMetricPoints(a, [
          { customerId: 'sent', metric: 'logins', at: T0 - 1000, value: 3 },
          { customerId: 'sent', metric: 'logins', at: T0, value: 4 },
          { customerId: 'sent', metric: 'seats', at: T0, value: 12 },
        ]);
        return Promise.all([
          inserting,
          tx.metricSummaries(a, ['sent'], rules, T0, T0),
          tx.listMetricPoints(a, 'sent', { limit: 10 }),
        ]);
      });
      const [usage, seats] = summaries.get('sent') ?? [];
      assert.deepEqual([usage?.count, usage?.sum, seats?.last], [2, 7, 12]);
      assert.equal(listed.data.length, 3);
    });

    test('metric points: a point at an instant the metric has replaces it; listed newest first, then by name, in pages', async () => {
      const store = c.store();
      const a = await c.account();
      await transaction(store, async (tx) => {
        await tx.insertCustomer(a, customer('m1'));
        await tx.insertCustomer(a, customer('m2'));
        await tx.insertMetricPoints(a, [
          { customerId: 'm1', metric: 'logins', at: T0, value: 3 },
          { customerId: 'm1', metric: 'tickets', at: T0, value: -1.5 },
          { customerId: 'm1', metric: 'logins', at: T0 + DAY_MS, value: 4 },
          { customerId: 'm2', metric: 'logins', at: T0, value: 99 },
          // The same instant twice in one write: the last one given stays.
          { customerId: 'm1', metric: 'logins', at: T0 + DAY_MS, value: 5 },
        ]);
      });
      await transaction(store, (tx) =>
        tx.insertMetricPoints(a, [{ customerId: 'm1', metric: 'logins', at: T0, value: 7 }]),
      );
      const all = await store.listMetricPoints(a, 'm1', { limit: 10 });
      assert.deepEqual(
        all.data.map((p) => [p.metric, p.at - T0, p.value]),
        [
          ['logins', DAY_MS, 5],
          ['logins', 0, 7],
          ['tickets', 0, -1.5],
        ],
      );
      assert.equal(all.hasMore, false);
      const first = await store.listMetricPoints(a, 'm1', { limit: 2 });
      assert.equal(first.hasMore, true);
      const last = first.data.at(-1);
      assert.ok(last);
      const rest = await store.listMetricPoints(a, 'm1', {
        limit: 2,
        after: { at: last.at, metric: last.metric },
      });
      assert.deepEqual(
        rest.data.map((p) => p.metric),
        ['tickets'],
      );
      assert.equal(rest.hasMore, false);
      const logins = await store.listMetricPoints(a, 'm1', { metric: 'logins', limit: 10 });
      assert.deepEqual(
        logins.data.map((p) => p.value),
        [5, 7],
      );
      assert.deepEqual((await store.listMetricPoints(a, 'm\0', { limit: 10 })).data, []);
      assert.deepEqual((await store.listMetricPoints(await c.account(), 'm1', { limit: 10 })).data, []);
    });

    test('metricSummaries: each rule’s summary of each customer’s points, as summarize() makes it from the points', async () => {
      const store = c.store();
      const a = await c.account();
      const points = [
        { customerId: 'p1', metric: 'logins', at: T0 - 3 * DAY_MS, value: 1 },
        { customerId: 'p1', metric: 'logins', at: T0 - 2 * DAY_MS, value: 2 },
        { customerId: 'p1', metric: 'logins', at: T0 - DAY_MS, value: 3.5 },
        { customerId: 'p1', metric: 'logins', at: T0 + 60_000, value: 4 }, // dated ahead
        { customerId: 'p1', metric: 'seats', at: T0 - 40 * DAY_MS, value: 10 },
        { customerId: 'p1', metric: 'other', at: T0 - DAY_MS, value: 99 },
        { customerId: 'p2', metric: 'logins', at: T0 - 20 * DAY_MS, value: 6 }, // before a 7-day window
        { customerId: 'p2', metric: 'seats', at: T0, value: 12 },
        { customerId: 'p2', metric: 'seats', at: T0 - 10 * DAY_MS, value: 11 },
      ];
      await transaction(store, async (tx) => {
        for (const id of ['p1', 'p2', 'p3']) await tx.insertCustomer(a, customer(id));
        await tx.insertMetricPoints(a, points);
      });
      const rule = (
        factor: string,
        metric: string,
        aggregate: FactorRule['aggregate'],
        windowDays: number | null,
        maxAgeDays: number | null = null,
      ): FactorRule => ({
        factor,
        metric,
        aggregate,
        windowDays,
        maxAgeDays,
        scale: { type: 'linear', from: 0, to: 10 },
        updatedAt: T0,
      });
      const rules = [
        rule('week', 'logins', 'sum', 7),
        rule('month_avg', 'logins', 'avg', 30, 5),
        rule('same_window', 'logins', 'max', 7),
        rule('seats', 'seats', 'last', null, 30),
        rule('seat_count', 'seats', 'count', 30),
        // `last` over a window: the newest point in it, read alone (p1's seats: none in it, so the
        // newest before it is looked up), beside rules of another aggregate over the same window.
        rule('recent_seats', 'seats', 'last', 7),
        rule('recent_logins', 'logins', 'last', 7),
      ];
      const ids = ['p1', 'p2', 'p3', 'nobody', 'x\u0000y'];
      const found = await transaction(store, (tx) => tx.metricSummaries(a, ids, rules, T0, T0 + 5 * 60_000));
      assert.deepEqual([...found.keys()], ['p1', 'p2', 'p3', 'nobody']);
      for (const id of ['p1', 'p2', 'p3', 'nobody']) {
        const own = points.filter((p) => p.customerId === id);
        assert.deepEqual(
          found.get(id),
          rules.map((r) =>
            summarize(
              r,
              own.filter((p) => p.metric === r.metric),
              T0,
            ),
          ),
          id,
        );
      }
      // By hand, for p1's week: three points in the window, one coming due in a minute.
      assert.deepEqual(found.get('p1')?.[0], {
        count: 3,
        sum: 6.5,
        min: 1,
        max: 3.5,
        last: null, // a sum rule's summary has no last
        oldestAt: T0 - 3 * DAY_MS,
        newestAt: T0 - DAY_MS,
        nextAt: T0 + 60_000,
      });
      assert.equal((await store.metricSummaries(a, [], rules, T0, T0)).size, 0);
      assert.deepEqual(
        (await store.metricSummaries(await c.account(), ['p1'], rules, T0, T0 + DAY_MS)).get('p1')?.[0]
          ?.count,
        0,
        'another account sees none of these points',
      );
    });

    test('metricSummaries: a point stored beyond ±METRIC_VALUE_MAX counts as the bound, so no aggregate overflows', async () => {
      const store = c.store();
      const a = await c.account();
      // What a release before the bound may have stored: PostgreSQL's SUM of two raised `value out
      // of range`, SQLite's was Infinity.
      const points = [
        { customerId: 'huge', metric: 'logins', at: T0 - 3 * DAY_MS, value: 1.7e308 },
        { customerId: 'huge', metric: 'logins', at: T0 - 2 * DAY_MS, value: Number.MAX_VALUE },
        { customerId: 'huge', metric: 'logins', at: T0 - DAY_MS, value: 2 },
        { customerId: 'tiny', metric: 'logins', at: T0 - 2 * DAY_MS, value: -1.7e308 },
        { customerId: 'tiny', metric: 'logins', at: T0 - DAY_MS, value: -1.7e308 },
        { customerId: 'both', metric: 'logins', at: T0 - 2 * DAY_MS, value: 1.7e308 },
        { customerId: 'both', metric: 'logins', at: T0 - DAY_MS, value: -1.7e308 },
      ];
      await transaction(store, async (tx) => {
        for (const id of ['huge', 'tiny', 'both']) await tx.insertCustomer(a, customer(id));
        await tx.insertMetricPoints(a, points);
      });
      const rules = (['sum', 'avg', 'min', 'max', 'last'] as const).map((aggregate) =>
        rule(aggregate, { aggregate, windowDays: 7 }),
      );
      const found = await store.metricSummaries(a, ['huge', 'tiny', 'both'], rules, T0, T0);
      for (const id of ['huge', 'tiny', 'both']) {
        const own = points.filter((p) => p.customerId === id);
        assert.deepEqual(
          found.get(id),
          rules.map((r) => summarize(r, own, T0)),
          id,
        );
      }
      const sums = ['huge', 'tiny', 'both'].map((id) => found.get(id)?.[0]?.sum);
      assert.deepEqual(sums, [2 * METRIC_VALUE_MAX + 2, -2 * METRIC_VALUE_MAX, 0]);
      assert.deepEqual(found.get('huge')?.[3]?.max, METRIC_VALUE_MAX);
      assert.deepEqual(found.get('huge')?.[4]?.last, 2);
      assert.deepEqual(found.get('tiny')?.[4]?.last, -METRIC_VALUE_MAX);
    });

    test('pruneMetricPoints: at most `limit` points dated before `before`, oldest first, across accounts', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const b = await account();
      await transaction(store, async (tx) => {
        await tx.insertCustomer(a, customer('old'));
        await tx.insertCustomer(b, customer('old'));
        await tx.insertMetricPoints(
          a,
          [1, 2, 3, 10].map((d) => ({ customerId: 'old', metric: 'x', at: T0 + d, value: d })),
        );
        await tx.insertMetricPoints(b, [{ customerId: 'old', metric: 'x', at: T0, value: 0 }]);
      });
      assert.equal(await store.pruneMetricPoints(T0 + 3, 2), 2);
      assert.deepEqual(
        (await store.listMetricPoints(a, 'old', { limit: 10 })).data.map((p) => p.value),
        [10, 3, 2],
      );
      assert.deepEqual((await store.listMetricPoints(b, 'old', { limit: 10 })).data, []);
      assert.equal(await store.pruneMetricPoints(T0 + 3, 2), 1);
      assert.equal(await store.pruneMetricPoints(T0 + 3, 2), 0);
    });

    test('rederive due times: set, listed when due oldest first across accounts, claimed, cleared with null', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const b = await account();
      await transaction(store, async (tx) => {
        for (const id of ['d1', 'd2', 'd3']) await tx.insertCustomer(a, customer(id));
        await tx.insertCustomer(b, customer('d1'));
        await tx.setRederiveDue(a, [
          { customerId: 'd1', at: T0 + 20 },
          { customerId: 'd2', at: T0 + 10 },
          { customerId: 'd3', at: T0 + 99 },
        ]);
        await tx.setRederiveDue(b, [{ customerId: 'd1', at: T0 + 15 }]);
      });
      assert.deepEqual(await store.dueForRederive(T0 + 20, 10), [
        { accountId: a, customerId: 'd2' },
        { accountId: b, customerId: 'd1' },
        { accountId: a, customerId: 'd1' },
      ]);
      assert.equal((await store.dueForRederive(T0 + 20, 1)).length, 1);
      assert.deepEqual(
        await store.dueForRederive(T0 + 20, 1, [a]),
        [{ accountId: b, customerId: 'd1' }],
        'an account skipped (its pass failed): the others are listed',
      );
      assert.deepEqual(await store.dueForRederive(T0 + 20, 10, [a, b]), []);
      assert.deepEqual(
        await transaction(store, (tx) => tx.claimRederiveDue(a, ['d1', 'd2', 'd3', 'nobody'], T0 + 20)),
        ['d1', 'd2'],
      );
      await transaction(store, (tx) =>
        tx.setRederiveDue(a, [
          { customerId: 'd1', at: null },
          { customerId: 'd2', at: T0 + 50 },
        ]),
      );
      assert.deepEqual(await store.dueForRederive(T0 + 20, 10), [{ accountId: b, customerId: 'd1' }]);
      assert.deepEqual(await transaction(store, (tx) => tx.claimRederiveDue(a, [], T0 + 99)), []);
      // Earlier only: a later time and null change nothing; an earlier one, or a first, is set.
      await transaction(store, (tx) =>
        tx.setRederiveDue(
          a,
          [
            { customerId: 'd2', at: T0 + 60 }, // later than its T0 + 50: kept
            { customerId: 'd3', at: T0 + 30 }, // earlier than its T0 + 99: set
            { customerId: 'd1', at: T0 + 40 }, // none: set
          ],
          { earlierOnly: true },
        ),
      );
      await transaction(store, (tx) =>
        tx.setRederiveDue(a, [{ customerId: 'd2', at: null }], { earlierOnly: true }),
      );
      assert.deepEqual(
        (await store.dueForRederive(T0 + 99, 10)).filter((d) => d.accountId === a).map((d) => d.customerId),
        ['d3', 'd1', 'd2'],
      );
    });

    test('rederiveTargets: customers with a score or a point of these metrics, by id, in pages, each with its score and whether it is due', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const b = await account();
      await transaction(store, async (tx) => {
        for (const id of ['t1', 't2', 't3', 't4', 't5']) await tx.insertCustomer(a, customer(id));
        await tx.insertCustomer(b, customer('t3'));
        await tx.writeScores(a, [score('t2', 0.5), score('t5', 0.25)], 'factors_updated');
        await tx.insertMetricPoints(a, [
          { customerId: 't3', metric: 'logins', at: T0, value: 1 },
          { customerId: 't4', metric: 'other', at: T0, value: 1 },
        ]);
        await tx.setRederiveDue(a, [
          { customerId: 't2', at: T0 + 20 },
          { customerId: 't3', at: T0 + 10 },
          { customerId: 't5', at: T0 + 99 },
        ]);
        await tx.setRederiveDue(b, [{ customerId: 't3', at: T0 }]);
      });
      const ids = async (...args: Parameters<typeof store.rederiveTargets>) =>
        (await store.rederiveTargets(...args)).map((x) => x.customerId);
      assert.deepEqual(await ids(a, ['logins'], null, 10, null), ['t2', 't3', 't5']);
      assert.deepEqual(await ids(a, ['logins'], null, 1, null), ['t2']);
      assert.deepEqual(await ids(a, ['logins'], 't2', 10, null), ['t3', 't5']);
      assert.deepEqual(await ids(a, [], null, 10, null), ['t2', 't5']);
      assert.deepEqual(await ids(await account(), ['logins'], null, 10, null), []);
      // Each with its score as stored (null: none yet), unlocked.
      const found = await store.rederiveTargets(a, ['logins'], null, 10, T0 + 20);
      assert.deepEqual(
        found.map((x) => [x.customerId, x.score?.score ?? null, x.score?.version ?? null]),
        [
          ['t2', 0.5, 1],
          ['t3', null, null],
          ['t5', 0.25, 1],
        ],
      );
      assert.deepEqual(found[0]?.score, (await store.getScore(a, 't2')) ?? undefined);
      // Due at the time asked (t2 at T0 + 20, t3 at T0 + 10; t5 later; b's t3 is not a's).
      assert.deepEqual(
        found.map((x) => [x.customerId, x.due]),
        [
          ['t2', true],
          ['t3', true],
          ['t5', false],
        ],
      );
      const earlier = await store.rederiveTargets(a, ['logins'], null, 10, T0 + 19);
      assert.deepEqual(
        earlier.map((x) => x.due),
        [false, true, false],
      );
      // No time asked: none is told due.
      assert.deepEqual(
        (await store.rederiveTargets(a, ['logins'], null, 10, null)).map((x) => x.due),
        [false, false, false],
      );
    });

    test("a customer's points go with it", async () => {
      const store = c.store();
      const a = await c.account();
      await transaction(store, async (tx) => {
        await tx.insertCustomer(a, customer('gone'));
        await tx.insertMetricPoints(a, [{ customerId: 'gone', metric: 'logins', at: T0, value: 1 }]);
      });
      await transaction(store, (tx) => tx.deleteCustomer(a, 'gone'));
      await transaction(store, (tx) => tx.insertCustomer(a, customer('gone')));
      assert.deepEqual((await store.listMetricPoints(a, 'gone', { limit: 10 })).data, []);
    });

    test('metricNames: each name by name with its customers, points and newest instant, counted across slices; the event loop runs between them', async () => {
      const store = c.store();
      const a = await c.account();
      assert.deepEqual(await store.metricNames(a), [], 'an account without points has no names');
      // 250 customers: more than one slice (the first is of 100), so the slices' counts must add up.
      const ids = Array.from({ length: 250 }, (_, i) => `n${String(i).padStart(3, '0')}`);
      const points = ids.flatMap((id, i) => [
        { customerId: id, metric: 'logins', at: T0 + i * 1000, value: 1 },
        { customerId: id, metric: 'logins', at: T0 - DAY_MS, value: 2 },
        ...(i % 2 === 0 ? [{ customerId: id, metric: 'tickets', at: T0 - i, value: i }] : []),
        ...(i === 249 ? [{ customerId: id, metric: 'days_overdue', at: T0 + 5, value: 40 }] : []),
      ]);
      await transaction(store, async (tx) => {
        for (const id of ids) await tx.insertCustomer(a, customer(id));
        await tx.insertCustomer(a, customer('no_points'));
        await tx.insertMetricPoints(a, points);
      });
      const other = await c.account();
      await transaction(store, async (tx) => {
        await tx.insertCustomer(other, customer('n000'));
        await tx.insertMetricPoints(other, [{ customerId: 'n000', metric: 'seats', at: T0, value: 3 }]);
      });
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      const names = await store.metricNames(a);
      assert.equal(turned, true, 'other work ran while the names were read');
      assert.deepEqual(names, [
        { name: 'days_overdue', customers: 1, points: 1, lastAt: T0 + 5 },
        { name: 'logins', customers: 250, points: 500, lastAt: T0 + 249_000 },
        { name: 'tickets', customers: 125, points: 125, lastAt: T0 },
      ]);
      assert.deepEqual(await store.metricNames(other), [
        { name: 'seats', customers: 1, points: 1, lastAt: T0 },
      ]);
      // A deleted customer's points go with it, and so do the names only it had.
      await transaction(store, (tx) => tx.deleteCustomer(a, 'n249'));
      assert.deepEqual(
        (await store.metricNames(a)).map((n) => [n.name, n.customers, n.points]),
        [
          ['logins', 249, 498],
          ['tickets', 125, 125],
        ],
      );
    });
  });
}
