import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import { transaction } from '../../helpers/transaction.ts';
import {
  anEvent,
  type ContractContext,
  customer,
  score,
  seedCustomers,
  seedEvents,
  T0,
  webhook,
} from './context.ts';

export function schemaContract(c: ContractContext): void {
  describe('schema, connection, accounts and keys', () => {
    test('migrate answers the schema version; running it again changes nothing', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      await seedCustomers(store, a, ['kept']);
      const version = await store.migrate();
      assert.ok(Number.isInteger(version) && version >= 3);
      assert.equal(await store.migrate(), version);
      assert.equal((await store.getCustomer(a, 'kept'))?.id, 'kept');
    });

    test('migrationStatus tells where the schema is without changing it: 0 on a fresh database, then the latest', async (t) => {
      const store = (await c.database(t)).open();
      const fresh = await store.migrationStatus();
      assert.equal(fresh.applied, 0);
      assert.ok(fresh.latest >= 3);
      assert.deepEqual(await store.migrationStatus(), fresh, 'reading it migrated nothing');
      assert.equal(await store.migrate(), fresh.latest);
      assert.deepEqual(await store.migrationStatus(), { applied: fresh.latest, latest: fresh.latest });
    });

    test('stores starting at once on a fresh database both migrate it', async (t) => {
      const db = await c.database(t);
      const [one, two, three] = [db.open(), db.open(), db.open()];
      const versions = await Promise.all([one.migrate(), two.migrate(), three.migrate()]);
      assert.equal(new Set(versions).size, 1);
      const a = (await one.ensureAccount('shared', T0)).id;
      assert.equal((await two.ensureAccount('shared', T0 + 1)).id, a);
      await seedCustomers(two, a, ['x']);
      assert.equal((await three.getCustomer(a, 'x'))?.id, 'x');
    });

    test('ping answers while the store is open; after close it fails, and closing again is harmless', async (t) => {
      const store = (await c.database(t)).open();
      await store.ping();
      await store.close();
      await assert.rejects(store.ping());
      await store.close();
    });

    test('ensureAccount finds an account by name, or creates it once', async () => {
      const store = c.store();
      const name = `named-${newId.account()}`;
      const [x, y] = await Promise.all([store.ensureAccount(name, T0), store.ensureAccount(name, T0 + 5)]);
      assert.deepEqual(x, y);
      assert.deepEqual(await store.ensureAccount(name, T0 + 9), x);
      assert.equal(x.name, name);
      assert.match(x.id, /^acct_/);
    });

    test('api keys: found by hash with their scope until revoked; listed with their account; counted while active', async (t) => {
      const { store } = await c.isolated(t);
      const acct = await store.ensureAccount('keys', T0);
      const key = {
        id: newId.apiKeyId(),
        accountId: acct.id,
        hash: 'a'.repeat(64),
        prefix: 'vk_abcd',
        scope: 'write' as const,
        createdAt: T0,
      };
      await store.insertApiKey(key);
      await store.insertApiKey({ ...key, id: newId.apiKeyId() }); // same hash: ignored
      const reader = {
        ...key,
        id: newId.apiKeyId(),
        hash: 'b'.repeat(64),
        scope: 'read' as const,
        createdAt: T0 + 1,
      };
      await store.insertApiKey(reader);
      assert.deepEqual(await store.findApiKey(key.hash), {
        keyId: key.id,
        accountId: acct.id,
        scope: 'write',
        prefix: 'vk_abcd',
      });
      assert.deepEqual(await store.findApiKey(reader.hash), {
        keyId: reader.id,
        accountId: acct.id,
        scope: 'read',
        prefix: 'vk_abcd',
      });
      assert.equal(await store.findApiKey('c'.repeat(64)), null);
      assert.equal(await store.countActiveApiKeys(), 2);
      const listed = await store.listApiKeys();
      assert.deepEqual(listed[0], {
        id: key.id,
        accountId: acct.id,
        accountName: 'keys',
        prefix: 'vk_abcd',
        scope: 'write',
        createdAt: T0,
        revokedAt: null,
      });
      assert.equal(listed[1]?.scope, 'read');
      assert.equal(listed.length, 2);
      assert.equal(await store.revokeApiKey(key.id, T0 + 7), true);
      assert.equal(await store.revokeApiKey(key.id, T0 + 8), false, 'already revoked');
      assert.equal(await store.revokeApiKey('key_missing', T0), false);
      assert.equal(await store.findApiKey(key.hash), null);
      assert.equal(await store.countActiveApiKeys(), 1);
      assert.equal((await store.listApiKeys())[0]?.revokedAt, T0 + 7);
    });

    test('another account sees none of it, and cannot change or remove it', async () => {
      const store = c.store();
      const a = await c.account();
      const b = await c.account();
      const w = webhook();
      const e = anEvent();
      await seedCustomers(store, a, ['mine']);
      await transaction(store, async (tx) => {
        await tx.writeScores(a, [score('mine', 0.9)], 'factors_updated');
        await tx.insertWebhook(a, w);
        await tx.putWeights(a, { usage: 1 }, T0);
      });
      await seedEvents(store, a, [e]);
      const [delivery] = (await store.listDeliveries(a, w.id, { limit: 1 })).data;
      assert.ok(delivery);

      assert.equal(await store.getCustomer(b, 'mine'), null);
      assert.deepEqual(await store.listCustomers(b, { limit: 10 }), { data: [], hasMore: false });
      assert.equal(await store.getScore(b, 'mine'), null);
      assert.deepEqual(await store.listHistory(b, 'mine', { limit: 10 }), { data: [], hasMore: false });
      assert.deepEqual(await store.listScores(b, { limit: 10 }), { data: [], hasMore: false });
      assert.deepEqual(await store.countScoresByStatus(b), { healthy: 0, at_risk: 0, critical: 0 });
      assert.deepEqual((await store.getSettings(b)).weights, {});
      assert.equal(await store.getEvent(b, e.id), null);
      assert.deepEqual(await store.listEvents(b, { limit: 10 }), { data: [], hasMore: false });
      assert.equal(await store.getWebhook(b, w.id), null);
      assert.deepEqual(await store.listWebhooks(b), []);
      assert.equal(await store.getDelivery(b, w.id, delivery.id), null);
      assert.deepEqual(await store.listDeliveries(b, w.id, { limit: 10 }), { data: [], hasMore: false });
      assert.deepEqual(await transaction(store, (tx) => tx.scoresAfter(b, null, 10)), []);

      assert.equal(await transaction(store, (tx) => tx.deleteCustomer(b, 'mine')), false);
      assert.equal(await transaction(store, (tx) => tx.deleteWebhook(b, w.id)), false);
      await transaction(store, (tx) => tx.updateCustomer(b, customer('mine', { name: 'Hijacked' })));
      assert.equal((await store.getCustomer(a, 'mine'))?.name, 'Customer mine');

      assert.equal(
        await transaction(store, (tx) => tx.insertCustomer(b, customer('mine'))),
        true,
        'ids are per account',
      );
      assert.equal((await store.listCustomers(a, { limit: 10 })).data.length, 1);
    });
  });
}
