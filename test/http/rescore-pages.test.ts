// A settings change recomputes every score a page of RESCORE_PAGE at a time, in one transaction
// (docs/api.md, "Settings"): an account larger than a page must come out as if it had been done at once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { scoreFactors } from '../../src/domain/health.ts';
import { RESCORE_PAGE } from '../../src/writes/rescore.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { transaction } from '../helpers/transaction.ts';

const N = 2 * RESCORE_PAGE + 7; // two whole pages and a part
const id = (i: number) => `p-${String(i).padStart(6, '0')}`;
/** A plain mean of 0.5 (at_risk) for all; with usage alone weighted, 1 (healthy) or 0 (critical): every score and band moves. */
const factors = (i: number) => ({ usage: i % 2, support: 1 - (i % 2) });

describe('a recomputation across pages', () => {
  let t: TestApp;
  let account: string;
  before(async () => {
    t = await buildTestApp();
    account = (await t.store.ensureAccount('default', 0)).id;
    const settings = await t.store.getSettings(account);
    await transaction(t.store, async (tx) => {
      const scores = [];
      for (let i = 0; i < N; i++) {
        await tx.insertCustomer(account, {
          id: id(i),
          name: `P ${i}`,
          email: `${i}@e.co`,
          metadata: {},
          createdAt: 1,
          updatedAt: 1,
        });
        scores.push(scoreFactors(id(i), null, factors(i), settings, 1).record);
      }
      await tx.writeScores(account, scores, 'factors_updated');
    });
  });
  after(() => t.close());

  test('the preview counts every page, and a weights change moves every score with its history and events', async () => {
    const preview = await t.api.post('/api/settings/health-score/weights/preview', { weights: { usage: 1 } });
    assert.equal(preview.status, 200);
    const odd = Math.floor(N / 2); // usage 1: healthy; the even ones critical
    assert.deepEqual(preview.body, {
      customers: N,
      scores_changed: N,
      band_changes: N,
      bands: { healthy: odd, at_risk: 0, critical: N - odd },
    });

    const res = await t.api.patch('/api/settings/health-score/weights', { weights: { usage: 1 } });
    assert.equal(res.status, 200);

    assert.deepEqual(await t.store.countScoresByStatus(account), preview.body.bands);
    for (const i of [0, 1, RESCORE_PAGE - 1, RESCORE_PAGE, RESCORE_PAGE + 1, 2 * RESCORE_PAGE, N - 1]) {
      const s = await t.store.getScore(account, id(i));
      assert.deepEqual([s?.score, s?.status, s?.version], [i % 2, i % 2 ? 'healthy' : 'critical', 2], id(i));
      const history = await t.store.listHistory(account, id(i), { limit: 5 });
      assert.deepEqual(
        history.data.map((h) => [h.version, h.reason]),
        [
          [2, 'weights_changed'],
          [1, 'factors_updated'],
        ],
      );
    }
    // One health_score.updated and one status.changed per customer (the seeding wrote no events).
    const count = async (type: 'customer.health_score.updated' | 'customer.status.changed') => {
      const customers = new Set<string>();
      let startingAfter: string | undefined;
      for (;;) {
        const page = await t.store.listEvents(account, { type, limit: 1000, startingAfter });
        for (const e of page.data) customers.add((e.data as { customer_id: string }).customer_id);
        if (!page.hasMore) return { customers };
        startingAfter = page.data.at(-1)?.id;
      }
    };
    const updated = await count('customer.health_score.updated');
    const changed = await count('customer.status.changed');
    assert.deepEqual([updated.customers.size, changed.customers.size], [N, N]);
  });
});
