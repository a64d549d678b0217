// Playbooks and the inbox (issue 54's table; docs/playbooks.md): POST health score in an account
// with 10 enabled playbooks against one with none, A B A B in one run (random factors over 1,000
// customers with owners and renewals, so bands move and tasks open), and the inbox page of one
// person among 100,000 tasks of the account. Both backends.
// Usage: node bench/playbooks.ts [--backend sqlite|postgres|both] [--seconds 5] [--tasks 100000]
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { sqlitePath } from '../src/store/open.ts';
import { type Backend, createTestDatabase, POSTGRES_URL, type TestDatabase } from '../test/helpers/stores.ts';
import { callApi, median, percentile, preparedLoad, serveDatabase, settleAfterLoad } from './lib.ts';

const { values } = parseArgs({
  options: {
    backend: { type: 'string', default: POSTGRES_URL ? 'both' : 'sqlite' },
    seconds: { type: 'string', default: '5' },
    tasks: { type: 'string', default: '100000' },
  },
});
const SECONDS = Number(values.seconds);
const TASKS = Number(values.tasks);
const CUSTOMERS = 1000;
const PEOPLE = 50;
const DAY = 86_400_000;
const backends: Backend[] = values.backend === 'both' ? ['sqlite', 'postgres'] : [values.backend as Backend];
const rows: string[] = [];

const api = (url: string, key: string, method: string, path: string, body?: unknown) =>
  callApi(url, `Bearer ${key}`, method, path, body);

const PLAYBOOKS = [
  ...(['healthy', 'at_risk', 'critical'] as const).map((status) => ({
    name: `Entered ${status}`,
    trigger: { type: 'status_entered', status },
    task: { title: `Look at it: ${status}`, due_in_days: 2 },
  })),
  { name: 'Dropped', trigger: { type: 'score_dropped' }, task: { title: 'Ask why' } },
  ...[30, 90, 180].map((days) => ({
    name: `Renewal in ${days}`,
    trigger: { type: 'renewal_approaching', days, statuses: ['at_risk', 'critical'] },
    task: { title: `Renewal in ${days} days` },
  })),
  ...['logins', 'tickets', 'stripe_payment_failed'].map((metric) => ({
    name: `Metric ${metric}`,
    trigger: { type: 'metric_threshold', metric, aggregate: 'count', window_days: 7, op: 'gte', value: 1 },
    task: { title: `Check ${metric}` },
  })),
];

async function seedAccount(url: string, key: string, playbooks: boolean): Promise<void> {
  const now = Date.now();
  const customers = Array.from({ length: CUSTOMERS }, (_, i) => ({
    customer_id: `c${i}`,
    name: `c${i}`,
    email: `ops@c${i}.test`,
    owner: `p${i % PEOPLE}@example.com`,
    renewal_at: new Date(now + ((i % 365) + 1) * DAY).toISOString(),
  }));
  await api(url, key, 'POST', '/api/customers/batch', { customers });
  await api(url, key, 'PATCH', '/api/settings/health-score/alerts', { drop: { delta: 0.3, days: 7 } });
  if (playbooks) for (const p of PLAYBOOKS) await api(url, key, 'POST', '/api/playbooks', p);
}

/** Random factor writes over the account's customers, by autocannon in a process of its own; answers req/s. */
async function writes(url: string, key: string): Promise<number> {
  const requests = Array.from({ length: 4000 }, (_, i) => ({
    method: 'POST',
    path: `/api/customers/c${(i * 7919) % CUSTOMERS}/health-score`,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ factors: { usage: ((i * 37) % 100) / 100, support: ((i * 53) % 100) / 100 } }),
  }));
  const load = await preparedLoad({ url, connections: 8, duration: SECONDS, requests });
  return (await load.run()).requests.average;
}

/** TASKS tasks spread over the account's customers and PEOPLE assignees, written straight into the database. */
async function seedTasks(db: TestDatabase, accountName: string): Promise<void> {
  const now = Date.now();
  const actor = JSON.stringify({ type: 'key', id: 'key_bench', label: 'bench' });
  const select = (n: string) => `'${'task_bench'}' || ${n}, 'c' || (${n} % ${CUSTOMERS}), 'Task ' || ${n}, '',
    CASE WHEN ${n} % 5 = 0 THEN 'done' ELSE 'open' END,
    'p' || (${n} % ${PEOPLE}) || '@example.com', 'p' || (${n} % ${PEOPLE}) || '@example.com',
    CASE WHEN ${n} % 3 = 0 THEN NULL ELSE ${now} + (${n} % 90) * ${DAY} END, NULL, NULL, NULL,
    ${now}, ${now}, CASE WHEN ${n} % 5 = 0 THEN ${now} - ${n} ELSE NULL END, '${actor}',
    CASE WHEN ${n} % 5 = 0 THEN -(${now} - ${n}) WHEN ${n} % 3 = 0 THEN ${Number.MAX_SAFE_INTEGER}
      ELSE ${now} + (${n} % 90) * ${DAY} END`;
  const columns = `account_id, id, customer_id, title, body, status, assignee, assignee_key, due_at, snoozed_until,
    playbook_id, trigger_key, created_at, updated_at, done_at, created_by, sort`;
  if (db.url) {
    const sql = postgres(db.url, { onnotice: () => {} });
    await sql.unsafe(`INSERT INTO tasks (${columns})
      SELECT a.id, ${select('n')} FROM accounts a, generate_series(1::bigint, ${TASKS}) n WHERE a.name = '${accountName}'`);
    await sql.end();
  } else {
    const conn = new DatabaseSync(sqlitePath(db.dir));
    conn.exec('PRAGMA busy_timeout = 10000');
    conn.exec(`WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${TASKS})
      INSERT INTO tasks (${columns})
      SELECT a.id, ${select('n')} FROM accounts a, s WHERE a.name = '${accountName}'`);
    conn.exec('ANALYZE');
    conn.close();
  }
}

for (const backend of backends) {
  console.log(`${backend}:`);
  const db = await createTestDatabase(backend);
  const server = await serveDatabase(db, { VITALS_RATE_LIMIT: 'off' });
  try {
    // A: no playbooks (the server's own key's account); B: the same customers, 10 playbooks.
    const env = { ...process.env, VITALS_DATA_DIR: db.dir, ...(db.url ? { DATABASE_URL: db.url } : {}) };
    const { execFileSync } = await import('node:child_process');
    const keyB = execFileSync(
      process.execPath,
      ['src/cli.ts', 'keys', 'create', '--account', 'with-playbooks'],
      {
        env,
      },
    )
      .toString()
      .trim();
    await seedAccount(server.url, server.key, false);
    await seedAccount(server.url, keyB, true);
    await settleAfterLoad(db);
    const without: number[] = [];
    const withPlaybooks: number[] = [];
    for (let round = 0; round < 2; round++) {
      without.push(await writes(server.url, server.key));
      withPlaybooks.push(await writes(server.url, keyB));
    }
    const a = median(without);
    const b = median(withPlaybooks);
    const opened = (await api(server.url, keyB, 'GET', '/api/tasks?status=all&limit=100')).data.length;
    rows.push(
      `| ${backend} | POST health score, 10 playbooks ÷ none (A B A B) | ${b.toFixed(0)} ÷ ${a.toFixed(0)} req/s = ${(b / a).toFixed(2)} | ≥ 0.9 |`,
    );
    console.log(
      `  writes: none ${without.map((x) => x.toFixed(0))} with ${withPlaybooks.map((x) => x.toFixed(0))} req/s (tasks opened ≥ ${opened})`,
    );

    await seedTasks(db, 'default');
    await settleAfterLoad(db);
    const samples: number[] = [];
    for (let i = 0; i < 1100; i++) {
      const t0 = performance.now();
      await api(server.url, server.key, 'GET', `/api/tasks?assignee=p${i % PEOPLE}@example.com&limit=50`);
      if (i >= 100) samples.push(performance.now() - t0);
    }
    const sorted = samples.sort((x, y) => x - y);
    rows.push(
      `| ${backend} | inbox page (50) of one person, ${TASKS.toLocaleString('en')} tasks in the account | p99 ${percentile(sorted, 99).toFixed(1)} ms (p50 ${percentile(sorted, 50).toFixed(1)}) | p99 < 20 ms |`,
    );
    console.log(
      `  inbox: p50 ${percentile(sorted, 50).toFixed(1)} p99 ${percentile(sorted, 99).toFixed(1)} ms`,
    );
  } finally {
    await server.stop();
    await db.drop();
  }
}
console.log('\n| backend | scenario | figure | target |');
console.log('|---|---|---|---|');
for (const row of rows) console.log(row);
