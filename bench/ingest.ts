// Bulk ingest and export, end to end: the real `vitals import` / `vitals export` CLI in its own
// process against a real server on a fresh database, timed, with both processes' memory
// sampled from /proc. Plus one batch of 1,000 score updates as a single request.
// Usage: node bench/ingest.ts [--rows 200000] [--export 1000000] [--backend sqlite|postgres|both]
//        [--only singles|import|metrics-import|batch|metrics-batch|export]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { tempDir } from '../test/helpers/app.ts';
import { type Backend, POSTGRES_URL } from '../test/helpers/stores.ts';
import { median, percentile, rssMb, type Server } from './lib.ts';
import { customerId, dataset } from './seed.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    export: { type: 'string', default: '1000000' },
    backend: { type: 'string', default: POSTGRES_URL ? 'both' : 'sqlite' },
    only: { type: 'string' },
  },
});
const ROWS = Number(values.rows);
const EXPORT = Number(values.export);
const backends: Backend[] = values.backend === 'both' ? ['sqlite', 'postgres'] : [values.backend as Backend];
const wanted = (name: string) => values.only === undefined || values.only === name;
const dir = tempDir();
const rows: string[] = [];
const report = (backend: string, scenario: string, figure: string, target: string) => {
  rows.push(`| ${backend} | ${scenario} | ${figure} | ${target} |`);
  console.log(`  ${scenario}: ${figure} (target ${target})`);
};

/** Peak resident memory so far (VmHWM) of a live process, in MB. */
function peakMb(pid: number): number {
  const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return kb / 1024;
}

interface CliRun {
  seconds: number;
  cliPeakMb: number;
  /** The server's and the CLI's RSS at each sample (every 500 ms). */
  serverMb: number[];
  cliMb: number[];
  stderr: string;
}

/** `vitals ARGS` against `server`, timed, its peak RSS read just before it exits. */
async function cli(server: Server, args: string[], stdout = 'ignore' as 'ignore' | 'pipe'): Promise<CliRun> {
  const started = performance.now();
  const child = spawn(process.execPath, ['src/cli.ts', ...args, '--url', server.url, '--key', server.key], {
    stdio: ['ignore', stdout, 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const pid = child.pid as number;
  let cliPeakMb = 0;
  const serverMb: number[] = [];
  const cliMb: number[] = [];
  const sample = setInterval(() => {
    try {
      cliPeakMb = Math.max(cliPeakMb, peakMb(pid));
      cliMb.push(rssMb(pid));
      serverMb.push(rssMb(server.proc.pid as number));
    } catch {} // the CLI exited between two samples: its last peak stands
  }, 500);
  const [code] = await once(child, 'close');
  clearInterval(sample);
  if (code !== 0) throw new Error(`vitals ${args.join(' ')} exited with ${code}:\n${stderr}`);
  return { seconds: (performance.now() - started) / 1000, cliPeakMb, serverMb, cliMb, stderr };
}

async function writeLines(
  path: string,
  header: string,
  line: (i: number) => string,
  n: number,
): Promise<void> {
  const out = createWriteStream(path);
  out.write(`${header}\n`);
  for (let i = 0; i < n; i++) {
    if (!out.write(`${line(i)}\n`)) await once(out, 'drain');
  }
  out.end();
  await finished(out);
}

const PLANS = ['starter', 'pro', 'enterprise'];
const REGIONS = ['eu', 'us', 'apac'];
const customersCsv = join(dir, 'customers.csv');
const scoresCsv = join(dir, 'scores.csv');
await writeLines(
  customersCsv,
  'customer_id,name,email,metadata.plan,metadata.region,metadata.csm',
  (i) => `${customerId(i)},Customer ${i},c${i}@example.com,${PLANS[i % 3]},${REGIONS[i % 3]},csm${i % 40}`,
  ROWS,
);
await writeLines(
  scoresCsv,
  'customer_id,usage,support,billing',
  (i) => `${customerId(i)},${(i % 97) / 97},${(i % 89) / 89},${(i % 83) / 83}`,
  ROWS,
);

const mb = (n: number) => `${Math.round(n)} MB`;

for (const backend of backends) {
  console.log(`\n== ${backend} ==`);
  if (wanted('import')) {
    const { db, server } = await dataset(backend, 0, false);
    const customers = await cli(server, ['import', 'customers', customersCsv]);
    report(
      backend,
      `import customers, ${ROWS.toLocaleString('en-US')} rows (CSV, 3 metadata columns)`,
      `${customers.seconds.toFixed(1)} s, CLI peak RSS ${mb(customers.cliPeakMb)}, server ${mb(Math.max(...customers.serverMb))}`,
      backend === 'sqlite' ? '< 20 s, CLI RSS < 100 MB' : '—',
    );
    const scores = await cli(server, ['import', 'scores', scoresCsv]);
    report(
      backend,
      `import scores, ${ROWS.toLocaleString('en-US')} rows`,
      `${scores.seconds.toFixed(1)} s, CLI peak RSS ${mb(scores.cliPeakMb)}`,
      backend === 'sqlite' ? '< 20 s' : '< 40 s',
    );
    await server.stop();
    await db.drop();
  }
  if (wanted('metrics-import')) {
    // 1,000,000 points: 5 metrics of 200,000 customers, one row each, a rule reading one of them
    // (every row rescores its customer).
    const { db, server, headers } = await dataset(backend, ROWS, true);
    const put = await fetch(`${server.url}/api/settings/health-score/factors/engagement`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({
        metric: 'logins',
        aggregate: 'sum',
        scale: { type: 'linear', from: 0, to: 50 },
      }),
    });
    if (put.status !== 200) throw new Error(`rule answered ${put.status}`);
    const metricsCsv = join(dir, 'metrics.csv');
    const now = Date.now();
    await writeLines(
      metricsCsv,
      'customer_id,at,logins,tickets,seats,nps,invoices_overdue',
      (i) =>
        `${customerId(i)},${new Date(now - (i % 30) * 86_400_000).toISOString()},${i % 40},${i % 7},${i % 50},${(i % 11) - 5},${i % 3}`,
      ROWS,
    );
    const run = await cli(server, ['import', 'metrics', metricsCsv]);
    report(
      backend,
      `import metrics, ${(ROWS * 5).toLocaleString('en-US')} points (${ROWS.toLocaleString('en-US')} customers × 5 metrics, each rescored)`,
      `${run.seconds.toFixed(1)} s, CLI peak RSS ${mb(run.cliPeakMb)}, server ${mb(Math.max(...run.serverMb))}`,
      backend === 'sqlite' ? '< 60 s' : '< 90 s',
    );
    rmSync(metricsCsv);
    await server.stop();
    await db.drop();
  }
  if (wanted('singles')) {
    // What an integration did before the batch routes: one request per row, 32 at a time.
    const { db, server, headers } = await dataset(backend, 0, false);
    const n = Math.min(ROWS, 20_000);
    const oneByOne = async (request: (i: number) => [string, unknown]) => {
      let next = 0;
      const t0 = performance.now();
      const client = async () => {
        for (let i = next++; i < n; i = next++) {
          const [path, body] = request(i);
          const res = await fetch(`${server.url}${path}`, {
            method: 'POST',
            headers,
            body: JSON.stringify(body),
          });
          await res.arrayBuffer();
          if (!res.ok) throw new Error(`${path} answered ${res.status}`);
        }
      };
      await Promise.all(Array.from({ length: 32 }, client));
      return n / ((performance.now() - t0) / 1000);
    };
    const customers = await oneByOne((i) => [
      '/api/customers',
      {
        customer_id: customerId(i),
        name: `Customer ${i}`,
        email: `c${i}@example.com`,
        metadata: { plan: PLANS[i % 3], region: REGIONS[i % 3], csm: `csm${i % 40}` },
      },
    ]);
    const scores = await oneByOne((i) => [
      `/api/customers/${customerId(i)}/health-score`,
      { factors: { usage: (i % 97) / 97, support: (i % 89) / 89, billing: (i % 83) / 83 } },
    ]);
    const at = (rate: number) =>
      `${Math.round(rate).toLocaleString('en-US')} rows/s, so ${(ROWS / rate).toFixed(0)} s for ${ROWS.toLocaleString('en-US')}`;
    report(
      backend,
      `before: customers one POST each (${n.toLocaleString('en-US')}, 32 clients)`,
      at(customers),
      '—',
    );
    report(
      backend,
      `before: scores one POST each (${n.toLocaleString('en-US')}, 32 clients)`,
      at(scores),
      '—',
    );
    await server.stop();
    await db.drop();
  }
  if (wanted('batch')) {
    const { db, server, headers } = await dataset(backend, 10_000, true);
    const times: number[] = [];
    for (let run = 0; run < 25; run++) {
      const scores = Array.from({ length: 1000 }, (_, i) => ({
        customer_id: customerId((run * 1000 + i) % 10_000),
        factors: { usage: ((run + i) % 100) / 100, support: 0.5 },
      }));
      const t0 = performance.now();
      const res = await fetch(`${server.url}/api/health-scores/batch`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ scores }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`batch answered ${res.status}`);
      if (run >= 5) times.push(performance.now() - t0);
    }
    const sorted = [...times].sort((a, b) => a - b);
    report(
      backend,
      'one batch of 1,000 score updates (median of 20)',
      `${median(times).toFixed(0)} ms (p90 ${percentile(sorted, 90).toFixed(0)} ms)`,
      backend === 'sqlite' ? '< 150 ms' : '—',
    );
    await server.stop();
    await db.drop();
  }
  if (wanted('metrics-batch')) {
    // 1,000 points in one request, each customer's logins read by a rule: every one rescored.
    const { db, server, headers } = await dataset(backend, 10_000, true);
    const rule = {
      metric: 'logins',
      aggregate: 'sum',
      window_days: 30,
      scale: { type: 'linear', from: 0, to: 50 },
    };
    const put = await fetch(`${server.url}/api/settings/health-score/factors/engagement`, {
      method: 'PUT',
      headers,
      body: JSON.stringify(rule),
    });
    if (put.status !== 200) throw new Error(`rule answered ${put.status}`);
    const times: number[] = [];
    for (let run = 0; run < 25; run++) {
      const metrics = Array.from({ length: 1000 }, (_, i) => ({
        customer_id: customerId((run * 1000 + i) % 10_000),
        values: { logins: (run + i) % 40 },
        at: new Date(Date.now() - ((run * 7 + i) % 20) * 86_400_000).toISOString(),
      }));
      const t0 = performance.now();
      const res = await fetch(`${server.url}/api/metrics/batch`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ metrics }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`metrics batch answered ${res.status}`);
      if (run >= 5) times.push(performance.now() - t0);
    }
    const sorted = [...times].sort((a, b) => a - b);
    report(
      backend,
      'one metric batch of 1,000 points, rescoring their customers (median of 20)',
      `${median(times).toFixed(0)} ms (p90 ${percentile(sorted, 90).toFixed(0)} ms)`,
      backend === 'sqlite' ? '< 150 ms' : '< 250 ms',
    );
    await server.stop();
    await db.drop();
  }
  if (wanted('export') && backend === 'sqlite') {
    const { db, server } = await dataset(backend, EXPORT, false);
    const out = join(dir, 'export.csv');
    const run = await cli(server, ['export', 'customers', out]);
    const lines = readFileSync(out, 'utf8').split('\n').length - 2;
    if (lines !== EXPORT) throw new Error(`exported ${lines} customers, not ${EXPORT}`);
    // Flat: the RSS a quarter of the way in against the RSS at the end (and the peak).
    const flat = (s: number[]) =>
      `${mb(s[Math.floor(s.length / 4)] ?? 0)} at 25%, ${mb(s.at(-1) ?? 0)} at the end, ${mb(Math.max(...s))} peak`;
    report(
      backend,
      `export customers, ${EXPORT.toLocaleString('en-US')}`,
      `${run.seconds.toFixed(1)} s; CLI RSS ${flat(run.cliMb)}; server RSS ${flat(run.serverMb)}`,
      '< 30 s, RSS flat',
    );
    rmSync(out);
    await server.stop();
    await db.drop();
  }
}

rmSync(dir, { recursive: true, force: true });
console.log('\n| backend | scenario | figure | target |\n|---|---|---|---|');
for (const row of rows) console.log(row);
