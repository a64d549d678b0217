// Explanations (docs/scoring.md, "Why this score"): GET …/health-score/explanation of customers
// with 100 versions each, the current version and a random one of the history, from 4 clients
// looping one request after another for 10 s against a real Vitals process; p50 and p99.
// Usage: node bench/explain.ts [--customers 10000] [--explained 1000] [--versions 100]
//        [--backend sqlite|postgres|both]

import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { scoreFactors } from '../src/domain/health.ts';
import type { ScoreRecord } from '../src/store/store.ts';
import { type Backend, POSTGRES_URL } from '../test/helpers/stores.ts';
import { transaction } from '../test/helpers/transaction.ts';
import { percentile, probeDuring } from './lib.ts';
import { customerId, dataset } from './seed.ts';

const { values } = parseArgs({
  options: {
    customers: { type: 'string', default: '10000' },
    explained: { type: 'string', default: '1000' },
    versions: { type: 'string', default: '100' },
    backend: { type: 'string', default: POSTGRES_URL ? 'both' : 'sqlite' },
  },
});
const N = Number(values.customers);
const EXPLAINED = Number(values.explained);
const VERSIONS = Number(values.versions);
const backends: Backend[] = values.backend === 'both' ? ['sqlite', 'postgres'] : [values.backend as Backend];
const rand = (n: number) => Math.floor(Math.random() * n);
const rows: string[] = [];

for (const backend of backends) {
  console.log(`\n== ${backend} ==`);
  const { server, headers } = await dataset(backend, N, true, {}, async (store, accountId) => {
    const t0 = performance.now();
    // Versions 2…VERSIONS of the first EXPLAINED customers: new factor sets, a page of customers a transaction.
    const settings = await store.getSettings(accountId);
    let current: ScoreRecord[] = [];
    await transaction(store, async (tx) => {
      const found = await tx.scoresForUpdate(
        accountId,
        Array.from({ length: EXPLAINED }, (_, i) => customerId(i)),
      );
      current = [...found.values()].filter((s): s is ScoreRecord => s !== null);
    });
    for (let v = 2; v <= VERSIONS; v++) {
      const now = Date.now() + v;
      current = current.map(
        (s, i) =>
          scoreFactors(
            s.customerId,
            s,
            { usage: ((i + v) % 97) / 97, support: ((i * v) % 89) / 89 },
            settings,
            now,
          ).record,
      );
      await transaction(store, (tx) => tx.writeScores(accountId, current, 'factors_updated'));
    }
    console.log(
      `  ${EXPLAINED} customers to ${VERSIONS} versions in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
  });
  const base = `${server.url}/api/customers/`;
  for (const [scenario, path] of [
    ['the current version', () => `${customerId(rand(EXPLAINED))}/health-score/explanation`],
    [
      `a random version of ${VERSIONS}`,
      () => `${customerId(rand(EXPLAINED))}/health-score/explanation?version=${1 + rand(VERSIONS)}`,
    ],
  ] as const) {
    const { latencies } = await probeDuring(() => sleep(10_000), base, path, headers);
    latencies.sort((a, b) => a - b);
    const figure = `p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms (${latencies.length} requests, 4 clients)`;
    console.log(`  explanation, ${scenario}: ${figure}`);
    rows.push(`| ${backend} | explanation, ${scenario} | ${figure} | p99 < 10 ms |`);
  }
  await server.stop();
}

console.log('\n| backend | scenario | figure | target |\n|---|---|---|---|');
for (const row of rows) console.log(row);
