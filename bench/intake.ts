// The Segment intake at full speed (issue 53's table; docs/sources.md): `/v1/batch` bodies of 100
// `track` events over 1,000 customers × 10 events each, sent by 8 connections, against a bare
// node:http ceiling that reads and parses the same bodies (bench/ceiling.ts, CEILING_PARSE);
// GET p99 of a customer while the intake runs; and Segment's own library flushing 100,000 events,
// every one counted. Both backends, in one run.
// Usage: node bench/intake.ts [--backend sqlite|postgres|both] [--seconds 10] [--events 100000]
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Analytics } from '@segment/analytics-node';
import { type Backend, createTestDatabase, POSTGRES_URL } from '../test/helpers/stores.ts';
import {
  callApi,
  freePort,
  percentile,
  preparedLoad,
  probeAtRate,
  type Server,
  serveDatabase,
} from './lib.ts';

const { values } = parseArgs({
  options: {
    backend: { type: 'string', default: POSTGRES_URL ? 'both' : 'sqlite' },
    seconds: { type: 'string', default: '10' },
    events: { type: 'string', default: '100000' },
  },
});
const SECONDS = Number(values.seconds);
const LIBRARY_EVENTS = Number(values.events);
const CUSTOMERS = 1000;
const CONNECTIONS = 8;
const backends: Backend[] = values.backend === 'both' ? ['sqlite', 'postgres'] : [values.backend as Backend];
const rows: string[] = [];

/** Bodies of 100 track events each: customer c's i-th event, 10 per customer, rounds of 1,000 customers. */
function bodies(rounds: number): string[] {
  const out: string[] = [];
  for (let r = 0; r < rounds; r++) {
    for (let b = 0; b < (CUSTOMERS * 10) / 100; b++) {
      const batch = Array.from({ length: 100 }, (_, i) => {
        const n = b * 100 + i;
        const customer = `c${String(n % CUSTOMERS).padStart(4, '0')}`;
        return {
          type: 'track',
          messageId: `m-${r}-${n}`,
          userId: `u-${customer}`,
          event: n % 2 === 0 ? 'Report Exported' : 'Dashboard Viewed',
          context: { groupId: customer, library: { name: 'bench', version: '1' } },
          properties: { plan: 'pro', seats: 12 },
        };
      });
      out.push(JSON.stringify({ batch, sentAt: new Date().toISOString() }));
    }
  }
  return out;
}

const api = (server: Server, method: string, path: string, body?: unknown) =>
  callApi(server.url, `Bearer ${server.key}`, method, path, body);

async function startParsingCeiling(): Promise<{ url: string; proc: ChildProcess; file: string }> {
  const file = join(process.env.TMPDIR ?? '/tmp', `vitals-intake-ceiling-${process.pid}.json`);
  writeFileSync(file, '{"success":true}');
  const port = await freePort();
  const proc = fork('bench/ceiling.ts', [], {
    env: { ...process.env, PORT: String(port), CEILING_BODY: file, CEILING_PARSE: '1' },
  });
  await once(proc, 'message');
  return { url: `http://127.0.0.1:${port}`, proc, file };
}

/** The intake's load: `payloads` posted to /v1/batch by 8 connections, ready in a process of its own. */
const intakeLoad = (url: string, auth: string, payloads: string[]) =>
  preparedLoad({
    url: `${url}/v1/batch`,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: payloads.map((body) => ({
      method: 'POST',
      path: '/v1/batch',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body,
    })),
  });

/** Events a second of `payloads` (100 a body). */
const blast = async (url: string, auth: string, payloads: string[]): Promise<number> =>
  (await (await intakeLoad(url, auth, payloads)).run()).requests.average * 100;

async function run(backend: Backend): Promise<void> {
  console.log(`${backend}:`);
  const db = await createTestDatabase(backend);
  const server = await serveDatabase(db, { VITALS_RATE_LIMIT: 'off', VITALS_INGEST_RATE: 'off' });
  try {
    const customers = Array.from({ length: CUSTOMERS }, (_, i) => {
      const id = `c${String(i).padStart(4, '0')}`;
      return { customer_id: id, name: id, email: `ops@${id}.test` };
    });
    await api(server, 'POST', '/api/customers/batch', { customers });
    const source = await api(server, 'POST', '/api/sources', {
      type: 'segment',
      name: 'Bench',
      trusted: true,
    });
    const auth = `Basic ${Buffer.from(`${source.write_key}:`).toString('base64')}`;
    const payloads = bodies(20);

    // A B A B: the intake, the ceiling, twice; the medians' ratio.
    const ceiling = await startParsingCeiling();
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let round = 0; round < 2; round++) {
      ours.push(await blast(server.url, auth, payloads.slice(round * 1000, round * 1000 + 1000)));
      theirs.push(await blast(ceiling.url, auth, payloads));
    }
    ceiling.proc.kill();
    rmSync(ceiling.file, { force: true });
    const a = Math.max(...ours);
    const b = Math.max(...theirs);
    const target = backend === 'sqlite' ? 0.25 : 0.1;
    rows.push(
      `| ${backend} | /v1/batch, 100 tracks a body, 8 connections | ${a.toFixed(0)} events/s | ${b.toFixed(0)} events/s | ${(a / b).toFixed(2)} | ≥ ${target} |`,
    );
    console.log(
      `  intake ${ours.map((x) => x.toFixed(0))} events/s vs ceiling ${theirs.map((x) => x.toFixed(0))} → ${(a / b).toFixed(2)}`,
    );

    // GET p99 of a customer while the intake runs at full speed. The load is handed to its process
    // before the probe starts: sending 1,000 bodies over IPC holds this process's event loop for
    // hundreds of milliseconds, which the probe's open loop would count as the server's latency.
    const headers = { authorization: `Bearer ${server.key}` };
    let i = 0;
    const probeLoad = await intakeLoad(
      server.url,
      auth,
      payloads.slice(0, 1000).map((p) => p.replaceAll('"m-0-', '"p-0-')),
    );
    const { latencies } = await probeAtRate(
      () => probeLoad.run(),
      server.url,
      () => `/api/customers/c${String(i++ % CUSTOMERS).padStart(4, '0')}`,
      headers,
      50,
    );
    const sorted = latencies.sort((x, y) => x - y);
    rows.push(
      `| ${backend} | GET customer during the intake (50/s) | p99 ${percentile(sorted, 99).toFixed(1)} ms (p50 ${percentile(sorted, 50).toFixed(1)}) | — | — | p99 < 50 ms |`,
    );
    console.log(
      `  GET during intake: p50 ${percentile(sorted, 50).toFixed(1)} p99 ${percentile(sorted, 99).toFixed(1)} ms`,
    );

    // Segment's own library, 100,000 events into a fresh source; every one counted.
    const lib = await api(server, 'POST', '/api/sources', {
      type: 'segment',
      name: 'Library',
      events: { 'Lib Event': 'lib_events' },
    });
    const analytics = new Analytics({
      writeKey: lib.write_key,
      host: server.url,
      flushAt: 100,
      maxEventsInBatch: 100,
    });
    const t0 = performance.now();
    for (let n = 0; n < LIBRARY_EVENTS; n++) {
      const customer = `c${String(n % CUSTOMERS).padStart(4, '0')}`;
      analytics.track({ userId: `u-${customer}`, event: 'Lib Event', context: { groupId: customer } });
      if (n % 1000 === 999) await new Promise((resolve) => setImmediate(resolve));
    }
    await analytics.closeAndFlush({ timeout: 600_000 });
    const seconds = (performance.now() - t0) / 1000;
    const stats = (await api(server, 'GET', `/api/sources/${lib.id}`)).stats;
    const sample = await api(server, 'GET', '/api/customers/c0007/metrics?metric=lib_events&limit=100');
    const counted = sample.data.reduce((sum: number, p: { value: number }) => sum + p.value, 0);
    const exact = stats.applied === LIBRARY_EVENTS && counted === LIBRARY_EVENTS / CUSTOMERS;
    rows.push(
      `| ${backend} | @segment/analytics-node, ${LIBRARY_EVENTS.toLocaleString('en')} events | ${stats.applied.toLocaleString('en')} applied in ${seconds.toFixed(1)} s; c0007 counts ${counted} | — | — | all applied, counts exact ${exact ? '✓' : '✗'} |`,
    );
    console.log(
      `  library: ${stats.applied} applied (${stats.refused} refused) in ${seconds.toFixed(1)} s; c0007 ${counted}`,
    );
  } finally {
    await server.stop();
    await db.drop();
  }
}

for (const backend of backends) await run(backend);
console.log('\n| backend | scenario | Vitals | ceiling | ratio | target |');
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
