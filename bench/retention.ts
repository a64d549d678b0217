// Event retention under load: N events (each with a finished delivery and one attempt) are
// 40 days old when a real Vitals process starts; its retention job (VITALS_EVENT_RETENTION=30d)
// prunes them on its first pass while this script keeps the API busy, and reports the API's
// latency before and during the prune, and what the database's size does.
// Usage: node bench/retention.ts [--events 1000000] [--backend sqlite|postgres] [--workers 8]
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { createApiKey } from '../src/keys.ts';
import { type Backend, createTestDatabase } from '../test/helpers/stores.ts';
import { transaction } from '../test/helpers/transaction.ts';
import { percentile, startServer } from './lib.ts';
import { customerId, seed } from './seed.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    backend: { type: 'string', default: 'sqlite' },
    workers: { type: 'string', default: '8' },
  },
});
const N = Number(values.events);
const backend = values.backend as Backend;
const WORKERS = Number(values.workers);
const CUSTOMERS = 1000;
const DAY = 86_400_000;
const OLD = Date.now() - 40 * DAY;

const db = await createTestDatabase(backend);
const store = db.open();
await store.migrate();
const { key, account } = await createApiKey(store, 'default');
await seed(store, account.id, CUSTOMERS, { scores: true });
const webhookId = 'whk_bench';
await transaction(store, (tx) =>
  tx.insertWebhook(account.id, {
    id: webhookId,
    url: 'http://127.0.0.1:9/never',
    events: ['customer.created'],
    description: null,
    format: 'standard',
    secret: 'whsec_bench',
    previousSecret: null,
    previousSecretExpiresAt: null,
    // Off, so the events the load makes are not delivered to a receiver that is not there.
    enabled: false,
    disabledReason: null,
    createdAt: OLD,
    updatedAt: OLD,
  }),
);
await store.close();

// The old month, written straight into the tables (generated rows: 1M in seconds).
const series = backend === 'sqlite' ? 'n' : 'generate_series(1, $1) AS n(i)';
const rows = [
  `INSERT INTO events (id, account_id, type, data, created_at)
   SELECT 'evt_old' || lpad(i::text, 9, '0'), $2, 'customer.created', '{"id":"cus_0000001","deleted":true}', $3 + i
   FROM ${series}`,
  `INSERT INTO deliveries (id, account_id, webhook_id, event_id, status, attempts, created_at, updated_at)
   SELECT 'dlv_old' || lpad(i::text, 9, '0'), $2, $4, 'evt_old' || lpad(i::text, 9, '0'), 'succeeded', 1, $3 + i, $3 + i
   FROM ${series}`,
  `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code, response_body)
   SELECT 'dlv_old' || lpad(i::text, 9, '0'), 1, $3 + i, 12, 200, 'ok'
   FROM ${series}`,
];
async function write(prefix: string, at: number): Promise<void> {
  const t0 = performance.now();
  // Every value is a number or one of our own ids: written into the text, no parameters.
  const values: Record<string, string> = {
    $1: String(N),
    $2: `'${account.id}'`,
    $3: String(at),
    $4: `'${webhookId}'`,
  };
  const texts = rows.map((text) =>
    text
      .replaceAll("'evt_old'", `'evt_${prefix}'`)
      .replaceAll("'dlv_old'", `'dlv_${prefix}'`)
      .replace(/\$\d/g, (m) => values[m] as string),
  );
  if (backend === 'sqlite') {
    const raw = new DatabaseSync(join(db.dir, 'vitals.db'));
    raw.exec('BEGIN');
    for (const sql of texts) {
      raw.exec(
        sql
          .replaceAll("lpad(i::text, 9, '0')", "printf('%09d', i)")
          .replace(
            'FROM n',
            `FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${N}) SELECT i FROM n)`,
          ),
      );
    }
    raw.exec('COMMIT');
    raw.close();
  } else {
    const sql = postgres(db.url as string, { max: 1, onnotice: () => {} });
    for (const text of texts) await sql.unsafe(text);
    await sql`VACUUM ANALYZE`;
    await sql.end();
  }
  console.log(
    `wrote ${N} events, deliveries and attempts in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}
await write('old', OLD);

interface Size {
  bytes: number;
  detail: string;
}
async function size(): Promise<Size> {
  if (backend === 'sqlite') {
    const file = join(db.dir, 'vitals.db');
    const wal = statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
    const raw = new DatabaseSync(file, { readOnly: true });
    const pages = raw.prepare('PRAGMA page_count').get() as { page_count: number };
    const free = raw.prepare('PRAGMA freelist_count').get() as { freelist_count: number };
    raw.close();
    return {
      bytes: statSync(file).size,
      detail: `${pages.page_count} pages, ${free.freelist_count} free; WAL ${(wal / 1e6).toFixed(1)} MB`,
    };
  }
  const sql = postgres(db.url as string, { max: 1 });
  const [r] = await sql<{ total: string; events: string }[]>`
    SELECT pg_database_size(current_database()) AS total,
      pg_total_relation_size('events') + pg_total_relation_size('deliveries') +
      pg_total_relation_size('delivery_attempts') AS events`;
  await sql.end();
  return {
    bytes: Number(r?.total),
    detail: `events+deliveries+attempts ${(Number(r?.events) / 1e6).toFixed(1)} MB`,
  };
}
const mb = (s: Size) => `${(s.bytes / 1e6).toFixed(1)} MB (${s.detail})`;
const before = await size();
console.log(`database before: ${mb(before)}`);

const server = await startServer({
  ...(backend === 'sqlite' ? { VITALS_DATA_DIR: db.dir } : { DATABASE_URL: db.url as string }),
  VITALS_API_KEY: key,
  VITALS_RATE_LIMIT: 'off',
  VITALS_LOG_LEVEL: 'warn',
  VITALS_EVENT_RETENTION: '30d',
});
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

// Closed-loop load: each worker alternates a read and a score write, recording every latency.
const samples: { at: number; ms: number }[] = [];
let errors = 0;
let stop = false;
async function worker(w: number) {
  for (let i = 0; !stop; i++) {
    const id = customerId((w * 7919 + i * 104729) % CUSTOMERS);
    const started = performance.now();
    const res =
      i % 2 === 0
        ? await fetch(`${server.url}/api/customers/${id}`, { headers })
        : await fetch(`${server.url}/api/customers/${id}/health-score`, {
            method: 'POST',
            headers,
            body: JSON.stringify({ factors: { usage: (i % 100) / 100, support: 0.5 } }),
          });
    await res.arrayBuffer();
    if (!res.ok) errors++;
    samples.push({ at: started, ms: performance.now() - started });
  }
}

async function pruned(): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/vitals_retention_pruned_total\{kind="events"\} (\d+)/.exec(text)?.[1] ?? 0);
}

const load = Array.from({ length: WORKERS }, (_, w) => worker(w));
const startedAt = performance.now();
// The first pass starts 30 s after start-up; the window is from the last poll that saw none
// pruned to the first that saw all of them.
let windowStart = startedAt;
let windowEnd = Number.NaN;
for (;;) {
  const now = performance.now();
  const n = await pruned();
  if (n === 0) windowStart = now;
  if (n >= N) {
    windowEnd = performance.now();
    break;
  }
  if (now - startedAt > 30 * 60_000) throw new Error(`retention did not finish in 30 minutes (${n}/${N})`);
  await sleep(250);
}
stop = true;
await Promise.all(load);
await server.stop();
const after = await size();

const summary = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  return `${sorted.length} requests, p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms`;
};
const baseline = samples.filter((s) => s.at > startedAt + 5000 && s.at < windowStart).map((s) => s.ms);
const during = samples.filter((s) => s.at >= windowStart && s.at <= windowEnd).map((s) => s.ms);
console.log(
  `\n${backend}: pruned ${N} events (+ deliveries, attempts) in ${((windowEnd - windowStart) / 1000).toFixed(1)} s`,
);
console.log(`API before the prune: ${summary(baseline)}`);
console.log(`API during the prune: ${summary(during)}`);
console.log(`non-2xx answers: ${errors}`);
console.log(`database before: ${mb(before)}`);
console.log(`database after:  ${mb(after)}`);
if (backend === 'postgres') {
  // PostgreSQL reuses the space of deleted rows once VACUUM has marked it free; autovacuum does
  // that on its own a little later, this does it now so the refill below shows the reuse.
  const sql = postgres(db.url as string, { max: 1, onnotice: () => {} });
  await sql`VACUUM events, deliveries, delivery_attempts`;
  await sql.end();
  console.log(`database after VACUUM: ${mb(await size())}`);
}
// Where the freed space goes: the next month's events are written into it.
await write('new', Date.now());
console.log(`database after writing ${N} new events: ${mb(await size())}`);
await db.drop();
