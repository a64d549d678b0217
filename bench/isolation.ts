// No account slows another (issue 49; docs/operations.md, "The calibration threads"): another account's GET /api/customers p99, read
// at a fixed rate, at rest; while one account runs 8 different calibrations at once over 20,000
// outcomes of 50 factors; and while that account sends 4 bodies nested 4,190,000 levels deep
// (8 MiB, to POST /api/customers/batch, the route with the largest body limit) at once, with
// the server's resident memory before, at its peak, and after. Targets: p99 < 50 ms; RSS back
// within 100 MB of its baseline.
// Usage: node bench/isolation.ts [--customers 20000] [--factors 50] [--rate 50] [--rest 5]
//        [--backend sqlite|postgres|both]
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { newId } from '../src/domain/ids.ts';
import { createApiKey } from '../src/keys.ts';
import { seedJudgedOutcomes } from '../test/helpers/judged-outcomes.ts';
import { type Backend, createTestDatabase, POSTGRES_URL } from '../test/helpers/stores.ts';
import { peakRssMb, percentile, probeAtRate, rssMb, serveDatabase } from './lib.ts';

const { values } = parseArgs({
  options: {
    customers: { type: 'string', default: '20000' },
    factors: { type: 'string', default: '50' },
    rate: { type: 'string', default: '50' },
    rest: { type: 'string', default: '5' },
    backend: { type: 'string', default: POSTGRES_URL ? 'both' : 'sqlite' },
  },
});
const N = Number(values.customers);
const FACTORS = Number(values.factors);
const RATE = Number(values.rate);
const REST_S = Number(values.rest);
const backends: Backend[] = values.backend === 'both' ? ['sqlite', 'postgres'] : [values.backend as Backend];
const DEPTH = 4_190_000;

const stats = (latencies: number[]) => {
  const sorted = [...latencies].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${(sorted.at(-1) ?? Number.NaN).toFixed(1)} ms (${sorted.length} GETs)`;
};

const rows: string[] = [];
for (const backend of backends) {
  const db = await createTestDatabase(backend);
  const store = db.open();
  await store.migrate();
  const a = await store.ensureAccount('default', Date.now());
  const t0 = performance.now();
  await seedJudgedOutcomes(store, a.id, { customers: N, factors: FACTORS });
  const other = await createApiKey(store, 'other', newId.apiKey(), { scope: 'read' });
  await seedJudgedOutcomes(store, other.account.id, { customers: 1000, factors: 3, prefix: 'b' });
  console.log(
    `${backend}: seeded ${N} outcomes of ${FACTORS} factors in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  await store.close();
  const server = await serveDatabase(db, { VITALS_RATE_LIMIT: 'off' });
  const key = server.key;
  const pid = server.proc.pid as number;
  const attacker = { authorization: `Bearer ${key}` };
  const reader = { authorization: `Bearer ${other.key}` };
  const probe = <T>(work: () => Promise<T>) =>
    probeAtRate(work, server.url, () => '/api/customers?limit=100', reader, RATE);
  const row = (scenario: string, figure: string, target: string) => {
    rows.push(`| ${backend} | ${scenario} | ${figure} | ${target} |`);
    console.log(`  ${scenario}: ${figure} (target ${target})`);
  };
  try {
    // Warm: the key caches, the statements, a calibration thread.
    await fetch(`${server.url}/api/customers?limit=100`, { headers: reader });
    await (await fetch(`${server.url}/api/health-scores/calibration`, { headers: reader })).arrayBuffer();

    const rest = await probe(() => sleep(REST_S * 1000));
    row("another account's GET /api/customers at rest", stats(rest.latencies), '—');

    const c0 = performance.now();
    const calibrations = await probe(() =>
      Promise.all(
        Array.from({ length: 8 }, async (_, h) => {
          const res = await fetch(`${server.url}/api/health-scores/calibration?horizon_days=${h}`, {
            headers: attacker,
          });
          await res.arrayBuffer();
          if (!res.ok) throw new Error(`calibration: ${res.status}`);
        }),
      ),
    );
    const seconds = ((performance.now() - c0) / 1000).toFixed(1);
    row(
      `the same while one account runs 8 calibrations at once (${N} × ${FACTORS}; all answered in ${seconds} s)`,
      stats(calibrations.latencies),
      'p99 < 50 ms',
    );

    const body = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
    const baseline = rssMb(pid);
    const statuses: number[] = [];
    const nested = await probe(() =>
      Promise.all(
        Array.from({ length: 4 }, async () => {
          const res = await fetch(`${server.url}/api/customers/batch`, {
            method: 'POST',
            headers: { ...attacker, 'content-type': 'application/json' },
            body,
          });
          await res.arrayBuffer();
          statuses.push(res.status);
        }),
      ),
    );
    const after = rssMb(pid);
    await sleep(5000); // the server's collector runs when it will; nothing to await from here
    const settled = rssMb(pid);
    row(
      `the same while one account sends 4 bodies nested ${DEPTH.toLocaleString('en')} deep at once (answers ${statuses.join(', ')})`,
      stats(nested.latencies),
      'p99 < 50 ms',
    );
    row(
      'server RSS around the nested bodies',
      `${baseline.toFixed(0)} MB before, peak so far ${peakRssMb(pid).toFixed(0)} MB, ${after.toFixed(0)} MB after, ${settled.toFixed(0)} MB 5 s later`,
      'within 100 MB of before',
    );
  } finally {
    await server.stop();
    await db.drop();
  }
}
console.log(`\n| backend | scenario | figure | target |\n|---|---|---|---|\n${rows.join('\n')}`);
