// GET /api/metrics/names' read on SQLite, whose reads run on the main thread: N customers × 3
// metrics × 30 points, then Store.metricNames three times, each with its time in all and the
// longest the main thread was busy without a turn of the event loop, in CPU time (a 1 ms timer's
// ticks, between which the thread's own CPU time is read: other processes on a busy machine do
// not inflate it as they do the wall clock). docs/api.md, "Metrics".
// Usage: node bench/metric-names.ts [--customers 100000]
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { createApiKey } from '../src/keys.ts';
import { createTestDatabase } from '../test/helpers/stores.ts';
import { customerId } from './seed.ts';

const { values } = parseArgs({ options: { customers: { type: 'string', default: '100000' } } });
const N = Number(values.customers);
const DAY = 86_400_000;

const db = await createTestDatabase('sqlite');
const setup = db.open();
await setup.migrate();
await createApiKey(setup, 'bench');
await setup.close();
// Seeded with one connection of its own, in one transaction: the API would take minutes.
const raw = new DatabaseSync(join(db.dir, 'vitals.db'));
const account = (raw.prepare('SELECT id FROM accounts').get() as { id: string }).id;
let started = performance.now();
raw.exec('BEGIN');
const customer = raw.prepare(
  "INSERT INTO customers (account_id, id, name, email, metadata, created_at, updated_at) VALUES (?, ?, 'n', 'n@example.com', '{}', 0, 0)",
);
const point = raw.prepare(
  'INSERT INTO metric_points (account_id, customer_id, metric, at, value) VALUES (?, ?, ?, ?, ?)',
);
const t0 = Date.now() - 30 * DAY;
for (let i = 0; i < N; i++) {
  customer.run(account, customerId(i));
  for (const metric of ['logins', 'seats', 'tickets']) {
    for (let d = 0; d < 30; d++) point.run(account, customerId(i), metric, t0 + d * DAY, d);
  }
}
raw.exec('COMMIT');
raw.close();
console.log(`seeded ${N} customers × 3 metrics × 30 points in ${Math.round(performance.now() - started)} ms`);

const store = db.open();
let longest = 0;
let last = process.threadCpuUsage();
const tick = setInterval(() => {
  const busy = process.threadCpuUsage(last);
  longest = Math.max(longest, (busy.user + busy.system) / 1000);
  last = process.threadCpuUsage();
}, 1);
for (let run = 1; run <= 3; run++) {
  longest = 0;
  last = process.threadCpuUsage();
  started = performance.now();
  const names = await store.metricNames(account);
  const ms = performance.now() - started;
  console.log(
    `run ${run}: ${names.map((n) => `${n.name} ${n.customers}/${n.points}`).join(', ')}; ${Math.round(ms)} ms in all, longest without a turn ${longest.toFixed(1)} ms of CPU`,
  );
}
clearInterval(tick);
await db.drop();
