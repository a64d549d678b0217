// The database goes away and comes back (docs/postgresql.md, "When the database restarts"):
// a private PostgreSQL server under real processes and real load. While it is down, every API
// request gets a fast 503 service_unavailable with Retry-After and /readyz is 503; nothing is a
// 500 and the process lives. Once it is back the service recovers by itself: every acknowledged
// write is in the history and every event reaches the receiver. Once with a clean stop
// (`pg_ctl stop -m fast`), once with a crash (`-m immediate`, WAL recovery at the next start).
// Then a separate dispatcher whose connections are terminated reconnects and keeps delivering.
//
// It brings its own server, so it runs in one of CI's two passes only (the SQLite one).
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { after, before, describe, type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { newId } from '../../src/domain/ids.ts';
import { customerBody } from '../helpers/app.ts';
import { PrivatePostgres, privatePostgresAvailable } from '../helpers/private-postgres.ts';
import { type Received, TestReceiver } from '../helpers/receiver.ts';
import { killAll, serverEnv, VitalsProcess } from '../helpers/server.ts';

const CUSTOMERS = 30;
const WRITERS = 8;
const SCORE_EVENT = 'customer.health_score.updated';

const skip =
  process.env.VITALS_TEST_BACKEND === 'postgres'
    ? 'runs in the SQLite pass only: it brings its own PostgreSQL server'
    : privatePostgresAvailable();

interface Answer {
  status: number;
  at: number;
  ms: number;
}

/** Every write of the file carries a mark of its own (a factor), so its history entry can be found. */
let marks = 0;

/**
 * WRITERS loops posting scores to CUSTOMERS customers until stopped. Every answer is counted;
 * a 200 is recorded with its mark, a 503 is checked (envelope and Retry-After), anything
 * else is a problem. Half the writers send an Idempotency-Key, so its claim and its record
 * are in play when the database goes.
 */
class Load extends EventEmitter {
  readonly acked = new Map<string, Set<number>>();
  readonly answers: Answer[] = [];
  readonly problems: string[] = [];
  #running = true;
  #loops: Promise<void>[];

  constructor(api: VitalsProcess) {
    super();
    this.setMaxListeners(0);
    this.#loops = Array.from({ length: WRITERS }, (_, w) => this.#loop(api, w));
  }

  async #loop(api: VitalsProcess, w: number): Promise<void> {
    for (let i = 0; this.#running; i++) {
      const customer = `cus_${(w * 7 + i) % CUSTOMERS}`;
      const headers: Record<string, string> = {
        authorization: `Bearer ${api.key}`,
        'content-type': 'application/json',
      };
      if (w % 2 === 1) headers['idempotency-key'] = `w${w}-${i}-${newId.requestId()}`;
      const mark = ++marks / 1e6;
      const started = performance.now();
      let status: number;
      try {
        const res = await fetch(`${api.url}/api/customers/${customer}/health-score`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ factors: { usage: ((w + i) % 101) / 100, mark } }),
          signal: AbortSignal.timeout(10_000),
        });
        status = res.status;
        const body = (await res.json()) as any;
        if (status === 200) {
          const acked = this.acked.get(customer) ?? new Set<number>();
          acked.add(mark);
          this.acked.set(customer, acked);
        } else if (status === 503) {
          if (res.headers.get('retry-after') !== '1') this.problems.push('a 503 without Retry-After: 1');
          if (body?.error?.code !== 'service_unavailable' || body?.error?.type !== 'api_error') {
            this.problems.push(`a 503 with ${JSON.stringify(body)}`);
          }
        } else {
          this.problems.push(`${status}: ${JSON.stringify(body)}`);
        }
      } catch (err) {
        status = 0;
        this.problems.push(`no answer: ${(err as Error).message}`);
        await sleep(10); // the process is gone; do not spin (the test fails on this anyway)
      }
      const answer = { status, at: performance.now(), ms: performance.now() - started };
      this.answers.push(answer);
      this.emit('answer', answer);
    }
  }

  /** Resolves at the first answer (from now on, or already given) for which `done` holds. */
  until(done: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('answer', check);
        reject(new Error(`load: not yet ${what} after ${timeoutMs} ms (${this.answers.length} answers)`));
      }, timeoutMs);
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.off('answer', check);
        resolve();
      };
      this.on('answer', check);
    });
  }

  since(t: number, status?: number): Answer[] {
    return this.answers.filter((a) => a.at >= t && (status === undefined || a.status === status));
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

const eventId = (r: Received) => r.headers['x-vitals-event-id'] as string;

async function scoreEventIds(api: VitalsProcess): Promise<string[]> {
  const ids: string[] = [];
  let page = '';
  for (;;) {
    const res = await api.request('GET', `/api/events?type=${SCORE_EVENT}&limit=100${page}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    ids.push(...res.body.data.map((e: { id: string }) => e.id));
    if (!res.body.has_more) return ids;
    page = `&starting_after=${res.body.data.at(-1).id}`;
  }
}

/** The marks of every entry of a customer's history. */
async function historyMarks(api: VitalsProcess, customer: string): Promise<Set<number>> {
  const marks = new Set<number>();
  let page = '';
  for (;;) {
    const res = await api.request('GET', `/api/customers/${customer}/health-score/history?limit=100${page}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const h of res.body.data) marks.add(h.factors.mark);
    if (!res.body.has_more) return marks;
    page = `&starting_after=${res.body.data.at(-1).version}`;
  }
}

/**
 * Every acknowledged write is in its customer's history; every score event reached the
 * receiver (those of `earlier`, events from before its webhook existed, aside).
 */
async function assertNothingLost(
  api: VitalsProcess,
  load: Load,
  receiver: TestReceiver,
  earlier = new Set<string>(),
): Promise<void> {
  for (const [customer, acked] of load.acked) {
    const stored = await historyMarks(api, customer);
    const missing = [...acked].filter((mark) => !stored.has(mark));
    assert.deepEqual(missing, [], `${customer}: acknowledged writes missing from the history`);
  }
  const events = (await scoreEventIds(api)).filter((id) => !earlier.has(id));
  assert.ok(events.length >= [...load.acked.values()].reduce((n, s) => n + s.size, 0));
  await receiver.until(
    (got) => {
      const seen = new Set(got.map(eventId));
      return events.every((id) => seen.has(id));
    },
    30_000,
    `all ${events.length} score events`,
  );
}

async function readyz(api: VitalsProcess): Promise<{ status: number; retryAfter: string | null }> {
  const res = await fetch(`${api.url}/readyz`);
  await res.arrayBuffer();
  return { status: res.status, retryAfter: res.headers.get('retry-after') };
}

describe('the database goes away and comes back (private PostgreSQL)', { skip, timeout: 120_000 }, () => {
  let pg: PrivatePostgres;
  const key = newId.apiKey();
  const receivers: TestReceiver[] = [];
  before(async () => {
    pg = await PrivatePostgres.create();
  });
  after(async () => {
    killAll();
    for (const r of receivers) await r.close();
    await pg?.destroy();
  });

  const start = (roles: string, url = pg.url) =>
    VitalsProcess.start(
      serverEnv({
        DATABASE_URL: url,
        VITALS_API_KEY: key,
        VITALS_ROLES: roles,
        VITALS_RATE_LIMIT: 'off',
        VITALS_WEBHOOK_TIMEOUT: '1s',
        VITALS_WEBHOOK_BACKOFF: '50ms,100ms,200ms',
        VITALS_WEBHOOK_MAX_RETRIES: '20',
        VITALS_WEBHOOK_POLL: '250ms',
      }),
    );

  async function setUp(api: VitalsProcess): Promise<TestReceiver> {
    const receiver = await TestReceiver.start();
    receivers.push(receiver);
    const hook = await api.request('POST', '/api/webhooks', { url: receiver.url, events: [SCORE_EVENT] });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    for (let c = 0; c < CUSTOMERS; c++) {
      const res = await api.request('POST', '/api/customers', customerBody(`cus_${c}`));
      assert.ok(res.status === 201 || res.status === 409, JSON.stringify(res.body));
    }
    return receiver;
  }

  /** Stops the database under load, sees the 503s, starts it again and sees the 200s come back. */
  async function outage(t: TestContext, api: VitalsProcess, load: Load, mode: 'fast' | 'immediate') {
    const acked = () => load.answers.filter((a) => a.status === 200).length;
    const before = acked();
    await load.until(() => acked() >= before + 50, '50 acknowledged writes before the stop');

    const stopAt = performance.now();
    await pg.stop(mode);
    const stopped = performance.now();
    await load.until(() => load.since(stopAt, 503).length > 0, 'a 503 after the stop');
    const first503 = (load.since(stopAt, 503)[0] as Answer).at - stopAt;
    const ready = await readyz(api);
    assert.equal(ready.status, 503, '/readyz while the database is down');
    assert.equal(ready.retryAfter, '1');
    // Enough 503s for a latency figure; the database stays down meanwhile.
    await load.until(() => load.since(stopAt, 503).length >= 400, '400 answers of 503');

    const startAt = performance.now();
    await pg.start();
    const started = performance.now();
    // The API is another process with nothing to await on: ask /readyz until it says 200.
    for (let i = 0; (await readyz(api)).status !== 200; i++) {
      assert.ok(i < 200, '/readyz is 200 within 10 s of the start');
      await sleep(50);
    }
    const readyAt = performance.now();
    await load.until(() => load.since(startAt, 200).length > 0, 'a 200 after the start');
    const first200 = (load.since(startAt, 200)[0] as Answer).at - startAt;
    const after = acked();
    await load.until(() => acked() >= after + 100, '100 acknowledged writes after the start');

    const down = load.answers.filter((a) => a.at >= stopAt && a.at < startAt);
    const unavailable = down.filter((a) => a.status === 503).map((a) => a.ms);
    // Sent once pg_ctl had stopped the server: what a client sees while the database is away.
    const whileDown = load
      .since(stopped, 503)
      .filter((a) => a.at - a.ms >= stopped && a.at < startAt)
      .map((a) => a.ms);
    const ms = (values: number[]) =>
      `p50 ${percentile(values, 50).toFixed(1)} / p99 ${percentile(values, 99).toFixed(1)} / ` +
      `max ${Math.max(...values).toFixed(1)} ms`;
    t.diagnostic(
      `${mode}: ${down.length} requests from the stop to the start, ${unavailable.length} answered 503; ` +
        `first 503 ${first503.toFixed(0)} ms after pg_ctl stop began (it took ${(stopped - stopAt).toFixed(0)} ms); ` +
        `503 latency, sent while down: ${ms(whileDown)}; all 503s (with those in flight at the stop): ` +
        `${ms(unavailable)}; pg_ctl start took ${(started - startAt).toFixed(0)} ms, first 200 ` +
        `${first200.toFixed(0)} ms after it began, /readyz 200 after ${(readyAt - startAt).toFixed(0)} ms`,
    );
  }

  test('stopped (fast) and crashed (immediate): 503s while down, then everything back, nothing lost', async (t) => {
    const api = await start('api,dispatcher');
    const receiver = await setUp(api);
    const load = new Load(api);
    try {
      await outage(t, api, load, 'fast');
      await outage(t, api, load, 'immediate');
    } finally {
      await load.stop();
    }
    assert.deepEqual(load.problems, [], 'only 200s and proper 503s');
    assert.equal(api.child.exitCode, null, 'the process is alive');
    const counts = new Map<number, number>();
    for (const a of load.answers) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
    t.diagnostic(`answers: ${JSON.stringify(Object.fromEntries(counts))}`);
    assert.deepEqual([...counts.keys()].sort(), [200, 503]);
    // Fast: a 503 comes in milliseconds. What stays under this bound never waited for the
    // driver's connect timeout (5 s) nor hung on a lost connection.
    const slowest = Math.max(...load.answers.map((a) => a.ms));
    t.diagnostic(`slowest answer: ${slowest.toFixed(0)} ms`);
    assert.ok(slowest < 4000, `the slowest answer took ${slowest.toFixed(0)} ms`);

    await assertNothingLost(api, load, receiver);
    // The outage is logged, not flooded: no 500 ("unhandled error"), and a few warnings per outage.
    const lines = api.stdout.split('\n');
    assert.equal(lines.filter((l) => l.includes('unhandled error')).length, 0);
    const warnings = lines.filter((l) => l.includes('the database is not reachable')).length;
    t.diagnostic(`log lines about the outages: ${warnings}`);
    assert.ok(warnings <= 12, `${warnings} lines about the outages`);
    await api.stop();
  });

  test("a dispatcher's connections terminated: it reconnects and keeps delivering", async (t) => {
    const api = await start('api');
    // Its own application_name (the URL's parameter wins over Vitals'), so its backends can be told apart.
    const dispatcher = await start('dispatcher', `${pg.url}?application_name=vitals-dispatcher`);
    const earlier = new Set(await scoreEventIds(api));
    const receiver = await setUp(api);
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    const load = new Load(api);
    try {
      await receiver.waitFor(50, 20_000);
      for (let round = 0; round < 2; round++) {
        // In the select list, so it runs for the rows the WHERE kept (in the WHERE, PostgreSQL
        // may call it before it looks at application_name).
        const killed = await admin<{ pid: number }[]>`
          SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE application_name = 'vitals-dispatcher' AND pid <> pg_backend_pid()`;
        // The pool opens connections on demand, so how many the dispatcher holds varies: a bound.
        assert.ok(killed.length >= 1, 'the dispatcher had connections to terminate');
        const gone = new Set(killed.map((k) => k.pid));
        const got = receiver.requests.length;
        await receiver.waitFor(got + 50, 20_000);
        // LISTEN is back on a new connection (PostgreSQL is another process: ask it until it is).
        for (let i = 0; ; i++) {
          const listening = await admin<{ pid: number }[]>`
            SELECT pid FROM pg_stat_activity
            WHERE application_name = 'vitals-dispatcher' AND query ILIKE 'listen%'`;
          if (listening.some((l) => !gone.has(l.pid))) break;
          assert.ok(i < 100, 'the dispatcher LISTENs again within 5 s');
          await sleep(50);
        }
        t.diagnostic(`round ${round + 1}: ${killed.length} backends of the dispatcher terminated`);
      }
    } finally {
      await load.stop();
      await admin.end({ timeout: 1 });
    }
    assert.deepEqual(load.problems, [], 'the API was not affected');
    assert.ok(load.answers.every((a) => a.status === 200));
    assert.equal(dispatcher.child.exitCode, null, 'the dispatcher is alive');
    await assertNothingLost(api, load, receiver, earlier);
    // It noticed, said so once, and found the database again by itself.
    assert.match(dispatcher.stdout, /dispatcher: the database is reachable again/);
    assert.equal(dispatcher.stdout.split('\n').filter((l) => l.includes('"level":50')).length, 0);
    await dispatcher.stop();
    await api.stop();
  });
});
