// `vitals backup PATH` in real processes: a copy taken while a server (another process) keeps
// writing holds every write acknowledged before the backup began, and serves as is once restored.
// Every wait is on an event (an acknowledgement, a log line, a process exit), never a timer.
import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { customerBody, tempDir } from '../helpers/app.ts';
import { killAll, runCli, serverEnv, VitalsProcess } from '../helpers/server.ts';

const LIMIT = { timeout: 30_000 };
const WRITERS = 4;
/** Scores acknowledged before the backup starts (each after its customer). */
const BEFORE = 150;
/** 16 kB blobs of filler in the database being backed up. */
const FILLER_PAGES = 2000;

const dirs: string[] = [];
after(() => {
  killAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function dir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

const backup = (args: string[], dataDir: string, extra: Record<string, string> = {}) =>
  runCli(['backup', ...args], serverEnv({ VITALS_DATA_DIR: dataDir, ...extra }));

/** A migrated, empty Vitals database in a new data dir. */
async function dataDirWithDatabase(): Promise<string> {
  const d = dir();
  const store = new SqliteStore({ path: join(d, 'vitals.db') });
  await store.migrate();
  await store.close();
  return d;
}

function integrity(path: string): unknown[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return db
      .prepare('PRAGMA integrity_check')
      .all()
      .map((row) => row.integrity_check);
  } finally {
    db.close();
  }
}

const SQLITE_HEADER = 'SQLite format 3\0';

// The tests are independent (their own data dirs), so they run side by side.
describe('vitals backup on SQLite', { ...LIMIT, concurrency: true }, () => {
  test('a backup taken while a server writes holds every acknowledged write, and serves once restored', async () => {
    const key = newId.apiKey();
    // Some bulk beside Vitals' own tables, so that the copy takes long enough for the server to
    // commit while it is being read (a plain file copy would then be torn, or miss the WAL).
    const live = await dataDirWithDatabase();
    const seed = new DatabaseSync(join(live, 'vitals.db'));
    seed.exec(`CREATE TABLE filler (b BLOB);
      INSERT INTO filler WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${FILLER_PAGES})
      SELECT randomblob(16384) FROM n;`);
    seed.close();
    const server = await VitalsProcess.start(
      serverEnv({ VITALS_DATA_DIR: live, VITALS_API_KEY: key, VITALS_RATE_LIMIT: 'off' }),
    );

    // A long reader of our own holds checkpoints back, so what the writers commit stays in the WAL:
    // a copy of vitals.db alone would miss it (as it would whatever was not yet checkpointed).
    const reader = new DatabaseSync(join(live, 'vitals.db'), { readOnly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) AS n FROM customers').get();

    // Writers: each creates a customer, then gives it a score; an id counts once its 2xx arrived.
    const customers = new Set<string>();
    const scores = new Map<string, number>();
    let next = 0;
    let writing = true;
    let reached: () => void = () => {};
    const enough = new Promise<void>((resolve) => {
      reached = resolve;
    });
    const writer = async () => {
      while (writing) {
        const n = next++;
        const id = `cus_${String(n).padStart(6, '0')}`;
        const created = await server.request('POST', '/api/customers', customerBody(id));
        assert.equal(created.status, 201, JSON.stringify(created.body));
        customers.add(id);
        const usage = (n % 100) / 100;
        const scored = await server.request('POST', `/api/customers/${id}/health-score`, {
          factors: { usage },
        });
        assert.equal(scored.status, 200, JSON.stringify(scored.body));
        scores.set(id, usage);
        if (scores.size >= BEFORE) reached();
      }
    };
    const writers = Promise.all(Array.from({ length: WRITERS }, writer));
    await Promise.race([enough, writers]);

    // What was acknowledged before the backup process is even spawned must be in the copy.
    const customersBefore = [...customers];
    const scoresBefore = new Map(scores);
    const out = join(dir(), 'copy.db');
    const result = await backup([out], live);
    const acknowledgedDuring = scores.size - scoresBefore.size;
    writing = false;
    await writers;
    reader.exec('COMMIT');
    reader.close();
    await server.stop();

    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.match(
      result.stdout,
      new RegExp(
        `^Backed up ${join(live, 'vitals.db')} to ${out} \\(\\d+(\\.\\d)? (B|kB|MB)\\) in \\d+\\.\\d s\\.\\n$`,
      ),
    );
    // How many writers finish while the backup runs depends on timing: a bound, not a number.
    assert.ok(acknowledgedDuring > 0, 'the server kept acknowledging writes while the backup ran');
    assert.deepEqual(readdirSync(join(out, '..')), ['copy.db'], 'no temporary file is left beside it');
    assert.deepEqual(integrity(out), ['ok']);
    const copy = new DatabaseSync(out, { readOnly: true });
    try {
      assert.deepEqual(copy.prepare('PRAGMA foreign_key_check').all(), []);
      assert.equal(copy.prepare('SELECT count(*) AS n FROM filler').get()?.n, FILLER_PAGES);
    } finally {
      copy.close();
    }

    // Restore: the copy as vitals.db of a new data dir (no -wal or -shm beside it), and start.
    const restored = dir();
    copyFileSync(out, join(restored, 'vitals.db'));
    const again = await VitalsProcess.start(
      serverEnv({ VITALS_DATA_DIR: restored, VITALS_API_KEY: key, VITALS_RATE_LIMIT: 'off' }),
    );
    const missing: string[] = [];
    const queue = [...customersBefore];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let id = queue.pop(); id !== undefined; id = queue.pop()) {
          const customer = await again.request('GET', `/api/customers/${id}`);
          if (customer.status !== 200 || customer.body.id !== id) missing.push(`customer ${id}`);
          if (!scoresBefore.has(id)) continue;
          const score = await again.request('GET', `/api/customers/${id}/health-score`);
          if (score.status !== 200 || score.body.factors?.usage !== scoresBefore.get(id))
            missing.push(`score of ${id}: ${score.status} ${JSON.stringify(score.body)}`);
        }
      }),
    );
    assert.deepEqual(missing, [], 'every write acknowledged before the backup is in the copy');
    assert.ok(customersBefore.length >= BEFORE);

    // The restored server writes too, and has put the database in WAL mode itself.
    const written = await again.request('POST', '/api/customers', customerBody('cus_after_restore'));
    assert.equal(written.status, 201);
    await again.stop();
    const db = new DatabaseSync(join(restored, 'vitals.db'), { readOnly: true });
    try {
      assert.equal(db.prepare('PRAGMA journal_mode').get()?.journal_mode, 'wal');
    } finally {
      db.close();
    }
  });

  test('an existing PATH is refused and left as it was, unless --force replaces it', async () => {
    const live = await dataDirWithDatabase();
    const target = dir();
    const out = join(target, 'vitals-backup.db');
    writeFileSync(out, 'precious');

    const refused = await backup([out], live);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /already exists; give --force to replace it/);
    assert.equal(readFileSync(out, 'utf8'), 'precious');
    assert.deepEqual(readdirSync(target), ['vitals-backup.db']);

    const forced = await backup([out, '--force'], live);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /^Backed up /);
    assert.equal(readFileSync(out).subarray(0, 16).toString('latin1'), SQLITE_HEADER);
    assert.deepEqual(integrity(out), ['ok']);
    assert.deepEqual(readdirSync(target), ['vitals-backup.db']);
  });

  test('a missing database is an error, and no database gets created', async () => {
    const live = dir();
    const out = join(dir(), 'copy.db');
    const result = await backup([out], live);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /There is no database at .*vitals\.db; nothing was backed up/);
    assert.match(result.stderr, /VITALS_DATA_DIR/);
    assert.deepEqual(readdirSync(live), [], 'nothing is created in the data dir');
    assert.equal(existsSync(out), false);
  });

  test('PATH a directory, the live database itself, or - is refused', async () => {
    const live = await dataDirWithDatabase();
    const target = dir();
    mkdirSync(join(target, 'sub'));

    const directory = await backup([join(target, 'sub')], live);
    assert.equal(directory.code, 1);
    assert.match(directory.stderr, /is a directory/);
    assert.deepEqual(readdirSync(join(target, 'sub')), []);

    const itself = await backup([join(live, 'vitals.db'), '--force'], live);
    assert.equal(itself.code, 1);
    assert.match(itself.stderr, /is the live database/);
    assert.deepEqual(integrity(join(live, 'vitals.db')), ['ok']);

    const dash = await backup(['-'], live);
    assert.equal(dash.code, 2);
    assert.match(dash.stderr, /cannot write to standard output/);
    assert.equal(dash.stdout, '');
  });

  test('no PATH is a usage error', async () => {
    const result = await backup([], await dataDirWithDatabase());
    assert.equal(result.code, 2);
    assert.match(result.stderr, /Usage: vitals/);
    assert.match(result.stderr, /backup PATH/);
  });
});

describe('vitals backup on PostgreSQL', LIMIT, () => {
  const explains = async (url: string) => {
    const data = dir();
    const out = join(dir(), 'copy.db');
    const result = await backup([out], data, { DATABASE_URL: url });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /pg_dump --format=custom/);
    assert.match(result.stderr, /pg_restore/);
    assert.equal(result.stdout, '');
    assert.equal(`${result.stdout}${result.stderr}`.includes(url), false, 'the URL is never printed');
    assert.equal(existsSync(out), false);
    assert.deepEqual(readdirSync(data), []);
    return result;
  };

  test('with DATABASE_URL it copies nothing and explains pg_dump, never printing the URL', async (t) => {
    const url = process.env.VITALS_TEST_POSTGRES_URL;
    if (!url) {
      t.skip('VITALS_TEST_POSTGRES_URL is not set');
      return;
    }
    await explains(url);
  });

  test('nor the password of a URL it never connects to', async () => {
    const result = await explains('postgres://vitals:s3cret-pw@db.internal:5432/vitals');
    assert.equal(result.stderr.includes('s3cret-pw'), false);
  });
});
