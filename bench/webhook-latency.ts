// End-to-end webhook latency: from sending POST …/health-score to the receiver getting the
// delivery, at a fixed rate with one subscribed webhook. The server runs in its own process.
// Usage: node bench/webhook-latency.ts [--rate 200] [--seconds 20]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { createTestDatabase } from '../test/helpers/stores.ts';
import { percentile, startServer } from './lib.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '20' },
    backend: { type: 'string', default: 'sqlite' },
  },
});
const rate = Number(values.rate);
const total = rate * Number(values.seconds);
// PostgreSQL: a fresh database on the server at VITALS_TEST_POSTGRES_URL, dropped afterwards.
const db = values.backend === 'postgres' ? await createTestDatabase('postgres') : undefined;
const extraEnv: Record<string, string> = db?.url ? { DATABASE_URL: db.url } : {};

const sentAt = new Map<string, number>();
const latencies: number[] = [];
let received = 0;
let allReceived: () => void;
const done = new Promise<void>((r) => {
  allReceived = r;
});
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const now = performance.now();
    res.end('ok');
    const event = JSON.parse(Buffer.concat(chunks).toString());
    const tag = `${event.data.customer_id}:${event.data.factors.n}`;
    const t0 = sentAt.get(tag);
    if (t0 !== undefined) latencies.push(now - t0);
    if (++received === total) allReceived();
  });
});
receiver.listen(0, '127.0.0.1');
await new Promise((r) => receiver.once('listening', r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const server = await startServer({ VITALS_LOG_LEVEL: 'warn', VITALS_RATE_LIMIT: '1000000/s', ...extraEnv });
const pool = new Pool(server.url, { connections: 16 });
const call = async (method: string, path: string, body?: unknown) => {
  const res = await pool.request({
    method: method as 'POST',
    path,
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return JSON.parse(text);
};

const CUSTOMERS = 200;
for (let i = 0; i < CUSTOMERS; i++) {
  await call('POST', '/api/customers', {
    customer_id: `cus_${i}`,
    name: `Customer ${i}`,
    email: `c${i}@example.com`,
  });
}
await call('POST', '/api/webhooks', { url: receiverUrl, events: ['customer.health_score.updated'] });

console.log(`sending ${total} score updates at ${rate}/s …`);
const interval = 1000 / rate;
const start = performance.now();
const inflight: Promise<unknown>[] = [];
for (let i = 0; i < total; i++) {
  const due = start + i * interval;
  const wait = due - performance.now();
  if (wait > 1) await new Promise((r) => setTimeout(r, wait));
  const customer = `cus_${i % CUSTOMERS}`;
  const n = Math.floor(i / CUSTOMERS) / 1000;
  sentAt.set(`${customer}:${n}`, performance.now());
  inflight.push(call('POST', `/api/customers/${customer}/health-score`, { factors: { usage: 0.5, n } }));
}
await Promise.all(inflight);
const timeout = setTimeout(() => allReceived(), 30_000);
await done;
clearTimeout(timeout);
const elapsed = (performance.now() - start) / 1000;
latencies.sort((a, b) => a - b);
console.log(
  `delivered ${received}/${total} in ${elapsed.toFixed(1)} s; end-to-end latency p50 ${percentile(latencies, 50).toFixed(1)} ms, ` +
    `p90 ${percentile(latencies, 90).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms`,
);
await pool.close();
await server.stop();
await db?.drop();
receiver.close();
