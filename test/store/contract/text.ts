import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { transaction } from '../../helpers/transaction.ts';
import {
  anEvent,
  byteOrder,
  type ContractContext,
  customer,
  plainCustomer,
  score,
  seedCustomers,
  seedEvents,
  T0,
  webhook,
} from './context.ts';
import { outcome } from './webhooks.ts';

// Any string the API lets through is given back as it was: a NUL (which PostgreSQL text cannot
// hold), a noncharacter, a right-to-left mark. Ids with a NUL are never stored, but a lookup or
// a page bound may carry one, and must answer as byte order says, not fail.
const ODD = ['a\u0000b', '\u0000', '\uFFFF', '\uFFFF"x"', '\\u0000', 'line\nbreak\u202e'];

export function textContract(c: ContractContext): void {
  describe('unusual text', () => {
    test('names and emails round-trip, NULs and noncharacters included', async () => {
      const store = c.store();
      const a = await c.account();
      const written = ODD.map((name, i) => customer(`odd_${i}`, { name, email: `${name}@example.com` }));
      await transaction(store, async (tx) => {
        for (const x of written) assert.equal(await tx.insertCustomer(a, x), true);
      });
      for (const x of written) assert.deepEqual(plainCustomer(await store.getCustomer(a, x.id)), x);
      const listed = (await store.listCustomers(a, { limit: 100 })).data.map(plainCustomer);
      assert.deepEqual(listed, written);
      const renamed = { ...customer('odd_0'), name: '\u0000\uFFFF', updatedAt: T0 + 1 };
      await transaction(store, (tx) => tx.updateCustomer(a, renamed));
      assert.equal((await transaction(store, (tx) => tx.getCustomer(a, 'odd_0')))?.name, '\u0000\uFFFF');
    });

    test("an override's reason and an event's data round-trip, NULs included, written in bulk", async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      await seedCustomers(store, a, ['o1', 'o2']);
      const override = (reason: string) => ({
        score: 0.9,
        reason,
        expiresAt: T0 + 99,
        setAt: T0,
        setBy: 'k\u0000',
      });
      const written = ODD.slice(0, 2).map((reason, i) =>
        score(`o${i + 1}`, 0.9, 1, { computed: 0.4, override: override(reason) }),
      );
      const events = ODD.map((name) => anEvent('customer.updated', T0, { name, metadata: { [name]: name } }));
      await transaction(store, async (tx) => {
        await tx.writeScores(a, written, 'override_set');
        await tx.insertEvents(a, events);
      });
      for (const w of written) {
        assert.deepEqual((await store.getScore(a, w.customerId))?.override, w.override);
      }
      for (const e of events) assert.deepEqual((await store.getEvent(a, e.id))?.data, e.data);
    });

    test('outcome notes round-trip, written in bulk (on PostgreSQL as arrays: quotes, braces, NULL as text)', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      await seedCustomers(store, a, ['n1']);
      const notes = [...ODD, '"quoted"', 'back\\slash', '{a,b}', 'NULL', null, 'emoji 🙂'];
      const written = notes.map((note, i) => ({
        id: `out_${String(i).padStart(2, '0')}`,
        customerId: 'n1',
        outcome: 'retained' as const,
        at: T0 + i,
        note,
        createdAt: T0 + 100 + i,
      }));
      await transaction(store, (tx) => tx.insertOutcomes(a, written));
      const listed = (await store.listOutcomes(a, 'n1', { limit: 100 })).data;
      assert.deepEqual(
        [...listed].sort((x, y) => x.at - y.at),
        written,
      );
    });

    test('webhook urls, descriptions and recorded answers round-trip', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const w = webhook({
        url: 'https://example.com/a\u0000b',
        description: '\uFFFFdesc\u0000',
        disabledReason: null,
      });
      await transaction(store, (tx) => tx.insertWebhook(a, w));
      assert.deepEqual(await store.getWebhook(a, w.id), w);
      const changed = { ...w, description: '\u0000', disabledReason: 'off\u0000', updatedAt: T0 + 1 };
      await transaction(store, (tx) => tx.updateWebhook(a, changed));
      assert.deepEqual(await transaction(store, (tx) => tx.getWebhook(a, w.id)), changed);
      await transaction(store, (tx) => tx.updateWebhook(a, w));
      await seedEvents(store, a, [anEvent()]);
      const [d] = await store.claimDeliveries({
        owner: 'o',
        now: T0,
        leaseUntil: T0 + 9,
        limit: 1,
        perWebhook: { default: 1 },
        perAccount: 1,
      });
      assert.equal(d?.url, w.url);
      assert.ok(d);
      const body = 'binary\u0000\u0001\uFFFF';
      await store.recordAttempt(
        outcome(d, 'o', { status: 'failed' }, { responseBody: body, error: 'bad\u0000', statusCode: 500 }),
      );
      const got = await store.getDelivery(a, w.id, d.id);
      assert.deepEqual(
        got?.attempts.map((x) => [x.responseBody, x.error]),
        [[body, 'bad\u0000']],
      );
    });

    test('a lookup by an id holding a NUL finds nothing, and changes nothing', async () => {
      const store = c.store();
      const a = await c.account();
      const w = webhook();
      await seedCustomers(store, a, ['a']);
      await transaction(store, (tx) => tx.insertWebhook(a, w));
      const nul = 'a\u0000';
      assert.equal(await store.getCustomer(a, nul), null);
      assert.equal(await transaction(store, (tx) => tx.getCustomer(a, nul)), null);
      assert.equal(await transaction(store, (tx) => tx.deleteCustomer(a, nul)), false);
      assert.equal(await store.getScore(a, nul), null);
      assert.deepEqual(await store.listHistory(a, nul, { limit: 5 }), { data: [], hasMore: false });
      assert.equal(await store.getEvent(a, `evt_${nul}`), null);
      assert.equal(await store.getWebhook(a, `${w.id}\u0000`), null);
      assert.equal(await transaction(store, (tx) => tx.getWebhook(a, `${w.id}\u0000`)), null);
      assert.equal(await transaction(store, (tx) => tx.deleteWebhook(a, `${w.id}\u0000`)), false);
      assert.equal(await store.getDelivery(a, w.id, `dlv_${nul}`), null);
      assert.deepEqual(await store.listDeliveries(a, `${w.id}\u0000`, { limit: 5 }), {
        data: [],
        hasMore: false,
      });
      assert.equal(await transaction(store, (tx) => tx.retryDelivery(a, w.id, `dlv_${nul}`, T0)), false);
      assert.equal((await store.getCustomer(a, 'a'))?.id, 'a');
      assert.deepEqual(await store.listEvents(a, { limit: 5, startingAfter: `evt_${nul}` }), {
        data: [],
        hasMore: false,
      });
    });

    test('a page bound holding a NUL orders byte-wise like any other', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const ids = ['B', 'B!', 'Ba', 'B\u0001', 'A', 'C'];
      await seedCustomers(store, a, ids);
      const after = (bound: string) => [...ids].sort(byteOrder).filter((id) => byteOrder(id, bound) > 0);
      for (const bound of ['B\u0000', 'B\u0000z', '\u0000', 'Ba\u0000']) {
        const page = await store.listCustomers(a, { limit: 100, startingAfter: bound });
        assert.deepEqual(
          page.data.map((x) => x.id),
          after(bound),
          JSON.stringify(bound),
        );
      }
      await transaction(store, (tx) =>
        tx.writeScores(
          a,
          ids.map((id) => score(id, 0.5)),
          'factors_updated',
        ),
      );
      const scores = await store.listScores(a, {
        limit: 100,
        after: { status: 'at_risk', score: 0.5, customerId: 'B\u0000' },
      });
      assert.deepEqual(
        scores.data.map((s) => s.customerId),
        after('B\u0000'),
      );

      const w = webhook();
      await transaction(store, (tx) => tx.insertWebhook(a, w));
      await seedEvents(store, a, [anEvent(), anEvent(), anEvent()]);
      const all = (await store.listDeliveries(a, w.id, { limit: 10 })).data.map((d) => d.id);
      const middle = all[1] as string;
      const below = await store.listDeliveries(a, w.id, { limit: 10, startingAfter: `${middle}\u0000` });
      assert.deepEqual(
        below.data.map((d) => d.id),
        all.slice(1),
        'the id itself is below its extension with a NUL',
      );
    });
  });
}
