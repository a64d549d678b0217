// Saved views in the store (docs/api.md, "Saved views"): a person's views, the same on every
// backend. test/http/views.test.ts proves the rules through the routes (the parallel burst among
// them); this holds each method to its word: newest first, the person's own only, the limit
// checked with the insert, and the views gone with their person.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import type { Store, ViewRecord } from '../../../src/store/store.ts';
import { transaction } from '../../helpers/transaction.ts';
import { type ContractContext, T0 } from './context.ts';

async function addPerson(store: Store, accountId: string): Promise<string> {
  const id = newId.user();
  const added = await store.createUser(
    { id, accountId, email: `view-${randomUUID().slice(0, 8)}@example.com`, role: 'viewer', createdAt: T0 },
    { tokenHash: randomUUID().replaceAll('-', ''), expiresAt: T0 + 1 },
  );
  assert.equal(added, true);
  return id;
}

const view = (name: string, createdAt: number, query = 'status=at_risk'): ViewRecord => ({
  id: newId.view(),
  name,
  query,
  createdAt,
});

export function viewsContract(c: ContractContext): void {
  describe('saved views', () => {
    test("insert and list, newest first; free text round-trips; another person's are not listed", async () => {
      const store = c.store();
      const a = await c.account();
      const [ann, bea] = [await addPerson(store, a), await addPerson(store, a)];
      const older = view('Older', T0 + 1);
      const odd = view('NUL \0 and "quotes" — ünïcode', T0 + 2, 'q=\0&sort=-score');
      const sameMs = view('Same instant, later id', T0 + 2, '');
      await transaction(store, async (tx) => {
        assert.equal(await tx.insertView(a, ann, older, 10), 'inserted');
        assert.equal(await tx.insertView(a, ann, odd, 10), 'inserted');
        assert.equal(await tx.insertView(a, ann, sameMs, 10), 'inserted');
        assert.equal(await tx.insertView(a, bea, view('Hers', T0 + 3), 10), 'inserted');
      });
      assert.deepEqual(await store.listViews(a, ann), [sameMs, odd, older]);
      assert.deepEqual(
        (await store.listViews(a, bea)).map((v) => v.name),
        ['Hers'],
      );
      assert.deepEqual(await store.listViews(await c.account(), ann), []);
    });

    test('the limit and the person are checked with the insert: nothing is written past them', async () => {
      const store = c.store();
      const a = await c.account();
      const other = await c.account();
      const ann = await addPerson(store, a);
      const stranger = await addPerson(store, other);
      const kept = [view('one', T0 + 1), view('two', T0 + 2)];
      await transaction(store, async (tx) => {
        for (const v of kept) assert.equal(await tx.insertView(a, ann, v, 2), 'inserted');
        assert.equal(await tx.insertView(a, ann, view('three', T0 + 3), 2), 'full');
        assert.equal(await tx.insertView(a, 'usr_nobody', view('lost', T0 + 3), 2), 'no_user');
        // A person of another account is no person of this one.
        assert.equal(await tx.insertView(a, stranger, view('astray', T0 + 3), 2), 'no_user');
      });
      assert.deepEqual(await store.listViews(a, ann), kept.toReversed());
      assert.deepEqual(await store.listViews(a, stranger), []);
      assert.deepEqual(await store.listViews(other, stranger), []);
    });

    test("delete removes the person's own view only; the views go with their person", async () => {
      const store = c.store();
      const a = await c.account();
      const elsewhere = await c.account();
      const [ann, bea] = [await addPerson(store, a), await addPerson(store, a)];
      const mine = view('mine', T0 + 1);
      const hers = view('hers', T0 + 2);
      await transaction(store, async (tx) => {
        await tx.insertView(a, ann, mine, 10);
        await tx.insertView(a, bea, hers, 10);
      });
      await transaction(store, async (tx) => {
        assert.equal(await tx.deleteView(a, bea, mine.id), false, "another person's");
        assert.equal(await tx.deleteView(elsewhere, ann, mine.id), false, "another account's");
        assert.equal(await tx.deleteView(a, ann, 'view_\0'), false, 'a NUL id');
        assert.equal(await tx.deleteView(a, ann, mine.id), true);
        assert.equal(await tx.deleteView(a, ann, mine.id), false, 'once');
      });
      assert.deepEqual(await store.listViews(a, ann), []);
      assert.equal(await store.removeAccountUser(a, bea), true);
      assert.deepEqual(await store.listViews(a, bea), []);
    });
  });
}
