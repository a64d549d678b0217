// node bench/profile.ts [--backend sqlite|postgres] [--seconds N] [--cpu-prof] [--scenario post|get|list]
// Where a request spends its CPU: seeds 20k customers, drives 32 connections of score updates
// (post, the default), key-authenticated GETs of one customer (get) or list pages of 100 (list)
// for N seconds and reports CPU seconds per request for the Vitals process, the
// PostgreSQL backends serving it and the load generator, plus PostgreSQL's statement counts
// per request (pg_stat_statements when loaded, else pg_stat_database's transaction counts).
// With --cpu-prof the server writes a .cpuprofile into ./profiles for Chrome DevTools.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import autocannon, { type Request } from 'autocannon';
import postgres from 'postgres';
import type { Backend } from '../test/helpers/stores.ts';
import { customerId, dataset } from './seed.ts';

const { values } = parseArgs({
  options: {
    backend: { type: 'string', default: 'postgres' },
    seconds: { type: 'string', default: '10' },
    'cpu-prof': { type: 'boolean', default: false },
    connections: { type: 'string', default: '32' },
    scenario: { type: 'string', default: 'post' },
  },
});
const backend = values.backend as Backend;
const N = 20_000;

/** utime + stime of a process, in seconds (Linux /proc). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

const env: Record<string, string> = { VITALS_RATE_LIMIT: 'off' };
if (values['cpu-prof']) env.NODE_OPTIONS = '--cpu-prof --cpu-prof-dir=profiles';
const { db, server, headers } = await dataset(backend, N, true, env);
const admin = db.url ? postgres(db.url, { max: 1, onnotice: () => {} }) : undefined;
const backends = async () =>
  admin
    ? (
        await admin<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE application_name = 'vitals'`
      ).map((r) => r.pid)
    : [];
const xacts = async () =>
  admin
    ? Number(
        (
          await admin<
            { n: string }[]
          >`SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()`
        )[0]?.n,
      )
    : 0;
let statements = false;
if (admin) {
  try {
    await admin`SELECT pg_stat_statements_reset()`;
    statements = true;
  } catch {}
}

const postScore: Request[] = [
  {
    method: 'POST',
    headers,
    setupRequest: (r) => ({
      ...r,
      path: `/api/customers/${customerId(Math.floor(Math.random() * N))}/health-score`,
      body: JSON.stringify({ factors: { usage: Math.random(), support: Math.random() } }),
    }),
  },
];
const getCustomer: Request[] = [
  {
    method: 'GET',
    headers,
    setupRequest: (r) => ({ ...r, path: `/api/customers/${customerId(Math.floor(Math.random() * N))}` }),
  },
];
const listPage: Request[] = [{ method: 'GET', headers, path: '/api/customers?limit=100' }];
const SCENARIOS: Record<string, Request[]> = { post: postScore, get: getCustomer, list: listPage };
const requests = SCENARIOS[values.scenario];
if (!requests) throw new Error(`--scenario must be one of ${Object.keys(SCENARIOS).join(', ')}`);
const drive = (seconds: number) =>
  autocannon({
    url: server.url,
    connections: Number(values.connections),
    duration: seconds,
    requests,
  });
// Warm-up so the pool is full and the JIT is done.
await drive(2);
if (statements && admin) await admin`SELECT pg_stat_statements_reset()`;
const pgPids = await backends();
const serverPid = server.proc.pid as number;
const before = {
  server: cpuSeconds(serverPid),
  pg: pgPids.reduce((s, p) => s + cpuSeconds(p), 0),
  self: process.cpuUsage(),
  xacts: await xacts(),
};
const result = await drive(Number(values.seconds));
const self = process.cpuUsage(before.self);
const total = result.requests.total;
const per = (s: number) => `${((s / total) * 1e6).toFixed(0)} µs`;
console.log(
  `${backend} ${values.scenario}: ${total} requests, ${result.requests.average.toFixed(0)} req/s, non-2xx ${result.non2xx}`,
);
console.log(`  CPU per request: vitals ${per(cpuSeconds(serverPid) - before.server)}`);
if (admin) {
  const pg = (await backends()).reduce((s, p) => s + cpuSeconds(p), 0) - before.pg;
  console.log(`  CPU per request: postgres backends ${per(pg)}`);
  console.log(`  commits per request: ${((await xacts()) - before.xacts) / total}`);
}
console.log(`  CPU per request: load generator ${per((self.user + self.system) / 1e6)}`);
if (statements && admin) {
  const rows = await admin<{ calls: string; ms: number; query: string }[]>`
    SELECT calls::text, total_exec_time AS ms, left(regexp_replace(query, '\s+', ' ', 'g'), 90) AS query
    FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 15`;
  for (const r of rows) {
    console.log(
      `  ${(Number(r.calls) / total).toFixed(2)}/req ${((r.ms / Number(r.calls)) * 1000).toFixed(0)} µs  ${r.query}`,
    );
  }
}
await admin?.end();
await server.stop();
await db.drop();
