// SQLite commits concurrent transactions in groups (docs/operations.md, "When a write cannot be
// committed"): the transactions queued together share one BEGIN … COMMIT, one failing transaction
// rolls back alone, and nobody is answered before the commit that holds their writes.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { Connection } from '../../src/store/sqlite/connection.ts';
import { GroupCommit } from '../../src/store/sqlite/group-commit.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { DirectWriter } from '../../src/store/sqlite/write-connection.ts';
import { tempDir } from '../helpers/app.ts';
import { TEST_WRITE_MODULES } from '../helpers/stores.ts';
import { insertCustomers } from './contract/writes.ts';

const dir = tempDir();
const store = new SqliteStore({ path: join(dir, 'vitals.db'), writeModules: TEST_WRITE_MODULES });
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The write connection run on this thread, counting the BEGINs and COMMITs it runs. */
class CountingWriter extends DirectWriter {
  begun = 0;
  committed = 0;
  override begin(): void {
    super.begin();
    this.begun++;
  }
  override commit(): boolean {
    const due = super.commit();
    this.committed++;
    return due;
  }
}

/** A GroupCommit on a database file of its own (WAL, as the store's writer), counting its batches. */
function countedGroupCommit(name: string) {
  const path = join(dir, name);
  const conn = new Connection(path, 'normal');
  conn.db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY)');
  const writer = new CountingWriter(conn);
  let hook = 0;
  const writes = new GroupCommit(writer, () => {
    hook++;
  });
  /** BEGINs and COMMITs run, and calls of the `committed` hook (one per batch, after its COMMIT). */
  const counts = () => ({ begun: writer.begun, committed: writer.committed, hook });
  const insert = (id: number) => conn.db.prepare('INSERT INTO rows (id) VALUES (?)').run(id);
  /** The ids committed so far, read through a second connection (it sees only committed data). */
  const committedIds = () => {
    const reader = new DatabaseSync(path, { readOnly: true });
    try {
      return reader
        .prepare('SELECT id FROM rows ORDER BY id')
        .all()
        .map((r) => Number(r.id));
    } finally {
      reader.close();
    }
  };
  after(() => conn.db.close());
  return { counts, writer, writes, insert, committedIds };
}

test('transactions queued together share one COMMIT; a failing one rolls back alone', async () => {
  const { counts, writer, writes, insert, committedIds } = countedGroupCommit('together.db');
  const N = 50;
  const results = await Promise.allSettled(
    Array.from({ length: N }, (_, i) =>
      writes
        .run(async () => {
          insert(i);
          if (i % 5 === 0) throw new Error(`transaction ${i} fails after writing`);
          return i;
        })
        // How many COMMITs had run when this transaction was answered.
        .then((i) => ({ i, commitsBefore: writer.committed })),
    ),
  );
  assert.deepEqual(counts(), { begun: 1, committed: 1, hook: 1 }, `${N} transactions, one batch`);
  for (const [i, r] of results.entries()) {
    if (i % 5 === 0) {
      assert.equal(r.status, 'rejected', `transaction ${i}`);
    } else {
      assert.deepEqual(r, { status: 'fulfilled', value: { i, commitsBefore: 1 } }, `transaction ${i}`);
    }
  }
  assert.deepEqual(
    committedIds(),
    Array.from({ length: N }, (_, i) => i).filter((i) => i % 5 !== 0),
  );
});

test('transactions queued while a batch runs share the next COMMIT', async () => {
  const { counts, writes, insert, committedIds } = countedGroupCommit('next.db');
  const LATER = 20;
  let later: Promise<number>[] = [];
  await writes.run(async () => {
    insert(0);
    // Queued while this batch is still open: they cannot join it, and all go in the next one.
    later = Array.from({ length: LATER }, (_, i) =>
      writes.run(async () => {
        insert(i + 1);
        return i + 1;
      }),
    );
  });
  assert.deepEqual(
    await Promise.all(later),
    Array.from({ length: LATER }, (_, i) => i + 1),
  );
  assert.deepEqual(
    counts(),
    { begun: 2, committed: 2, hook: 2 },
    `1 transaction, then ${LATER} in one batch`,
  );
  assert.deepEqual(
    committedIds(),
    Array.from({ length: LATER + 1 }, (_, i) => i),
  );
});

test('concurrent writes of the store: a failing one rolls back alone, the others are stored', async () => {
  await store.migrate();
  const account = await store.ensureAccount('group', Date.now());
  const now = Date.now();
  const customer = (i: number) => ({
    id: `cus_${String(i).padStart(2, '0')}`,
    name: `n${i}`,
    email: `c${i}@example.com`,
    metadata: {},
    createdAt: now,
    updatedAt: now,
  });
  // Sent by name to the writer thread; a fifth of them throw after writing.
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, (_, i) => store.run(insertCustomers, account.id, [customer(i)], i % 5 === 0)),
  );
  for (const [i, r] of results.entries()) {
    assert.equal(r.status, i % 5 === 0 ? 'rejected' : 'fulfilled', `write ${i}`);
  }
  const page = await store.listCustomers(account.id, { limit: 100 });
  assert.deepEqual(
    page.data.map((c) => c.id),
    Array.from({ length: 50 }, (_, i) => i)
      .filter((i) => i % 5 !== 0)
      .map((i) => `cus_${String(i).padStart(2, '0')}`),
  );
});

test('a write resolves only after its rows are visible to other readers', async () => {
  const account = await store.ensureAccount('visible', Date.now());
  const now = Date.now();
  const ids = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      store
        .run(
          insertCustomers,
          account.id,
          [{ id: `v${i}`, name: 'v', email: 'v@e.co', metadata: {}, createdAt: now, updatedAt: now }],
          false,
        )
        .then(async ([id]) => (id && (await store.getCustomer(account.id, id)) ? id : `missing ${id}`)),
    ),
  );
  assert.deepEqual(
    ids,
    Array.from({ length: 20 }, (_, i) => `v${i}`),
  );
});
