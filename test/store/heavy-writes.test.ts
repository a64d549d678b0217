// PostgreSQL's heavy writes run on a thread of their own (src/store/postgres/heavy-writes.ts;
// docs/postgresql.md, "Heavy writes off the main thread"): what they answer, throw, wake and
// leave behind must be what they would run here.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { threadId } from 'node:worker_threads';
import { ApiError } from '../../src/domain/errors.ts';
import type { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { Store } from '../../src/store/store.ts';
import { applyThresholds, applyWeights } from '../../src/writes/rescore.ts';
import { putRule } from '../../src/writes/rules.ts';
import { endThread, heavyThreadId, lightThreadId } from '../helpers/heavy-probe.ts';
import { backendSkip } from '../helpers/stores.ts';
import { transaction } from '../helpers/transaction.ts';
import {
  isolatedDatabase,
  pendingDeliveries,
  score,
  seedCustomers,
  T0,
  webhook,
} from './contract/context.ts';

/** A first score of 0.5 from two factors: a weights change moves it. */
const twoFactors = (customerId: string) =>
  score(customerId, 0.5, 1, { factors: { usage: 0.2, support: 0.8 } });

/** Resolves at the next call of the store's onDeliveriesDue listeners. */
const nextWake = (store: Store) =>
  new Promise<void>((resolve) => {
    const off = store.onDeliveriesDue(() => {
      off();
      resolve();
    });
  });

describe('PostgreSQL heavy writes, on a thread of their own', { skip: backendSkip('postgres') }, () => {
  test('a heavy write runs off the main thread and answers as here; a light one runs here', async (t) => {
    const { store, account } = await isolatedDatabase('postgres', t);
    const a = await account();
    const heavy = await store.run(heavyThreadId, a);
    assert.notEqual(heavy, threadId);
    assert.equal(await store.run(lightThreadId, a), threadId);
    assert.equal(await store.run(heavyThreadId, a), heavy, 'the thread stays for the next one');
    const rule = await store.run(
      putRule,
      a,
      {
        factor: 'usage',
        metric: 'logins',
        aggregate: 'sum',
        windowDays: 30,
        scale: { type: 'linear', from: 0, to: 10 },
        maxAgeDays: null,
        gate: null,
      },
      T0,
    );
    assert.equal(rule.updatedAt, T0);
    const listed = await transaction(store, (tx) => tx.listFactorRules(a));
    assert.deepEqual(listed, [rule], 'committed, and read back through the main pool');
  });

  test('an error on the thread arrives with its code and param, and nothing is stored', async (t) => {
    const { store, account } = await isolatedDatabase('postgres', t);
    const a = await account();
    const before = await transaction(store, (tx) => tx.getSettings(a));
    const refused = await store.run(applyThresholds, a, { at_risk: 0.9, healthy: 0.5 }, T0).then(
      () => assert.fail('accepted'),
      (error: unknown) => error,
    );
    assert.ok(refused instanceof ApiError);
    assert.equal(refused.code, 'parameter_invalid');
    assert.equal(refused.param, 'at_risk');
    assert.deepEqual(await transaction(store, (tx) => tx.getSettings(a)), before);
  });

  test('deliveries a heavy write made due wake this store and another process', async (t) => {
    const { db, store, account } = await isolatedDatabase('postgres', t);
    const other = db.open() as PostgresStore;
    const a = await account();
    await transaction(store, (tx) =>
      tx.insertWebhook(a, webhook({ events: ['customer.health_score.updated'] })),
    );
    await seedCustomers(store, a, ['c1']);
    await transaction(store, (tx) => tx.writeScores(a, [twoFactors('c1')], 'factors_updated'));
    await other.listening();
    const here = nextWake(store);
    const there = nextWake(other);
    await store.run(applyWeights, a, { usage: 0.9, support: 0.1 }, T0 + 10);
    await Promise.all([here, there]);
    assert.equal(await pendingDeliveries(store, a), 1);
  });

  test('a thread that dies fails the write on it, and the next heavy write starts another', async (t) => {
    const { store, account } = await isolatedDatabase('postgres', t);
    const a = await account();
    const first = await store.run(heavyThreadId, a);
    await assert.rejects(store.run(endThread), /heavy-write thread exited \(code 3\)/);
    const second = await store.run(heavyThreadId, a);
    assert.notEqual(second, threadId);
    assert.notEqual(second, first);
  });

  test('close waits for the heavy writes running, then refuses new ones', async (t) => {
    const { db, account } = await isolatedDatabase('postgres', t);
    const store = db.open();
    const a = await account();
    await seedCustomers(store, a, ['c1', 'c2']);
    await transaction(store, (tx) =>
      tx.writeScores(a, [twoFactors('c1'), twoFactors('c2')], 'factors_updated'),
    );
    const settled: string[] = [];
    const running = store
      .run(applyWeights, a, { usage: 0.9, support: 0.1 }, T0 + 10)
      .then(() => settled.push('write'));
    await store.close().then(() => settled.push('close'));
    await running;
    assert.deepEqual(settled, ['write', 'close']);
    await assert.rejects(store.run(heavyThreadId, a), /closed/);
    const reader = db.open();
    const stored = await transaction(reader, (tx) => tx.getScore(a, 'c2'));
    assert.equal(stored?.version, 2, 'the write that close waited for was committed');
  });
});
