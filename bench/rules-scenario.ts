// What bench/rules.ts and bench/rules-copy.ts share: the 3 factor rules, the daily points they are
// derived from, the rule change and weights change both measure, and how a request is timed with
// score reads going on meanwhile, and the disk's floor under a durable write.

import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Store } from '../src/store/store.ts';
import { transaction } from '../test/helpers/transaction.ts';
import { cpuSeconds, openLoop, percentile, probeAtRate, probeDuring, type Server } from './lib.ts';
import { customerId } from './seed.ts';

const DAY = 86_400_000;

export const RULES = {
  engagement: {
    metric: 'logins',
    aggregate: 'sum',
    window_days: 30,
    scale: { type: 'linear', from: 0, to: 60 },
  },
  support_load: {
    metric: 'tickets',
    aggregate: 'avg',
    window_days: 30,
    scale: {
      type: 'steps',
      steps: [
        { min: 0, score: 1 },
        { min: 2, score: 0.6 },
        { min: 5, score: 0.2 },
      ],
    },
  },
  adoption: {
    metric: 'seats',
    aggregate: 'last',
    max_age_days: 30,
    scale: { type: 'linear', from: 0, to: 40 },
  },
};

/** The rule change measured: engagement on a new scale (a sum of ~60: a point leaving moves it). */
export const RULE_CHANGE = { ...RULES.engagement, scale: { type: 'linear', from: 0, to: 100 } };

/** A rule change that reads every customer's points again, as a first put does: a new window. */
export const WINDOW_CHANGE = { ...RULES.engagement, window_days: 29 };

/** The weights change measured. */
export const WEIGHTS_CHANGE = {
  weights: { usage: 0.2, support: 0.1, billing: 0.1, engagement: 0.3, support_load: 0.2, adoption: 0.1 },
};

/** Daily points of logins, tickets and seats over `days` for each of `n` customers, the newest an hour ago. */
export async function seedPoints(store: Store, accountId: string, n: number, days: number): Promise<void> {
  const now = Date.now() - 3_600_000;
  const PER_TX = 2000; // customers
  for (let i = 0; i < n; i += PER_TX) {
    await transaction(store, async (tx) => {
      const points = [];
      for (let j = i; j < Math.min(n, i + PER_TX); j++) {
        const customer = customerId(j);
        for (let d = 0; d < days; d++) {
          const at = now - d * DAY;
          points.push(
            { customerId: customer, metric: 'logins', at, value: (j + d) % 5 },
            { customerId: customer, metric: 'tickets', at, value: (j * 7 + d) % 4 },
            { customerId: customer, metric: 'seats', at, value: 5 + (j % 30) },
          );
        }
      }
      await tx.insertMetricPoints(accountId, points);
    });
  }
}

export async function send(
  server: Server,
  headers: Record<string, string>,
  method: string,
  path: string,
  body: unknown,
): Promise<void> {
  const res = await fetch(server.url + path, { method, headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
}

/**
 * Runs `request` while the paths `path` gives are read: `reads` a second, or 4 clients reading as
 * fast as they are answered ('closed'). Its wall time, the reads' p99, and the CPU seconds it cost
 * the server and the machine (the readers' and the database's included).
 */
export async function timedWithReads(
  server: Server,
  headers: Record<string, string>,
  request: () => Promise<void>,
  path: () => string,
  reads: number | 'closed',
) {
  const cpu0 = cpuSeconds(server.proc.pid as number);
  const t0 = performance.now();
  let ms = 0;
  const work = async () => {
    await request();
    ms = performance.now() - t0;
  };
  const { latencies } =
    reads === 'closed'
      ? await probeDuring(work, server.url, path, headers)
      : await probeAtRate(work, server.url, path, headers, reads);
  const cpu1 = cpuSeconds(server.proc.pid as number);
  const sorted = [...latencies].sort((a, b) => a - b);
  const cpu = `CPU ${(cpu1.process - cpu0.process).toFixed(1)} s server, ${(cpu1.machine - cpu0.machine).toFixed(1)} s machine`;
  return { ms, p99: percentile(sorted, 99), reads: sorted.length, cpu };
}

/**
 * A PostgreSQL database made ready to be timed: its dead rows vacuumed and its statistics taken,
 * then the vacuum's own writes checkpointed, so neither happens during the measured work. Two
 * statements: VACUUM cannot share a statement's implicit transaction.
 */
export async function vacuumAndCheckpoint(raw: RawSql): Promise<void> {
  await raw.exec('VACUUM ANALYZE');
  await raw.exec('CHECKPOINT');
}

/** SQL against the server's database from outside it (bench/rules.ts's rawSql, or a postgres.js pool's). */
export interface RawSql {
  exec(text: string): Promise<void>;
  count(text: string): Promise<number>;
}

/** SQL against a SQLite database file from outside the server, which may have it open too. */
export function sqliteRaw(path: string): RawSql & { close(): Promise<void> } {
  const conn = new DatabaseSync(path);
  // A page cache the size of the data (SQLite's default is 2 MB): the time-passing UPDATE of
  // bench/rules.ts moves every point's key, and at 9,000,000 points each statement of it
  // otherwise waited on reads.
  conn.exec('PRAGMA busy_timeout = 30000; PRAGMA cache_size = -2000000');
  return {
    exec: async (text) => {
      conn.exec(text);
    },
    count: async (text) => Number((conn.prepare(text).get() as { n: number }).n),
    close: async () => conn.close(),
  };
}

/**
 * Every point of a SQLite database no process has open `ms` older, by a copy of the table in key
 * order: 24 s for 9,000,000 points, against 34 s for bench/rules.ts's UPDATE of the key 2,000
 * customers at a time.
 */
export function movePointsBack(path: string, ms: number): void {
  const conn = new DatabaseSync(path);
  try {
    const ddl = (sql: string) =>
      conn
        .prepare(sql)
        .all()
        .map((r) => String(r.sql));
    const [table] = ddl("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'metric_points'");
    const indexes = ddl(
      "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'metric_points' AND sql IS NOT NULL",
    );
    if (!table) throw new Error(`${path} has no metric_points`);
    conn.exec('PRAGMA cache_size = -2000000; BEGIN');
    conn.exec(table.replace('metric_points', 'metric_points_moved'));
    conn.exec(`INSERT INTO metric_points_moved SELECT account_id, customer_id, metric, at - ${ms}, value
      FROM metric_points ORDER BY account_id, customer_id, metric, at`);
    conn.exec('DROP TABLE metric_points; ALTER TABLE metric_points_moved RENAME TO metric_points');
    for (const index of indexes) conn.exec(index);
    conn.exec('COMMIT; PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    conn.close();
  }
}

/**
 * The rescore job's scenario once time has passed (the points already moved back): every customer
 * made due now, and the time until the server's job (VITALS_RESCORE_INTERVAL 1s) has taken them
 * all, timed by `timed` (reads meanwhile); with the number of customers whose score moved.
 */
export async function jobOverDue<T>(raw: RawSql, timed: (request: () => Promise<void>) => Promise<T>) {
  const start = Date.now();
  await raw.exec(`UPDATE rederive_due SET due_at = ${start}`);
  const job = await timed(async () => {
    // Whether any is left, by the index on due_at: a count here cost PostgreSQL half a core.
    const left = `SELECT COUNT(*) AS n FROM (SELECT 1 FROM rederive_due WHERE due_at <= ${start} LIMIT 1) x`;
    while ((await raw.count(left)) > 0) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  const moved = await raw.count(`SELECT COUNT(*) AS n FROM score_history WHERE reason = 'time_passed'`);
  return { job, moved };
}

/**
 * One metric write at a time, at a fixed 200 a second (open loop: a write every 5 ms whatever the
 * answers) to customers spread over the `n`, each moving its customer's score: 200 writes (1 s)
 * to warm the server up, then 2,000 (10 s) measured. A server's first writes wait on code and
 * plans not yet compiled (on PostgreSQL the first 30 to 80 of them took 30 to 150 ms, which alone
 * made the p99), so those are reported apart: `steady`, the 2,000 measured, and `first`, the
 * warm-up's, each sorted.
 */
export async function metricWrites(server: Server, headers: Record<string, string>, n: number) {
  const WARM_UP = 200;
  const first: number[] = [];
  const steady: number[] = [];
  await openLoop(
    200,
    async (i) => {
      const start = performance.now();
      // Seats, which the `last` rule adoption reads: each write moves its customer's score, with
      // its history, events and due time. (Logins moved none: every customer's 30-day sum is 60,
      // the top of engagement's scale, so a write read the rules and wrote only the point.)
      await send(server, headers, 'POST', `/api/customers/${customerId((i * 7919) % n)}/metrics`, {
        values: { seats: 1 + (i % 40) },
      });
      (i < WARM_UP ? first : steady).push(performance.now() - start);
    },
    (i) => i < WARM_UP + 2000,
    'sent',
  );
  const sort = (list: number[]) => list.sort((a, b) => a - b);
  return { first: sort(first), steady: sort(steady) };
}

/** metricWrites' latencies as a figure: the measured writes' p50 and p99, then the warm-up's. */
export function writesFigure({ first, steady }: Awaited<ReturnType<typeof metricWrites>>): string {
  const at = (list: number[], p: number) => percentile(list, p).toFixed(1);
  return `p50 ${at(steady, 50)} ms, p99 ${at(steady, 99)} ms (the warm-up's: p50 ${at(first, 50)}, p99 ${at(first, 99)} ms)`;
}

/**
 * The disk's floor under metricWrites, measured on the same machine right after them: 2,000 bare
 * one-row commits, one at a time at 200 a second, each as durable as a write of Vitals. On
 * PostgreSQL an INSERT in its own transaction, in a table of its own on the same database
 * (`raw`); on SQLite a database of its own in the same directory (`dir`), in WAL mode with
 * synchronous = FULL as Vitals' writer. A write of Vitals waits for the same flush of the log, so
 * its p99 is never below this one's: on a disk whose flushes stall, no code meets a target under it.
 */
export async function commitFloor(target: { raw: RawSql } | { dir: string }): Promise<string> {
  let commit: (i: number) => Promise<void>;
  let close = async () => {};
  if ('raw' in target) {
    await target.raw.exec(
      'DROP TABLE IF EXISTS bench_commit_floor; CREATE TABLE bench_commit_floor (i integer)',
    );
    commit = (i) => target.raw.exec(`INSERT INTO bench_commit_floor VALUES (${i})`);
    close = () => target.raw.exec('DROP TABLE bench_commit_floor');
  } else {
    const path = join(target.dir, 'commit-floor.db');
    const conn = new DatabaseSync(path);
    conn.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; CREATE TABLE floor (i INTEGER)');
    const insert = conn.prepare('INSERT INTO floor VALUES (?)');
    commit = async (i) => {
      insert.run(i);
    };
    close = async () => {
      conn.close();
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    };
  }
  const times = await openLoop(200, commit, (i) => i < 2000, 'sent');
  await close();
  times.sort((a, b) => a - b);
  const at = (p: number) => percentile(times, p).toFixed(1);
  return `p50 ${at(50)} ms, p99 ${at(99)} ms, p99.9 ${at(99.9)} ms, max ${at(100)} ms`;
}

/**
 * The database's own floor under a rule change on PostgreSQL: the rows a rule change over every
 * scored customer writes, written by the database alone, in one transaction, a page of 1,000 at
 * a time as Vitals writes them — each score updated (its factors and inputs sent again as text,
 * parsed as Vitals' are), a history entry and a `score.updated` event for each — with nothing
 * computed, sent or parsed by Vitals, and no trend rollup. A lower bound for any code over this
 * schema: the rule change's time over this one is what Vitals adds. Timed with the machine's CPU
 * seconds; run on a copy after vacuumAndCheckpoint, as the change itself is.
 */
export async function rescoreFloor(raw: RawSql): Promise<string> {
  const cpu0 = cpuSeconds(process.pid).machine;
  const t0 = performance.now();
  await raw.exec(`DO $$
    DECLARE
      acct text := (SELECT account_id FROM health_scores LIMIT 1);
      after text := '';
      last text;
    BEGIN
      LOOP
        WITH page AS (
          SELECT customer_id FROM health_scores WHERE account_id = acct AND customer_id > after
          ORDER BY customer_id LIMIT 1000
        ), updated AS (
          UPDATE health_scores h SET score = h.score * 0.97,
            band = CASE WHEN h.score * 0.97 >= 0.7 THEN 2 WHEN h.score * 0.97 >= 0.4 THEN 1 ELSE 0 END,
            factors = h.factors::text::json, inputs = h.inputs::text::json,
            version = h.version + 1, updated_at = h.updated_at + 1
          FROM page p WHERE h.account_id = acct AND h.customer_id = p.customer_id
          RETURNING h.customer_id, h.score, h.band, h.factors, h.inputs, h.version, h.updated_at
        ), history AS (
          INSERT INTO score_history (account_id, customer_id, version, score, status, factors, reason,
            created_at, weights, inputs)
          SELECT acct, customer_id, version, score, 'healthy', factors::text::json, 'rules_changed', updated_at,
            '{"usage":0.2,"support":0.1,"billing":0.1,"engagement":0.3,"support_load":0.2,"adoption":0.1}'::json,
            inputs::text::json
          FROM updated
        ), events AS (
          INSERT INTO events (id, account_id, type, data, created_at)
          SELECT 'evt_floor_' || customer_id || '_' || version, acct, 'score.updated',
            json_build_object('customer_id', customer_id, 'health_score', score, 'previous_score', score / 0.97,
              'factors', factors, 'updated_at', updated_at, 'status', 'healthy')::text::json,
            updated_at
          FROM updated ORDER BY customer_id
        )
        SELECT max(customer_id) INTO last FROM page;
        EXIT WHEN last IS NULL;
        after := last;
      END LOOP;
    END $$`);
  const ms = performance.now() - t0;
  const cpu = cpuSeconds(process.pid).machine - cpu0;
  return `${(ms / 1000).toFixed(2)} s (CPU ${cpu.toFixed(1)} s machine)`;
}
