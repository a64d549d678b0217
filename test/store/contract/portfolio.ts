// The portfolio's reads (docs/api.md, "Segments, trends and movers"): tallies by band, by metadata
// value and by score bin, the trend's inputs and the movers, the same on every backend. One small
// timeline, worked out by hand:
//   day 0, 01:00  a 0.9 healthy, b 0.5 at_risk, c 0.2 critical (a and b plan "pro", c "free"; d has no score)
//   day 1, 01:00  a falls to 0.3 critical
//   day 2, 01:00  c is deleted
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, test } from 'node:test';
import postgres from 'postgres';
import { DAY_MS, dayOf } from '../../../src/domain/portfolio.ts';
import { DEFAULT_THRESHOLDS, statusFor } from '../../../src/domain/scoring.ts';
import type { ScoreReason, Store } from '../../../src/store/store.ts';
import type { TestDatabase } from '../../helpers/stores.ts';
import { transaction } from '../../helpers/transaction.ts';
import { type ContractContext, customer, score, seedCustomers, T0 } from './context.ts';

const HOUR = 3_600_000;
const DAY0 = dayOf(T0);

async function timeline(store: Store, accountId: string): Promise<void> {
  await transaction(store, async (tx) => {
    await tx.insertCustomer(
      accountId,
      customer('a', { name: 'Alpha', metadata: { plan: 'pro', seats: 10 } }),
    );
    await tx.insertCustomer(accountId, customer('b', { name: 'Beta', metadata: { plan: 'pro' } }));
    await tx.insertCustomer(accountId, customer('c', { name: 'Gamma', metadata: { plan: 'free' } }));
    await tx.insertCustomer(accountId, customer('d', { name: 'Delta', metadata: { plan: 'pro' } }));
  });
  const at = (day: number) => T0 + day * DAY_MS + HOUR;
  await transaction(store, (tx) =>
    tx.writeScores(
      accountId,
      [score('a', 0.9, 1, { updatedAt: at(0) }), score('b', 0.5, 1, { updatedAt: at(0) })].concat(
        score('c', 0.2, 1, { updatedAt: at(0) }),
      ),
      'factors_updated',
    ),
  );
  await transaction(store, (tx) =>
    tx.writeScores(accountId, [score('a', 0.3, 2, { updatedAt: at(1) })], 'factors_updated'),
  );
  await transaction(store, (tx) => tx.deleteCustomer(accountId, 'c'));
}

/**
 * Writes a customer's versions one at a time, each `[score, day, reason]` (days after T0) the next
 * version after the stored one, as the write paths do.
 */
export async function versions(
  store: Store,
  accountId: string,
  id: string,
  list: [number, number, ScoreReason][],
): Promise<void> {
  let version = 0;
  for (const [value, day, reason] of list) {
    version++;
    const record = score(id, value, version, { updatedAt: T0 + day * DAY_MS });
    await transaction(store, (tx) => tx.writeScores(accountId, [record], reason));
  }
}

/**
 * History versions numbered 0, −1, −2… below a customer's first, reason `backfill`, each
 * `[score, day]` (the latest first), written beside the store as a backfill of the past does.
 */
export async function backfilled(db: TestDatabase, accountId: string, id: string, list: [number, number][]) {
  const rows = list.map(([value, day], i) => [
    accountId,
    id,
    -i,
    value,
    statusFor(value, DEFAULT_THRESHOLDS),
    JSON.stringify({ usage: value }),
    'backfill',
    T0 + day * DAY_MS,
  ]);
  const insert = `INSERT INTO score_history (account_id, customer_id, version, score, status, factors, reason, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;
  if (db.backend === 'sqlite') {
    const raw = new DatabaseSync(join(db.dir, 'vitals.db'));
    try {
      raw.exec('PRAGMA busy_timeout = 5000');
      const statement = raw.prepare(insert.replaceAll(/\$\d/g, '?'));
      for (const row of rows) statement.run(...(row as (string | number)[]));
    } finally {
      raw.close();
    }
    return;
  }
  const sql = postgres(db.url as string, { max: 1 });
  try {
    for (const row of rows) await sql.unsafe(insert, row as (string | number)[]);
  } finally {
    await sql.end();
  }
}

const counts = (critical: number, at_risk: number, healthy: number) => ({ healthy, at_risk, critical });
/** The ARR of customers without one, per band in cents. */
const NO_ARR = counts(0, 0, 0);

export function portfolioContract(c: ContractContext): void {
  describe('portfolio reads', () => {
    test('tally: the current scores per band and their sum in millionths; a segment counts its own', async () => {
      const store = c.store();
      const a = await c.account();
      await timeline(store, a);
      assert.deepEqual(await store.tally(a), { counts: counts(1, 1, 0), micros: 800_000, arrCents: NO_ARR });
      assert.deepEqual(await store.tally(a, { metadata: [{ key: 'plan', value: 'pro' }] }), {
        counts: counts(1, 1, 0),
        micros: 800_000,
        arrCents: NO_ARR,
      });
      assert.deepEqual(await store.tally(a, { metadata: [{ key: 'seats', value: '10' }] }), {
        counts: counts(1, 0, 0),
        micros: 300_000,
        arrCents: NO_ARR,
      });
      assert.deepEqual(await store.tally(a, { metadata: [{ key: 'plan', value: 'free' }] }), {
        counts: counts(0, 0, 0),
        micros: 0,
        arrCents: NO_ARR,
      });
      assert.deepEqual(await store.tally(await c.account()), {
        counts: counts(0, 0, 0),
        micros: 0,
        arrCents: NO_ARR,
      });
    });

    test('distribution: a tally per bin, [from, to), the top score in the last bin', async () => {
      const store = c.store();
      const a = await c.account();
      await timeline(store, a);
      assert.deepEqual(await store.distribution(a, 2), [
        { counts: counts(1, 0, 0), micros: 300_000 },
        { counts: counts(0, 1, 0), micros: 500_000 },
      ]);
      await transaction(store, async (tx) => {
        await tx.insertCustomer(a, customer('top'));
        await tx.writeScores(a, [score('top', 1, 1, { updatedAt: T0 + 3 * DAY_MS })], 'factors_updated');
      });
      const ten = await store.distribution(a, 10);
      assert.equal(ten.length, 10);
      assert.deepEqual(
        ten.map((t) => t.counts.critical + t.counts.at_risk + t.counts.healthy),
        [0, 0, 0, 1, 0, 1, 0, 0, 0, 1],
      );
      assert.deepEqual(await store.distribution(a, 1, { metadata: [{ key: 'plan', value: 'pro' }] }), [
        { counts: counts(1, 1, 0), micros: 800_000 },
      ]);
    });

    test('tallyBy: a tally per value of the key (its JSON text; null without it)', async () => {
      const store = c.store();
      const a = await c.account();
      await timeline(store, a);
      const byPlan = await store.tallyBy(a, { metadata: 'plan' });
      assert.deepEqual(byPlan, [
        { value: '"pro"', counts: counts(1, 1, 0), micros: 800_000, arrCents: NO_ARR },
      ]);
      const bySeats = (await store.tallyBy(a, { metadata: 'seats' })).sort((x, y) =>
        String(x.value).localeCompare(String(y.value)),
      );
      assert.deepEqual(bySeats, [
        { value: '10', counts: counts(1, 0, 0), micros: 300_000, arrCents: NO_ARR },
        { value: null, counts: counts(0, 1, 0), micros: 500_000, arrCents: NO_ARR },
      ]);
      assert.deepEqual(
        await store.tallyBy(a, { metadata: 'plan' }, { metadata: [{ key: 'seats', value: '10' }] }),
        [{ value: '"pro"', counts: counts(1, 0, 0), micros: 300_000, arrCents: NO_ARR }],
      );
    });

    test("trendInputs: now, and each day's change from the history; a deleted customer is in no day", async () => {
      const store = c.store();
      const a = await c.account();
      await timeline(store, a);
      const inputs = await store.trendInputs(a, DAY0);
      assert.deepEqual(inputs.now, { counts: counts(1, 1, 0), micros: 800_000 });
      assert.deepEqual(
        inputs.days.sort((x, y) => x.day - y.day),
        [
          { day: DAY0, counts: counts(0, 1, 1), micros: 1_400_000 },
          { day: DAY0 + 1, counts: counts(1, 0, -1), micros: -600_000 },
        ],
      );
      assert.deepEqual(
        (await store.trendInputs(a, DAY0 + 1)).days.map((d) => d.day),
        [DAY0 + 1],
      );
      const pro = await store.trendInputs(a, DAY0, { metadata: [{ key: 'seats', value: '10' }] });
      assert.deepEqual(pro.now, { counts: counts(1, 0, 0), micros: 300_000 });
      assert.deepEqual(
        pro.days.sort((x, y) => x.day - y.day),
        [
          { day: DAY0, counts: counts(0, 0, 1), micros: 900_000 },
          { day: DAY0 + 1, counts: counts(1, 0, -1), micros: -600_000 },
        ],
      );
    });

    test('movers: against the score at `since` (or the first after); unchanged ones left out', async () => {
      const store = c.store();
      const a = await c.account();
      await timeline(store, a);
      const alpha = {
        customerId: 'a',
        name: 'Alpha',
        score: 0.3,
        status: 'critical',
        baseline: 0.9,
        change: -0.6,
      };
      const since = T0 + 12 * HOUR;
      assert.deepEqual(await store.movers(a, { since, direction: 'down', limit: 10 }), [alpha]);
      assert.deepEqual(await store.movers(a, { since, direction: 'up', limit: 10 }), []);
      // From before every score: each baseline is its first score; b never moved.
      assert.deepEqual(await store.movers(a, { since: T0, direction: 'down', limit: 10 }), [alpha]);
      assert.deepEqual(await store.movers(a, { since: T0 + 2 * DAY_MS, direction: 'down', limit: 10 }), []);
      assert.deepEqual(
        await store.movers(a, {
          since,
          direction: 'down',
          limit: 10,
          segment: { metadata: [{ key: 'plan', value: 'free' }] },
        }),
        [],
      );
    });

    test('movers: the sum of the versions after `since` but those of settings and backfills; versions below 1 too', async (t) => {
      const { db, store, account } = await c.isolated(t);
      const a = await account();
      await seedCustomers(store, a, ['a', 'b', 'c']);
      // a falls 0.3 on day 2; a weights, a thresholds and a rules change follow.
      await versions(store, a, 'a', [
        [0.9, 0, 'factors_updated'],
        [0.6, 2, 'factors_updated'],
        [0.7, 3, 'weights_changed'],
        [0.7, 3.5, 'thresholds_changed'],
        [0.5, 4, 'rules_changed'],
      ]);
      // b: backfilled at 0.3 (day 0) and 0.8 (day 1.5), then 0.5 and 0.4 of its own.
      await versions(store, a, 'b', [
        [0.5, 2, 'factors_updated'],
        [0.4, 3, 'factors_updated'],
      ]);
      await backfilled(db, a, 'b', [
        [0.8, 1.5],
        [0.3, 0],
      ]);
      // c: every version after day 1, its first ever a backfilled 0.2, then 0.9, then 0.7 of its own.
      await versions(store, a, 'c', [[0.7, 2, 'factors_updated']]);
      await backfilled(db, a, 'c', [
        [0.9, 1.4],
        [0.2, 1.2],
      ]);
      const mover = (id: string, value: number, baseline: number, change: number) => ({
        customerId: id,
        name: `Customer ${id}`,
        score: value,
        status: statusFor(value, DEFAULT_THRESHOLDS),
        baseline,
        change,
      });
      const since = T0 + DAY_MS;
      // b opens on its backfilled 0.3: 0.5 − 0.8 and 0.4 − 0.5 are its own, the backfilled rise is not.
      // c opens on its first version ever (−1); only 0.7 − 0.9 is its own.
      assert.deepEqual(await store.movers(a, { since, direction: 'down', limit: 10 }), [
        mover('b', 0.4, 0.3, -0.4),
        mover('a', 0.5, 0.9, -0.3),
        mover('c', 0.7, 0.2, -0.2),
      ]);
      assert.deepEqual(await store.movers(a, { since, direction: 'up', limit: 10 }), []);
      assert.deepEqual(await store.movers(a, { since, direction: 'down', limit: 2 }), [
        mover('b', 0.4, 0.3, -0.4),
        mover('a', 0.5, 0.9, -0.3),
      ]);
      // From day 2.5: a has only settings versions since, c nothing; b fell 0.1.
      const later = T0 + 2.5 * DAY_MS;
      assert.deepEqual(await store.movers(a, { since: later, direction: 'down', limit: 10 }), [
        mover('b', 0.4, 0.5, -0.1),
      ]);
      assert.deepEqual(await store.movers(a, { since: later, direction: 'up', limit: 10 }), []);
    });
  });
}
