// The book at scale (docs/api.md, "Customers" and "Filters"): 100,000 customers with an owner (one
// of 20), an ARR, a renewal date and one score each, 5% churned, seeded through the API (the
// customers and scores batches, so the same script seeds a Vitals of any version: `--no-book`
// leaves the book fields out, for a Vitals without them). Then, against one real Vitals process
// as shipped, each scenario is timed over repeated requests, the scenarios interleaved round by
// round so that a slow moment of the machine falls on all of them alike; the figures are the p50
// and p99 of each, and the book's scenarios as a ratio to the default list page and the summary
// measured in the same run.
// Usage: node bench/book.ts [--customers 100000] [--runs 200] [--backend sqlite|postgres|both] [--no-book]
import { parseArgs } from 'node:util';
import { type Backend, createTestDatabase, POSTGRES_URL } from '../test/helpers/stores.ts';
import { median, percentile, serveDatabase, settleAfterLoad } from './lib.ts';
import { customerId } from './seed.ts';

const { values } = parseArgs({
  options: {
    customers: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '200' },
    backend: { type: 'string', default: POSTGRES_URL ? 'both' : 'sqlite' },
    'no-book': { type: 'boolean', default: false },
  },
});
const N = Number(values.customers);
const RUNS = Number(values.runs);
const BOOK = !values['no-book'];
const backends: Backend[] = values.backend === 'both' ? ['sqlite', 'postgres'] : [values.backend as Backend];
const OWNERS = Array.from({ length: 20 }, (_, i) => `csm${i}@example.com`);
const DAY = 86_400_000;

/** A repeatable pseudo-random number in [0, 1) for (customer, k). */
const noise = (i: number, k: number) => {
  const x = Math.sin(i * 12.9898 + k * 78.233) * 43758.5453;
  return x - Math.floor(x);
};

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${text.slice(0, 300)}`);
  if (text.includes('"error"')) throw new Error(`${url}: an item was refused: ${text.slice(0, 300)}`);
}

async function seed(base: string, headers: Record<string, string>): Promise<void> {
  for (let i = 0; i < N; i += 1000) {
    const customers = [];
    const scores = [];
    for (let j = i; j < Math.min(N, i + 1000); j++) {
      const book = BOOK
        ? {
            owner: OWNERS[j % OWNERS.length],
            arr: Math.round(noise(j, 1) * 200_000_00) / 100,
            renewal_at: new Date(Date.now() + Math.floor(noise(j, 2) * 365) * DAY).toISOString(),
            lifecycle: noise(j, 3) < 0.05 ? 'churned' : 'active',
          }
        : {};
      customers.push({
        customer_id: customerId(j),
        name: `Customer ${j}`,
        email: `c${j}@example.com`,
        metadata: { plan: j % 3 === 0 ? 'pro' : 'basic' },
        ...book,
      });
      scores.push({ customer_id: customerId(j), factors: { usage: noise(j, 4), support: noise(j, 5) } });
    }
    await post(`${base}/api/customers/batch`, headers, { customers });
    await post(`${base}/api/health-scores/batch`, headers, { scores });
  }
}

const owner = encodeURIComponent(OWNERS[3] as string);
/** [name, path, what it is set against]: the bases first. */
const SCENARIOS: [string, string, string | null][] = [
  ['GET customer', `/api/customers/${customerId(Math.floor(N / 2))}`, null],
  ['list page of 100 (default)', '/api/health-scores?limit=100', null],
  ['summary', '/api/health-scores/summary', null],
  ...(BOOK
    ? ([
        ['summary of one owner', `/api/health-scores/summary?owner=${owner}`, 'summary'],
        ['summary grouped by owner', '/api/health-scores/summary?group_by=owner', 'summary'],
        [
          'list of one owner by -arr',
          `/api/health-scores?limit=100&owner=${owner}&sort=-arr`,
          'list page of 100 (default)',
        ],
        [
          'list of one owner by renewal_at',
          `/api/health-scores?limit=100&owner=${owner}&sort=renewal_at`,
          'list page of 100 (default)',
        ],
        ['list of all by -arr', '/api/health-scores?limit=100&sort=-arr', 'list page of 100 (default)'],
        [
          'renewals in the next 90 days',
          `/api/health-scores?limit=100&sort=renewal_at&renewal_before=${new Date(Date.now() + 90 * DAY).toISOString()}`,
          'list page of 100 (default)',
        ],
      ] as [string, string, string][])
    : []),
];

const rows: string[] = [];
for (const backend of backends) {
  const db = await createTestDatabase(backend);
  const server = await serveDatabase(db, { VITALS_RATE_LIMIT: 'off' });
  const headers = { authorization: `Bearer ${server.key}` };
  try {
    const t0 = performance.now();
    await seed(server.url, headers);
    console.log(`${backend}: seeded ${N} customers in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    await settleAfterLoad(db);
    const samples = new Map<string, number[]>(SCENARIOS.map(([name]) => [name, []]));
    for (let r = 0; r < RUNS + 5; r++) {
      for (const [name, path] of SCENARIOS) {
        const t = performance.now();
        const res = await fetch(server.url + path, { headers });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`${path}: ${res.status}`);
        if (r >= 5) samples.get(name)?.push(performance.now() - t);
      }
    }
    const stats = new Map(
      [...samples].map(([name, s]) => {
        const sorted = s.sort((a, b) => a - b);
        return [name, { p50: median(sorted), p99: percentile(sorted, 99) }];
      }),
    );
    for (const [name, , against] of SCENARIOS) {
      const s = stats.get(name) as { p50: number; p99: number };
      const base = against ? stats.get(against) : undefined;
      const ratio = base
        ? ` | ${(s.p50 / base.p50).toFixed(2)} (p50), ${(s.p99 / base.p99).toFixed(2)} (p99) of ${against}`
        : ' | —';
      const row = `| ${backend} | ${name} | ${s.p50.toFixed(2)} ms | ${s.p99.toFixed(2)} ms${ratio} |`;
      rows.push(row);
      console.log(row);
    }
  } finally {
    await server.stop();
    await db.drop();
  }
}
console.log(
  `\n| backend | scenario (${N} customers, ${RUNS} runs) | p50 | p99 | ratio |\n|---|---|---|---|---|\n${rows.join('\n')}`,
);
