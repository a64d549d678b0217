// SQLite group commit: the gathering of a batched write's calls (at the end), and when SQLite itself rolls the transaction back (docs/operations.md, "When
// a write cannot be committed"). A full disk is made real with PRAGMA max_page_count: SQLite then
// answers SQLITE_FULL and rolls back the whole transaction, savepoints and all. Every job of the
// batch must still get an answer, nothing of the batch may be stored, the process must not see
// an unhandled rejection (node:test fails the file if it does), and the next batch must commit
// once there is room again.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { after, beforeEach, describe, test } from 'node:test';
import { Connection } from '../../src/store/sqlite/connection.ts';
import { GroupCommit, TransactionLost } from '../../src/store/sqlite/group-commit.ts';
import { DirectWriter } from '../../src/store/sqlite/write-connection.ts';
import { isDatabaseUnavailable, unavailableCode } from '../../src/store/unavailable.ts';
import { write } from '../../src/store/write.ts';
import { tempDir } from '../helpers/app.ts';

const ROW = 'x'.repeat(3000);

/** The write connection run on this thread, counting the batches it begins. */
class CountingWriter extends DirectWriter {
  batches = 0;
  override begin(): void {
    super.begin();
    this.batches++;
  }
}

describe('group commit when SQLite rolls back the whole transaction', () => {
  const conn = new Connection(join(tempDir(), 'faults.db'), 'full');
  const db: DatabaseSync = conn.db;
  db.exec('CREATE TABLE t (job INTEGER, body TEXT)');
  const writer = new CountingWriter(conn);
  let commits = 0;
  const commit = new GroupCommit(writer, () => {
    commits++;
  });
  after(() => db.close());
  beforeEach(() => {
    db.exec('PRAGMA max_page_count = 1073741823');
  });

  const rows = () => (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;
  /** Leaves room for a few more pages only: a job writing 50 rows of 3 kB fills the "disk". */
  const almostFull = () => {
    const { page_count } = db.prepare('PRAGMA page_count').get() as { page_count: number };
    db.exec(`PRAGMA max_page_count = ${page_count + 3}`);
  };
  const insert = (job: number, n: number) => () => {
    for (let i = 0; i < n; i++) db.prepare('INSERT INTO t VALUES (?, ?)').run(job, ROW);
    return Promise.resolve(job);
  };

  test('the disk fills in the middle of a batch: every job is answered, none is stored, the next batch commits', async () => {
    const stored = rows();
    almostFull();
    const before = { batches: writer.batches, commits };
    // Queued in one tick, so they share one batch: jobs 0-2 fit, job 3 fills the disk, 4-6 wait.
    const answers = await Promise.allSettled(
      [1, 1, 1, 50, 1, 1, 1].map((n, job) => commit.run(insert(job, n))),
    );
    assert.equal(writer.batches - before.batches, 1, 'the seven jobs ran in one batch');
    assert.equal(commits - before.commits, 0, 'nothing was committed');
    assert.equal(db.isTransaction, false, 'the connection is left outside any transaction');
    assert.equal(rows(), stored, 'nothing of the batch is stored');
    for (const [job, answer] of answers.entries()) {
      assert.equal(answer.status, 'rejected', `job ${job}`);
      const reason = (answer as PromiseRejectedResult).reason;
      assert.equal(isDatabaseUnavailable(reason), true, `job ${job} is answered as a 503`);
      assert.equal(unavailableCode(reason), 'SQLITE_FULL', `job ${job}`);
      // The job that hit the full disk gets SQLite's error; the others learn their batch was lost.
      if (job === 3) assert.equal((reason as { errcode: number }).errcode, 13);
      else assert.ok(reason instanceof TransactionLost, `job ${job}: ${reason}`);
    }

    db.exec('PRAGMA max_page_count = 1073741823');
    const next = await Promise.all([1, 1, 50, 1].map((n, job) => commit.run(insert(job, n))));
    assert.deepEqual(next, [0, 1, 2, 3]);
    assert.equal(commits - before.commits, 1, 'the next batch commits, once');
    assert.equal(rows(), stored + 53);
  });

  test('a job that swallows the full disk is not answered as stored', async () => {
    const stored = rows();
    almostFull();
    const answers = await Promise.allSettled([
      commit.run(insert(0, 1)),
      commit.run(async () => {
        try {
          await insert(1, 50)();
        } catch {
          // A job that catches the statement's error still lost its transaction.
        }
        return 'claims success';
      }),
      commit.run(insert(2, 1)),
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      ['rejected', 'rejected', 'rejected'],
    );
    for (const a of answers) assert.ok((a as PromiseRejectedResult).reason instanceof TransactionLost);
    assert.equal(rows(), stored);
    db.exec('PRAGMA max_page_count = 1073741823');
    assert.equal(await commit.run(insert(9, 1)), 9);
    assert.equal(rows(), stored + 1);
  });

  test('a failing job still rolls back alone when the transaction survives', async () => {
    const stored = rows();
    const before = commits;
    const answers = await Promise.allSettled([
      commit.run(insert(0, 1)),
      commit.run(async () => {
        await insert(1, 2)();
        throw new Error('job 1 refuses after writing');
      }),
      commit.run(insert(2, 1)),
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal((answers[1] as PromiseRejectedResult).reason.message, 'job 1 refuses after writing');
    assert.equal(commits - before, 1);
    assert.equal(rows(), stored + 2);
  });
});

describe('group commit of a batched write', () => {
  const conn = new Connection(join(tempDir(), 'gathered.db'), 'full');
  conn.db.exec('CREATE TABLE t (account TEXT, item INTEGER)');
  const sizes: string[] = [];
  const commit = new GroupCommit(new DirectWriter(conn), () => {}, {
    onBatch: (write, size) => sizes.push(`${write}:${size}`),
  });
  after(() => conn.db.close());
  /** How many times the write was called, and with which items. */
  const calls: number[][] = [];
  const store = write(
    async function storeItems(_tx, account: string, items: readonly number[], _now: number) {
      calls.push([...items]);
      if (items.includes(13) && items.length > 1) throw new Error('the database refused 13');
      for (const item of items) conn.db.prepare('INSERT INTO t VALUES (?, ?)').run(account, item);
      return items.map((item) => ({ ok: true as const, record: item * 10 }));
    },
    { batched: true },
  );

  beforeEach(() => {
    calls.length = 0;
    sizes.length = 0;
  });

  test("adjacent calls of one account are one call; each caller gets its own results; another account's are apart", async () => {
    const answers = await Promise.all([
      commit.runBatched(store, ['a', [1, 2], 1]),
      commit.runBatched(store, ['a', [3], 2]),
      commit.runBatched(store, ['b', [4], 3]),
      commit.runBatched(store, ['a', [5], 4]),
    ]);
    assert.deepEqual(
      answers.map((a) => a.map((r) => (r as { record: number }).record)),
      [[10, 20], [30], [40], [50]],
    );
    assert.deepEqual(calls, [[1, 2, 3], [4], [5]]);
    assert.deepEqual(sizes, ['storeItems:3', 'storeItems:1', 'storeItems:1']);
  });

  test('a gathered call that throws runs again call by call: only the refused one fails', async () => {
    const answers = await Promise.allSettled([
      commit.runBatched(store, ['c', [11], 1]),
      commit.runBatched(store, ['c', [12, 13], 1]),
      commit.runBatched(store, ['c', [14], 1]),
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(calls, [[11, 12, 13, 14], [11], [12, 13], [14]]);
    const stored = conn.db.prepare("SELECT item FROM t WHERE account = 'c' ORDER BY item").all();
    assert.deepEqual(
      stored.map((r) => r.item),
      [11, 14],
    );
  });
});
