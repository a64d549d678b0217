// bench/rules.ts's rule change and weights change, from a copy of a database seeded once: seeding
// 100,000 customers with 9,000,000 points takes minutes, a copy (PostgreSQL: CREATE DATABASE …
// TEMPLATE; SQLite: the file) seconds, so two versions of the code can be run in turn against the
// same data.
//   seed: N customers with posted scores, 30 days of daily points of 3 metrics, the 3 rules of
//         bench/rules.ts put, vacuumed; kept as the database vitals_rules_N (replacing one), on
//         SQLite as the directory vitals_rules_N_sqlite in the temporary directory.
//   run:  a copy of it served by this checkout's code; the rule change, then the weights change (--only
//         window: a new window instead, which reads every customer's points again),
//         each with 200 reads a second meanwhile (their p99), and the CPU seconds each cost;
//         with --job, the rescore job instead: a day and a half passes (every point 36 hours
//         older), every customer is made due, and the time until the server's job has taken them;
//         with --writes, one metric write at a time at 200 a second instead (p50 and p99).
// Usage: node bench/rules-copy.ts seed|run [--backend postgres|sqlite] [--customers 100000]
//        [--reads score|customer|healthz] [--job | --writes] [--only rule|weights|window] [--from DATABASE] [--tag TEXT]
//        [--async-commit] (a diagnostic: PostgreSQL acknowledges commits before they are on disk)
//        [--floor] (PostgreSQL, no server: the rows a rule change writes, by the database alone)
//        (PostgreSQL needs VITALS_TEST_POSTGRES_URL; the copy is dropped after the run)
//        SERVER_NODE_OPTIONS='--cpu-prof --cpu-prof-dir=DIR' profiles the server.
// The first run after a server restart reads from the OS cache into empty shared buffers, as
// every run of a copy does: alternate the versions compared, and compare runs made alike.

import {
  closeSync,
  cpSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { POSTGRES_URL } from '../test/helpers/stores.ts';
import { type Server, startServer } from './lib.ts';
import {
  commitFloor,
  jobOverDue,
  metricWrites,
  movePointsBack,
  type RawSql,
  RULE_CHANGE,
  RULES,
  rescoreFloor,
  seedPoints,
  send,
  sqliteRaw,
  timedWithReads,
  vacuumAndCheckpoint,
  WEIGHTS_CHANGE,
  WINDOW_CHANGE,
  writesFigure,
} from './rules-scenario.ts';
import { customerId, dataset } from './seed.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    backend: { type: 'string', default: 'postgres' },
    customers: { type: 'string', default: '100000' },
    reads: { type: 'string', default: 'score' },
    tag: { type: 'string', default: '' },
    job: { type: 'boolean', default: false },
    /** One metric write at a time at 200 a second instead (bench/rules.ts's last scenario). */
    writes: { type: 'boolean', default: false },
    /**
     * PostgreSQL only, a diagnostic and never a figure of record: the copy acknowledges a commit
     * before its log reaches the disk (synchronous_commit = off), so what the code costs shows
     * through a disk whose flushes stall (see commitFloor's figure).
     */
    'async-commit': { type: 'boolean', default: false },
    /**
     * PostgreSQL only: no server; the rows a rule change writes, written by the database alone
     * on the copy (rescoreFloor), the floor under the rule change's time on this machine.
     */
    floor: { type: 'boolean', default: false },
    /** One of the two changes alone (rule or weights), or a new window alone (window). */
    only: { type: 'string' },
    /** The database copied (default vitals_rules_N): one migrated ahead, say, to compare a schema change. */
    from: { type: 'string' },
  },
});
const SQLITE = values.backend === 'sqlite';
if (!SQLITE && values.backend !== 'postgres') throw new Error('--backend: postgres or sqlite');
if (!SQLITE && !POSTGRES_URL) throw new Error('VITALS_TEST_POSTGRES_URL is not set.');
if (SQLITE && values['async-commit']) throw new Error('--async-commit: PostgreSQL only');
if (SQLITE && values.floor) throw new Error('--floor: PostgreSQL only');
const N = Number(values.customers);
const TEMPLATE = `vitals_rules_${N}`;
const KEY_FILE = join(tmpdir(), `${TEMPLATE}${SQLITE ? '_sqlite' : ''}.key`);
/** SQLite's seeded database: a directory, as the server's VITALS_DATA_DIR. */
const SQLITE_DIR = join(tmpdir(), values.from ?? `${TEMPLATE}_sqlite`);
const DAY = 86_400_000;
const urlOf = (database: string) => {
  const url = new URL(POSTGRES_URL as string);
  url.pathname = `/${database}`;
  return url.toString();
};

const readPath = () => {
  const id = customerId(Math.floor(Math.random() * N));
  if (values.reads === 'healthz') return '/healthz';
  return values.reads === 'customer' ? `/api/customers/${id}` : `/api/customers/${id}/health-score`;
};

/** `request`'s wall time with 200 reads a second meanwhile: their p99, and the CPU it all cost. */
async function timed(server: Server, headers: Record<string, string>, request: () => Promise<void>) {
  const { ms, p99, cpu } = await timedWithReads(server, headers, request, readPath, 200);
  return `${(ms / 1000).toFixed(2)} s (reads p99 ${p99.toFixed(1)} ms; ${cpu})`;
}

/** The database a run is served from: a fresh copy of the seeded one, moved on by `job`. */
interface Copy {
  env: Record<string, string>;
  raw: RawSql;
  /** Where commitFloor commits: the same database, or (SQLite) the same directory. */
  floor: { raw: RawSql } | { dir: string };
  /** Where the planner's statistics matter (PostgreSQL), they are taken again. */
  settle(): Promise<void>;
  drop(): Promise<void>;
}

/** A copy of the seeded PostgreSQL database; with `job`, every point a day and a half older. */
async function postgresCopy(admin: postgres.Sql, job: boolean): Promise<Copy> {
  const copy = `vitals_rules_run_${Date.now()}`;
  // FILE_COPY: the default (WAL_LOG) writes the whole 2 GB copy to the log, whose checkpoints then
  // ran during the measured writes (vmstat: 0.3-1 GB/s written in their first seconds).
  await admin.unsafe(`CREATE DATABASE ${copy} TEMPLATE ${values.from ?? TEMPLATE} STRATEGY FILE_COPY`);
  if (values['async-commit']) await admin.unsafe(`ALTER DATABASE ${copy} SET synchronous_commit = off`);
  const sql = postgres(urlOf(copy), { onnotice: () => {} });
  const raw: RawSql = {
    exec: async (text) => {
      await sql.unsafe(text);
    },
    count: async (text) => Number((await sql.unsafe(text))[0]?.n),
  };
  if (job) await raw.exec(`UPDATE metric_points SET at = at - ${1.5 * DAY}`);
  return {
    env: { DATABASE_URL: urlOf(copy) },
    raw,
    floor: { raw },
    // The vacuum's own writes checkpointed before the clock starts, not during the run.
    settle: () => vacuumAndCheckpoint(raw),
    async drop() {
      await sql.end();
      await admin.unsafe(`DROP DATABASE ${copy} WITH (FORCE)`);
    },
  };
}

/** A copy of the seeded SQLite database, moved on (`job`) before any server opens it. */
function sqliteCopy(job: boolean): Copy {
  const dir = mkdtempSync(join(tmpdir(), 'vitals-rules-run-'));
  cpSync(SQLITE_DIR, dir, { recursive: true });
  // On disk before the server starts: its first commits' fsyncs otherwise waited for the kernel
  // to write back the whole 2 GB copy (the first second's writes took 450-680 ms at the median).
  for (const name of readdirSync(dir)) {
    const fd = openSync(join(dir, name), 'r+');
    fsyncSync(fd);
    closeSync(fd);
  }
  const path = join(dir, 'vitals.db');
  if (job) movePointsBack(path, 1.5 * DAY);
  const raw = sqliteRaw(path);
  return {
    env: { VITALS_DATA_DIR: dir },
    raw,
    floor: { dir },
    settle: async () => {},
    async drop() {
      await raw.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Seeds the database runs copy: SQLite's as a directory, PostgreSQL's as a database. */
async function seed(admin: postgres.Sql | null): Promise<void> {
  if (admin) await admin.unsafe(`DROP DATABASE IF EXISTS ${TEMPLATE} WITH (FORCE)`);
  const { db, server, headers } = await dataset(
    SQLITE ? 'sqlite' : 'postgres',
    N,
    true,
    {},
    (store, accountId) => seedPoints(store, accountId, N, 30),
  );
  for (const factor of ['engagement', 'support_load', 'adoption'] as const) {
    await send(server, headers, 'PUT', `/api/settings/health-score/factors/${factor}`, RULES[factor]);
  }
  await server.stop();
  if (admin) {
    const seeded = postgres(db.url as string, { onnotice: () => {} });
    await seeded.unsafe('VACUUM ANALYZE');
    await seeded.end();
    await admin.unsafe(`ALTER DATABASE ${new URL(db.url as string).pathname.slice(1)} RENAME TO ${TEMPLATE}`);
  } else {
    // One file to copy: the log folded into the database.
    const conn = new DatabaseSync(join(db.dir, 'vitals.db'));
    conn.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    conn.close();
    rmSync(SQLITE_DIR, { recursive: true, force: true });
    renameSync(db.dir, SQLITE_DIR);
  }
  writeFileSync(KEY_FILE, server.key);
  console.log(`seeded ${SQLITE ? SQLITE_DIR : TEMPLATE}`);
}

/** Serves a copy with this checkout's code and times the rule and weights changes, or the job. */
async function run(admin: postgres.Sql | null): Promise<void> {
  const copy = admin ? await postgresCopy(admin, values.job) : sqliteCopy(values.job);
  if (values.floor) {
    try {
      await copy.settle();
      console.log(`${values.tag} the database's floor under a rule change: ${await rescoreFloor(copy.raw)}`);
    } finally {
      await copy.drop();
    }
    return;
  }
  const key = readFileSync(KEY_FILE, 'utf8');
  const server = await startServer({
    ...copy.env,
    VITALS_API_KEY: key,
    VITALS_LOG_LEVEL: 'warn',
    VITALS_KEY_CACHE_TTL: '2s',
    VITALS_RATE_LIMIT: '1000000/s',
    VITALS_RESCORE_INTERVAL: values.job ? '1s' : '1h',
    ...(process.env.SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVER_NODE_OPTIONS } : {}),
  });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  try {
    if (values.writes) {
      await copy.settle();
      console.log(
        `${values.tag} one metric write at 200/s: ${writesFigure(await metricWrites(server, headers, N))}`,
      );
      console.log(
        `${values.tag} the disk's floor, a bare durable commit at 200/s: ${await commitFloor(copy.floor)}`,
      );
    } else if (values.job) {
      await copy.settle();
      const { job, moved } = await jobOverDue(copy.raw, (request) => timed(server, headers, request));
      console.log(`${values.tag} rescore job (${moved.toLocaleString('en')} rescored): ${job}`);
    } else {
      if (values.only === 'window') {
        await copy.settle();
        const rule = await timed(server, headers, () =>
          send(server, headers, 'PUT', '/api/settings/health-score/factors/engagement', WINDOW_CHANGE),
        );
        console.log(`${values.tag} a new window (every customer's points read again): ${rule}`);
      }
      if (values.only === undefined || values.only === 'rule') {
        await copy.settle();
        const rule = await timed(server, headers, () =>
          send(server, headers, 'PUT', '/api/settings/health-score/factors/engagement', RULE_CHANGE),
        );
        console.log(`${values.tag} rule change: ${rule}`);
      }
      if (values.only === undefined || values.only === 'weights') {
        await copy.settle();
        const weights = await timed(server, headers, () =>
          send(server, headers, 'PATCH', '/api/settings/health-score/weights', WEIGHTS_CHANGE),
        );
        console.log(`${values.tag} weights change: ${weights}`);
      }
    }
  } finally {
    await server.stop();
    await copy.drop();
  }
}

const admin = SQLITE ? null : postgres(POSTGRES_URL as string, { onnotice: () => {} });
try {
  if (positionals[0] === 'seed') await seed(admin);
  else if (positionals[0] === 'run') await run(admin);
  else
    throw new Error('usage: node bench/rules-copy.ts seed|run [--backend postgres|sqlite] [--customers N] …');
} finally {
  await admin?.end();
}
