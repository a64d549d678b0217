// The store methods the other sections do not reach on their own: the customer list as JSON text,
// drop alerts' watch and record, audit entries written with a change, the test event's direct
// delivery and a webhook's backlog. Each is held to what store.ts says of it, on every backend.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { customerJson } from '../../../src/api/customers.ts';
import { newId } from '../../../src/domain/ids.ts';
import { DAY_MS } from '../../../src/domain/portfolio.ts';
import { transaction } from '../../helpers/transaction.ts';
import { anEvent, type ContractContext, customer, score, seedCustomers, T0, webhook } from './context.ts';
import { backfilled, versions } from './portfolio.ts';

export function remainingContract(c: ContractContext): void {
  describe('the rest of the store', () => {
    test('listCustomersJson: the page of listCustomers as the API sends each customer', async () => {
      const store = c.store();
      const a = await c.account();
      await transaction(store, async (tx) => {
        await tx.insertCustomer(a, customer('k1', { metadata: { plan: 'pro', nested: { x: [1, 'two'] } } }));
        await tx.insertCustomer(a, customer('k2', { name: 'Zed "quoted"', metadata: { plan: 'free' } }));
        await tx.insertCustomer(a, customer('k3', { metadata: { plan: 'pro' } }));
      });
      for (const opts of [
        { limit: 2 },
        { limit: 2, startingAfter: 'k2' },
        { limit: 10, search: 'QUOTED' },
        { limit: 10, segment: { metadata: [{ key: 'plan', value: 'pro' }] } },
      ]) {
        const records = await store.listCustomers(a, opts);
        const json = await store.listCustomersJson(a, opts);
        assert.deepEqual(
          JSON.parse(`[${json.json}]`),
          JSON.parse(`[${records.data.map(customerJson).join(',')}]`),
        );
        assert.equal(json.hasMore, records.hasMore, JSON.stringify(opts));
      }
      assert.deepEqual(await store.listCustomersJson(await c.account(), { limit: 10 }), {
        json: '',
        hasMore: false,
      });
    });

    test('getCustomerJson: the customer as the API sends it; null for one that is not there', async () => {
      const store = c.store();
      const a = await c.account();
      await transaction(store, async (tx) => {
        await tx.insertCustomer(
          a,
          customer('g1', { name: 'Zoë "quoted"', metadata: { plan: 'pro', n: [1, { x: null }] } }),
        );
      });
      const record = await store.getCustomer(a, 'g1');
      assert.ok(record);
      const json = await store.getCustomerJson(a, 'g1');
      assert.ok(json);
      assert.deepEqual(JSON.parse(json), JSON.parse(customerJson(record)));
      assert.equal(await store.getCustomerJson(a, 'nope'), null);
      assert.equal(await store.getCustomerJson(await c.account(), 'g1'), null, 'another account');
      assert.equal(await store.getCustomerJson(a, 'g\u00001'), null);
    });

    test('dropWatch: each customer’s peak since the window opened and last alert; recordDropAlerts remembers them', async () => {
      const store = c.store();
      const a = await c.account();
      await seedCustomers(store, a, ['w1', 'w2', 'w3']);
      const at = (day: number) => T0 + day * DAY_MS;
      // w1: 0.9 before the window, 0.6 in it; w2: 0.4 then 0.8, both in it; w3 never scored.
      await transaction(store, (tx) =>
        tx.writeScores(
          a,
          [score('w1', 0.9, 1, { updatedAt: at(0) }), score('w2', 0.4, 1, { updatedAt: at(2) })],
          'factors_updated',
        ),
      );
      await transaction(store, (tx) =>
        tx.writeScores(
          a,
          [score('w1', 0.6, 2, { updatedAt: at(3) }), score('w2', 0.8, 2, { updatedAt: at(4) })],
          'factors_updated',
        ),
      );
      const since = at(1);
      let watch = await transaction(store, (tx) => tx.dropWatch(a, ['w1', 'w2', 'w3'], since));
      assert.deepEqual(
        watch.get('w1'),
        { peak: 0.9, alertedAt: null },
        'the score it stood at when the window opened',
      );
      assert.deepEqual(watch.get('w2'), { peak: 0.8, alertedAt: null });
      assert.deepEqual(watch.get('w3'), { peak: null, alertedAt: null });
      await transaction(store, (tx) =>
        tx.recordDropAlerts(a, [{ customerId: 'w1', at: at(3), from: 0.9, to: 0.6, peak: 0.9 }]),
      );
      await transaction(store, (tx) =>
        tx.recordDropAlerts(a, [{ customerId: 'w1', at: at(5), from: 0.6, to: 0.5, peak: 0.9 }]),
      );
      watch = await transaction(store, (tx) => tx.dropWatch(a, ['w1', 'w2'], since));
      assert.equal(watch.get('w1')?.alertedAt, at(5), 'the latest alert');
      assert.equal(watch.get('w2')?.alertedAt, null);
      const b = await c.account();
      assert.equal(
        (await transaction(store, (tx) => tx.dropWatch(b, ['w1'], since))).get('w1')?.peak ?? null,
        null,
      );
    });

    test('dropWatch: the peak starts again at a weights or rules change or a backfill, not a thresholds change; backfilled versions below 1 count', async (t) => {
      const { db, store, account } = await c.isolated(t);
      const a = await account();
      await seedCustomers(store, a, ['t1', 't2', 't3', 't4']);
      // t1: 0.9 before the window, 0.75 in it, then re-banded by a thresholds change (no new peak).
      await versions(store, a, 't1', [
        [0.9, 0, 'factors_updated'],
        [0.75, 2, 'factors_updated'],
        [0.75, 3, 'thresholds_changed'],
      ]);
      // t2: backfilled 0.95 and 0.7 inside the window, then 0.6 of its own.
      await versions(store, a, 't2', [[0.6, 3, 'factors_updated']]);
      await backfilled(db, a, 't2', [
        [0.7, 2],
        [0.95, 1.5],
      ]);
      // t3: backfilled 0.95 and 0.8 before the window, then 0.6 in it.
      await versions(store, a, 't3', [[0.6, 2, 'factors_updated']]);
      await backfilled(db, a, 't3', [
        [0.8, 0.5],
        [0.95, 0],
      ]);
      // t4: a rules change in the window, then a fall below it.
      await versions(store, a, 't4', [
        [0.9, 0, 'factors_updated'],
        [0.8, 2, 'rules_changed'],
        [0.7, 3, 'factors_updated'],
      ]);
      const watch = await transaction(store, (tx) => tx.dropWatch(a, ['t1', 't2', 't3', 't4'], T0 + DAY_MS));
      assert.deepEqual([...watch].map(([id, w]) => [id, w.peak]).sort(), [
        ['t1', 0.9],
        ['t2', 0.7],
        ['t3', 0.8],
        ['t4', 0.8],
      ]);
    });

    test('appendAudits: entries written in the transaction of their change, or not at all', async () => {
      const store = c.store();
      const a = await c.account();
      const entry = (action: string) => ({
        id: newId.audit(),
        actor: { type: 'user' as const, id: 'usr_1', label: 'ana@example.com' },
        action,
        objectId: 'acme',
        at: T0,
        requestId: 'req-1',
      });
      const kept = [entry('health_score.updated'), entry('health_score.updated')];
      await transaction(store, (tx) => tx.appendAudits(a, kept));
      await assert.rejects(
        transaction(store, async (tx) => {
          await tx.appendAudits(a, [entry('customer.deleted')]);
          throw new Error('the change failed');
        }),
        /the change failed/,
      );
      assert.deepEqual((await store.listAudit(a, { limit: 10 })).data, [...kept].reverse());
    });

    test('insertDirectEvent: the event with one pending delivery to that webhook alone; null for no such webhook', async () => {
      const store = c.store();
      const a = await c.account();
      const w = webhook({ events: ['customer.created'] });
      const other = webhook({ events: ['webhook.test' as never] });
      await transaction(store, async (tx) => {
        await tx.insertWebhook(a, w);
        await tx.insertWebhook(a, other);
      });
      const e = anEvent('webhook.test', T0 + 5, { webhook_id: w.id });
      const id = await transaction(store, (tx) => tx.insertDirectEvent(a, w.id, e));
      assert.ok(id);
      const delivery = await store.getDelivery(a, w.id, id);
      assert.deepEqual(delivery && [delivery.eventId, delivery.status, delivery.attempts.length], [
        e.id,
        'pending',
        0,
      ]);
      assert.deepEqual(
        (await store.listDeliveries(a, other.id, { limit: 10 })).data,
        [],
        'no other webhook gets it',
      );
      assert.equal((await store.getEvent(a, e.id))?.type, 'webhook.test');
      const missing = anEvent('webhook.test', T0 + 6);
      assert.equal(await transaction(store, (tx) => tx.insertDirectEvent(a, 'whk_missing', missing)), null);
      assert.equal(await store.getEvent(a, missing.id), null, 'nothing written');
    });

    test('webhookBacklog: pending deliveries counted up to the cap, and when the oldest was made', async () => {
      const store = c.store();
      const a = await c.account();
      const w = webhook();
      await transaction(store, (tx) => tx.insertWebhook(a, w));
      assert.deepEqual(await store.webhookBacklog(a, w.id, 100), { pending: 0, oldestAt: null });
      for (const at of [T0 + 30, T0 + 10, T0 + 20]) {
        await transaction(store, (tx) => tx.insertDirectEvent(a, w.id, anEvent('webhook.test', at)));
      }
      assert.deepEqual(await store.webhookBacklog(a, w.id, 100), { pending: 3, oldestAt: T0 + 10 });
      assert.deepEqual(await store.webhookBacklog(a, w.id, 2), { pending: 2, oldestAt: T0 + 10 });
      assert.deepEqual(await store.webhookBacklog(await c.account(), w.id, 100), {
        pending: 0,
        oldestAt: null,
      });
    });
  });
}
