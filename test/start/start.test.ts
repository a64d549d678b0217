// Starting Vitals on a database it cannot use fails loudly, on both backends (issue 55;
// docs/operations.md, "When Vitals does not start"): a migration that fails is named and rolled
// back, a schema newer than the code is refused, an unusable data directory or a PostgreSQL that
// does not answer stops the start before anything listens. While the schema is being migrated the
// server listens and answers 503 with Retry-After. Each case runs `vitals` as a process.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, type TestContext, test } from 'node:test';
import postgres from 'postgres';
import { newId } from '../../src/domain/ids.ts';
import { LOCKS } from '../../src/store/postgres/connection.ts';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { tempDir } from '../helpers/app.ts';
import { closedPort, ROOT, runCli, serverEnv } from '../helpers/server.ts';
import { ALL_BACKENDS, type Backend, backendSkip, createTestDatabase } from '../helpers/stores.ts';

const LATEST = MIGRATIONS.length;
const CLI = join(ROOT, 'src', 'cli.ts');

/** A database of the backend, empty, and plain SQL on it (the test's own connection). */
async function emptyDatabase(t: TestContext, backend: Backend) {
  const db = await createTestDatabase(backend);
  t.after(() => db.drop());
  const env = serverEnv({
    VITALS_DATA_DIR: db.dir,
    VITALS_RATE_LIMIT: 'off',
    ...(db.url ? { DATABASE_URL: db.url } : {}),
  });
  const sql = backend === 'postgres' ? postgres(db.url as string, { max: 1, onnotice: () => {} }) : undefined;
  let lite: DatabaseSync | undefined;
  const sqlite = () => {
    lite ??= new DatabaseSync(join(db.dir, 'vitals.db'));
    return lite;
  };
  t.after(async () => {
    lite?.close();
    await sql?.end();
  });
  return {
    env,
    sql,
    sqlite,
    async exec(text: string): Promise<void> {
      if (sql) await sql.unsafe(text);
      else sqlite().exec(text);
    },
    async rows(text: string): Promise<Record<string, unknown>[]> {
      const rows = sql ? await sql.unsafe(text) : sqlite().prepare(text).all();
      return rows.map((r) => ({ ...r }));
    },
    async columns(table: string): Promise<string[]> {
      const rows = sql
        ? await sql`SELECT column_name AS name FROM information_schema.columns
                    WHERE table_name = ${table} ORDER BY ordinal_position`
        : sqlite().prepare(`SELECT name FROM pragma_table_info('${table}')`).all();
      return rows.map((r) => String(r.name));
    },
    async schemaVersion(): Promise<number> {
      const [row] = await this.rows('SELECT MAX(version) AS v FROM schema_migrations');
      return Number(row?.v);
    },
  };
}

/** `vitals serve` as a process: its output as it comes, its exit. */
class Serve {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stdout = '';
  stderr = '';

  constructor(env: NodeJS.ProcessEnv) {
    this.child = spawn(process.execPath, [CLI, 'serve'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (d) => {
      this.stdout += d;
    });
    this.child.stderr?.on('data', (d) => {
      this.stderr += d;
    });
    this.exited = once(this.child, 'close').then(([code]) => code as number | null);
  }

  /** Resolves once stdout matches; rejects if the process ends first. */
  async waitFor(pattern: RegExp): Promise<RegExpMatchArray> {
    for (;;) {
      const match = pattern.exec(this.stdout);
      if (match) return match;
      if (this.child.exitCode !== null) throw new Error(`serve exited:\n${this.stdout}\n${this.stderr}`);
      await Promise.race([once(this.child.stdout as NodeJS.ReadableStream, 'data'), this.exited]);
    }
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}

for (const backend of ALL_BACKENDS) {
  describe(`starting on ${backend}`, { skip: backendSkip(backend) }, () => {
    test('a migration that fails stops the start, names the migration and leaves the schema as it was', async (t) => {
      const db = await emptyDatabase(t, backend);
      // Migration 32 adds users.digest, then creates mail_outbox: a table of that name is already
      // there, so it fails half way, after migrations 1–31 have each been applied.
      await db.exec("CREATE TABLE mail_outbox (note text); INSERT INTO mail_outbox VALUES ('mine')");
      const server = new Serve(db.env);
      const code = await server.exited;
      assert.equal(code, 1, server.stdout);
      assert.match(server.stderr, /^Migration 32 \(of \d+\) failed: .*mail_outbox.* already exists/m);
      assert.match(server.stderr, /still at version 31, as it was before migration 32/);
      assert.doesNotMatch(server.stdout, /vitals started|shown only this once/);
      assert.equal(await db.schemaVersion(), 31);
      assert.ok(!(await db.columns('users')).includes('digest'), 'the first statement of 32 was rolled back');
      assert.deepEqual(await db.columns('mail_outbox'), ['note']);
      assert.deepEqual(await db.rows('SELECT note FROM mail_outbox'), [{ note: 'mine' }]);
      assert.deepEqual(await db.rows('SELECT * FROM api_keys'), [], 'no key was made');

      const check = await runCli(['migrate', '--check'], db.env);
      assert.equal(check.code, 1);
      assert.match(
        check.stdout,
        new RegExp(`${LATEST - 31} migration\\(s\\) pending: the schema is at version 31`),
      );
      const migrate = await runCli(['migrate'], db.env);
      assert.equal(migrate.code, 1);
      assert.match(migrate.stderr, /^Migration 32 \(of \d+\) failed/m);

      // The cause removed, the next start migrates and serves.
      await db.exec('DROP TABLE mail_outbox');
      const again = new Serve(db.env);
      t.after(() => again.stop());
      await again.waitFor(/"msg":"vitals started"/);
      assert.equal(await db.schemaVersion(), LATEST);
      assert.ok((await db.columns('users')).includes('digest'));
      assert.equal(await again.stop(), 0);
    });

    test('a schema newer than the code: a clear message and a non-zero exit, before listening', async (t) => {
      const db = await emptyDatabase(t, backend);
      assert.equal((await runCli(['migrate'], db.env)).code, 0);
      await db.exec(`INSERT INTO schema_migrations (version, applied_at) VALUES (${LATEST + 1}, 0)`);
      const server = new Serve(db.env);
      assert.equal(await server.exited, 1);
      assert.match(
        server.stderr,
        new RegExp(
          `^The database schema is at version ${LATEST + 1}, newer than this Vitals knows \\(its migrations end at ${LATEST}\\)`,
          'm',
        ),
      );
      assert.doesNotMatch(server.stdout, /Server listening/);
      for (const args of [['migrate'], ['migrate', '--check'], ['keys', 'list']]) {
        const out = await runCli(args, db.env);
        assert.equal(out.code, 1, args.join(' '));
        assert.match(out.stderr, /newer than this Vitals knows/, args.join(' '));
      }
      assert.equal(await db.schemaVersion(), LATEST + 1, 'nothing was changed');
    });

    test('migrate --check: 1 with migrations pending, 0 once there are none; it changes nothing', async (t) => {
      const db = await emptyDatabase(t, backend);
      const before = await runCli(['migrate', '--check'], db.env);
      assert.equal(before.code, 1);
      assert.match(
        before.stdout,
        new RegExp(
          `^${LATEST} migration\\(s\\) pending: the schema is at version 0, this Vitals at ${LATEST}`,
        ),
      );
      assert.deepEqual(await db.columns('customers'), [], 'no table was made');
      assert.equal((await runCli(['migrate'], db.env)).code, 0);
      const after = await runCli(['migrate', '--check'], db.env);
      assert.equal(after.code, 0);
      assert.equal(after.stdout, `The schema is up to date (version ${LATEST}).\n`);
    });

    test('while the schema is migrated the server listens: /api and /readyz 503 with Retry-After, /healthz 200; then it serves', async (t) => {
      const db = await emptyDatabase(t, backend);
      // Another migrator holds the migration lock: PostgreSQL's advisory lock, SQLite's write lock.
      let release: () => Promise<void>;
      if (db.sql) {
        const held = await db.sql.reserve();
        await held`SELECT pg_advisory_lock(${LOCKS.migrate})`;
        release = async () => {
          await held`SELECT pg_advisory_unlock(${LOCKS.migrate})`;
          held.release();
        };
      } else {
        db.sqlite().exec('PRAGMA journal_mode = WAL; BEGIN IMMEDIATE');
        release = async () => db.sqlite().exec('COMMIT');
      }
      const key = newId.apiKey();
      const server = new Serve({ ...db.env, VITALS_API_KEY: key });
      t.after(() => server.stop());
      const [, port] = await server.waitFor(/"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/);
      await server.waitFor(/"msg":"migrating the database schema"/);
      const url = `http://127.0.0.1:${port}`;
      const headers = { authorization: `Bearer ${key}` };
      for (const path of ['/api/customers', '/readyz', '/auth/session', '/metrics', '/']) {
        const res = await fetch(`${url}${path}`, { headers });
        assert.equal(res.status, 503, path);
        assert.equal(res.headers.get('retry-after'), '1', path);
        const body = (await res.json()) as { error: { code: string; message: string } };
        assert.equal(body.error.code, 'service_unavailable', path);
        assert.match(body.error.message, /bringing its database schema up to date/);
      }
      const alive = await fetch(`${url}/healthz`);
      assert.equal(alive.status, 200);
      assert.equal(((await alive.json()) as { status: string }).status, 'ok');
      const env = { ...db.env, PORT: port as string };
      assert.equal((await runCli(['healthcheck'], env)).code, 1, 'not healthy while migrating');

      await release();
      await server.waitFor(/"msg":"vitals started"/);
      const listed = await fetch(`${url}/api/customers`, { headers });
      assert.equal(listed.status, 200);
      assert.equal((await fetch(`${url}/readyz`)).status, 200);
      const healthy = await runCli(['healthcheck'], env);
      assert.equal(healthy.code, 0, healthy.stderr);
      assert.equal(await db.schemaVersion(), LATEST);
      assert.equal(await server.stop(), 0);
      assert.equal((await runCli(['healthcheck'], env)).code, 1, 'nothing listens any more');
    });

    test('processes starting at once on a fresh database apply each migration once', async (t) => {
      const db = await emptyDatabase(t, backend);
      const outs = await Promise.all([1, 2, 3].map(() => runCli(['migrate'], db.env)));
      for (const out of outs) assert.equal(out.code, 0, out.stderr);
      const rows = await db.rows('SELECT version FROM schema_migrations ORDER BY version');
      assert.deepEqual(
        rows.map((r) => Number(r.version)),
        Array.from({ length: LATEST }, (_, i) => i + 1),
      );
    });
  });
}

describe('a database Vitals cannot use', () => {
  test('a data directory that cannot be created: a clear message and exit 1, nothing listens', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'file'), '');
    const out = await runCli(['serve'], serverEnv({ VITALS_DATA_DIR: join(dir, 'file', 'data') }));
    assert.equal(out.code, 1);
    assert.match(
      out.stderr,
      /^Vitals cannot use its data directory .*\/file\/data \(VITALS_DATA_DIR\): it does not exist and cannot be created \(ENOTDIR\)/m,
    );
    assert.doesNotMatch(out.stdout, /Server listening/);
  });

  test('a data directory that is a file: a clear message and exit 1', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'data'), '');
    const out = await runCli(['serve'], serverEnv({ VITALS_DATA_DIR: join(dir, 'data') }));
    assert.equal(out.code, 1);
    assert.match(out.stderr, /it is not a directory/);
  });

  // Root may write anywhere: the child then runs as nobody (uid 65534), as a container's user would.
  test('a data directory that cannot be written: a clear message and exit 1, nothing listens', async () => {
    const parent = tempDir();
    chmodSync(parent, 0o755);
    const dir = join(parent, 'data');
    mkdirSync(dir);
    chmodSync(dir, 0o555);
    const asRoot = process.getuid?.() === 0;
    const child = spawn(process.execPath, [CLI, 'serve'], {
      cwd: ROOT,
      env: serverEnv({ VITALS_DATA_DIR: dir }),
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const [code] = await once(child, 'close');
    assert.equal(code, 1, stderr);
    assert.match(
      stderr,
      /^Vitals cannot use its data directory .*\/data \(VITALS_DATA_DIR\): it cannot be written \(EACCES\)/m,
    );
    assert.doesNotMatch(stdout, /Server listening/);
  });

  test('a DATABASE_URL that does not answer: a clear message without the password, exit 1, nothing listens', async () => {
    const port = await closedPort();
    const out = await runCli(
      ['serve'],
      serverEnv({
        DATABASE_URL: `postgres://vitals:s3cret@127.0.0.1:${port}/vitals`,
        VITALS_DATA_DIR: tempDir(),
      }),
    );
    assert.equal(out.code, 1);
    assert.match(
      out.stderr,
      new RegExp(
        `^Vitals cannot reach PostgreSQL at 127\\.0\\.0\\.1:${port}/vitals \\(DATABASE_URL\\): connect ECONNREFUSED`,
        'm',
      ),
    );
    assert.doesNotMatch(out.stderr + out.stdout, /s3cret/);
    assert.doesNotMatch(out.stdout, /Server listening/);
  });
});
