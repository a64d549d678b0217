import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AttemptOutcome } from '../../../src/store/store.ts';
import { transaction } from '../../helpers/transaction.ts';
import { anEvent, type ContractContext, seedEvents, T0, webhook } from './context.ts';

export const outcome = (
  d: { id: string; accountId: string; webhookId: string; attempt: number },
  owner: string,
  next: AttemptOutcome['next'],
  extra: Partial<AttemptOutcome> = {},
): AttemptOutcome => ({
  deliveryId: d.id,
  accountId: d.accountId,
  webhookId: d.webhookId,
  owner,
  attempt: d.attempt,
  startedAt: T0 + 10,
  durationMs: 12,
  statusCode: next.status === 'succeeded' ? 200 : 500,
  error: null,
  responseBody: next.status === 'succeeded' ? 'ok' : 'boom',
  next,
  disableWebhook: false,
  ...extra,
});

export function webhooksContract(c: ContractContext): void {
  describe('webhooks', () => {
    test('insert, get and list (oldest first): event order, nulls and booleans round-trip', async () => {
      const store = c.store();
      const a = await c.account();
      const one = webhook({
        events: ['customer.status.changed', 'customer.created'],
        description: 'CRM "sync" — ünïcode',
        createdAt: T0 + 2,
        updatedAt: T0 + 2,
      });
      const two = webhook({
        createdAt: T0 + 1,
        updatedAt: T0 + 1,
        enabled: false,
        disabledReason: 'why not',
      });
      await transaction(store, async (tx) => {
        await tx.insertWebhook(a, one);
        await tx.insertWebhook(a, two);
      });
      assert.deepEqual(await store.getWebhook(a, one.id), one);
      assert.deepEqual(await store.listWebhooks(a), [two, one]);
      assert.equal(await store.getWebhook(a, 'whk_missing'), null);
    });

    test('update replaces every field and the subscriptions; delete removes it with its deliveries', async () => {
      const store = c.store();
      const a = await c.account();
      const w = webhook({ events: ['customer.created'] });
      await transaction(store, (tx) => tx.insertWebhook(a, w));
      await seedEvents(store, a, [anEvent('customer.created')]);
      const changed = {
        ...w,
        url: 'http://127.0.0.1:9/other',
        events: ['customer.deleted' as const],
        description: 'now',
        secret: 'whsec_other',
        previousSecret: w.secret,
        previousSecretExpiresAt: T0 + 86_400_000,
        updatedAt: T0 + 9,
      };
      await transaction(store, (tx) => tx.updateWebhook(a, changed));
      assert.deepEqual(await store.getWebhook(a, w.id), changed);
      await seedEvents(store, a, [anEvent('customer.created'), anEvent('customer.deleted')]);
      const list = await store.listDeliveries(a, w.id, { limit: 10 });
      assert.deepEqual(
        list.data.map((d) => d.eventType).sort(),
        ['customer.created', 'customer.deleted'],
        'the old subscription made one delivery, the new one the other',
      );
      assert.equal(await transaction(store, (tx) => tx.deleteWebhook(a, w.id)), true);
      assert.equal(await transaction(store, (tx) => tx.deleteWebhook(a, w.id)), false);
      assert.equal(await store.getWebhook(a, w.id), null);
      assert.deepEqual(await store.listDeliveries(a, w.id, { limit: 10 }), { data: [], hasMore: false });
    });

    test('fan-out: one pending delivery per enabled webhook subscribed to the event type', async () => {
      const store = c.store();
      const a = await c.account();
      const created = webhook({ events: ['customer.created', 'customer.updated'] });
      const updated = webhook({ events: ['customer.updated'] });
      const off = webhook({ events: ['customer.created'], enabled: false });
      await transaction(store, async (tx) => {
        for (const w of [created, updated, off]) await tx.insertWebhook(a, w);
      });
      const e1 = anEvent('customer.created', T0 + 1);
      const e2 = anEvent('customer.updated', T0 + 2);
      const e3 = anEvent('customer.deleted', T0 + 3);
      await seedEvents(store, a, [e1, e2, e3]);
      const of = async (id: string) => (await store.listDeliveries(a, id, { limit: 10 })).data;
      // Ids are time-ordered; two made in the same millisecond may come either way, so sort by due time.
      const forCreated = (await of(created.id)).sort(
        (x, y) => (y.nextAttemptAt ?? 0) - (x.nextAttemptAt ?? 0),
      );
      assert.deepEqual(
        forCreated.map((d) => [d.eventId, d.eventType, d.status, d.attemptCount, d.nextAttemptAt]),
        [
          [e2.id, 'customer.updated', 'pending', 0, T0 + 2],
          [e1.id, 'customer.created', 'pending', 0, T0 + 1],
        ],
      );
      assert.deepEqual(
        (await of(updated.id)).map((d) => d.eventId),
        [e2.id],
      );
      assert.deepEqual(await of(off.id), []);
      const one = forCreated[1];
      assert.ok(one);
      assert.deepEqual(await store.getDelivery(a, created.id, one.id), one);
      assert.deepEqual(one.attempts, []);
      assert.equal(one.createdAt, T0 + 1);
      assert.equal(await store.getDelivery(a, updated.id, one.id), null, 'a delivery belongs to its webhook');
    });

    test('deliveries list: newest first, paged, filtered by status, with their attempts', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const w = webhook();
      await transaction(store, (tx) => tx.insertWebhook(a, w));
      for (let i = 0; i < 3; i++) await seedEvents(store, a, [anEvent('customer.created', T0 + i)]);
      const [claimed] = await store.claimDeliveries({
        owner: 'd1',
        now: T0,
        leaseUntil: T0 + 1000,
        limit: 1,
        perWebhook: { default: 1 },
        perAccount: 1,
      });
      assert.ok(claimed);
      await store.recordAttempt(
        outcome(claimed, 'd1', { status: 'failed' }, { statusCode: null, error: 'timeout' }),
      );
      const all = await store.listDeliveries(a, w.id, { limit: 2 });
      assert.equal(all.hasMore, true);
      const rest = await store.listDeliveries(a, w.id, { limit: 2, startingAfter: all.data[1]?.id });
      const ids = [...all.data, ...rest.data].map((d) => d.id);
      assert.deepEqual(ids, [...ids].sort().reverse(), 'newest (greatest id) first');
      assert.equal(ids.length, 3);
      assert.equal(rest.hasMore, false);
      const failed = await store.listDeliveries(a, w.id, { status: 'failed', limit: 10 });
      assert.deepEqual(
        failed.data.map((d) => d.id),
        [claimed.id],
      );
      assert.deepEqual(failed.data[0]?.attempts, [
        {
          attempt: 1,
          startedAt: T0 + 10,
          durationMs: 12,
          statusCode: null,
          error: 'timeout',
          responseBody: 'boom',
        },
      ]);
      assert.equal(failed.data[0]?.attemptCount, 1);
      assert.equal((await store.listDeliveries(a, w.id, { status: 'pending', limit: 10 })).data.length, 2);
    });
  });
}
