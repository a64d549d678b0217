// npm run bench [-- --quick] [-- --backend sqlite|postgres|both] [-- --only NAME]
// Each throughput scenario runs against a real Vitals process and against a bare node:http
// "ceiling" process answering the same bytes, alternating A B A B; the table shows medians
// and the ratio to the ceiling. Data is seeded first, straight into the store.
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon, { type Request } from 'autocannon';
import { type Backend, POSTGRES_URL } from '../test/helpers/stores.ts';
import { freePort, median, percentile, probeDuring, rssMb, type Server } from './lib.ts';
import { customerId, dataset } from './seed.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    backend: { type: 'string', default: POSTGRES_URL ? 'both' : 'sqlite' },
    only: { type: 'string' },
  },
});
const QUICK = values.quick;
const SECONDS = QUICK ? 3 : 10;
const ROUNDS = QUICK ? 1 : 3;
const CONNECTIONS = 32;
const N = QUICK ? 20_000 : 100_000;
const BIG = QUICK ? 200_000 : 1_000_000;
const backends: Backend[] = values.backend === 'both' ? ['sqlite', 'postgres'] : [values.backend as Backend];

interface Row {
  backend: Backend;
  scenario: string;
  vitals: string;
  ceiling: string;
  ratio: string;
  target: string;
}
const rows: Row[] = [];
const want = (name: string) => !values.only || name.includes(values.only);

async function startCeiling(sample: {
  status: number;
  body: string;
}): Promise<{ url: string; proc: ChildProcess }> {
  const file = join(process.env.TMPDIR ?? '/tmp', `vitals-ceiling-${process.pid}.json`);
  writeFileSync(file, sample.body);
  const port = await freePort();
  const proc = fork('bench/ceiling.ts', [], {
    env: { ...process.env, PORT: String(port), CEILING_BODY: file, CEILING_STATUS: String(sample.status) },
  });
  await once(proc, 'message');
  return { url: `http://127.0.0.1:${port}`, proc };
}

async function load(url: string, requests: Request[], opts: { connections?: number; seconds?: number } = {}) {
  const result = await autocannon({
    url,
    connections: opts.connections ?? CONNECTIONS,
    duration: opts.seconds ?? SECONDS,
    requests,
  });
  if (result.errors > 0 || result.non2xx > 0) {
    throw new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
  }
  return result;
}

/** A B A B against Vitals and the ceiling; medians of requests/s. */
async function versusCeiling(
  backend: Backend,
  name: string,
  target: number,
  server: Server,
  requests: Request[],
  sample: { status: number; body: string },
) {
  if (!want(name)) return;
  const ceiling = await startCeiling(sample);
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    ours.push((await load(server.url, requests)).requests.average);
    theirs.push((await load(ceiling.url, requests)).requests.average);
  }
  ceiling.proc.kill();
  const a = median(ours);
  const b = median(theirs);
  rows.push({
    backend,
    scenario: name,
    vitals: `${a.toFixed(0)} req/s`,
    ceiling: `${b.toFixed(0)} req/s`,
    ratio: (a / b).toFixed(2),
    target: `≥ ${target}`,
  });
  console.log(`  ${name}: ${a.toFixed(0)} vs ceiling ${b.toFixed(0)} req/s → ${(a / b).toFixed(2)}`);
}

const rand = (n: number) => Math.floor(Math.random() * n);

async function sampleOf(server: Server, req: Request) {
  const res = await fetch(server.url + req.path, {
    method: req.method ?? 'GET',
    headers: req.headers,
    body: req.body,
  });
  return { status: res.status, body: await res.text() };
}

for (const backend of backends) {
  console.log(`\n== ${backend} ==`);
  const { db, server, headers } = await dataset(backend, N, true);

  const getCustomer: Request[] = [
    {
      method: 'GET',
      headers,
      setupRequest: (r) => ({ ...r, path: `/api/customers/${customerId(rand(N))}` }),
    },
  ];
  await versusCeiling(
    backend,
    `GET customer (${N / 1000}k stored)`,
    0.6,
    server,
    getCustomer,
    await sampleOf(server, { method: 'GET', headers, path: `/api/customers/${customerId(1)}` }),
  );

  const listPage: Request[] = [
    {
      method: 'GET',
      headers,
      setupRequest: (r) => ({
        ...r,
        path: `/api/customers?limit=100&starting_after=${customerId(rand(N - 200))}`,
      }),
    },
  ];
  await versusCeiling(
    backend,
    'GET list page of 100',
    0.25,
    server,
    listPage,
    await sampleOf(server, {
      method: 'GET',
      headers,
      path: `/api/customers?limit=100&starting_after=${customerId(5)}`,
    }),
  );

  const getScore: Request[] = [
    {
      method: 'GET',
      headers,
      setupRequest: (r) => ({ ...r, path: `/api/customers/${customerId(rand(N))}/health-score` }),
    },
  ];
  await versusCeiling(
    backend,
    `GET health score (${N / 1000}k stored)`,
    0.6,
    server,
    getScore,
    await sampleOf(server, { method: 'GET', headers, path: `/api/customers/${customerId(1)}/health-score` }),
  );

  const scoreBody = () => JSON.stringify({ factors: { usage: Math.random(), support: Math.random() } });
  const postScore: Request[] = [
    {
      method: 'POST',
      headers,
      setupRequest: (r) => ({
        ...r,
        path: `/api/customers/${customerId(rand(N))}/health-score`,
        body: scoreBody(),
      }),
    },
  ];
  const scoreSample = await sampleOf(server, {
    method: 'POST',
    headers,
    path: `/api/customers/${customerId(2)}/health-score`,
    body: scoreBody(),
  });
  await versusCeiling(backend, 'POST health score, no webhook', 0.35, server, postScore, scoreSample);

  if (want('weights')) {
    const times: number[] = [];
    const sets = [
      { usage: 0.5, support: 0.3, billing: 0.2 },
      { usage: 0.2, support: 0.3, billing: 0.5 },
    ];
    // While each recompute runs, 4 clients read single customers: the API must keep answering.
    const during: number[] = [];
    for (let r = 0; r < ROUNDS + 1; r++) {
      const t0 = performance.now();
      const { result: res, latencies } = await probeDuring(
        () =>
          fetch(`${server.url}/api/settings/health-score/weights`, {
            method: 'PATCH',
            headers,
            body: JSON.stringify({ weights: sets[r % 2] }),
          }),
        `${server.url}/api/customers/`,
        () => customerId(rand(N)),
        headers,
      );
      if (!res.ok) throw new Error(`weights: ${res.status} ${await res.text()}`);
      times.push(performance.now() - t0);
      during.push(...latencies);
    }
    const ms = median(times);
    during.sort((a, b) => a - b);
    const p99 = percentile(during, 99);
    rows.push({
      backend,
      scenario: `PATCH weights, recompute ${N / 1000}k scores`,
      vitals: `${ms.toFixed(0)} ms; GET p99 ${p99.toFixed(1)} ms during it`,
      ceiling: '—',
      ratio: '—',
      target: N === 100_000 ? '< 1500 ms, GET p99 < 50 ms' : '(100k: < 1500 ms, GET p99 < 50 ms)',
    });
    console.log(
      `  weights recompute: ${ms.toFixed(0)} ms; ${during.length} GETs during it, p50 ${percentile(during, 50).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
    );
  }

  // One subscribed webhook: the same POST also writes a delivery and the dispatcher sends it.
  if (want('webhook')) {
    const { createServer } = await import('node:http');
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const port = (receiver.address() as { port: number }).port;
    await fetch(`${server.url}/api/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        url: `http://127.0.0.1:${port}/hook`,
        events: ['customer.health_score.updated'],
      }),
    });
    await versusCeiling(backend, 'POST health score, 1 webhook', 0.35, server, postScore, scoreSample);
    receiver.close();
  }
  await server.stop();
  await db.drop();

  if (want('latency')) {
    const env = backend === 'postgres' ? ['--backend', 'postgres'] : [];
    const child = spawn(
      process.execPath,
      ['bench/webhook-latency.ts', '--seconds', QUICK ? '5' : '20', ...env],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
    });
    await once(child, 'exit');
    const m = /p50 ([\d.]+) ms, p90 [\d.]+ ms, p99 ([\d.]+) ms/.exec(out);
    rows.push({
      backend,
      scenario: 'delivery latency at 200 updates/s',
      vitals: m ? `p50 ${m[1]} ms, p99 ${m[2]} ms` : 'failed',
      ceiling: '—',
      ratio: '—',
      target: 'p50 < 10 ms, p99 < 50 ms',
    });
    console.log(`  ${out.trim().split('\n').at(-1)}`);
  }

  if (want('1M') || want('big')) {
    const big = await dataset(backend, BIG, false);
    const walk: Request[] = [
      {
        method: 'GET',
        headers: big.headers,
        setupRequest: (r) => ({
          ...r,
          path: `/api/customers?limit=100&starting_after=${customerId(rand(BIG - 200))}`,
        }),
      },
    ];
    const result = await load(big.server.url, walk, { connections: 4, seconds: SECONDS * 2 });
    const rss = rssMb(big.server.proc.pid as number);
    rows.push({
      backend,
      scenario: `${BIG / 1000}k customers: list page`,
      vitals: `p99 ${result.latency.p99} ms, RSS ${rss.toFixed(0)} MB`,
      ceiling: '—',
      ratio: '—',
      target: 'p99 < 5 ms, RSS < 250 MB',
    });
    console.log(
      `  ${BIG} customers: list p99 ${result.latency.p99} ms at ${result.requests.average.toFixed(0)} req/s (4 connections), RSS ${rss.toFixed(0)} MB`,
    );
    await big.server.stop();
    await big.db.drop();
  }
}

console.log(
  `\nMachine: ${cpus().length} × ${cpus()[0]?.model}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; ${QUICK ? 'quick run' : 'full run'} (${SECONDS} s per run, ${ROUNDS} A/B rounds, ${CONNECTIONS} connections)\n`,
);
console.log('| backend | scenario | Vitals | ceiling | ratio | target |');
console.log('|---|---|---|---|---|---|');
for (const r of rows)
  console.log(`| ${r.backend} | ${r.scenario} | ${r.vitals} | ${r.ceiling} | ${r.ratio} | ${r.target} |`);
