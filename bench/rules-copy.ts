// bench/rules.ts's rule change and weights change on PostgreSQL, from a copy of a database seeded
// once: seeding 100,000 customers with 9,000,000 points takes minutes, a copy (CREATE DATABASE …
// TEMPLATE) seconds, so two versions of the code can be run in turn against the same data.
//   seed: N customers with posted scores, 30 days of daily points of 3 metrics, the 3 rules of
//         bench/rules.ts put, vacuumed; kept as the database vitals_rules_N (replacing one).
//   run:  a copy of it served by this checkout's code; the rule change, then the weights change,
//         each with 200 reads a second meanwhile (their p99), and the CPU seconds each cost;
//         with --job, the rescore job instead: a day and a half passes (every point 36 hours
//         older), every customer is made due, and the time until the server's job has taken them.
// Usage: node bench/rules-copy.ts seed|run [--customers 100000] [--reads score|customer|healthz]
//        [--job] [--from DATABASE] [--tag TEXT]   (needs VITALS_TEST_POSTGRES_URL; the copy is dropped after the run)
//        SERVER_NODE_OPTIONS='--cpu-prof --cpu-prof-dir=DIR' profiles the server.
// The first run after a server restart reads from the OS cache into empty shared buffers, as
// every run of a copy does: alternate the versions compared, and compare runs made alike.

import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { POSTGRES_URL } from '../test/helpers/stores.ts';
import { type Server, startServer } from './lib.ts';
import {
  jobOverDue,
  RULE_CHANGE,
  RULES,
  seedPoints,
  send,
  timedWithReads,
  WEIGHTS_CHANGE,
} from './rules-scenario.ts';
import { customerId, dataset } from './seed.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    customers: { type: 'string', default: '100000' },
    reads: { type: 'string', default: 'score' },
    tag: { type: 'string', default: '' },
    job: { type: 'boolean', default: false },
    /** The database copied (default vitals_rules_N): one migrated ahead, say, to compare a schema change. */
    from: { type: 'string' },
  },
});
if (!POSTGRES_URL) throw new Error('VITALS_TEST_POSTGRES_URL is not set.');
const N = Number(values.customers);
const TEMPLATE = `vitals_rules_${N}`;
const KEY_FILE = join(tmpdir(), `${TEMPLATE}.key`);
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

const admin = postgres(POSTGRES_URL, { onnotice: () => {} });
try {
  if (positionals[0] === 'seed') {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${TEMPLATE} WITH (FORCE)`);
    const { db, server, headers } = await dataset('postgres', N, true, {}, (store, accountId) =>
      seedPoints(store, accountId, N, 30),
    );
    for (const factor of ['engagement', 'support_load', 'adoption'] as const) {
      await send(server, headers, 'PUT', `/api/settings/health-score/factors/${factor}`, RULES[factor]);
    }
    await server.stop();
    const seeded = postgres(db.url as string, { onnotice: () => {} });
    await seeded.unsafe('VACUUM ANALYZE');
    await seeded.end();
    await admin.unsafe(`ALTER DATABASE ${new URL(db.url as string).pathname.slice(1)} RENAME TO ${TEMPLATE}`);
    writeFileSync(KEY_FILE, server.key);
    console.log(`seeded ${TEMPLATE}`);
  } else if (positionals[0] === 'run') {
    const copy = `vitals_rules_run_${Date.now()}`;
    await admin.unsafe(`CREATE DATABASE ${copy} TEMPLATE ${values.from ?? TEMPLATE}`);
    const key = readFileSync(KEY_FILE, 'utf8');
    const server = await startServer({
      DATABASE_URL: urlOf(copy),
      VITALS_API_KEY: key,
      VITALS_LOG_LEVEL: 'warn',
      VITALS_KEY_CACHE_TTL: '2s',
      VITALS_RATE_LIMIT: '1000000/s',
      VITALS_RESCORE_INTERVAL: values.job ? '1s' : '1h',
      ...(process.env.SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SERVER_NODE_OPTIONS } : {}),
    });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const raw = postgres(urlOf(copy), { onnotice: () => {} });
    const exec = async (text: string) => {
      await raw.unsafe(text);
    };
    try {
      if (values.job) {
        await exec(`UPDATE metric_points SET at = at - ${1.5 * 86_400_000}`);
        await exec('VACUUM ANALYZE');
        const count = async (text: string) => Number((await raw.unsafe(text))[0]?.n);
        const { job, moved } = await jobOverDue({ exec, count }, (request) =>
          timed(server, headers, request),
        );
        console.log(`${values.tag} rescore job (${moved.toLocaleString('en')} rescored): ${job}`);
      } else {
        await exec('VACUUM ANALYZE');
        const rule = await timed(server, headers, () =>
          send(server, headers, 'PUT', '/api/settings/health-score/factors/engagement', RULE_CHANGE),
        );
        console.log(`${values.tag} rule change: ${rule}`);
        await exec('VACUUM ANALYZE');
        const weights = await timed(server, headers, () =>
          send(server, headers, 'PATCH', '/api/settings/health-score/weights', WEIGHTS_CHANGE),
        );
        console.log(`${values.tag} weights change: ${weights}`);
      }
    } finally {
      await server.stop();
      await raw.end();
      await admin.unsafe(`DROP DATABASE ${copy} WITH (FORCE)`);
    }
  } else {
    throw new Error(
      'usage: node bench/rules-copy.ts seed|run [--customers N] [--reads score|customer|healthz]',
    );
  }
} finally {
  await admin.end();
}
