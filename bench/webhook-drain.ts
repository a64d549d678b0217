// How fast the outbox drains after bulk work: N scored customers, one webhook on
// customer.health_score.updated to a fast local receiver, then one weights change that moves
// every score (N events, N deliveries). Measured from the first delivery received to the last (the
// recompute commits a page at a time, so the drain starts before the change is answered); the
// server runs as shipped (`npm start`), in its own process.
//   ./node_modules/.bin/node bench/webhook-drain.ts [--customers 20000] [--backend sqlite|postgres] [--probe]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { customerId, dataset } from './seed.ts';

const { values } = parseArgs({
  options: {
    customers: { type: 'string', default: '20000' },
    backend: { type: 'string', default: 'sqlite' },
    /** Give up after this many seconds without a delivery. */
    stall: { type: 'string', default: '60' },
    /** VITALS_WEBHOOK_CONCURRENCY_PER_ENDPOINT for the server (default: as shipped). */
    'per-endpoint': { type: 'string' },
    /** VITALS_WEBHOOK_CONCURRENCY_PER_ACCOUNT and VITALS_WEBHOOK_CONCURRENCY (as shipped unless given). */
    'per-account': { type: 'string' },
    concurrency: { type: 'string' },
    /** Also read customers (GET /api/customers/{id}, 4 at a time) while the outbox drains: their latency. */
    probe: { type: 'boolean', default: false },
  },
});
const N = Number(values.customers);
const backend = values.backend === 'postgres' ? 'postgres' : 'sqlite';

let received = 0;
let firstAt = 0;
let lastAt = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.end('ok');
    received++;
    lastAt = performance.now();
    if (received === 1) firstAt = lastAt;
  });
});
receiver.listen(0, '127.0.0.1');
await new Promise((r) => receiver.once('listening', r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const perEndpoint = values['per-endpoint'];
const { db, server, headers } = await dataset(backend, N, true, {
  VITALS_RATE_LIMIT: 'off',
  ...(perEndpoint ? { VITALS_WEBHOOK_CONCURRENCY_PER_ENDPOINT: perEndpoint } : {}),
  ...(values['per-account'] ? { VITALS_WEBHOOK_CONCURRENCY_PER_ACCOUNT: values['per-account'] } : {}),
  ...(values.concurrency ? { VITALS_WEBHOOK_CONCURRENCY: values.concurrency } : {}),
});
const call = async (method: string, path: string, body: unknown) => {
  const res = await fetch(server.url + path, { method, headers, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
};
try {
  await call('POST', '/api/webhooks', { url: receiverUrl, events: ['customer.health_score.updated'] });
  const t0 = performance.now();
  await call('PATCH', '/api/settings/health-score/weights', {
    weights: { usage: 0.5, support: 0.3, billing: 0.2 },
  });
  const answered = performance.now();
  console.log(
    `${backend}: weights change over ${N} customers answered in ${((answered - t0) / 1000).toFixed(1)} s`,
  );
  // The reads a dashboard makes meanwhile: 4 readers, one request after another, until the drain ends.
  const latencies: number[] = [];
  let readErrors = 0;
  let reading = values.probe;
  const readers = Array.from({ length: values.probe ? 4 : 0 }, async (_, r) => {
    for (let i = r; reading; i += 4) {
      const t = performance.now();
      const res = await fetch(`${server.url}/api/customers/${customerId((i * 7919) % N)}`, { headers });
      await res.arrayBuffer();
      latencies.push(performance.now() - t);
      if (res.status !== 200) readErrors++;
    }
  });
  // Done when nothing has arrived for QUIET_MS (a customer whose score did not move has no event).
  const QUIET_MS = 3000;
  let lastReport = answered;
  const stallMs = Number(values.stall) * 1000;
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      const now = performance.now();
      if (now - lastReport > 5000) {
        lastReport = now;
        console.log(`  ${received} delivered, ${(received / ((now - answered) / 1000)).toFixed(0)}/s so far`);
      }
      if (received > 0 && now - lastAt > QUIET_MS) {
        clearInterval(check);
        resolve();
      } else if (now - Math.max(lastAt, answered) > stallMs) {
        clearInterval(check);
        reject(new Error(`nothing delivered for ${values.stall} s`));
      }
    }, 100);
  });
  reading = false;
  await Promise.all(readers);
  // The recompute commits a page at a time, so deliveries start before the change is answered: the
  // drain is timed from the first delivery to the last.
  const seconds = (lastAt - firstAt) / 1000;
  console.log(
    `${backend}: ${received} deliveries drained in ${seconds.toFixed(1)} s, first to last: ${Math.round(received / seconds)} deliveries/s (${((lastAt - t0) / 1000).toFixed(1)} s from the change sent to the last delivered; the first ${((firstAt - t0) / 1000).toFixed(1)} s after it was sent)`,
  );
  if (values.probe) {
    latencies.sort((a, b) => a - b);
    const q = (p: number) => (latencies[Math.floor(p * (latencies.length - 1))] ?? Number.NaN).toFixed(1);
    console.log(
      `  GET customer meanwhile: ${latencies.length} requests, p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms, errors ${readErrors}`,
    );
    if (readErrors > 0) process.exitCode = 1;
  }
} finally {
  await server.stop();
  await db.drop();
  receiver.close();
}
