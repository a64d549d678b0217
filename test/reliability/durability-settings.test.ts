// Durability is asserted, not assumed (RELIABILITY.md, "Power loss"). The SIGKILL tests prove
// that a dead process loses nothing acknowledged; a dead machine loses what the OS had not yet
// flushed, and whether that includes acknowledged writes is down to settings. This test starts
// a real `vitals serve` and reads the settings it runs with, and fails on any that would lose an
// acknowledged write on power loss:
//
// - SQLite: the database in WAL mode, and PRAGMA synchronous FULL (2) or EXTRA (3) on every
//   connection of the server. synchronous is per connection, so another connection cannot see it:
//   the server reports its own at /metrics (vitals_sqlite_synchronous).
//   journal_mode=wal is kept in the file, so any connection reads it.
// - PostgreSQL: fsync and full_page_writes on (server-wide: they cannot be set per session), and
//   synchronous_commit not off (nor local while synchronous standbys are expected) for the
//   server's sessions. Another backend's settings cannot be read, so: the server's sessions are
//   found in pg_stat_activity, the settings of their role and database in pg_db_role_setting, a
//   session opened exactly as the server opens its own (its connect(), on the same URL) is asked,
//   and Vitals's code must not SET synchronous_commit anywhere.
//
// Each check is also shown to fail on a bad setting (VITALS_SQLITE_SYNCHRONOUS=normal, ALTER
// DATABASE … SET synchronous_commit = off), so it cannot pass by reading nothing.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import postgres from 'postgres';
import { newId } from '../../src/domain/ids.ts';
import { connect } from '../../src/store/postgres/connection.ts';
import { customerBody } from '../helpers/app.ts';
import { killAll, ROOT, serverEnv, VitalsProcess } from '../helpers/server.ts';
import { backendSkip, createTestDatabase, type TestDatabase } from '../helpers/stores.ts';

const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  killAll();
  for (const fn of cleanup) await fn();
});

async function serve(db: TestDatabase, extra: Record<string, string> = {}): Promise<VitalsProcess> {
  const server = await VitalsProcess.start(
    serverEnv({
      VITALS_DATA_DIR: db.dir,
      ...(db.url ? { DATABASE_URL: db.url } : {}),
      VITALS_API_KEY: newId.apiKey(),
      ...extra,
    }),
  );
  cleanup.push(() => server.stop());
  // One acknowledged write, so the server's connections have done real work.
  const created = await server.request('POST', '/api/customers', customerBody('cus_durable'));
  assert.equal(created.status, 201);
  return server;
}

// ------------------------------------------------------------------------------------------------
// SQLite
// ------------------------------------------------------------------------------------------------

/** vitals_sqlite_synchronous from the server's /metrics: connection → PRAGMA synchronous. */
async function serverSynchronous(server: VitalsProcess): Promise<Record<string, number>> {
  const res = await fetch(`${server.url}/metrics`);
  assert.equal(res.status, 200);
  const text = await res.text();
  const levels: Record<string, number> = {};
  for (const m of text.matchAll(/^vitals_sqlite_synchronous\{connection="(\w+)"\} (\d+)$/gm)) {
    levels[m[1] as string] = Number(m[2]);
  }
  return levels;
}

/** journal_mode is stored in the database file: a connection of the test's own reads it. */
function journalMode(db: TestDatabase): string {
  const conn = new DatabaseSync(join(db.dir, 'vitals.db'));
  try {
    return String((conn.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode);
  } finally {
    conn.close();
  }
}

const SYNCHRONOUS = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];

/** What would lose an acknowledged write on power loss; empty when nothing would. */
function sqliteProblems(levels: Record<string, number>, mode: string): string[] {
  const problems: string[] = [];
  if (mode !== 'wal') problems.push(`journal_mode is ${mode}, not wal`);
  for (const [connection, level] of Object.entries(levels)) {
    if (level < 2) {
      problems.push(
        `the ${connection} connection has synchronous=${SYNCHRONOUS[level] ?? level}: in WAL mode the last commits can be lost`,
      );
    }
  }
  return problems;
}

describe('SQLite: the running server is durable on power loss', { timeout: 30_000 }, () => {
  test('WAL, and synchronous=FULL on each of the server’s own connections', async () => {
    const db = await createTestDatabase('sqlite');
    cleanup.push(() => db.drop());
    const server = await serve(db);
    const levels = await serverSynchronous(server);
    assert.deepEqual(
      Object.keys(levels).sort(),
      ['checkpointer', 'reader', 'writer'],
      'every connection reports',
    );
    assert.deepEqual(sqliteProblems(levels, journalMode(db)), []);
    assert.deepEqual(
      levels,
      { writer: 2, reader: 2, checkpointer: 2 },
      'FULL, the default (docs/configuration.md)',
    );
  });

  test('the report is the connection’s own: VITALS_SQLITE_SYNCHRONOUS=normal shows, and is refused', async () => {
    const db = await createTestDatabase('sqlite');
    cleanup.push(() => db.drop());
    const server = await serve(db, { VITALS_SQLITE_SYNCHRONOUS: 'normal' });
    const levels = await serverSynchronous(server);
    assert.deepEqual(levels, { writer: 1, reader: 1, checkpointer: 1 });
    assert.equal(sqliteProblems(levels, journalMode(db)).length, 3);
  });
});

// ------------------------------------------------------------------------------------------------
// PostgreSQL
// ------------------------------------------------------------------------------------------------

/** synchronous_commit values that flush the commit locally before COMMIT returns. */
function synchronousCommitProblem(where: string, value: string, standbys: string): string | null {
  if (['on', 'remote_write', 'remote_apply'].includes(value)) return null;
  // Without synchronous standbys, local is the same as on; with them, it skips waiting for them.
  if (value === 'local' && standbys === '') return null;
  return `${where}: synchronous_commit=${value}`;
}

/**
 * The one line allowed to turn synchronous_commit off (RELIABILITY.md, "Power loss"): a
 * dispatcher's claim, which writes only leases. Pinned to its text: any other line is refused.
 */
const CLAIM_LEASES_ONLY =
  /^\/?src\/store\/postgres\/queue\.ts:\d+: sql`SELECT pg_advisory_xact_lock\(\$\{LOCKS\.claim\}\), set_config\('synchronous_commit', 'off', true\)`,$/;

/** Code lines (comments left out) under src/ that mention synchronous_commit, but for the claim's. */
function synchronousCommitInCode(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        readFileSync(path, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            const code = line.trim();
            if (/^(\/\/|\/?\*)/.test(code)) return;
            if (/synchronous_commit/i.test(code)) found.push(`${path.slice(ROOT.length)}:${i + 1}: ${code}`);
          });
      }
    }
  };
  walk(join(ROOT, 'src'));
  assert.equal(
    found.filter((l) => CLAIM_LEASES_ONLY.test(l)).length,
    1,
    'the claim’s exception is where it is said to be',
  );
  return found.filter((l) => !CLAIM_LEASES_ONLY.test(l));
}

interface PostgresReport {
  /** The server's sessions on its database (application_name 'vitals'), with their roles. */
  sessions: { pid: number; usename: string }[];
  problems: string[];
}

/** Everything that decides what the server's sessions run with, read from outside them. */
async function postgresReport(db: TestDatabase): Promise<PostgresReport> {
  const sql = postgres(db.url as string, { max: 1, onnotice: () => {} });
  // A session opened exactly as Vitals opens its own: same URL (so the same role, database and
  // URL parameters) and the same startup parameters.
  const likeServer = connect({ url: db.url as string, poolSize: 1 });
  try {
    const problems: string[] = [];
    const sessions = await sql<{ pid: number; usename: string }[]>`
      SELECT pid, usename FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'vitals' AND pid <> pg_backend_pid()`;
    // fsync, full_page_writes and synchronous_standby_names are server-wide (postgresql.conf,
    // ALTER SYSTEM); synchronous_commit here is what a session on this database gets, and from where.
    const settings = new Map(
      (
        await sql<{ name: string; setting: string; source: string }[]>`
          SELECT name, setting, source FROM pg_settings
          WHERE name IN ('fsync', 'full_page_writes', 'synchronous_commit', 'synchronous_standby_names')`
      ).map((r) => [r.name, r]),
    );
    const setting = (name: string) => settings.get(name)?.setting ?? '';
    const standbys = setting('synchronous_standby_names');
    if (setting('fsync') !== 'on') problems.push(`server: fsync=${setting('fsync')}`);
    if (setting('full_page_writes') !== 'on') {
      problems.push(`server: full_page_writes=${setting('full_page_writes')} (torn pages on power loss)`);
    }
    const source = settings.get('synchronous_commit')?.source;
    const p = synchronousCommitProblem(
      `pg_settings (from ${source})`,
      setting('synchronous_commit'),
      standbys,
    );
    if (p) problems.push(p);

    // ALTER ROLE / ALTER DATABASE settings that apply to the server's sessions.
    const roles = [...new Set(sessions.map((s) => s.usename))];
    const overrides = await sql<{ role: string | null; database: string | null; setconfig: string[] }[]>`
      SELECT r.rolname AS role, d.datname AS database, s.setconfig
      FROM pg_db_role_setting s
      LEFT JOIN pg_roles r ON r.oid = s.setrole
      LEFT JOIN pg_database d ON d.oid = s.setdatabase
      WHERE (s.setdatabase = 0 OR d.datname = current_database())
        AND (s.setrole = 0 OR r.rolname = ANY(${roles}))`;
    for (const o of overrides) {
      for (const entry of o.setconfig) {
        const [name, value = ''] = entry.split('=');
        if (name !== 'synchronous_commit') continue;
        const where = `ALTER ${o.role ? `ROLE ${o.role}` : ''}${o.role && o.database ? ' IN ' : ''}${o.database ? `DATABASE ${o.database}` : ''} SET`;
        const q = synchronousCommitProblem(where, value, standbys);
        if (q) problems.push(q);
      }
    }

    const [session] = await likeServer<{ role: string; synchronous_commit: string; fsync: string }[]>`
      SELECT current_user AS role, current_setting('synchronous_commit') AS synchronous_commit,
             current_setting('fsync') AS fsync`;
    assert.ok(session);
    assert.ok(roles.includes(session.role), `the server's sessions run as ${roles}, not ${session.role}`);
    const s = synchronousCommitProblem(
      'a session opened as Vitals opens one',
      session.synchronous_commit,
      standbys,
    );
    if (s) problems.push(s);
    if (session.fsync !== 'on') problems.push(`a session opened as Vitals opens one: fsync=${session.fsync}`);

    for (const line of synchronousCommitInCode()) problems.push(`set in code: ${line}`);
    return { sessions, problems };
  } finally {
    await likeServer.end();
    await sql.end();
  }
}

describe('PostgreSQL: the running server is durable on power loss', {
  skip: backendSkip('postgres'),
  timeout: 30_000,
}, () => {
  test('fsync and full_page_writes on; synchronous_commit on for the server’s sessions, overridden nowhere', async () => {
    const db = await createTestDatabase('postgres');
    cleanup.push(() => db.drop());
    await serve(db);
    const report = await postgresReport(db);
    assert.ok(report.sessions.length >= 1, 'the server’s sessions are found in pg_stat_activity');
    assert.deepEqual(report.problems, []);
  });

  test('an override for the server’s database is seen, and refused', async () => {
    const db = await createTestDatabase('postgres');
    cleanup.push(() => db.drop());
    await serve(db);
    const name = new URL(db.url as string).pathname.slice(1);
    assert.match(name, /^vitals_test_[0-9a-f]+$/, 'a plain identifier');
    const sql = postgres(db.url as string, { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe(`ALTER DATABASE ${name} SET synchronous_commit = off`);
    } finally {
      await sql.end();
    }
    const { problems } = await postgresReport(db);
    assert.deepEqual(problems, [
      'pg_settings (from database): synchronous_commit=off',
      `ALTER DATABASE ${name} SET: synchronous_commit=off`,
      'a session opened as Vitals opens one: synchronous_commit=off',
    ]);
  });
});
