// A backfill survives its process (issue 52; docs/api.md, "Backfill"): a real server backfilling a
// year of 200 customers' daily points (two rules; half the customers scored already, half never)
// is SIGKILLed mid-way. Each customer is then either backfilled whole (the versions
// backfillScores gives it, numbered below its first, or from 1 with the last as its score) or
// untouched, and the run's progress counts exactly the customers done, in id order. A second server on the same
// database takes the run over once its lease (2 s) expires and ends it `done`; every history is
// then what one uninterrupted run gives, and the trend rollup agrees with the histories (each
// customer's changes counted once). On SQLite, and on PostgreSQL when it is configured.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { setTimeout as pause } from 'node:timers/promises';
import { backfillScores } from '../../src/domain/backfill.ts';
import { gatesOf, scoreFactors } from '../../src/domain/health.ts';
import { newId } from '../../src/domain/ids.ts';
import { DAY_MS, dayOf } from '../../src/domain/portfolio.ts';
import type { FactorRule, MetricPoint } from '../../src/domain/rules.ts';
import { STATUSES, type Status } from '../../src/domain/scoring.ts';
import type { HistoryRecord, ScoreRecord, Store } from '../../src/store/store.ts';
import { killAll, serverEnv, VitalsProcess } from '../helpers/server.ts';
import { ALL_BACKENDS, backendSkip, createTestDatabase, type TestDatabase } from '../helpers/stores.ts';
import { transaction } from '../helpers/transaction.ts';

const CUSTOMERS = 200;
const DAYS = 365;
/** SIGKILL once this many customers are done: past a few, far from all. */
const KILL_AFTER = 5;
const LEASE = '2s';

const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  killAll();
  for (const fn of cleanup) await fn();
});

/** Byte-wise in index order, as the run goes. */
const ids = Array.from({ length: CUSTOMERS }, (_, i) => `cus_${String(i).padStart(3, '0')}`);

/** Two rules, stored before any server runs: a sum over 30 days, and the last value. */
const RULES: FactorRule[] = [
  {
    factor: 'engagement',
    metric: 'logins',
    aggregate: 'sum',
    windowDays: 30,
    scale: { type: 'linear', from: 0, to: 60 },
    maxAgeDays: null,
    gate: null,
    updatedAt: 0,
  },
  {
    factor: 'adoption',
    metric: 'seats',
    aggregate: 'last',
    windowDays: null,
    scale: { type: 'linear', from: 0, to: 40 },
    maxAgeDays: 30,
    gate: null,
    updatedAt: 0,
  },
];

/** A value of 0–3 that moves from day to day, differently for each customer: its 30-day sum moves most days. */
const noise = (i: number, d: number) => (((i + 1) * 7919 + d * 104_729) % 1009) % 4;

/** Customer `i`'s points, one a day at noon over the DAYS days before `today`, by metric, ascending. */
function pointsOf(i: number, today: number): Map<string, MetricPoint[]> {
  const points = new Map<string, MetricPoint[]>([
    ['logins', []],
    ['seats', []],
  ]);
  for (let d = DAYS; d >= 1; d--) {
    const at = (today - d) * DAY_MS + DAY_MS / 2;
    points.get('logins')?.push({ at, value: noise(i, d) });
    points.get('seats')?.push({ at, value: 5 + ((i + Math.floor(d / 60)) % 30) });
  }
  return points;
}

/**
 * The customers, the rules and the points, written before any server runs (as a bench seeds), and
 * a posted score now for every other customer: those keep theirs and get a past below it, the
 * rest get a history from version 1 and its last version as their score.
 */
async function seed(db: TestDatabase, today: number): Promise<string> {
  const store = db.open();
  await store.migrate();
  const now = Date.now();
  const accountId = (await store.ensureAccount('default', now)).id;
  const settings = await store.getSettings(accountId);
  await transaction(store, async (tx) => {
    for (const rule of RULES) await tx.putFactorRule(accountId, { ...rule, updatedAt: now });
    for (const id of ids) {
      await tx.insertCustomer(accountId, {
        id,
        name: `Customer ${id}`,
        email: `${id}@example.com`,
        metadata: {},
        createdAt: now,
        updatedAt: now,
      });
    }
    const scored = ids.filter((_, i) => i % 2 === 0);
    await tx.writeScores(
      accountId,
      scored.map((id) => scoreFactors(id, null, { usage: 0.5 }, settings, now).record),
      'factors_updated',
    );
  });
  for (let start = 0; start < CUSTOMERS; start += 50) {
    await transaction(store, async (tx) => {
      const rows = [];
      for (let i = start; i < Math.min(CUSTOMERS, start + 50); i++) {
        for (const [metric, points] of pointsOf(i, today)) {
          for (const p of points) rows.push({ customerId: ids[i] as string, metric, ...p });
        }
      }
      await tx.insertMetricPoints(accountId, rows);
    });
  }
  return accountId;
}

const env = (db: TestDatabase, key: string) =>
  serverEnv({
    VITALS_DATA_DIR: db.dir,
    ...(db.url ? { DATABASE_URL: db.url } : {}),
    VITALS_API_KEY: key,
    VITALS_BACKFILL_LEASE: LEASE,
  });

/** A customer's whole history, oldest first. */
async function historyOf(store: Store, accountId: string, id: string): Promise<HistoryRecord[]> {
  const page = await store.listHistory(accountId, id, { limit: 10 * DAYS });
  assert.equal(page.hasMore, false);
  return page.data.toReversed();
}

const row = (version: number, s: Pick<HistoryRecord, 'score' | 'status' | 'factors'>, at: number) => ({
  version,
  score: s.score,
  status: s.status,
  factors: s.factors,
  at: new Date(at).toISOString(),
});

/**
 * What one uninterrupted run writes for each customer (backfillScores, numbered below its first
 * version), from the rules and settings stored and the points seeded. Every customer gets some,
 * so one backfilled is told from one untouched.
 */
async function expected(store: Store, accountId: string, from: number, today: number) {
  const rules = await store.listFactorRules(accountId);
  assert.equal(rules.length, RULES.length);
  const settings = await store.getSettings(accountId);
  const out = new Map<string, ReturnType<typeof row>[]>();
  for (const [i, id] of ids.entries()) {
    const first = (await historyOf(store, accountId, id)).find((h) => h.reason !== 'backfill');
    assert.equal(first !== undefined, i % 2 === 0, `${id} has a live version`);
    const records: ScoreRecord[] = backfillScores({
      customerId: id,
      rules,
      settings: { weights: settings.weights, thresholds: settings.thresholds, gates: gatesOf(rules) },
      points: pointsOf(i, today),
      fromDay: from,
      lastDay: (first ? dayOf(first.createdAt) : today) - 1,
    });
    assert.ok(records.length > 0, `${id} has a past to backfill`);
    const base = first ? first.version - records.length - 1 : 0;
    out.set(
      id,
      records.map((r, n) => row(base + n + 1, r, r.updatedAt)),
    );
  }
  return out;
}

/** The customer's backfilled versions as stored, oldest first. */
async function backfilled(store: Store, accountId: string, id: string) {
  return (await historyOf(store, accountId, id))
    .filter((h) => h.reason === 'backfill')
    .map((h) => row(h.version, h, h.createdAt));
}

/** The trend as the histories say it: each day's band counts of the customers' latest versions by its end. */
async function trendOfHistories(store: Store, accountId: string, today: number, days: number) {
  const histories = await Promise.all(ids.map((id) => historyOf(store, accountId, id)));
  const out = [];
  for (let day = today - days + 1; day <= today; day++) {
    const end = (day + 1) * DAY_MS - 1;
    const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>;
    for (const history of histories) {
      const latest = history.filter((h) => h.createdAt <= end).at(-1);
      if (latest) counts[latest.status]++;
    }
    out.push({ date: new Date(day * DAY_MS).toISOString().slice(0, 10), counts });
  }
  return out;
}

/** Polls a process we do not control (it has no event to await) until `done` says so. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await pause(25);
  }
}

for (const backend of ALL_BACKENDS) {
  describe(`backfill through a crash on ${backend}`, { timeout: 240_000, skip: backendSkip(backend) }, () => {
    test('SIGKILLed mid-way: each customer whole or untouched; a second server takes it over and ends it as one run would', async () => {
      const db = await createTestDatabase(backend);
      cleanup.push(() => db.drop());
      const today = dayOf(Date.now());
      const from = today - DAYS;
      const accountId = await seed(db, today);
      const key = newId.apiKey();
      const first = await VitalsProcess.start(env(db, key));

      const started = await first.request('POST', '/api/health-scores/backfill', {
        from: new Date(from * DAY_MS).toISOString().slice(0, 10),
      });
      assert.equal(started.status, 202, JSON.stringify(started.body));
      const id = started.body.id as string;
      // Polled back to back: the kill follows the answer that shows a few customers done.
      for (;;) {
        const progress = await first.request('GET', `/api/health-scores/backfill/${id}`);
        assert.equal(progress.body.status, 'running');
        if (progress.body.customers_done >= KILL_AFTER) break;
      }
      await first.kill();

      // Mid-way: the customers done are the first ones by id, each backfilled whole, the rest untouched.
      const reader = db.open();
      const want = await expected(reader, accountId, from, today);
      const killed = await reader.getBackfill(accountId, id);
      assert.ok(killed);
      assert.equal(killed.status, 'running');
      assert.ok(
        killed.customersDone >= KILL_AFTER && killed.customersDone < CUSTOMERS,
        `killed with ${killed.customersDone} of ${CUSTOMERS} done`,
      );
      const done: string[] = [];
      let written = 0;
      for (const [i, customer] of ids.entries()) {
        const versions = await backfilled(reader, accountId, customer);
        if (versions.length === 0) {
          // Untouched: its one posted version, or nothing at all, not even a score.
          assert.equal((await historyOf(reader, accountId, customer)).length, i % 2 === 0 ? 1 : 0);
          if (i % 2 === 1) assert.equal(await reader.getScore(accountId, customer), null);
          continue;
        }
        assert.deepEqual(versions, want.get(customer), `${customer} backfilled whole`);
        done.push(customer);
        written += versions.length;
      }
      assert.deepEqual(done, ids.slice(0, killed.customersDone));
      assert.equal(killed.cursor, done.at(-1));
      assert.equal(killed.versionsWritten, written);

      // A second server takes it over once the lease expires, and ends it.
      const second = await VitalsProcess.start(env(db, key));
      cleanup.push(() => second.stop());
      const progress = await until(
        () => second.request('GET', `/api/health-scores/backfill/${id}`),
        (res) => res.body.status !== 'running',
      );
      assert.equal(progress.body.status, 'done', JSON.stringify(progress.body));
      assert.equal(progress.body.customers_done, CUSTOMERS);
      assert.match(second.stdout, /backfill: taking over a run whose process stopped/);
      const ended = await reader.getBackfill(accountId, id);
      assert.notEqual(ended?.leaseOwner, killed.leaseOwner);

      // Every history as one uninterrupted run leaves it; the trend rollup counts each change once.
      let total = 0;
      for (const [i, customer] of ids.entries()) {
        const versions = await backfilled(reader, accountId, customer);
        assert.deepEqual(versions, want.get(customer), `${customer} after the takeover`);
        total += versions.length;
        // One never scored has its last backfilled version as its score.
        if (i % 2 === 1) {
          const score = await reader.getScore(accountId, customer);
          assert.deepEqual(score && row(score.version, score, score.updatedAt), versions.at(-1));
        }
      }
      assert.equal(progress.body.versions_written, total);
      const trend = await second.request('GET', '/api/health-scores/trend?days=365');
      assert.equal(trend.status, 200);
      assert.deepEqual(
        trend.body.data.map((d: { date: string; counts: Record<Status, number> }) => ({
          date: d.date,
          counts: d.counts,
        })),
        await trendOfHistories(reader, accountId, today, 365),
      );
      await second.stop();
    });
  });
}
