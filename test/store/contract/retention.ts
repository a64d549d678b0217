// Event retention (docs/operations.md, "Event retention"): old events go with their finished
// deliveries and those deliveries' attempts; a delivery still pending keeps its event; newer
// events and every score's history stay. Timestamps are given, so the clock is the test's.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, test } from 'node:test';
import postgres from 'postgres';
import type { EventRecord } from '../../../src/domain/events.ts';
import type { Store } from '../../../src/store/store.ts';
import type { TestDatabase } from '../../helpers/stores.ts';
import { transaction } from '../../helpers/transaction.ts';
import { anEvent, type ContractContext, customer, score, seedEvents, T0, webhook } from './context.ts';
import { outcome } from './webhooks.ts';

const DAY = 86_400_000;

/** Rows in a table, read beside the store as an operator would. */
async function rows(db: TestDatabase, table: string): Promise<number> {
  if (db.backend === 'sqlite') {
    const raw = new DatabaseSync(join(db.dir, 'vitals.db'), { readOnly: true });
    try {
      return Number((raw.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n);
    } finally {
      raw.close();
    }
  }
  const sql = postgres(db.url as string, { max: 1 });
  try {
    const [row] = await sql.unsafe(`SELECT COUNT(*)::int AS n FROM ${table}`);
    return row?.n as number;
  } finally {
    await sql.end();
  }
}

/** Claims every due delivery and records `status` for each. */
async function finishAll(store: Store, status: 'succeeded' | 'failed', now: number): Promise<number> {
  const claimed = await store.claimDeliveries({
    owner: 'test',
    now,
    leaseUntil: now + 60_000,
    limit: 1000,
    perWebhook: { default: 1000 },
    perAccount: 1000,
  });
  for (const d of claimed) await store.recordAttempt(outcome(d, 'test', { status }));
  return claimed.length;
}

/** Walks batch after batch, as the job does, and adds up what went. */
async function pruneAll(store: Store, before: number, limit: number) {
  const total = { events: 0, deliveries: 0, batches: 0 };
  let after = 0;
  for (;;) {
    const b = await store.pruneEvents(before, { after, limit });
    total.events += b.events;
    total.deliveries += b.deliveries;
    total.batches++;
    if (b.next === null) return total;
    assert.ok(b.next > after, 'the walk moves forward');
    after = b.next;
  }
}

export function retentionContract(c: ContractContext): void {
  describe('event retention', () => {
    test('old events go with their finished deliveries and attempts; pending, newer and history stay', async (t) => {
      const { db, store, account } = await c.isolated(t);
      const a = await account();
      const w = webhook({ events: ['customer.created', 'customer.updated', 'customer.deleted'] });
      await transaction(store, async (tx) => {
        await tx.insertWebhook(a, w);
        await tx.insertCustomer(a, customer('cus_1'));
        await tx.writeScores(a, [score('cus_1', 0.5, 1, { updatedAt: T0 - 40 * DAY })], 'factors_updated');
      });
      const succeeded = anEvent('customer.created', T0 - 40 * DAY);
      const failed = anEvent('customer.updated', T0 - 39 * DAY);
      await seedEvents(store, a, [succeeded]);
      assert.equal(await finishAll(store, 'succeeded', T0), 1);
      await seedEvents(store, a, [failed]);
      assert.equal(await finishAll(store, 'failed', T0), 1);
      const pending = anEvent('customer.deleted', T0 - 38 * DAY);
      const young = anEvent('customer.created', T0 - 10 * DAY);
      await seedEvents(store, a, [pending, young]);
      const history = await store.listHistory(a, 'cus_1', { limit: 10 });
      assert.equal(await rows(db, 'delivery_attempts'), 2);

      const result = await pruneAll(store, T0 - 30 * DAY, 100);
      assert.deepEqual(result, { events: 2, deliveries: 2, batches: 1 });
      assert.equal(await store.getEvent(a, succeeded.id), null);
      assert.equal(await store.getEvent(a, failed.id), null);
      assert.equal(
        (await store.getEvent(a, pending.id))?.id,
        pending.id,
        'a pending delivery keeps its event',
      );
      assert.equal((await store.getEvent(a, young.id))?.id, young.id);
      const left = await store.listDeliveries(a, w.id, { limit: 10 });
      assert.deepEqual(
        left.data.map((d) => [d.eventId, d.status]),
        [
          [young.id, 'pending'],
          [pending.id, 'pending'],
        ],
      );
      assert.equal(await rows(db, 'delivery_attempts'), 0, 'attempts went with their deliveries');
      assert.deepEqual(await store.listHistory(a, 'cus_1', { limit: 10 }), history, 'history is kept');
      assert.deepEqual(await pruneAll(store, T0 - 30 * DAY, 100), { events: 0, deliveries: 0, batches: 1 });
    });

    test('an event kept for its pending delivery goes once that delivery has finished', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      await transaction(store, (tx) => tx.insertWebhook(a, webhook()));
      const e = anEvent('customer.created', T0 - 40 * DAY);
      await seedEvents(store, a, [e]);
      assert.deepEqual(await pruneAll(store, T0, 100), { events: 0, deliveries: 0, batches: 1 });
      assert.ok(await store.getEvent(a, e.id));
      assert.equal(await finishAll(store, 'succeeded', T0), 1);
      assert.deepEqual(await pruneAll(store, T0, 100), { events: 1, deliveries: 1, batches: 1 });
      assert.equal(await store.getEvent(a, e.id), null);
    });

    test('small batches walk every old event of every account, and stop at the first young one', async (t) => {
      const { store, account } = await c.isolated(t);
      const [a, b] = [await account(), await account()];
      const old: EventRecord[] = [];
      for (let i = 0; i < 23; i++) old.push(anEvent('customer.created', T0 - DAY + i));
      await seedEvents(store, a, old.slice(0, 12));
      await seedEvents(store, b, old.slice(12));
      const young = anEvent('customer.created', T0);
      // Written after the young one but with an older clock (another process's skew): it waits its turn.
      const skewed = anEvent('customer.created', T0 - DAY);
      await seedEvents(store, a, [young, skewed]);

      const result = await pruneAll(store, T0, 5);
      assert.deepEqual(result, { events: 23, deliveries: 0, batches: 5 });
      const listed = await store.listEvents(a, { limit: 100 });
      assert.deepEqual(
        listed.data.map((e) => e.id),
        [skewed.id, young.id],
      );
      assert.deepEqual((await store.listEvents(b, { limit: 100 })).data, []);
    });

    test('an empty table, or nothing old enough: one batch, nothing removed', async (t) => {
      const { store, account } = await c.isolated(t);
      assert.deepEqual(await store.pruneEvents(T0, { after: 0, limit: 10 }), {
        events: 0,
        deliveries: 0,
        next: null,
      });
      await seedEvents(store, await account(), [anEvent('customer.created', T0)]);
      assert.deepEqual(await store.pruneEvents(T0, { after: 0, limit: 10 }), {
        events: 0,
        deliveries: 0,
        next: null,
      });
    });
  });
}
