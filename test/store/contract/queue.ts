import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PostgresStore } from '../../../src/store/postgres/postgres-store.ts';
import type { ClaimedDelivery, ClaimOptions, Store, WebhookRecord } from '../../../src/store/store.ts';
import { transaction } from '../../helpers/transaction.ts';
import { anEvent, type ContractContext, pendingDeliveries, seedEvents, T0, webhook } from './context.ts';
import { outcome } from './webhooks.ts';
import { txSteps } from './writes.ts';

const claim = (store: Store, owner: string, now: number, extra: { limit?: number; lease?: number } = {}) =>
  store.claimDeliveries({
    owner,
    now,
    leaseUntil: now + (extra.lease ?? 1000),
    limit: extra.limit ?? 100,
    perWebhook: { default: 100 },
    perAccount: 1000,
  });

/** Resolves at the next call of the store's onDeliveriesDue listeners. */
function nextWake(store: Store): Promise<void> {
  return new Promise((resolve) => {
    const off = store.onDeliveriesDue(() => {
      off();
      resolve();
    });
  });
}

/** Three webhooks of one account, and 40 events each is subscribed to: 120 deliveries, all due by T0 + 40. */
async function threeWebhooksWith40Events(store: Store, accountId: string) {
  const hooks = [webhook(), webhook(), webhook()];
  await transaction(store, async (tx) => {
    for (const w of hooks) await tx.insertWebhook(accountId, w);
  });
  await seedEvents(
    store,
    accountId,
    Array.from({ length: 40 }, (_, i) => anEvent('customer.created', T0 + i)),
  );
  return hooks;
}

export function queueContract(c: ContractContext): void {
  describe('delivery queue', () => {
    test('a claim leases due deliveries with the event bytes as stored; a live lease blocks, a lapsed one is taken over', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const w = webhook();
      await transaction(store, (tx) => tx.insertWebhook(a, w));
      const e = anEvent('customer.created', T0, { z: 'é', a: [1, 2.5], m: { y: null, b: true } });
      await seedEvents(store, a, [e]);
      const [first, ...none] = await claim(store, 'one', T0);
      assert.deepEqual(none, []);
      assert.ok(first);
      assert.deepEqual(
        { ...first, id: undefined },
        {
          id: undefined,
          accountId: a,
          webhookId: w.id,
          eventId: e.id,
          eventType: 'customer.created',
          data: JSON.stringify(e.data),
          url: w.url,
          format: 'standard',
          secret: w.secret,
          previousSecret: null,
          previousSecretExpiresAt: null,
          attempt: 1,
        },
      );
      assert.deepEqual(await claim(store, 'two', T0 + 999), [], 'the lease runs to T0 + 1000');
      const [taken] = await claim(store, 'two', T0 + 1000);
      assert.equal(taken?.id, first.id, 'a lease that has run out is taken over');
      assert.equal(taken?.attempt, 1);
    });

    test('a claim carries the secret a rotation replaced and when it stops signing', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const w = webhook();
      await transaction(store, (tx) => tx.insertWebhook(a, w));
      const rotated = {
        ...w,
        secret: 'whsec_new',
        previousSecret: w.secret,
        previousSecretExpiresAt: T0 + 60_000,
      };
      await transaction(store, (tx) => tx.updateWebhook(a, rotated));
      await seedEvents(store, a, [anEvent('customer.created', T0)]);
      const [claimed] = await claim(store, 'one', T0);
      assert.deepEqual(
        [claimed?.secret, claimed?.previousSecret, claimed?.previousSecretExpiresAt],
        ['whsec_new', w.secret, T0 + 60_000],
      );
    });

    test('a claim takes at most limit; per webhook and per account at most their limit in flight over every claim; none of disabled webhooks or not yet due', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const [w1, w2, w3] = [webhook(), webhook(), webhook()];
      await transaction(store, async (tx) => {
        for (const w of [w1, w2, w3]) await tx.insertWebhook(a, w);
      });
      await seedEvents(store, a, [
        anEvent('customer.created', T0),
        anEvent('customer.created', T0 + 1),
        anEvent('customer.created', T0 + 2),
        anEvent('customer.created', T0 + 5000),
      ]);
      await transaction(store, (tx) => tx.updateWebhook(a, { ...w3, enabled: false, updatedAt: T0 + 1 }));
      const limited = (
        owner: string,
        perWebhook: ClaimOptions['perWebhook'],
        perAccount = 100,
        limit = 100,
      ) =>
        store.claimDeliveries({ owner, now: T0 + 10, leaseUntil: T0 + 1000, limit, perWebhook, perAccount });
      const per = (list: ClaimedDelivery[]) =>
        [w1, w2, w3].map((w) => list.filter((d) => d.webhookId === w.id).length);
      const byWebhook = { [w1.id]: 1, [w2.id]: 2 };
      assert.deepEqual(per(await limited('d', { default: 100, byWebhook })), [1, 2, 0]);
      assert.deepEqual(
        per(await limited('e', { default: 100, byWebhook })),
        [0, 0, 0],
        'the leases of the first claim are in flight: both webhooks are at their limit',
      );
      assert.deepEqual(per(await limited('f', { default: 2 })), [1, 0, 0], 'w1 may have one more in flight');
      assert.deepEqual(
        per(await limited('g', { default: 100 }, 4)),
        [0, 0, 0],
        'the account has 4 in flight',
      );
      assert.deepEqual(
        per(await limited('h', { default: 100 }, 5, 1)).reduce((x, y) => x + y),
        1,
        'limit',
      );
      assert.equal((await claim(store, 'i', T0 + 10)).length, 1, 'the last one due');
      assert.deepEqual(await claim(store, 'j', T0 + 10), []);
      assert.deepEqual(await claim(store, 'k', T0 + 999), [], 'leases held, the last event not yet due');
      const lapsed = await claim(store, 'l', T0 + 99_999);
      assert.equal(lapsed.length, 8, 'every delivery of w1 and w2, leases lapsed');
      assert.equal(lapsed.filter((d) => d.webhookId === w3.id).length, 0);
    });

    test('free slots go round-robin: across accounts first, then across each account’s webhooks, going on where the last claim stopped', async (t) => {
      const { store, account } = await c.isolated(t);
      const [a, b] = [await account(), await account()].sort();
      const [a1, a2] = [webhook(), webhook()].sort((x, y) => (x.id < y.id ? -1 : 1));
      const b1 = webhook();
      await transaction(store, async (tx) => {
        await tx.insertWebhook(a as string, a1 as WebhookRecord);
        await tx.insertWebhook(a as string, a2 as WebhookRecord);
        await tx.insertWebhook(b as string, b1);
      });
      const events = (n: number) => Array.from({ length: n }, (_, i) => anEvent('customer.created', T0 + i));
      await seedEvents(store, a as string, events(10));
      await seedEvents(store, b as string, events(10));
      const order = (list: ClaimedDelivery[]) => list.map((d) => d.webhookId);
      const first = await claim(store, 'd', T0 + 100, { limit: 5 });
      assert.deepEqual(
        order(first),
        [a1?.id, b1.id, a2?.id, b1.id, a1?.id],
        'a, b, a, b, a; a’s two in turn',
      );
      const next = await store.claimDeliveries({
        owner: 'e',
        now: T0 + 100,
        leaseUntil: T0 + 1000,
        limit: 3,
        perWebhook: { default: 100 },
        perAccount: 100,
        after: { account: a as string, webhooks: { [a as string]: a1?.id as string } },
      });
      assert.deepEqual(order(next), [b1.id, a2?.id, b1.id], 'after a: b first; within a, after a1: a2');
      const capped = await store.claimDeliveries({
        owner: 'f',
        now: T0 + 100,
        leaseUntil: T0 + 1000,
        limit: 10,
        perWebhook: { default: 100 },
        perAccount: 6,
      });
      assert.deepEqual(
        order(capped),
        [a1?.id, b1.id, a2?.id, b1.id],
        'each account up to 6 in flight: a had 4 and b 4, so two more each, and the claim stops short of its limit',
      );
    });

    test('a long backlog of a webhook with no free slot does not hide the deliveries of others', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const stuck = webhook();
      await transaction(store, (tx) => tx.insertWebhook(a, stuck));
      await seedEvents(
        store,
        a,
        Array.from({ length: 60 }, (_, i) => anEvent('customer.created', T0 + i)),
      );
      const healthy = webhook();
      await transaction(store, (tx) => tx.insertWebhook(a, healthy));
      await seedEvents(store, a, [anEvent('customer.created', T0 + 100)]);
      const claimed = await store.claimDeliveries({
        owner: 'd',
        now: T0 + 100,
        leaseUntil: T0 + 1000,
        limit: 2,
        perWebhook: { default: 2, byWebhook: { [stuck.id]: 0 } },
        perAccount: 2,
      });
      assert.deepEqual(
        claimed.map((d) => d.webhookId),
        [healthy.id],
      );
    });

    test('recordAttempt: the lease holder moves the delivery on; a dispatcher that lost its lease only adds its attempt', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const w = webhook();
      await transaction(store, (tx) => tx.insertWebhook(a, w));
      await seedEvents(store, a, [anEvent()]);
      const [stale] = await claim(store, 'stale', T0);
      assert.ok(stale);
      const [fresh] = await claim(store, 'fresh', T0 + 1000);
      assert.ok(fresh);
      await store.recordAttempt(outcome(stale, 'stale', { status: 'succeeded' }));
      let d = await store.getDelivery(a, w.id, stale.id);
      assert.deepEqual([d?.status, d?.attemptCount, d?.nextAttemptAt], ['pending', 0, T0]);
      assert.equal(d?.attempts.length, 1, 'the attempt happened, so it is on record');

      await store.recordAttempt(outcome(fresh, 'fresh', { status: 'pending', at: T0 + 5000 }));
      d = await store.getDelivery(a, w.id, fresh.id);
      assert.deepEqual([d?.status, d?.attemptCount, d?.nextAttemptAt], ['pending', 1, T0 + 5000]);
      assert.deepEqual(await claim(store, 'x', T0 + 4999), []);
      const [retry] = await claim(store, 'x', T0 + 5000);
      assert.equal(retry?.attempt, 2, 'the lease was released with the attempt');
      assert.ok(retry);
      await store.recordAttempt(outcome(retry, 'x', { status: 'succeeded' }));
      d = await store.getDelivery(a, w.id, fresh.id);
      assert.deepEqual([d?.status, d?.attemptCount, d?.nextAttemptAt], ['succeeded', 2, null]);
      assert.deepEqual(
        d?.attempts.map((x) => [x.attempt, x.statusCode, x.responseBody]),
        [
          [1, 200, 'ok'],
          [2, 200, 'ok'],
        ],
      );
      assert.deepEqual(await claim(store, 'y', T0 + 99_999), []);
    });

    test('recordAttempts: many outcomes in one transaction, each as recordAttempt would record it', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const [w1, w2] = [webhook(), webhook()] as const;
      await transaction(store, async (tx) => {
        await tx.insertWebhook(a, w1);
        await tx.insertWebhook(a, w2);
      });
      await seedEvents(store, a, [anEvent(), anEvent(), anEvent()]);
      const claimed = await claim(store, 'mine', T0);
      assert.equal(claimed.length, 6);
      const [lost, ...held] = claimed as [ClaimedDelivery, ...ClaimedDelivery[]];
      const gone = held.find((d) => d.webhookId === w2.id) as ClaimedDelivery;
      await store.recordAttempts([
        outcome(lost, 'not mine', { status: 'succeeded' }),
        ...held.map((d) =>
          d === gone
            ? outcome(d, 'mine', { status: 'failed' }, { statusCode: 410, disableWebhook: true })
            : outcome(
                d,
                'mine',
                { status: 'pending', at: T0 + 5000 },
                { statusCode: null, error: 'timeout\u0000' },
              ),
        ),
      ]);
      const after = await Promise.all(claimed.map((d) => store.getDelivery(a, d.webhookId, d.id)));
      assert.deepEqual(
        after.map((d) => [d?.status, d?.attemptCount, d?.attempts.length]),
        claimed.map((d) =>
          d === lost ? ['pending', 0, 1] : d === gone ? ['failed', 1, 1] : ['pending', 1, 1],
        ),
      );
      const retried = after.find((d) => d?.status === 'pending' && d.attemptCount === 1);
      assert.deepEqual([retried?.nextAttemptAt, retried?.attempts[0]?.error], [T0 + 5000, 'timeout\u0000']);
      assert.equal((await store.getWebhook(a, w2.id))?.enabled, false, 'the 410 switched its webhook off');
      await store.recordAttempts([]);
    });

    test('a 410 switches the webhook off with a reason; its deliveries are no longer claimed', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const w = webhook();
      await transaction(store, (tx) => tx.insertWebhook(a, w));
      await seedEvents(store, a, [anEvent('customer.created', T0), anEvent('customer.created', T0 + 1)]);
      const [d] = await claim(store, 'd', T0, { limit: 1 });
      assert.ok(d);
      await store.recordAttempt(
        outcome(d, 'd', { status: 'failed' }, { statusCode: 410, disableWebhook: true }),
      );
      const off = await store.getWebhook(a, w.id);
      assert.equal(off?.enabled, false);
      assert.match(off?.disabledReason ?? '', /410/);
      assert.equal((await store.getDelivery(a, w.id, d.id))?.status, 'failed');
      assert.deepEqual(await claim(store, 'd', T0 + 10), []);
      assert.equal(await store.nextDueAt(T0 + 10), null, 'nothing falls due later');
      assert.equal(await pendingDeliveries(store), 1, 'the other delivery waits, pending');
    });

    test('nextDueAt: the earliest pending due time after a moment; the backlog by account', async (t) => {
      const { store, account } = await c.isolated(t);
      assert.equal(await store.nextDueAt(0), null);
      assert.equal(await pendingDeliveries(store), 0);
      const a = await account();
      const w = webhook();
      await transaction(store, (tx) => tx.insertWebhook(a, w));
      await seedEvents(store, a, [anEvent('customer.created', T0 + 100)]);
      assert.equal(await store.nextDueAt(T0), T0 + 100);
      assert.equal(await store.nextDueAt(T0 + 100), null, 'what is due already is not "next"');
      const [d] = await claim(store, 'd', T0 + 100, { lease: 900 });
      assert.ok(d);
      await seedEvents(store, a, [anEvent('customer.created', T0 + 500)]);
      assert.equal(await store.nextDueAt(T0 + 100), T0 + 500);
      assert.equal(await pendingDeliveries(store), 2);
      await store.recordAttempt(outcome(d, 'd', { status: 'succeeded' }));
      assert.equal(await pendingDeliveries(store), 1);
      assert.equal(await store.nextDueAt(T0), T0 + 500);
    });

    test('retryDelivery makes a finished delivery due now; false for one that is not there', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      const b = await account();
      const w = webhook();
      await transaction(store, (tx) => tx.insertWebhook(a, w));
      await seedEvents(store, a, [anEvent()]);
      const [d] = await claim(store, 'd', T0);
      assert.ok(d);
      await store.recordAttempt(outcome(d, 'd', { status: 'failed' }));
      assert.equal(await pendingDeliveries(store), 0);
      const woke = nextWake(store);
      assert.deepEqual(await store.run(txSteps, [['retryDelivery', a, w.id, d.id, T0 + 50]]), [true]);
      await woke;
      const after = await store.getDelivery(a, w.id, d.id);
      assert.deepEqual([after?.status, after?.nextAttemptAt, after?.attemptCount], ['pending', T0 + 50, 1]);
      const [again] = await claim(store, 'd', T0 + 50);
      assert.equal(again?.attempt, 2);
      assert.equal(
        await transaction(store, (tx) => tx.retryDelivery(b, w.id, d.id, T0)),
        false,
        'another account',
      );
      assert.equal(await transaction(store, (tx) => tx.retryDelivery(a, w.id, 'dlv_missing', T0)), false);
    });

    test('onDeliveriesDue fires after a commit that made deliveries due; not for a rollback or a commit without any', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      await transaction(store, (tx) => tx.insertWebhook(a, webhook({ events: ['customer.created'] })));
      let calls = 0;
      let seen: Promise<number> | undefined;
      const off = store.onDeliveriesDue(() => {
        calls++;
        seen ??= pendingDeliveries(store);
      });
      t.after(off);
      await seedEvents(store, a, [anEvent('customer.deleted')]);
      await assert.rejects(
        transaction(store, async (tx) => {
          await tx.insertEvents(a, [anEvent('customer.created')]);
          throw new Error('changed my mind');
        }),
        /changed my mind/,
      );
      assert.equal(calls, 0);
      const woke = nextWake(store);
      await seedEvents(store, a, [anEvent('customer.created')]);
      await woke;
      assert.equal(calls, 1);
      assert.equal(await seen, 1, 'the listener runs once the delivery is committed and visible');
    });

    test('claims running at once never lease the same delivery twice', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      await threeWebhooksWith40Events(store, a);
      const rounds = await Promise.all(
        Array.from({ length: 8 }, (_, i) => claim(store, `d${i}`, T0 + 100, { limit: 10 })),
      );
      const claimed: ClaimedDelivery[] = rounds.flat();
      claimed.push(...(await claim(store, 'last', T0 + 100, { limit: 200 })));
      const ids = claimed.map((d) => d.id);
      assert.equal(new Set(ids).size, ids.length, 'no delivery leased twice');
      assert.equal(ids.length, 120);
    });

    test('a burst of claims at once, from two stores of one database, never goes past the limits in flight', async (t) => {
      const { db, store, account } = await c.isolated(t);
      // On PostgreSQL the second store is another pool, as another process would be.
      const other = c.backend === 'postgres' ? (db.open() as PostgresStore) : store;
      if (other !== store) t.after(() => other.close());
      const a = await account();
      const hooks = await threeWebhooksWith40Events(store, a);
      const rounds = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          (i % 2 ? other : store).claimDeliveries({
            owner: `d${i}`,
            now: T0 + 100,
            leaseUntil: T0 + 1000,
            limit: 3,
            perWebhook: { default: 5 },
            perAccount: 12,
          }),
        ),
      );
      const claimed = rounds.flat();
      assert.equal(claimed.length, 12, 'the account’s limit, reached and not passed');
      for (const w of hooks)
        assert.ok(claimed.filter((d) => d.webhookId === w.id).length <= 5, 'a webhook’s limit');
      assert.equal(new Set(claimed.map((d) => d.id)).size, 12, 'no delivery leased twice');
    });

    test('a commit in one process wakes the listeners of another', {
      skip: c.backend === 'sqlite' && 'SQLite serves one process',
    }, async (t) => {
      const { db, store, account } = await c.isolated(t);
      const other = db.open() as PostgresStore;
      const woke = nextWake(other);
      await other.listening();
      const a = await account();
      await transaction(store, (tx) => tx.insertWebhook(a, webhook()));
      await seedEvents(store, a, [anEvent()]);
      await woke;
    });
  });
}
