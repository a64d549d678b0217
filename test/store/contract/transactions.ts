import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../../src/domain/errors.ts';
import { computeScore, statusFor } from '../../../src/domain/scoring.ts';
import type { Store } from '../../../src/store/store.ts';
import { transaction } from '../../helpers/transaction.ts';
import { anEvent, type ContractContext, customer, score, seedCustomers, T0 } from './context.ts';
import { insertCustomers, lookUp } from './writes.ts';

/** The way the API writes a score: read the customer, its score and the settings, then write. */
function writeFactors(store: Store, a: string, id: string, factors: Record<string, number>) {
  return transaction(store, async (tx) => {
    if (!(await tx.getCustomer(a, id))) throw new Error('no customer');
    const current = await tx.getScore(a, id);
    const settings = await tx.getSettings(a);
    const value = computeScore(factors, settings.weights);
    const version = (current?.version ?? 0) + 1;
    await tx.writeScores(
      a,
      [score(id, value, version, { factors, status: statusFor(value, settings.thresholds) })],
      'factors_updated',
    );
    return version;
  });
}

export function transactionsContract(c: ContractContext): void {
  describe('transactions', () => {
    test('run: a write runs whole where the writes run, answers its result, and a refusal keeps nothing', async () => {
      const store = c.store();
      const a = await c.account();
      assert.deepEqual(await store.run(insertCustomers, a, [customer('w1'), customer('w2')], false), [
        'w1',
        'w2',
      ]);
      assert.equal((await store.getCustomer(a, 'w2'))?.name, 'Customer w2');
      await assert.rejects(store.run(insertCustomers, a, [customer('w3'), customer('w4')], true), (err) => {
        assert.ok(err instanceof ApiError, String(err));
        assert.equal(err.code, 'parameter_invalid');
        assert.equal(err.param, 'customers.1');
        return true;
      });
      assert.equal(await store.getCustomer(a, 'w3'), null, 'the refused write kept nothing');
      // Errors inside a result (one per refused item) come back as errors, with their codes.
      const [found, missing] = await store.run(lookUp, a, ['w1', 'nobody']);
      assert.deepEqual(found, { ok: true, name: 'Customer w1' });
      assert.ok(missing && !missing.ok && missing.error instanceof ApiError);
      assert.equal(missing.error.code, 'customer_not_found');
    });

    test('a transaction that throws writes nothing, and the error comes back as thrown', async () => {
      const store = c.store();
      const a = await c.account();
      const boom = new Error('boom');
      await assert.rejects(
        transaction(store, async (tx) => {
          await tx.insertCustomer(a, customer('rolled'));
          await tx.writeScores(a, [score('rolled', 0.5)], 'factors_updated');
          await tx.insertEvents(a, [anEvent()]);
          await tx.putWeights(a, { usage: 1 }, T0);
          throw boom;
        }),
        (err) => err === boom,
      );
      assert.equal(await store.getCustomer(a, 'rolled'), null);
      assert.equal(await store.getScore(a, 'rolled'), null);
      assert.deepEqual((await store.listEvents(a, { limit: 10 })).data, []);
      assert.equal((await store.getSettings(a)).weightsUpdatedAt, null);
    });

    test('reads in a transaction see its own writes; reads outside see them only after the commit', async () => {
      const store = c.store();
      const a = await c.account();
      let outside: unknown = 'not read';
      await transaction(store, async (tx) => {
        await tx.insertCustomer(a, customer('mine'));
        assert.equal((await tx.getCustomer(a, 'mine'))?.id, 'mine');
        assert.equal((await tx.listCustomers(a, { limit: 10 })).data.length, 1);
        outside = await store.getCustomer(a, 'mine');
      });
      assert.equal(outside, null);
      assert.equal((await store.getCustomer(a, 'mine'))?.id, 'mine');
    });

    test('first scores written at once for one customer become versions 1 and 2, both in history', async () => {
      const store = c.store();
      const a = await c.account();
      await seedCustomers(store, a, ['race']);
      const versions = await Promise.all([
        writeFactors(store, a, 'race', { usage: 0.2 }),
        writeFactors(store, a, 'race', { usage: 0.8 }),
        writeFactors(store, a, 'race', { usage: 0.5 }),
      ]);
      assert.deepEqual([...versions].sort(), [1, 2, 3]);
      const history = await store.listHistory(a, 'race', { limit: 10 });
      assert.deepEqual(
        history.data.map((h) => h.version),
        [3, 2, 1],
      );
      assert.equal((await store.getScore(a, 'race'))?.version, 3);
    });

    test('metadata merged by transactions running at once loses no key', async () => {
      const store = c.store();
      const a = await c.account();
      await seedCustomers(store, a, ['merge']);
      const keys = Array.from({ length: 8 }, (_, i) => `k${i}`);
      await Promise.all(
        keys.map((key) =>
          transaction(store, async (tx) => {
            const current = await tx.getCustomer(a, 'merge');
            assert.ok(current);
            await tx.updateCustomer(a, { ...current, metadata: { ...current.metadata, [key]: true } });
          }),
        ),
      );
      const merged = await store.getCustomer(a, 'merge');
      assert.deepEqual(Object.keys(merged?.metadata ?? {}).sort(), keys);
    });

    test('threshold changes made at once both land', async () => {
      const store = c.store();
      const a = await c.account();
      const change = (patch: { healthy?: number; at_risk?: number }, at: number) =>
        transaction(store, async (tx) => {
          const current = await tx.getSettings(a, { forUpdate: true });
          await tx.putThresholds(a, { ...current.thresholds, ...patch }, at);
        });
      await Promise.all([change({ healthy: 0.9 }, T0 + 1), change({ at_risk: 0.2 }, T0 + 2)]);
      assert.deepEqual((await store.getSettings(a)).thresholds, { healthy: 0.9, at_risk: 0.2 });
    });

    test('a score written while the weights change is computed with the new weights', async () => {
      const store = c.store();
      const a = await c.account();
      await seedCustomers(store, a, ['during']);
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = () => {};
      const changing = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const weights = transaction(store, async (tx) => {
        await tx.getSettings(a, { forUpdate: true });
        await tx.putWeights(a, { usage: 0.25, support: 0.75 }, T0);
        locked();
        await gate;
      });
      await changing;
      const write = writeFactors(store, a, 'during', { usage: 1, support: 0 });
      // A few round trips on other connections give the score writer time to reach the database.
      for (let i = 0; i < 3; i++) await store.ping();
      release();
      await Promise.all([weights, write]);
      assert.equal((await store.getScore(a, 'during'))?.score, 0.25, 'weighted, not the plain mean 0.5');
    });
  });
}
