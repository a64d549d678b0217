// Backfill against import (issue 52; docs/api.md, "Backfill"): N customers with a year of daily
// points of 3 metrics, read by 3 rules (a sum, an average, the last value; rules-scenario.ts),
// served by a real Vitals process:
//   - the points sent by the real `vitals import metrics`, one row per customer and day, timed;
//     then the rules put (each derives every customer's factor once). --rules before puts them
//     first, as a new account might: every row then derives its customer's factors again (at 100
//     customers the import took 2 to 3 times as long). --order customer writes each customer's
//     days together, as `vitals export metrics` does: the import then sends one batch at a time (a
//     batch waits for the one in flight that holds its customer; at 100 customers 3 times as long
//     on PostgreSQL, as long on SQLite);
//   - then one backfill of every customer from the first day (POST, its progress polled until
//     `done`), while GET /api/customers/{id} and GET /api/health-scores?limit=20 are read in turn
//     at a steady rate (open loop, --reads a second), after a warm-up and 10 s of the same reads
//     at rest for comparison: each route's p99.
// Reports import seconds, backfill seconds, their ratio (target: backfill ≤ 2 × import) and the
// reads' p99 (target < 50 ms). PostgreSQL is vacuumed and analyzed before the backfill, as
// autovacuum would be before long after a bulk load (bench/lib.ts, settleAfterLoad).
// Usage: node bench/backfill.ts [--customers 10000] [--days 365] [--reads 20]
//        [--order day|customer] [--rules after|before] [--backend sqlite|postgres|both] [--cpu-prof DIR]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, rmSync } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { tempDir } from '../test/helpers/app.ts';
import { type Backend, POSTGRES_URL } from '../test/helpers/stores.ts';
import { cpuSeconds, openLoop, percentile, type Server, settleAfterLoad } from './lib.ts';
import { RULES, send } from './rules-scenario.ts';
import { customerId, dataset } from './seed.ts';

const { values } = parseArgs({
  options: {
    customers: { type: 'string', default: '10000' },
    days: { type: 'string', default: '365' },
    reads: { type: 'string', default: '20' },
    backend: { type: 'string', default: POSTGRES_URL ? 'both' : 'sqlite' },
    'cpu-prof': { type: 'string' },
    order: { type: 'string', default: 'day' },
    rules: { type: 'string', default: 'after' },
  },
});
const N = Number(values.customers);
const DAYS = Number(values.days);
const READS = Number(values.reads);
const DAY = 86_400_000;
if (!['day', 'customer'].includes(values.order as string)) throw new Error('--order: day or customer');
if (!['before', 'after'].includes(values.rules as string)) throw new Error('--rules: before or after');
const backends: Backend[] = values.backend === 'both' ? ['sqlite', 'postgres'] : [values.backend as Backend];
const rows: string[] = [];
const report = (backend: string, scenario: string, figure: string, target: string) => {
  rows.push(`| ${backend} | ${scenario} | ${figure} | ${target} |`);
  console.log(`  ${scenario}: ${figure} (target ${target})`);
};

/** A value of 0–9 that moves from day to day, differently for each customer and metric. */
const noise = (i: number, d: number, k: number) =>
  (((i + 1) * 7919 + d * 104_729 + k * 15_485_863) % 1009) % 10;

/**
 * The import file: one row per customer and day (a point of each metric at noon, up to yesterday),
 * day after day (--order day: a daily export's files one after the other) or each customer's days
 * together (--order customer: as `vitals export metrics` writes them).
 */
async function writeMetrics(path: string, today: number): Promise<void> {
  const out = createWriteStream(path);
  out.write('customer_id,at,logins,tickets,seats\n');
  const line = (i: number, d: number) =>
    `${customerId(i)},${new Date((today - d) * DAY + DAY / 2).toISOString()},${noise(i, d, 0) % 4},${noise(i, d, 1)},${5 + ((i + Math.floor(d / 60)) % 30)}\n`;
  const byDay = values.order === 'day';
  for (let a = 0; a < (byDay ? DAYS : N); a++) {
    for (let b = 0; b < (byDay ? N : DAYS); b++) {
      if (!out.write(byDay ? line(b, DAYS - a) : line(a, DAYS - b))) await once(out, 'drain');
    }
  }
  out.end();
  await finished(out);
}

/** `vitals ARGS` against `server`, to its end: its wall seconds. */
async function cli(server: Server, args: string[]): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['src/cli.ts', ...args, '--url', server.url, '--key', server.key], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const [code] = await once(child, 'close');
  if (code !== 0) throw new Error(`vitals ${args.join(' ')} exited with ${code}:\n${stderr}`);
  return (performance.now() - t0) / 1000;
}

async function json(
  server: Server,
  headers: Record<string, string>,
  method: string,
  path: string,
  body?: unknown,
) {
  const res = await fetch(server.url + path, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text);
}

const dir = tempDir();
const today = Math.floor(Date.now() / DAY);
const metricsCsv = join(dir, 'metrics.csv');
await writeMetrics(metricsCsv, today);
const size = `${N.toLocaleString('en')} customers × ${DAYS} days × 3 metrics`;

for (const backend of backends) {
  console.log(`\n== ${backend} ==`);
  const { db, server, headers } = await dataset(backend, N, false, {
    // The server's profiles (main thread and its workers), written when it stops.
    ...(values['cpu-prof'] ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${values['cpu-prof']}` } : {}),
  });
  const putRules = async () => {
    const r0 = performance.now();
    for (const [factor, rule] of Object.entries(RULES)) {
      await send(server, headers, 'PUT', `/api/settings/health-score/factors/${factor}`, rule);
    }
    return (performance.now() - r0) / 1000;
  };
  if (values.rules === 'before') await putRules();
  const imported = await cli(server, ['import', 'metrics', metricsCsv]);
  console.log(`  imported in ${imported.toFixed(1)} s`);
  const rulesPut = values.rules === 'after' ? await putRules() : null;
  await settleAfterLoad(db);

  // Each read timed from when it is sent; the two routes in turn.
  type Route = 'customer' | 'list';
  const readAtRate = (more: (i: number) => boolean) => {
    const latencies: Record<Route, number[]> = { customer: [], list: [] };
    const reads = openLoop(
      READS,
      async (i) => {
        const route: Route = i % 2 === 0 ? 'customer' : 'list';
        const path =
          route === 'customer'
            ? `/api/customers/${customerId(Math.floor(Math.random() * N))}`
            : '/api/health-scores?limit=20';
        const r0 = performance.now();
        const res = await fetch(server.url + path, { headers });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
        latencies[route].push(performance.now() - r0);
      },
      more,
      'sent',
    );
    return reads.then(() => latencies);
  };
  const p99 = (l: number[]) =>
    percentile(
      [...l].sort((a, b) => a - b),
      99,
    );
  const figure = (l: Record<Route, number[]>) => {
    const all = [...l.customer, ...l.list];
    return {
      p99: p99(all),
      text: `${p99(l.customer).toFixed(1)} / ${p99(l.list).toFixed(1)} ms (${all.length} reads, p99 ${p99(all).toFixed(1)} ms)`,
    };
  };
  // Warm-up (the server has not answered these routes yet), then the reads at rest.
  await readAtRate((i) => i < 40);
  const restStarted = performance.now();
  const rest = figure(await readAtRate(() => performance.now() - restStarted < 10_000));

  // The backfill, polled every 200 ms, with the reads going on.
  const cpu0 = cpuSeconds(server.proc.pid as number);
  const t0 = performance.now();
  const from = new Date((today - DAYS) * DAY).toISOString().slice(0, 10);
  const run = await json(server, headers, 'POST', '/api/health-scores/backfill', { from });
  let running = true;
  const reads = readAtRate(() => running);
  let progress = run;
  while (progress.status === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 200)); // a run has no event to await
    progress = await json(server, headers, 'GET', `/api/health-scores/backfill/${run.id}`);
  }
  const backfilled = (performance.now() - t0) / 1000;
  running = false;
  const during = figure(await reads);
  const cpu1 = cpuSeconds(server.proc.pid as number);
  if (progress.status !== 'done') throw new Error(`the backfill ended ${progress.status}: ${progress.error}`);

  const how = `${values.order === 'day' ? 'day by day' : 'customer by customer'}, rules ${values.rules}`;
  report(backend, `vitals import metrics, ${size} (${how})`, `${imported.toFixed(1)} s`, '—');
  if (rulesPut !== null) report(backend, 'the 3 rules put after it', `${rulesPut.toFixed(1)} s`, '—');
  report(
    backend,
    `backfill from the first day, ${progress.customers_done.toLocaleString('en')} customers, ${progress.versions_written.toLocaleString('en')} versions`,
    `${backfilled.toFixed(1)} s (${(progress.customers_done / backfilled).toFixed(0)} customers/s; CPU ${(cpu1.process - cpu0.process).toFixed(1)} s server, ${(cpu1.machine - cpu0.machine).toFixed(1)} s machine)`,
    '—',
  );
  const ratio = backfilled / imported;
  report(backend, 'backfill ÷ import', `${ratio.toFixed(2)} ${ratio <= 2 ? '✓' : '✗'}`, '≤ 2');
  const routes = 'GET /api/customers/{id} / GET /api/health-scores?limit=20 p99';
  report(backend, `${routes}, ${READS}/s at rest`, rest.text, '—');
  report(
    backend,
    `${routes}, ${READS}/s during the backfill`,
    `${during.text} ${during.p99 < 50 ? '✓' : '✗'}`,
    '< 50 ms',
  );
  await server.stop();
  await db.drop();
}

rmSync(dir, { recursive: true, force: true });
console.log('\n| backend | scenario | figure | target |\n|---|---|---|---|');
for (const row of rows) console.log(row);
