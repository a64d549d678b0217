// Recomputation after a weights change: N stored scores, one PATCH, wall time of the request.
// Usage: node bench/recompute.ts [--scores 100000] [--runs 3] [--backend sqlite|postgres]
// SQLite runs as shipped (synchronous=full); PostgreSQL needs VITALS_TEST_POSTGRES_URL and starts
// from a vacuumed database.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { buildApp } from '../src/http/app.ts';
import { createApiKey } from '../src/keys.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../src/store/store.ts';
import { type Backend, createTestDatabase } from '../test/helpers/stores.ts';
import { cpuSeconds, median } from './lib.ts';
import { seed } from './seed.ts';

const { values } = parseArgs({
  options: {
    scores: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '3' },
    backend: { type: 'string', default: 'sqlite' },
  },
});
const n = Number(values.scores);
const backend = values.backend as Backend;
const db = await createTestDatabase(backend);
const store: Store =
  backend === 'sqlite'
    ? new SqliteStore({ path: join(db.dir, 'vitals.db'), synchronous: 'full' })
    : db.open();
await store.migrate();
const { key, account } = await createApiKey(store, 'default');
await seed(store, account.id, n, { scores: true });
if (db.url) {
  const raw = postgres(db.url, { onnotice: () => {} });
  await raw.unsafe('VACUUM ANALYZE');
  await raw.end();
}

const app = await buildApp({
  store,
  config: { keyCacheTtlMs: 2000, logLevel: 'warn', webhook: { blockPrivate: false } },
});
const weightSets = [
  { usage: 0.5, support: 0.3, billing: 0.2 },
  { usage: 0.2, support: 0.3, billing: 0.5 },
];
const times: number[] = [];
const cpus: { process: number; machine: number }[] = [];
for (let r = 0; r < Number(values.runs); r++) {
  const cpu0 = cpuSeconds(process.pid);
  const t0 = performance.now();
  const res = await app.inject({
    method: 'PATCH',
    url: '/api/settings/health-score/weights',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ weights: weightSets[r % 2] }),
  });
  const ms = performance.now() - t0;
  if (res.statusCode !== 200) throw new Error(`PATCH failed: ${res.statusCode} ${res.body}`);
  times.push(ms);
  const cpu1 = cpuSeconds(process.pid);
  const cpu = { process: cpu1.process - cpu0.process, machine: cpu1.machine - cpu0.machine };
  cpus.push(cpu);
  console.log(
    `run ${r + 1}: recomputed ${n} scores in ${ms.toFixed(0)} ms (CPU: this process ${cpu.process.toFixed(2)} s, machine ${cpu.machine.toFixed(2)} s)`,
  );
}
const how = backend === 'sqlite' ? 'sqlite, synchronous=full' : 'postgres';
console.log(
  `median: ${median(times).toFixed(0)} ms for ${n} scores (${how}); CPU medians: this process ${median(cpus.map((c) => c.process)).toFixed(2)} s, machine ${median(cpus.map((c) => c.machine)).toFixed(2)} s`,
);
await app.close();
if (backend === 'sqlite') await store.close();
await db.drop();
