// The morning reads at scale (issue 14): 100,000 customers with 30 history entries each (3M
// history rows, spread over the last 180 days), then the trend over 90 days, the movers, the
// summary (grouped by a metadata key), the score distribution and segment-filtered list pages, each timed over repeated
// requests against a real Vitals process (as shipped). Any non-2xx is an error. With one outcome
// per customer (issue 30) in the last 60 days, churned more often the lower its score, the
// calibration report at 0 and 90 days, and the server's peak resident memory after it.
// Usage: node bench/portfolio.ts [--customers 100000] [--entries 30] [--runs 20]
//        [--backend sqlite|postgres|both] [--keep (the seeded database, to look at queries)]
import { parseArgs } from 'node:util';
import { scoreFactors } from '../src/domain/health.ts';
import { newId } from '../src/domain/ids.ts';
import { DAY_MS } from '../src/domain/portfolio.ts';
import type { OutcomeRecord, ScoreRecord, Store } from '../src/store/store.ts';
import { type Backend, createTestDatabase, POSTGRES_URL } from '../test/helpers/stores.ts';
import { transaction } from '../test/helpers/transaction.ts';
import { median, peakRssMb, percentile, serveDatabase, settleAfterLoad } from './lib.ts';
import { customerId } from './seed.ts';

const { values } = parseArgs({
  options: {
    customers: { type: 'string', default: '100000' },
    entries: { type: 'string', default: '30' },
    runs: { type: 'string', default: '20' },
    backend: { type: 'string', default: POSTGRES_URL ? 'both' : 'sqlite' },
    keep: { type: 'boolean', default: false },
  },
});
const N = Number(values.customers);
const ENTRIES = Number(values.entries);
const RUNS = Number(values.runs);
const backends: Backend[] = values.backend === 'both' ? ['sqlite', 'postgres'] : [values.backend as Backend];

const PLANS = ['starter', 'team', 'business', 'enterprise'];
const REGIONS = ['emea', 'amer', 'apac', 'latam', 'anz'];
const SPAN_DAYS = 180;

/** A repeatable pseudo-random number in [0, 1) for (customer, entry). */
const noise = (i: number, k: number) => {
  const x = Math.sin(i * 12.9898 + k * 78.233) * 43758.5453;
  return x - Math.floor(x);
};

/** Customers, then `ENTRIES` rounds of scores for all of them, each round a few days later. */
async function seed(store: Store, accountId: string): Promise<void> {
  const settings = await store.getSettings(accountId);
  const start = Date.now() - SPAN_DAYS * DAY_MS;
  const CHUNK = 5000;
  for (let i = 0; i < N; i += CHUNK) {
    await transaction(store, async (tx) => {
      for (let j = i; j < Math.min(N, i + CHUNK); j++) {
        await tx.insertCustomer(accountId, {
          id: customerId(j),
          name: `Customer ${j}`,
          email: `c${j}@example.com`,
          metadata: { plan: PLANS[j % PLANS.length], region: REGIONS[j % REGIONS.length], seats: j % 50 },
          createdAt: start,
          updatedAt: start,
        });
      }
    });
  }
  let current: (ScoreRecord | null)[] = new Array(N).fill(null);
  for (let k = 0; k < ENTRIES; k++) {
    // Round k falls in the k-th of ENTRIES equal parts of the span (each customer at its own moment
    // in it), so the last round ends now and a 7-day window holds a round or two.
    const part = (SPAN_DAYS * DAY_MS) / ENTRIES;
    const next = [...current];
    for (let i = 0; i < N; i += CHUNK) {
      await transaction(store, async (tx) => {
        const records: ScoreRecord[] = [];
        for (let j = i; j < Math.min(N, i + CHUNK); j++) {
          const base = (j % 97) / 97;
          const usage = Math.min(1, Math.max(0, base + (noise(j, k) - 0.5) * 0.6));
          const at = Math.floor(start + (k + noise(j, k + 1000)) * part);
          const u = scoreFactors(customerId(j), current[j] ?? null, { usage, support: base }, settings, at);
          records.push(u.record);
          next[j] = u.record;
        }
        await tx.writeScores(accountId, records, 'factors_updated');
      });
    }
    current = next;
  }
  // One outcome per customer, in the last 60 days: churned with a chance that falls as its base
  // score rises, so the report has a signal to find.
  for (let i = 0; i < N; i += CHUNK) {
    const outcomes: OutcomeRecord[] = [];
    for (let j = i; j < Math.min(N, i + CHUNK); j++) {
      const base = (j % 97) / 97;
      outcomes.push({
        id: newId.outcome(),
        customerId: customerId(j),
        outcome: noise(j, 7777) < 0.6 - 0.5 * base ? ('churned' as const) : ('retained' as const),
        at: Date.now() - Math.floor(noise(j, 8888) * 60 * DAY_MS),
        note: null,
        createdAt: Date.now(),
      });
    }
    await transaction(store, (tx) => tx.insertOutcomes(accountId, outcomes));
  }
}

async function timed(url: string, headers: Record<string, string>): Promise<{ p50: number; p90: number }> {
  const samples: number[] = [];
  for (let r = 0; r < RUNS + 3; r++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url}: ${res.status}`);
    if (r >= 3) samples.push(performance.now() - t0);
  }
  const sorted = samples.sort((a, b) => a - b);
  return { p50: median(sorted), p90: percentile(sorted, 90) };
}

const SCENARIOS: [string, string, string][] = [
  ['trend over 90 days', '/api/health-scores/trend?days=90', '< 300 ms'],
  ['trend over 365 days', '/api/health-scores/trend?days=365', '—'],
  ['movers, 7 days, down', '/api/health-scores/movers?days=7&direction=down&limit=10', '< 200 ms'],
  ['movers, 30 days, up', '/api/health-scores/movers?days=30&direction=up&limit=10', '—'],
  ['summary grouped by metadata.plan', '/api/health-scores/summary?group_by=metadata.plan', '< 200 ms'],
  ['summary of a segment', '/api/health-scores/summary?metadata%5Bregion%5D=emea', '—'],
  ['summary', '/api/health-scores/summary', '—'],
  ['score distribution, 20 bins', '/api/health-scores/distribution', '< 200 ms'],
  ['score distribution of a segment', '/api/health-scores/distribution?metadata%5Bregion%5D=emea', '—'],
  [
    'customers list page of 100, one segment',
    '/api/customers?limit=100&metadata%5Bplan%5D=enterprise',
    '< 20 ms',
  ],
  [
    'health-score list page of 100, one segment',
    '/api/health-scores?limit=100&metadata%5Bplan%5D=enterprise',
    '< 20 ms',
  ],
  [
    'trend over 90 days of a segment (a quarter)',
    '/api/health-scores/trend?days=90&metadata%5Bplan%5D=team',
    '—',
  ],
  [
    'calibration, 100,000 outcomes, horizon 0',
    '/api/health-scores/calibration',
    '< 2 s SQLite, < 3 s PostgreSQL',
  ],
  ['calibration, horizon 90 days', '/api/health-scores/calibration?horizon_days=90', '—'],
  ['calibration of a segment', '/api/health-scores/calibration?horizon_days=90&metadata%5Bplan%5D=team', '—'],
];

/** Read once 1% of the customers have churned. */
const CHURNED: [string, string][] = [
  ['trend over 90 days, 1% churned (active customers)', '/api/health-scores/trend?days=90'],
  ['trend over 90 days of the churned', '/api/health-scores/trend?days=90&lifecycle=churned'],
  ['trend over 90 days of a segment, 1% churned', '/api/health-scores/trend?days=90&metadata%5Bplan%5D=team'],
  ['summary, 1% churned', '/api/health-scores/summary'],
];

const rows: string[] = [];
for (const backend of backends) {
  console.log(`${backend}: seeding ${N} customers with ${ENTRIES} history entries each`);
  const db = await createTestDatabase(backend);
  const store = db.open();
  await store.migrate();
  const account = await store.ensureAccount('default', Date.now());
  const t0 = performance.now();
  await seed(store, account.id);
  console.log(`  seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  await store.close();
  // Seeding rewrote every score 30 times in a minute: the figures are taken once PostgreSQL has caught up.
  await settleAfterLoad(db);
  const server = await serveDatabase(db, { VITALS_RATE_LIMIT: 'off' });
  const headers = { authorization: `Bearer ${server.key}` };
  try {
    for (const [name, path, target] of SCENARIOS) {
      const before = peakRssMb(server.proc.pid as number);
      const { p50, p90 } = await timed(server.url + path, headers);
      const peak = peakRssMb(server.proc.pid as number);
      const memory = name.startsWith('calibration')
        ? `, server peak RSS ${peak.toFixed(0)} MB (was ${before.toFixed(0)})`
        : '';
      const figure = `${p50.toFixed(1)} ms (p90 ${p90.toFixed(1)})${memory}`;
      rows.push(`| ${backend} | ${name} | ${figure} | ${target} |`);
      console.log(`  ${name}: ${figure} (target ${target})`);
    }
    // Then 1% of the customers churn, marked through the API as a team would: the active trend
    // is the rollup less the churned customers' own history (docs/api.md, "Segments, trends and movers").
    for (let i = 0; i < N; i += 100) {
      const res = await fetch(`${server.url}/api/customers/${customerId(i)}`, {
        method: 'PATCH',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ lifecycle: 'churned' }),
      });
      if (!res.ok) throw new Error(`churn ${customerId(i)}: ${res.status}`);
    }
    for (const [name, path] of CHURNED) {
      const { p50, p90 } = await timed(server.url + path, headers);
      const figure = `${p50.toFixed(1)} ms (p90 ${p90.toFixed(1)})`;
      rows.push(`| ${backend} | ${name} | ${figure} | — |`);
      console.log(`  ${name}: ${figure}`);
    }
  } finally {
    await server.stop();
    if (values.keep) console.log(`  kept the database: ${db.url ?? db.dir}`);
    else await db.drop();
  }
}
console.log(
  `\n| backend | scenario | median (p90) of ${RUNS} | target |\n|---|---|---|---|\n${rows.join('\n')}`,
);
