// How fast the outbox drains after bulk work: N scored customers, one webhook on
// customer.health_score.updated to a fast local receiver, then one weights change that moves
// every score (N events, N deliveries). Measured from the weights change's answer to the last
// delivery received; the server runs as shipped (`npm start`), in its own process.
//   ./node_modules/.bin/node bench/webhook-drain.ts [--customers 20000] [--backend sqlite|postgres]
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { dataset } from './seed.ts';

const { values } = parseArgs({
  options: {
    customers: { type: 'string', default: '20000' },
    backend: { type: 'string', default: 'sqlite' },
    /** Give up after this many seconds without a delivery. */
    stall: { type: 'string', default: '60' },
    /** VITALS_WEBHOOK_CONCURRENCY_PER_ENDPOINT for the server (default: as shipped). */
    'per-endpoint': { type: 'string' },
  },
});
const N = Number(values.customers);
const backend = values.backend === 'postgres' ? 'postgres' : 'sqlite';

let received = 0;
let lastAt = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.end('ok');
    received++;
    lastAt = performance.now();
  });
});
receiver.listen(0, '127.0.0.1');
await new Promise((r) => receiver.once('listening', r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const perEndpoint = values['per-endpoint'];
const { db, server, headers } = await dataset(backend, N, true, {
  VITALS_RATE_LIMIT: 'off',
  ...(perEndpoint ? { VITALS_WEBHOOK_CONCURRENCY_PER_ENDPOINT: perEndpoint } : {}),
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
  const seconds = (lastAt - answered) / 1000;
  console.log(
    `${backend}: ${received} deliveries drained in ${seconds.toFixed(1)} s after the answer: ${Math.round(received / seconds)} deliveries/s`,
  );
} finally {
  await server.stop();
  await db.drop();
  receiver.close();
}
