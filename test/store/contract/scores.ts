import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_THRESHOLDS } from '../../../src/domain/scoring.ts';
import type { ScoreRecord } from '../../../src/store/store.ts';
import { transaction } from '../../helpers/transaction.ts';
import {
  anEvent,
  type ContractContext,
  pendingDeliveries,
  plainScore,
  score,
  seedCustomers,
  seedEvents,
  T0,
  webhook,
} from './context.ts';

export function scoresContract(c: ContractContext): void {
  describe('health scores', () => {
    test('the first score is version 1; a later version replaces it; floats and factor order round-trip', async () => {
      const store = c.store();
      const a = await c.account();
      await seedCustomers(store, a, ['s1']);
      const first = score('s1', 1 / 3, 1, { factors: { usage: 1 / 3, billing: 0.1 + 0.2, api_calls: 0 } });
      await transaction(store, (tx) => tx.writeScores(a, [first], 'factors_updated'));
      assert.deepEqual(plainScore(await store.getScore(a, 's1')), first);
      assert.deepEqual(Object.keys((await store.getScore(a, 's1'))?.factors ?? {}), [
        'usage',
        'billing',
        'api_calls',
      ]);
      const second = score('s1', 0.9, 2);
      await transaction(store, (tx) => tx.writeScores(a, [second], 'factors_updated'));
      assert.deepEqual(plainScore(await store.getScore(a, 's1')), second);
      assert.equal(await store.getScore(a, 'nobody'), null);
    });

    test('a recomputation keeps the factors and their inputs, in the score and in its history entry', async () => {
      const store = c.store();
      const a = await c.account();
      await seedCustomers(store, a, ['k1']);
      const inputs = {
        engagement: {
          metric: 'logins',
          aggregate: 'sum' as const,
          windowDays: 30,
          value: 42,
          points: 30,
          newestAt: T0,
        },
      };
      const first = score('k1', 0.5, 1, { factors: { usage: 0.4, engagement: 0.6 }, inputs });
      await transaction(store, (tx) => tx.writeScores(a, [first], 'factors_updated'));
      const current = await store.getScore(a, 'k1');
      assert.ok(current);
      // As a weights change writes it: the score as read (on SQLite with its factor text), a new score and weights.
      const recomputed = {
        ...current,
        score: 0.55,
        version: 2,
        updatedAt: T0 + 1,
        weights: { usage: 0.5, engagement: 0.5 },
      };
      await transaction(store, (tx) => tx.writeScores(a, [recomputed], 'weights_changed'));
      const after = await store.getScore(a, 'k1');
      assert.deepEqual(
        [after?.score, after?.version, after?.factors, after?.inputs],
        [0.55, 2, first.factors, inputs],
      );
      const [v2] = await store.explainedVersions(a, 'k1', [2]);
      assert.deepEqual(
        [v2?.score, v2?.factors, v2?.inputs, v2?.weights, v2?.reason],
        [0.55, first.factors, inputs, { usage: 0.5, engagement: 0.5 }, 'weights_changed'],
      );
    });

    test('a version already kept is refused, and the history keeps one entry per version', async () => {
      const store = c.store();
      const a = await c.account();
      await seedCustomers(store, a, ['s2']);
      await transaction(store, (tx) => tx.writeScores(a, [score('s2', 0.5, 1)], 'factors_updated'));
      await transaction(store, (tx) => tx.writeScores(a, [score('s2', 0.6, 2)], 'factors_updated'));
      await assert.rejects(
        transaction(store, (tx) => tx.writeScores(a, [score('s2', 0.7, 2)], 'factors_updated')),
      );
      await assert.rejects(
        transaction(store, (tx) => tx.writeScores(a, [score('s2', 0.7, 1)], 'factors_updated')),
      );
      assert.deepEqual(
        (await store.listHistory(a, 's2', { limit: 10 })).data.map((h) => [h.version, h.score]),
        [
          [2, 0.6],
          [1, 0.5],
        ],
      );
      assert.equal((await store.getScore(a, 's2'))?.score, 0.6);
    });

    test('scoresForUpdate: each existing customer with its score or null; unknown, NUL and other accounts absent', async () => {
      const store = c.store();
      const a = await c.account();
      const b = await c.account();
      await seedCustomers(store, a, ['u1', 'u2']);
      await seedCustomers(store, b, ['u3']);
      const first = score('u1', 0.4, 1);
      await transaction(store, (tx) => tx.writeScores(a, [first], 'factors_updated'));
      const found = await transaction(store, (tx) =>
        tx.scoresForUpdate(a, ['u2', 'u1', 'nobody', 'u\0', 'u3', 'u1']),
      );
      assert.deepEqual([...found.keys()].sort(), ['u1', 'u2']);
      assert.deepEqual(plainScore(found.get('u1') ?? null), first);
      assert.equal(found.get('u2'), null);
      assert.equal((await transaction(store, (tx) => tx.scoresForUpdate(a, []))).size, 0);
    });

    test('history: newest first, paged by version, each entry with its reason', async () => {
      const store = c.store();
      const a = await c.account();
      await seedCustomers(store, a, ['h1']);
      for (let v = 1; v <= 5; v++) {
        const reason = v === 3 ? 'weights_changed' : 'factors_updated';
        await transaction(store, (tx) => tx.writeScores(a, [score('h1', v / 10, v)], reason));
      }
      const first = await store.listHistory(a, 'h1', { limit: 2 });
      assert.deepEqual(
        first.data.map((h) => h.version),
        [5, 4],
      );
      assert.equal(first.hasMore, true);
      assert.deepEqual(first.data[0], {
        version: 5,
        score: 0.5,
        status: 'at_risk',
        factors: { usage: 0.5 },
        reason: 'factors_updated',
        createdAt: T0 + 5,
      });
      const next = await store.listHistory(a, 'h1', { limit: 2, before: 4 });
      assert.deepEqual(
        next.data.map((h) => [h.version, h.reason]),
        [
          [3, 'weights_changed'],
          [2, 'factors_updated'],
        ],
      );
      const last = await store.listHistory(a, 'h1', { limit: 2, before: 2 });
      assert.deepEqual(
        last.data.map((h) => h.version),
        [1],
      );
      assert.equal(last.hasMore, false);
    });

    test('versionAt: the version standing at an instant, the first before any; null without history', async () => {
      const store = c.store();
      const a = await c.account();
      const b = await c.account();
      await seedCustomers(store, a, ['va', 'va_none']);
      // Versions 1, 2 and 3 written at T0 + 10, + 20 and + 30 ms.
      for (let v = 1; v <= 3; v++) {
        const written = score('va', v / 10, v, { updatedAt: T0 + 10 * v });
        await transaction(store, (tx) => tx.writeScores(a, [written], 'factors_updated'));
      }
      const at = (ms: number) => store.versionAt(a, 'va', ms);
      assert.equal(await at(T0), 1, 'before the first: the first');
      assert.equal(await at(T0 + 10), 1, 'a change at that very instant counts as before');
      assert.equal(await at(T0 + 29), 2);
      assert.equal(await at(T0 + 30), 3);
      assert.equal(await at(T0 + 10 ** 12), 3);
      assert.equal(await store.versionAt(a, 'va_none', T0 + 30), null);
      assert.equal(await store.versionAt(a, 'nobody', T0 + 30), null);
      assert.equal(await store.versionAt(a, 'va\0', T0 + 30), null);
      assert.equal(await store.versionAt(b, 'va', T0 + 30), null, "another account's customer");
    });

    test('portfolio: by band, then score, then customer id byte-wise; a status filter; a cursor that crosses bands', async () => {
      const store = c.store();
      const a = await c.account();
      const values: [string, number][] = [
        ['h-b', 0.9],
        ['h-a', 0.9],
        ['r-1', 0.5],
        ['c-2', 0.1],
        ['c-1', 0.3],
        ['h-c', 0.7],
        ['r-0', 0.4],
        ['C-9', 0.1],
      ];
      await seedCustomers(
        store,
        a,
        values.map(([id]) => id),
      );
      await transaction(store, (tx) =>
        tx.writeScores(
          a,
          values.map(([id, v]) => score(id, v)),
          'factors_updated',
        ),
      );
      const order = ['C-9', 'c-2', 'c-1', 'r-0', 'r-1', 'h-c', 'h-a', 'h-b'];
      const all = await store.listScores(a, { limit: 100 });
      assert.deepEqual(
        all.data.map((s) => s.customerId),
        order,
      );
      const walked: string[] = [];
      let after: ScoreRecord | undefined;
      for (;;) {
        const page = await store.listScores(a, {
          limit: 3,
          after: after && { status: after.status, score: after.score, customerId: after.customerId },
        });
        walked.push(...page.data.map((s) => s.customerId));
        after = page.data.at(-1);
        if (!page.hasMore) break;
      }
      assert.deepEqual(walked, order);
      const atRisk = await store.listScores(a, { status: 'at_risk', limit: 1 });
      assert.deepEqual(
        atRisk.data.map((s) => s.customerId),
        ['r-0'],
      );
      assert.equal(atRisk.hasMore, true);
      const rest = await store.listScores(a, {
        status: 'at_risk',
        limit: 5,
        after: { status: 'at_risk', score: 0.4, customerId: 'r-0' },
      });
      assert.deepEqual(
        rest.data.map((s) => s.customerId),
        ['r-1'],
      );
      assert.equal(rest.hasMore, false);
      assert.deepEqual(await store.countScoresByStatus(a), { healthy: 3, at_risk: 2, critical: 3 });
      // A recomputation's walk: by customer id, byte-wise, in pages, from the first or after a bound.
      const byId = [...order].sort();
      const pages = await transaction(store, async (tx) => {
        const walked: string[][] = [];
        let bound: string | null = null;
        for (;;) {
          const scores = await tx.scoresAfter(a, bound, 3);
          walked.push(scores.map((s) => s.customerId));
          if (scores.length < 3) return walked;
          bound = scores.at(-1)?.customerId ?? null;
        }
      });
      assert.deepEqual(pages, [byId.slice(0, 3), byId.slice(3, 6), byId.slice(6)]);
      assert.deepEqual(
        (await transaction(store, (tx) => tx.scoresAfter(a, 'h-b', 100))).map((s) => s.customerId),
        byId.filter((id) => id > 'h-b'),
      );
    });

    test('counts are zero for every band before any score', async () => {
      const store = c.store();
      assert.deepEqual(await store.countScoresByStatus(await c.account()), {
        healthy: 0,
        at_risk: 0,
        critical: 0,
      });
    });

    test('bulk: thousands of scores, history rows, events and deliveries in one transaction each', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const n = 6500; // more than one statement's worth on PostgreSQL
      const ids = Array.from({ length: n }, (_, i) => `bulk_${String(i).padStart(5, '0')}`);
      await seedCustomers(store, a, ids);
      await transaction(store, (tx) =>
        tx.insertWebhook(a, webhook({ events: ['customer.health_score.updated'] })),
      );
      const first = ids.map((id, i) => score(id, (i % 100) / 100));
      await transaction(store, async (tx) => {
        await tx.writeScores(a, first, 'factors_updated');
        await tx.insertEvents(
          a,
          ids.map((id, i) => anEvent('customer.health_score.updated', T0 + i, { customer_id: id })),
        );
      });
      const second = first.map((s) => score(s.customerId, 1 - s.score, 2));
      await transaction(store, (tx) => tx.writeScores(a, second, 'weights_changed'));
      const counts = await store.countScoresByStatus(a);
      assert.equal(counts.healthy + counts.at_risk + counts.critical, n);
      assert.deepEqual(plainScore(await store.getScore(a, ids[n - 1] as string)), second[n - 1]);
      const history = await store.listHistory(a, ids[0] as string, { limit: 10 });
      assert.deepEqual(
        history.data.map((h) => [h.version, h.reason]),
        [
          [2, 'weights_changed'],
          [1, 'factors_updated'],
        ],
      );
      const newest = await store.listEvents(a, { limit: 2 });
      assert.deepEqual(
        newest.data.map((e) => e.data.customer_id),
        [ids[n - 1], ids[n - 2]],
        'events keep the order they were given in',
      );
      assert.equal(await pendingDeliveries(store, a), n);
    });
  });

  describe('settings', () => {
    test('before any change: no weights, the default thresholds, no timestamps', async () => {
      const store = c.store();
      const a = await c.account();
      const expected = {
        weights: {},
        weightsUpdatedAt: null,
        thresholds: DEFAULT_THRESHOLDS,
        thresholdsUpdatedAt: null,
        drop: null,
        alertsUpdatedAt: null,
      };
      assert.deepEqual(await store.getSettings(a), expected);
      assert.deepEqual(await transaction(store, (tx) => tx.getSettings(a, { forUpdate: true })), expected);
    });

    test('weights, thresholds and the drop alert rule are set independently; weight order round-trips', async () => {
      const store = c.store();
      const a = await c.account();
      await transaction(store, async (tx) => {
        await tx.getSettings(a, { forUpdate: true });
        await tx.putWeights(a, { usage: 0.5, billing: 0.25, api: 0.25 }, T0 + 1);
      });
      await transaction(store, (tx) => tx.putThresholds(a, { healthy: 0.8, at_risk: 0.3 }, T0 + 2));
      await transaction(store, (tx) => tx.putWeights(a, { zeta: 0.6, alpha: 0.4 }, T0 + 3));
      await transaction(store, (tx) => tx.putAlerts(a, { delta: 0.15, days: 7 }, T0 + 4));
      const settings = await store.getSettings(a);
      assert.deepEqual(settings, {
        weights: { zeta: 0.6, alpha: 0.4 },
        weightsUpdatedAt: T0 + 3,
        thresholds: { healthy: 0.8, at_risk: 0.3 },
        thresholdsUpdatedAt: T0 + 2,
        drop: { delta: 0.15, days: 7 },
        alertsUpdatedAt: T0 + 4,
      });
      await transaction(store, (tx) => tx.putAlerts(a, null, T0 + 5));
      assert.deepEqual((await store.getSettings(a)).drop, null);
      assert.equal((await store.getSettings(a)).thresholdsUpdatedAt, T0 + 2);
      assert.deepEqual(Object.keys(settings.weights), ['zeta', 'alpha']);
    });
  });

  describe('events', () => {
    test('get by id; list newest first, paged, filtered by type; data round-trips in key order', async () => {
      const store = c.store();
      const a = await c.account();
      const events = [
        anEvent('customer.created', T0, { z: 1, a: { y: 2, b: [3] } }),
        anEvent('customer.updated', T0 + 1),
        anEvent('customer.created', T0 + 2),
        anEvent('customer.deleted', T0 + 3),
        anEvent('customer.created', T0 + 4),
      ];
      await seedEvents(store, a, events.slice(0, 2));
      await seedEvents(store, a, events.slice(2));
      const first = events[0];
      assert.ok(first);
      const got = await store.getEvent(a, first.id);
      assert.deepEqual(got, first);
      assert.equal(JSON.stringify(got?.data), JSON.stringify(first.data));
      assert.equal(await store.getEvent(a, 'evt_missing'), null);

      const ids = events.map((e) => e.id).reverse();
      const page1 = await store.listEvents(a, { limit: 2 });
      assert.deepEqual(
        page1.data.map((e) => e.id),
        ids.slice(0, 2),
      );
      assert.equal(page1.hasMore, true);
      const page2 = await store.listEvents(a, { limit: 2, startingAfter: ids[1] });
      assert.deepEqual(
        page2.data.map((e) => e.id),
        ids.slice(2, 4),
      );
      const page3 = await store.listEvents(a, { limit: 2, startingAfter: ids[3] });
      assert.deepEqual(page3, { data: [events[0]], hasMore: false });

      const created = await store.listEvents(a, { type: 'customer.created', limit: 2 });
      assert.deepEqual(
        created.data.map((e) => e.id),
        [events[4]?.id, events[2]?.id],
      );
      assert.equal(created.hasMore, true);
      const createdRest = await store.listEvents(a, {
        type: 'customer.created',
        limit: 2,
        startingAfter: events[2]?.id,
      });
      assert.deepEqual(createdRest, { data: [events[0]], hasMore: false });
    });
  });
}
