// node bench/write-floor.ts [--backend sqlite|postgres|both] [--seconds 10] [--rounds 3] [--n 100000]
//
// The floor of a score write on this machine (BENCHMARKS.md, "The write path against its floor"):
// POST …/health-score through a real Vitals process at 32 connections, against the same rows
// written straight to the same database by its own driver — raw node:sqlite, or `postgres` —
// in group commits of 32 (what 32 connections can have in flight at once), with the database's
// durable settings as Vitals has them. A B A B in one run; the ratio is Vitals over the floor.
//
// The rows of one write, as Vitals writes them for a key's POST: the customer and its score read
// (and locked), the score updated, a history version, a `health_score.updated` event and an audit
// entry; per group, the settings and rules read and the day's rollup added to once.

import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { type Backend, POSTGRES_URL } from '../test/helpers/stores.ts';
import { median } from './lib.ts';
import { customerId, dataset } from './seed.ts';

const { values } = parseArgs({
  options: {
    backend: { type: 'string', default: POSTGRES_URL ? 'both' : 'sqlite' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    n: { type: 'string', default: '100000' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const N = Number(values.n);
const CONNECTIONS = 32;
const backends: Backend[] = values.backend === 'both' ? ['sqlite', 'postgres'] : [values.backend as Backend];
const rand = (n: number) => Math.floor(Math.random() * n);

/** One write's values, shaped like the ones Vitals stores (sizes matter more than contents). */
function rowOf(accountId: string, version: number) {
  const usage = Math.random();
  const support = Math.random();
  const score = (usage + support) / 2;
  const band = score < 0.4 ? 0 : score < 0.7 ? 1 : 2;
  const status = ['critical', 'at_risk', 'healthy'][band] as string;
  const now = Date.now();
  const factors = JSON.stringify({ usage, support });
  const id = customerId(rand(N));
  const suffix = `${now.toString(36)}${Math.random().toString(36).slice(2, 12)}`;
  return {
    accountId,
    customerId: id,
    version,
    score,
    band,
    status,
    factors,
    now,
    weights: '{"usage":0.5,"support":0.5}',
    eventId: `evt_${suffix}`,
    event: JSON.stringify({
      customer_id: id,
      score,
      status,
      previous_score: 0.5,
      previous_status: 'at_risk',
      factors: { usage, support },
      version,
      updated_at: new Date(now).toISOString(),
    }),
    auditId: `aud_${suffix}`,
    requestId: `req-${suffix}`,
  };
}

/** Rows per second the raw driver writes in groups of CONNECTIONS for SECONDS. */
async function floorRate(group: (rows: ReturnType<typeof rowOf>[]) => Promise<void>, accountId: string) {
  let written = 0;
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  while (performance.now() < end) {
    const rows = Array.from({ length: CONNECTIONS }, () => rowOf(accountId, 0));
    await group(rows);
    written += rows.length;
  }
  return written / ((performance.now() - t0) / 1000);
}

function sqliteFloor(path: string) {
  const db = new DatabaseSync(path);
  // As Vitals' writer connection has it (src/store/sqlite/connection.ts): WAL, synchronous FULL.
  db.exec(
    'PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON',
  );
  const settings = db.prepare('SELECT * FROM account_settings WHERE account_id = ?');
  const rules = db.prepare('SELECT * FROM factor_rules WHERE account_id = ? ORDER BY factor');
  const lookup = db.prepare(
    `SELECT c.id, h.version FROM customers c LEFT JOIN health_scores h
       ON h.account_id = c.account_id AND h.customer_id = c.id WHERE c.account_id = ? AND c.id = ?`,
  );
  const update = db.prepare(
    `UPDATE health_scores SET score = ?, band = ?, factors = ?, version = ?, updated_at = ?, computed = NULL,
       override = NULL, inputs = NULL WHERE account_id = ? AND customer_id = ?`,
  );
  const history = db.prepare(
    `INSERT INTO score_history (account_id, customer_id, version, score, status, factors, reason, created_at,
       computed, override, weights, inputs) VALUES (?, ?, ?, ?, ?, ?, 'factors_updated', ?, NULL, NULL, ?, NULL)`,
  );
  const event = db.prepare(
    'INSERT INTO events (id, account_id, type, data, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const audit = db.prepare(
    `INSERT INTO audit_log (account_id, id, actor_type, actor_id, actor_label, action, object_id, at, request_id)
     VALUES (?, ?, 'key', 'key_bench', 'vk_bench…', 'health_score.updated', ?, ?, ?)`,
  );
  const day = db.prepare(
    `INSERT INTO score_days (account_id, day, slot, critical, at_risk, healthy, score_micros)
     VALUES (?, ?, 0, 0, 0, 0, ?) ON CONFLICT (account_id, day, slot) DO UPDATE SET
       score_micros = score_days.score_micros + excluded.score_micros`,
  );
  return {
    group: async (rows: ReturnType<typeof rowOf>[]) => {
      const accountId = (rows[0] as ReturnType<typeof rowOf>).accountId;
      db.exec('BEGIN IMMEDIATE');
      settings.get(accountId);
      rules.all(accountId);
      let micros = 0;
      for (const r of rows) {
        const found = lookup.get(accountId, r.customerId) as { version: number | null } | undefined;
        const version = Number(found?.version ?? 0) + 1;
        update.run(r.score, r.band, r.factors, version, r.now, accountId, r.customerId);
        history.run(accountId, r.customerId, version, r.score, r.status, r.factors, r.now, r.weights);
        event.run(r.eventId, accountId, 'health_score.updated', r.event, r.now);
        audit.run(accountId, r.auditId, r.customerId, r.now, r.requestId);
        micros += Math.round(r.score * 1e6);
      }
      day.run(accountId, Math.floor(Date.now() / 86_400_000), micros);
      db.exec('COMMIT');
    },
    close: () => db.close(),
  };
}

function postgresFloor(url: string) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  return {
    group: async (rows: ReturnType<typeof rowOf>[]) => {
      const accountId = (rows[0] as ReturnType<typeof rowOf>).accountId;
      const ids = rows.map((r) => r.customerId);
      await sql.begin(async (tx) => {
        // Sent together, as one pipeline: the reads and the lock of every customer of the group.
        const [, , locked] = await Promise.all([
          tx`SELECT * FROM account_settings WHERE account_id = ${accountId}`,
          tx`SELECT * FROM factor_rules WHERE account_id = ${accountId} ORDER BY factor`,
          tx`SELECT c.id, h.version FROM customers c LEFT JOIN health_scores h
               ON h.account_id = c.account_id AND h.customer_id = c.id
             WHERE c.account_id = ${accountId} AND c.id = ANY(${ids}) ORDER BY c.id FOR UPDATE OF c`,
        ]);
        const versions = new Map(locked.map((r) => [r.id as string, Number(r.version ?? 0)]));
        const seen = new Set<string>();
        const kept = rows.filter((r) => !seen.has(r.customerId) && seen.add(r.customerId));
        for (const r of kept) r.version = (versions.get(r.customerId) ?? 0) + 1;
        const col = <K extends keyof ReturnType<typeof rowOf>>(k: K) => kept.map((r) => r[k]);
        await Promise.all([
          tx`UPDATE health_scores h SET score = u.score, band = u.band, factors = u.factors::json,
               version = u.version, updated_at = u.at, computed = NULL, override = NULL, inputs = NULL
             FROM unnest(${col('customerId')}::text[], ${col('score')}::float8[], ${col('band')}::int2[],
               ${col('factors')}::text[], ${col('version')}::int4[], ${col('now')}::int8[])
               AS u(id, score, band, factors, version, at)
             WHERE h.account_id = ${accountId} AND h.customer_id = u.id`,
          tx`INSERT INTO score_history (account_id, customer_id, version, score, status, factors, reason,
               created_at, weights)
             SELECT ${accountId}, u.id, u.version, u.score, u.status, u.factors::json, 'factors_updated', u.at,
               u.weights::json
             FROM unnest(${col('customerId')}::text[], ${col('version')}::int4[], ${col('score')}::float8[],
               ${col('status')}::text[], ${col('factors')}::text[], ${col('now')}::int8[], ${col('weights')}::text[])
               AS u(id, version, score, status, factors, at, weights)`,
          tx`INSERT INTO events (id, account_id, type, data, created_at)
             SELECT u.id, ${accountId}, 'health_score.updated', u.data::json, u.at
             FROM unnest(${col('eventId')}::text[], ${col('event')}::text[], ${col('now')}::int8[]) AS u(id, data, at)`,
          tx`INSERT INTO audit_log (account_id, id, actor_type, actor_id, actor_label, action, object_id, at, request_id)
             SELECT ${accountId}, u.id, 'key', 'key_bench', 'vk_bench…', 'health_score.updated', u.object, u.at, u.req
             FROM unnest(${col('auditId')}::text[], ${col('customerId')}::text[], ${col('now')}::int8[],
               ${col('requestId')}::text[]) AS u(id, object, at, req)`,
          tx`INSERT INTO score_days (account_id, day, slot, critical, at_risk, healthy, score_micros)
             VALUES (${accountId}, ${Math.floor(Date.now() / 86_400_000)}, 0, 0, 0, 0,
               ${kept.reduce((s, r) => s + Math.round(r.score * 1e6), 0)})
             ON CONFLICT (account_id, day, slot) DO UPDATE SET score_micros = score_days.score_micros + excluded.score_micros`,
        ]);
      });
    },
    close: () => sql.end(),
  };
}

const results: string[] = [];
for (const backend of backends) {
  console.log(`\n== ${backend} ==`);
  const { db, server, headers } = await dataset(backend, N, true);
  const accountId = await (async () => {
    if (backend === 'sqlite') {
      const probe = new DatabaseSync(join(db.dir, 'vitals.db'), { readOnly: true });
      const id = (probe.prepare('SELECT id FROM accounts LIMIT 1').get() as { id: string }).id;
      probe.close();
      return id;
    }
    const sql = postgres(db.url as string, { max: 1 });
    const [row] = await sql`SELECT id FROM accounts LIMIT 1`;
    await sql.end();
    return (row as { id: string }).id;
  })();
  const floor =
    backend === 'sqlite' ? sqliteFloor(join(db.dir, 'vitals.db')) : postgresFloor(db.url as string);
  const ours: number[] = [];
  const theirs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const result = await autocannon({
      url: server.url,
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: [
        {
          method: 'POST',
          headers,
          setupRequest: (req) => ({
            ...req,
            path: `/api/customers/${customerId(rand(N))}/health-score`,
            body: JSON.stringify({ factors: { usage: Math.random(), support: Math.random() } }),
          }),
        },
      ],
    });
    if (result.errors > 0 || result.non2xx > 0)
      throw new Error(`${result.errors} errors, ${result.non2xx} non-2xx`);
    ours.push(result.requests.average);
    theirs.push(await floorRate(floor.group, accountId));
    console.log(
      `  round ${r + 1}: Vitals ${ours.at(-1)?.toFixed(0)} req/s, floor ${theirs.at(-1)?.toFixed(0)} rows/s`,
    );
  }
  await floor.close();
  await server.stop();
  await db.drop();
  const a = median(ours);
  const b = median(theirs);
  results.push(
    `| ${backend} | POST health score, ${CONNECTIONS} connections | ${a.toFixed(0)} req/s | ${b.toFixed(0)} rows/s | ${(a / b).toFixed(2)} | ≥ 0.5 |`,
  );
}
console.log('\n| backend | scenario | Vitals | floor | ratio | target |\n|---|---|---|---|---|---|');
for (const line of results) console.log(line);
