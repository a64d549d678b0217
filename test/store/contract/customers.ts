import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { transaction } from '../../helpers/transaction.ts';
import {
  byteOrder,
  type ContractContext,
  customer,
  plainCustomer,
  score,
  seedCustomers,
  T0,
} from './context.ts';

export function customersContract(c: ContractContext): void {
  describe('customers', () => {
    test('a customer reads back as written: metadata key order, nesting, unicode, numbers as numbers', async () => {
      const store = c.store();
      const a = await c.account();
      const metadata = { zeta: 1, alpha: { y: [1, 'two', null, { b: true, a: 1.5 }], x: 'é😀' }, mid: null };
      const written = customer('cus_1', {
        name: 'Zoë "Q" O\'Brien',
        metadata,
        createdAt: T0,
        updatedAt: T0 + 1,
      });
      assert.equal(await transaction(store, (tx) => tx.insertCustomer(a, written)), true);
      const read = plainCustomer(await store.getCustomer(a, 'cus_1'));
      assert.deepEqual(read, written);
      assert.equal(JSON.stringify(read?.metadata), JSON.stringify(metadata), 'key order round-trips');
      assert.equal(typeof read?.createdAt, 'number');
      assert.equal(await store.getCustomer(a, 'cus_missing'), null);
    });

    test("customersForUpdate finds the account's own customers only; saveCustomers writes many and names the taken", async () => {
      const store = c.store();
      const a = await c.account();
      const b = await c.account();
      await seedCustomers(store, a, ['old', 'taken']);
      await seedCustomers(store, b, ['theirs']);
      const found = await transaction(store, (tx) =>
        tx.customersForUpdate(a, ['old', 'theirs', 'nobody', 'old\0']),
      );
      assert.deepEqual([...found.keys()], ['old']);
      const renamed = customer('old', { name: 'Renamed', metadata: { k: [1] }, updatedAt: T0 + 5 });
      const taken = await transaction(store, (tx) =>
        tx.saveCustomers(
          a,
          [customer('new', { name: 'New' }), customer('taken', { name: 'Again' })],
          [renamed],
        ),
      );
      assert.deepEqual(taken, ['taken']);
      assert.equal((await store.getCustomer(a, 'new'))?.name, 'New');
      assert.deepEqual(plainCustomer(await store.getCustomer(a, 'old')), renamed);
      assert.equal(
        (await store.getCustomer(a, 'taken'))?.name,
        'Customer taken',
        'a taken id is not overwritten',
      );
      assert.equal((await store.getCustomer(b, 'theirs'))?.name, 'Customer theirs');
      assert.equal(await store.getCustomer(b, 'new'), null);
    });

    test('insertCustomer answers false for a taken id and leaves the first customer alone', async () => {
      const store = c.store();
      const a = await c.account();
      await seedCustomers(store, a, ['dup']);
      const again = await transaction(store, (tx) =>
        tx.insertCustomer(a, customer('dup', { name: 'Other' })),
      );
      assert.equal(again, false);
      assert.equal((await store.getCustomer(a, 'dup'))?.name, 'Customer dup');
    });

    test('updateCustomer replaces name, email, metadata and updated_at', async () => {
      const store = c.store();
      const a = await c.account();
      await seedCustomers(store, a, ['u1']);
      const next = customer('u1', {
        name: 'New',
        email: 'new@example.com',
        metadata: { b: 2, a: 1 },
        updatedAt: T0 + 5,
      });
      await transaction(store, (tx) => tx.updateCustomer(a, next));
      assert.deepEqual(plainCustomer(await store.getCustomer(a, 'u1')), next);
      const [listed] = (await store.listCustomers(a, { limit: 1 })).data;
      assert.deepEqual(plainCustomer(listed ?? null), next);
    });

    test('deleteCustomer removes the customer with its score and history; the id can be used again', async () => {
      const store = c.store();
      const a = await c.account();
      await seedCustomers(store, a, ['gone']);
      await transaction(store, (tx) => tx.writeScores(a, [score('gone', 0.5)], 'factors_updated'));
      assert.equal(await transaction(store, (tx) => tx.deleteCustomer(a, 'gone')), true);
      assert.equal(await transaction(store, (tx) => tx.deleteCustomer(a, 'gone')), false);
      assert.equal(await store.getCustomer(a, 'gone'), null);
      assert.equal(await store.getScore(a, 'gone'), null);
      assert.deepEqual(await store.listHistory(a, 'gone', { limit: 10 }), { data: [], hasMore: false });
      assert.equal((await store.countScoresByStatus(a)).at_risk, 0);
      assert.equal(await transaction(store, (tx) => tx.insertCustomer(a, customer('gone'))), true);
      assert.equal(
        await store.getScore(a, 'gone'),
        null,
        'a new customer with an old id starts without a score',
      );
    });

    test('the list is in byte-wise id order, whatever the case, accents or planes', async () => {
      const store = c.store();
      const a = await c.account();
      const ids = ['B', 'a', 'é', '~', 'Z', '0', '_', '-', 'aa', 'A', 'Ω', '\uFF5E', '😀', 'z', 'a-b', 'a_b'];
      await seedCustomers(store, a, ids);
      const page = await store.listCustomers(a, { limit: 100 });
      // UTF-16 order would put 😀 (a surrogate pair) before U+FF5E; byte order does not.
      assert.deepEqual(
        page.data.map((x) => x.id),
        [...ids].sort(byteOrder),
      );
      assert.deepEqual(page.data.map((x) => x.id).slice(0, 7), ['-', '0', 'A', 'B', 'Z', '_', 'a']);
      assert.equal(page.hasMore, false);
    });

    test('keyset pages: starting_after is exclusive and need not exist; has_more is exact', async () => {
      const store = c.store();
      const a = await c.account();
      await seedCustomers(store, a, ['B', 'a', 'é', '~', 'Z']);
      const first = await store.listCustomers(a, { limit: 2 });
      assert.deepEqual(
        first.data.map((x) => x.id),
        ['B', 'Z'],
      );
      assert.equal(first.hasMore, true);
      const second = await store.listCustomers(a, { limit: 2, startingAfter: 'Z' });
      assert.deepEqual(
        second.data.map((x) => x.id),
        ['a', '~'],
      );
      assert.equal(second.hasMore, true);
      const last = await store.listCustomers(a, { limit: 2, startingAfter: '~' });
      assert.deepEqual(
        last.data.map((x) => x.id),
        ['é'],
      );
      assert.equal(last.hasMore, false);
      const exact = await store.listCustomers(a, { limit: 2, startingAfter: 'a' });
      assert.deepEqual(
        exact.data.map((x) => x.id),
        ['~', 'é'],
      );
      assert.equal(exact.hasMore, false, 'a full page with nothing after it');
      const between = await store.listCustomers(a, { limit: 10, startingAfter: 'b' });
      assert.deepEqual(
        between.data.map((x) => x.id),
        ['~', 'é'],
        'an id that does not exist is a bound all the same',
      );
      assert.deepEqual(await store.listCustomers(a, { limit: 10, startingAfter: 'é' }), {
        data: [],
        hasMore: false,
      });
    });
  });
}
