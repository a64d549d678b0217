// An in-memory SQLite store keeps its one connection on the main thread (docs/operations.md,
// "The SQLite writer thread"): writes, named jobs and reads all go through it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { applyFactorUpdates } from '../../src/writes/factor-updates.ts';
import { txSteps } from './contract/writes.ts';

test("':memory:': a test's write, a named write and a store write are read back from the same connection", async () => {
  const store = new SqliteStore({ path: ':memory:' });
  assert.ok((await store.migrate()) > 0);
  const account = await store.ensureAccount('memory', 1);
  const now = Date.now();
  const customer = {
    id: 'c1',
    name: 'One',
    email: 'one@example.com',
    metadata: {},
    createdAt: now,
    updatedAt: now,
  };
  assert.deepEqual(await store.run(txSteps, [['insertCustomer', account.id, customer]]), [true]);
  const [result] = await store.run(
    applyFactorUpdates,
    account.id,
    [{ customerId: 'c1', factors: { usage: 0.5 }, merge: false }],
    now,
  );
  assert.equal(result?.ok, true);
  assert.deepEqual((await store.getScore(account.id, 'c1'))?.factors, { usage: 0.5 });
  assert.deepEqual(await store.synchronousLevels(), [{ connection: 'writer', level: 2 }]);
  await store.close();
  await store.close();
});
