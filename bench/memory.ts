// Where a server's memory goes with many customers: resident memory split into anonymous pages
// (V8 heaps, SQLite's caches, malloc) and file pages (the node binary and libraries), next to
// V8's own figures, idle and after walking the list for a while with 4 connections.
// Usage: node bench/memory.ts [--customers 1000000] [--seconds 20] [--keep DIR]
// NODE_OPTIONS given here reach the server (e.g. --max-semi-space-size=4 to compare).
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { newId } from '../src/domain/ids.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { tempDir } from '../test/helpers/app.ts';
import { startServer } from './lib.ts';
import { customerId, seed } from './seed.ts';

const { values } = parseArgs({
  options: {
    customers: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '20' },
    keep: { type: 'string' },
  },
});
const n = Number(values.customers);
const dir = values.keep ?? tempDir();
if (!existsSync(join(dir, 'vitals.db'))) {
  mkdirSync(dir, { recursive: true });
  const store = new SqliteStore({ path: join(dir, 'vitals.db'), synchronous: 'normal' });
  await store.migrate();
  const account = await store.ensureAccount('default', Date.now());
  const t0 = performance.now();
  await seed(store, account.id, n, { scores: false });
  await store.close();
  console.log(`seeded ${n} customers in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

const key = newId.apiKey();
const server = await startServer({
  VITALS_DATA_DIR: dir,
  VITALS_API_KEY: key,
  VITALS_LOG_LEVEL: 'warn',
  VITALS_RATE_LIMIT: 'off',
});
const pid = server.proc.pid as number;

async function report(when: string): Promise<void> {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1]) / 1024;
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]) / 2 ** 20;
  console.log(
    `${when.padEnd(6)} RSS ${kb('VmRSS').toFixed(0)} MB = anonymous ${kb('RssAnon').toFixed(0)} + files ${kb('RssFile').toFixed(0)}; ` +
      `main thread's V8 heap ${gauge('vitals_nodejs_heap_size_total_bytes').toFixed(0)} MB reserved, ` +
      `${gauge('vitals_nodejs_heap_size_used_bytes').toFixed(0)} MB used; external ${gauge('vitals_nodejs_external_memory_bytes').toFixed(0)} MB`,
  );
}

await report('idle');
const rand = (k: number) => Math.floor(Math.random() * k);
const result = await autocannon({
  url: server.url,
  connections: 4,
  duration: Number(values.seconds),
  requests: [
    {
      method: 'GET',
      headers: { authorization: `Bearer ${key}` },
      setupRequest: (r) => ({
        ...r,
        path: `/api/customers?limit=100&starting_after=${customerId(rand(n - 200))}`,
      }),
    },
  ],
});
if (result.errors > 0 || result.non2xx > 0)
  throw new Error(`${result.errors} errors, ${result.non2xx} non-2xx`);
await report('walked');
console.log(`list walk: ${result.requests.average.toFixed(0)} req/s, p99 ${result.latency.p99} ms`);
await server.stop();
if (!values.keep) rmSync(dir, { recursive: true, force: true });
