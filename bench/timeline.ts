// A customer's timeline (issue 54's table; docs/api.md, "Timeline"): the first page (20) of a
// customer with 1,000 score versions, 200 notes and 100 tasks (half of them done), beside drops,
// playbook tasks, customer changes, outcomes and source messages, in an account of 2,000 other
// customers with 10 versions each; everything written through the API. Also, for comparison, a
// page from the middle (starting_after) and one type alone (status_changed). Both backends.
// Measured once the load has settled: VACUUM ANALYZE and a checkpoint (PostgreSQL), the WAL folded
// into the database (SQLite), then `--warmup` reads unmeasured. Right after the load, background
// work the load left (the checkpoint, the server's first job passes) lifts the first reads' p99.
// Usage: node bench/timeline.ts [--backend sqlite|postgres|both] [--requests 1000] [--warmup 1000]
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { sqlitePath } from '../src/store/open.ts';
import { type Backend, createTestDatabase, POSTGRES_URL, type TestDatabase } from '../test/helpers/stores.ts';
import { callApi, percentile, serveDatabase, settleAfterLoad } from './lib.ts';

const { values } = parseArgs({
  options: {
    backend: { type: 'string', default: POSTGRES_URL ? 'both' : 'sqlite' },
    requests: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '1000' },
  },
});
const REQUESTS = Number(values.requests);
const WARMUP = Number(values.warmup);
const VERSIONS = 1000;
const NOTES = 200;
const TASKS = 100;
const OTHERS = 2000;
const backends: Backend[] = values.backend === 'both' ? ['sqlite', 'postgres'] : [values.backend as Backend];
const rows: string[] = [];

/** The busy customer's story and the account around it, through the API. */
async function seed(url: string, key: string): Promise<void> {
  const api = (method: string, path: string, body?: unknown) =>
    callApi(url, `Bearer ${key}`, method, path, body);
  await api('PATCH', '/api/settings/health-score/alerts', { drop: { delta: 0.3, days: 7 } });
  await api('POST', '/api/playbooks', {
    name: 'Critical → call',
    trigger: { type: 'status_entered', status: 'critical' },
    task: { title: 'Call within 2 days', due_in_days: 2 },
    assignee: 'owner',
  });
  const others = Array.from({ length: OTHERS }, (_, i) => ({
    customer_id: `c${i}`,
    name: `c${i}`,
    email: `ops@c${i}.test`,
    owner: `p${i % 50}@example.com`,
  }));
  for (let i = 0; i < others.length; i += 1000) {
    await api('POST', '/api/customers/batch', { customers: others.slice(i, i + 1000) });
  }
  for (let round = 0; round < 10; round++) {
    for (let i = 0; i < OTHERS; i += 1000) {
      const scores = others.slice(i, i + 1000).map((c, j) => ({
        customer_id: c.customer_id,
        factors: { usage: ((round * 37 + j) % 100) / 100 },
      }));
      await api('POST', '/api/health-scores/batch', { scores });
    }
  }
  await api('POST', '/api/customers', {
    customer_id: 'busy',
    name: 'Busy',
    email: 'ops@busy.test',
    owner: 'ana@example.com',
  });
  const source = await api('POST', '/api/sources', { type: 'segment', name: 'Backend', trusted: true });
  const segment = `Basic ${Buffer.from(`${source.write_key}:`).toString('base64')}`;
  for (let v = 0; v < VERSIONS; v++) {
    await api('POST', '/api/customers/busy/health-score', { factors: { usage: ((v * 37) % 100) / 100 } });
    if (v % 5 === 0) await api('POST', '/api/customers/busy/notes', { body: `Note ${v}: talked to them.` });
    if (v % 10 === 0) {
      const task = await api('POST', '/api/customers/busy/tasks', {
        title: `Follow up ${v}`,
        assignee: 'ana@example.com',
      });
      if (v % 20 === 0) await api('PATCH', `/api/tasks/${task.id}`, { status: 'done' });
    }
    if (v % 50 === 0) {
      await api('PATCH', '/api/customers/busy', {
        owner: v % 100 === 0 ? 'bob@example.com' : 'ana@example.com',
        arr: v * 10,
      });
      await callApi(url, segment, 'POST', '/v1/batch', {
        batch: [{ type: 'track', context: { groupId: 'busy' }, event: 'Report Exported' }],
      });
    }
    if (v % 250 === 0) await api('POST', '/api/customers/busy/outcomes', { outcome: 'retained' });
  }
}

function figures(samples: number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((x, y) => x - y);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** `REQUESTS` reads of `path` one after another, after `warmup` unmeasured; the latencies in ms. */
async function measure(url: string, key: string, path: string, warmup: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < REQUESTS + warmup; i++) {
    const t0 = performance.now();
    await callApi(url, `Bearer ${key}`, 'GET', path);
    if (i >= warmup) samples.push(performance.now() - t0);
  }
  return samples;
}

/** After the load: its dirty pages written out (PostgreSQL's CHECKPOINT, SQLite's WAL folded in). */
async function checkpoint(db: TestDatabase): Promise<void> {
  if (db.url) {
    const sql = postgres(db.url, { onnotice: () => {} });
    await sql`CHECKPOINT`;
    await sql.end();
    return;
  }
  const conn = new DatabaseSync(sqlitePath(db.dir));
  conn.exec('PRAGMA busy_timeout = 10000; PRAGMA wal_checkpoint(TRUNCATE)');
  conn.close();
}

for (const backend of backends) {
  console.log(`${backend}:`);
  const db = await createTestDatabase(backend);
  const server = await serveDatabase(db, { VITALS_RATE_LIMIT: 'off', VITALS_INGEST_RATE: 'off' });
  try {
    const t0 = performance.now();
    await seed(server.url, server.key);
    await settleAfterLoad(db);
    await checkpoint(db);
    const api = (path: string) => callApi(server.url, `Bearer ${server.key}`, 'GET', path);
    const counts = {
      versions: (await api('/api/customers/busy/health-score/history?limit=1')).data[0].version,
      notes: 0,
      tasks: (await api('/api/tasks?customer_id=busy&status=all&limit=100&include_snoozed=true')).data.length,
    };
    for (let after = ''; ; ) {
      const page = await api(`/api/customers/busy/notes?limit=100${after}`);
      counts.notes += page.data.length;
      if (!page.has_more) break;
      after = `&starting_after=${page.data.at(-1).id}`;
    }
    console.log(`  seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s: ${JSON.stringify(counts)}`);
    const first = await api('/api/customers/busy/timeline');
    const middle = await api(
      `/api/customers/busy/timeline?limit=100&starting_after=${(await api('/api/customers/busy/timeline?limit=100&types=note')).data[60].id}`,
    );
    const scenarios: [string, string][] = [
      ['first page (20)', '/api/customers/busy/timeline'],
      ['a page from the middle (20)', `/api/customers/busy/timeline?starting_after=${middle.data[0].id}`],
      ['first page of status_changed alone', '/api/customers/busy/timeline?types=status_changed'],
    ];
    console.log(`  first page: ${first.data.map((e: { type: string }) => e.type).join(', ')}`);
    for (const [i, [name, path]] of scenarios.entries()) {
      const { p50, p99 } = figures(await measure(server.url, server.key, path, i === 0 ? WARMUP : 100));
      console.log(`  ${name}: p50 ${p50.toFixed(1)} p99 ${p99.toFixed(1)} ms`);
      rows.push(
        `| ${backend} | timeline, ${name}: ${VERSIONS.toLocaleString('en')} versions, ${NOTES} notes, ${TASKS} tasks | p99 ${p99.toFixed(1)} ms (p50 ${p50.toFixed(1)}) | ${name === 'first page (20)' ? 'p99 < 20 ms' : '—'} |`,
      );
    }
  } finally {
    await server.stop();
    await db.drop();
  }
}
console.log('\n| backend | scenario | figure | target |');
console.log('|---|---|---|---|');
for (const row of rows) console.log(row);
