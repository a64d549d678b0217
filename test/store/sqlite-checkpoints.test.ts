// The SQLite WAL is folded back into the database by a thread of its own (docs/operations.md,
// "The SQLite writer thread"): the writer checkpoints itself only past 10,000 pages of WAL, so a
// commit's pages reaching the database file before that is the checkpoint thread's doing; under
// a stream of commits the WAL stays bounded; and a commit past the backstop is checkpointed by
// the writer between its batches, never inside a COMMIT.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApiKey } from '../../src/keys.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { tempDir } from '../helpers/app.ts';
import { TEST_WRITE_MODULES } from '../helpers/stores.ts';
import { score, seedCustomers } from './contract/context.ts';
import { txSteps } from './contract/writes.ts';

const size = (file: string) => statSync(file).size;
/** The writer's own checkpoint threshold (checkpoints.ts), in bytes of 4 KB pages. */
const BACKSTOP_BYTES = 10_000 * 4096;

/** Resolves once `done` holds, checked every 10 ms (the checkpoint thread has no event to await from here); fails after 10 s. */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen in 10 s`);
    await sleep(10);
  }
}

/** A store in a file of its own with 2,000 customers, and their ids. */
async function storeOf2000() {
  const path = join(tempDir(), 'vitals.db');
  // The writes below go through the writer thread, whose commits the checkpoint thread follows.
  const store = new SqliteStore({ path, writeModules: TEST_WRITE_MODULES });
  await store.migrate();
  const { account } = await createApiKey(store, 'default');
  const ids = Array.from({ length: 2000 }, (_, i) => `c${String(i).padStart(4, '0')}`);
  await seedCustomers(store, account.id, ids);
  return { path, store, account, ids };
}

test('a commit reaches the database file from the checkpoint thread, and under a stream of commits the WAL stays bounded', async () => {
  const { path, store, account, ids } = await storeOf2000();
  const write = (v: number) =>
    store.run(txSteps, [
      ['writeScores', account.id, ids.map((id, i) => score(id, ((i + v) % 100) / 100, v)), 'factors_updated'],
    ]);

  await until(() => size(`${path}-wal`) === 0 || size(path) > 4096 * 20, 'the seeding checkpointed');
  const before = size(path);
  await write(1); // about 1.4 MB of WAL: far below the writer's own threshold
  assert.ok(size(`${path}-wal`) < BACKSTOP_BYTES);
  await until(() => size(path) > before, "the first version's pages reaching the database file");

  // 80 more versions, one transaction each, with nothing waited for between them: about 114 MB of
  // WAL if none were checkpointed. Past the backstop the thread leaves checkpoints to the writer
  // (SQLite runs one at a time, and a second does not wait): the WAL passes the backstop by the
  // commits made during a checkpoint of the thread's already running, 6 to 8 MB here. Before
  // that rule, the two kept colliding and the WAL reached 48 to 89 MB.
  let largest = 0;
  for (let v = 2; v <= 81; v++) {
    await write(v);
    largest = Math.max(largest, size(`${path}-wal`));
  }
  assert.ok(largest < BACKSTOP_BYTES + 24 * 1024 * 1024, `the WAL reached ${largest} bytes`);
  await store.close();

  const db = new DatabaseSync(path);
  const row = db
    .prepare('SELECT COUNT(*) AS n, MIN(version) AS lo, MAX(version) AS hi FROM health_scores')
    .get();
  assert.deepEqual({ ...row }, { n: 2000, lo: 81, hi: 81 });
  assert.equal(db.prepare('SELECT COUNT(*) AS n FROM score_history').get()?.n, 162_000);
  db.close();
});

test('a commit past the backstop is checkpointed by the writer after it, so the next write starts the WAL over', async () => {
  const { path, store, account, ids } = await storeOf2000();
  await until(() => size(`${path}-wal`) === 0 || size(path) > 4096 * 20, 'the seeding checkpointed');

  // 150 versions in one transaction: about 55 MB of WAL in one commit. The checkpoint thread
  // leaves a WAL past the backstop to the writer, and the writer no longer checkpoints in COMMIT.
  await store.run(
    txSteps,
    Array.from({ length: 150 }, (_, i) => [
      'writeScores',
      account.id,
      ids.map((id, j) => score(id, ((j + i + 1) % 100) / 100, i + 1)),
      'factors_updated',
    ]),
  );
  assert.ok(size(`${path}-wal`) > BACKSTOP_BYTES, `only ${size(`${path}-wal`)} bytes of WAL`);
  // The writer copied it all back between that batch and this one: this write starts the WAL
  // over, and its commit truncates the file to the backstop.
  await store.run(txSteps, [
    ['writeScores', account.id, [score(ids[0] as string, 0.5, 151)], 'factors_updated'],
  ]);
  assert.ok(size(`${path}-wal`) <= BACKSTOP_BYTES, `the WAL still holds ${size(`${path}-wal`)} bytes`);
  await store.close();

  const db = new DatabaseSync(path);
  assert.deepEqual({ ...db.prepare('SELECT COUNT(*) AS n FROM score_history').get() }, { n: 300_001 });
  db.close();
});
