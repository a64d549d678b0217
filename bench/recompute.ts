// Recomputation after a weights change: N stored scores, one PATCH, wall time of the request.
// Usage: node bench/recompute.ts [--scores 100000] [--runs 3]
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { scoreFactors } from '../src/domain/health.ts';
import { buildApp } from '../src/http/app.ts';
import { createApiKey } from '../src/keys.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { tempDir } from '../test/helpers/app.ts';

const { values } = parseArgs({
  options: { scores: { type: 'string', default: '100000' }, runs: { type: 'string', default: '3' } },
});
const n = Number(values.scores);
const dir = tempDir();
const store = new SqliteStore({ path: join(dir, 'vitals.db') });
await store.migrate();
const { key, account } = await createApiKey(store, 'default');

const settings = await store.getSettings(account.id);
await store.transaction(async (tx) => {
  for (let i = 0; i < n; i += 1000) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) {
      const id = `cus_${String(j).padStart(7, '0')}`;
      const now = Date.now();
      await tx.insertCustomer(account.id, {
        id,
        name: id,
        email: `${id}@example.com`,
        metadata: {},
        createdAt: now,
        updatedAt: now,
      });
      const factors = { usage: (j % 97) / 97, support: (j % 89) / 89, billing: (j % 83) / 83 };
      batch.push(scoreFactors(id, null, factors, settings, now).record);
    }
    await tx.writeScores(account.id, batch, 'factors_updated');
  }
});

const app = await buildApp({
  store,
  config: { keyCacheTtlMs: 2000, logLevel: 'warn', webhook: { blockPrivate: false } },
});
const weightSets = [
  { usage: 0.5, support: 0.3, billing: 0.2 },
  { usage: 0.2, support: 0.3, billing: 0.5 },
];
const times: number[] = [];
for (let r = 0; r < Number(values.runs); r++) {
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
  console.log(`run ${r + 1}: recomputed ${n} scores in ${ms.toFixed(0)} ms`);
}
times.sort((a, b) => a - b);
console.log(
  `median: ${times[Math.floor(times.length / 2)]?.toFixed(0)} ms for ${n} scores (sqlite, synchronous=full)`,
);
await app.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
