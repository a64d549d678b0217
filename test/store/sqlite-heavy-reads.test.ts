// SQLite's heavy portfolio reads run on a thread of their own (src/store/sqlite/heavy-reads.ts;
// docs/operations.md, "The SQLite heavy-read thread"): they answer what the main thread's reader
// answers, another account's reads are answered meanwhile, and a thread that dies fails its reads
// instead of leaving them waiting.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DAY_MS, dayOf } from '../../src/domain/portfolio.ts';
import { SqlReader } from '../../src/store/sql-reader.ts';
import { Connection } from '../../src/store/sqlite/connection.ts';
import { driverOf } from '../../src/store/sqlite/driver.ts';
import { HeavyReads } from '../../src/store/sqlite/heavy-reads.ts';
import { sqliteReads } from '../../src/store/sqlite/reader.ts';
import type { Store } from '../../src/store/store.ts';
import { transaction } from '../helpers/transaction.ts';
import { customer, isolatedDatabase, score, T0 } from './contract/context.ts';

const PLANS = ['free', 'pro', 'team'];
const ROUNDS = 4;

/** `n` customers on three plans, each scored once a day for `rounds` days, up and down. */
async function portfolio(store: Store, accountId: string, n: number, rounds = ROUNDS): Promise<void> {
  const ids = Array.from({ length: n }, (_, i) => `c${String(i).padStart(5, '0')}`);
  await transaction(store, async (tx) => {
    for (const [i, id] of ids.entries()) {
      await tx.insertCustomer(accountId, customer(id, { metadata: { plan: PLANS[i % 3], seats: i % 7 } }));
    }
  });
  for (let round = 1; round <= rounds; round++) {
    const at = T0 + round * DAY_MS;
    const scores = ids.map((id, i) =>
      score(id, ((i * 37 + round * 101) % 1000) / 1000, round, { updatedAt: at }),
    );
    await transaction(store, (tx) => tx.writeScores(accountId, scores, 'factors_updated'));
  }
}

describe('SQLite heavy reads, on a thread of their own', () => {
  test('each answers exactly what the main thread reader answers on the same data', async (t) => {
    const { db, store, account } = await isolatedDatabase('sqlite', t);
    const a = await account();
    await portfolio(store, a, 300);
    const conn = new Connection(join(db.dir, 'vitals.db'), 'normal');
    t.after(() => conn.db.close());
    const here = new SqlReader(driverOf(conn), sqliteReads(conn));
    const pro = { metadata: [{ key: 'plan', value: 'pro' }] };
    const since = T0 + 2 * DAY_MS;
    const fromDay = dayOf(T0);
    const pairs: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
      ['tally', () => store.tally(a), () => here.tally(a)],
      ['tally of a segment', () => store.tally(a, pro), () => here.tally(a, pro)],
      ['distribution', () => store.distribution(a, 20), () => here.distribution(a, 20)],
      ['distribution of a segment', () => store.distribution(a, 7, pro), () => here.distribution(a, 7, pro)],
      [
        'tallyBy',
        () => store.tallyBy(a, { metadata: 'seats' }),
        () => here.tallyBy(a, { metadata: 'seats' }),
      ],
      [
        'tallyBy of a segment',
        () => store.tallyBy(a, { metadata: 'seats' }, pro),
        () => here.tallyBy(a, { metadata: 'seats' }, pro),
      ],
      ['trendInputs', () => store.trendInputs(a, fromDay), () => here.trendInputs(a, fromDay)],
      [
        'trendInputs of a segment',
        () => store.trendInputs(a, fromDay, pro),
        () => here.trendInputs(a, fromDay, pro),
      ],
      [
        'movers down',
        () => store.movers(a, { since, direction: 'down', limit: 25 }),
        () => here.movers(a, { since, direction: 'down', limit: 25 }),
      ],
      [
        'movers up of a segment',
        () => store.movers(a, { since, direction: 'up', limit: 25, segment: pro }),
        () => here.movers(a, { since, direction: 'up', limit: 25, segment: pro }),
      ],
    ];
    for (const [name, thread, main] of pairs) {
      const [there, local] = [await thread(), await main()];
      assert.deepEqual(there, local, name);
    }
    // Not vacuous: the account has scores in every band, days and movers to compare.
    const total = (counts: Record<string, number>) => Object.values(counts).reduce((x, y) => x + y, 0);
    const tally = await store.tally(a);
    assert.ok(Object.values(tally.counts).every((n) => n > 0));
    assert.equal((await store.trendInputs(a, fromDay)).days.length, ROUNDS);
    assert.equal((await store.movers(a, { since, direction: 'down', limit: 25 })).length, 25);
    // A write committed is seen by the next heavy read (WAL: the thread's connection reads what is committed).
    await transaction(store, (tx) => tx.deleteCustomer(a, 'c00000'));
    const after = await store.tally(a);
    assert.equal(total(after.counts), total(tally.counts) - 1);
    assert.deepEqual(after, await here.tally(a));
  });

  test("another account's read is answered while a segment trend runs", async (t) => {
    const { store, account } = await isolatedDatabase('sqlite', t);
    const [big, small] = [await account(), await account()];
    // 64,000 history entries: the trend of a third of them takes tens of ms on the thread.
    await portfolio(store, big, 8000, 8);
    await transaction(store, (tx) => tx.insertCustomer(small, customer('only')));
    await store.tally(small); // the thread is up: what follows is the reads, not its start
    const order: string[] = [];
    let running = true;
    const trend = store
      .trendInputs(big, dayOf(T0), { metadata: [{ key: 'plan', value: 'pro' }] })
      .then((inputs) => {
        running = false;
        order.push('trend');
        return inputs;
      });
    // Reads of the other account, each after a turn of the event loop, for as long as the trend
    // runs: on the main thread, the trend held the loop and answered before the first of them.
    do {
      await new Promise(setImmediate);
      const page = await store.listCustomersJson(small, { limit: 10 });
      assert.match(page.json, /"id":"only"/);
      if (running) order.push('list');
    } while (running);
    assert.equal(order[0], 'list', `answered in the order ${order.join(', ')}`);
    assert.equal(order.at(-1), 'trend');
    assert.equal((await trend).days.length, 8);
  });

  test('a thread that dies fails the reads waiting on it, and the next read starts another', async (t) => {
    const { db, store, account } = await isolatedDatabase('sqlite', t);
    const a = await account();
    await portfolio(store, a, 20);
    const heavy = new HeavyReads({ path: join(db.dir, 'vitals.db') });
    t.after(() => heavy.close());
    const waiting = heavy.read('tally', a);
    const first = heavy.thread;
    assert.ok(first, 'started by the first read');
    await first.terminate(); // as a crash would, before it could answer
    await assert.rejects(waiting, /the SQLite heavy-read thread exited/);
    assert.deepEqual(await heavy.read('tally', a), await store.tally(a));
    assert.ok(heavy.thread && heavy.thread !== first, 'a new thread answered');
  });

  test('close answers the reads already sent, then refuses new ones', async (t) => {
    const { db, store, account } = await isolatedDatabase('sqlite', t);
    const a = await account();
    await portfolio(store, a, 20);
    const expected = await store.tally(a);
    const heavy = new HeavyReads({ path: join(db.dir, 'vitals.db') });
    const sent = heavy.read('tally', a);
    await heavy.close();
    assert.deepEqual(await sent, expected);
    await assert.rejects(heavy.read('tally', a), /the store is closed/);
  });
});
