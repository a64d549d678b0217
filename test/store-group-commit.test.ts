// SQLite commits concurrent transactions in groups: one failing transaction must roll back
// alone, and nobody may be answered before the commit that holds their writes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { tempDir } from './helpers/app.ts';

const store = new SqliteStore({ path: join(tempDir(), 'vitals.db') });
after(() => store.close());

test('concurrent transactions commit together; a failing one rolls back alone', async () => {
  await store.migrate();
  const account = await store.ensureAccount('group', Date.now());
  const now = Date.now();
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, (_, i) =>
      store.transaction(async (tx) => {
        await tx.insertCustomer(account.id, {
          id: `cus_${String(i).padStart(2, '0')}`,
          name: `n${i}`,
          email: `c${i}@example.com`,
          metadata: {},
          createdAt: now,
          updatedAt: now,
        });
        if (i % 5 === 0) throw new Error(`transaction ${i} fails after writing`);
        // Answered only after its commit: a fresh reader already sees the row.
        return i;
      }),
    ),
  );
  for (const [i, r] of results.entries()) {
    assert.equal(r.status, i % 5 === 0 ? 'rejected' : 'fulfilled', `transaction ${i}`);
  }
  const page = await store.listCustomers(account.id, { limit: 100 });
  assert.deepEqual(
    page.data.map((c) => c.id),
    Array.from({ length: 50 }, (_, i) => i)
      .filter((i) => i % 5 !== 0)
      .map((i) => `cus_${String(i).padStart(2, '0')}`),
  );
});

test('a transaction resolves only after its writes are visible to other readers', async () => {
  const account = await store.ensureAccount('visible', Date.now());
  const ids = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      store
        .transaction(async (tx) => {
          const now = Date.now();
          await tx.insertCustomer(account.id, {
            id: `v${i}`,
            name: 'v',
            email: 'v@e.co',
            metadata: {},
            createdAt: now,
            updatedAt: now,
          });
          return `v${i}`;
        })
        .then(async (id) => ((await store.getCustomer(account.id, id)) ? id : `missing ${id}`)),
    ),
  );
  assert.deepEqual(
    ids,
    Array.from({ length: 20 }, (_, i) => `v${i}`),
  );
});
