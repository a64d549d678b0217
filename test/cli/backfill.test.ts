// `vitals import metrics FILE --backfill` (docs/cli.md, "Backfill after an import"): the real CLI
// in its own process against the real app on a real port, with real files; the backfill it starts
// runs in that app and is read back through the API. Following a run to `failed` is driven
// in-process against the same app, on a run the test holds (the app's runner leaves it alone).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Backfill, type HistoryEntry, VitalsClient } from '../../src/client/index.ts';
import { DAY_MS, dateOf, dayOf } from '../../src/domain/portfolio.ts';
import type { BackfillRecord } from '../../src/store/store.ts';
import { backfillEnded, backfillFrom, followBackfill } from '../../src/transfer/backfill.ts';
import { type BackfillCounts, backfillLine } from '../../src/transfer/progress.ts';
import { all, type ClientApp, clientApp } from '../client/harness.ts';
import { customerBody, tempDir } from '../helpers/app.ts';
import { runCli, serverEnv } from '../helpers/server.ts';
import { transaction } from '../helpers/transaction.ts';

let app: ClientApp;
let dir: string;
before(async () => {
  app = await clientApp();
  dir = tempDir();
});
after(() => app.close());

const today = () => dayOf(Date.now());
/** Noon (UTC) `days` days ago, as a metrics file's `at`. */
const noon = (days: number) => new Date((today() - days) * DAY_MS + DAY_MS / 2).toISOString();

let accounts = 0;
/** An account with customers c1–c3 and the rule usage = sum of `logins` over 7 days, on 0–7. */
async function account(): Promise<{ key: string; client: VitalsClient; accountId: string }> {
  const name = `cli backfill ${++accounts}`;
  const { key } = await app.t.newAccount(name);
  const client = new VitalsClient({ url: app.url, key });
  await client.settings.putFactorRule('usage', {
    metric: 'logins',
    aggregate: 'sum',
    window_days: 7,
    scale: { type: 'linear', from: 0, to: 7 },
  });
  for (const id of ['c1', 'c2', 'c3']) await client.customers.create(customerBody(id));
  return { key, client, accountId: (await app.t.store.ensureAccount(name, 0)).id };
}
const vitals = (key: string, args: string[]) =>
  runCli([...args, '--url', app.url], serverEnv({ VITALS_API_KEY: key }));

let files = 0;
function file(name: string, lines: string[]): string {
  const path = join(dir, `${++files}-${name}`);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** A run held by another process, as the app's runner sees it: running, its lease fresh. */
function held(id: string, total: number): BackfillRecord {
  return {
    id,
    status: 'running',
    fromDay: today() - 30,
    customerIds: null,
    customersTotal: total,
    customersDone: 0,
    versionsWritten: 0,
    cursor: null,
    startedAt: Date.now(),
    finishedAt: null,
    error: null,
    leaseOwner: 'another process',
    leaseExpiresAt: Date.now() + 600_000,
  };
}

describe('import metrics --backfill', () => {
  test('after the import, a backfill from the earliest point’s day runs to done; the history and the trend have the past', async () => {
    const { key, client } = await account();
    // 30 days of logins for c1 and c2 (c2 from 20 days back), none for c3.
    const rows = ['customer_id,at,logins'];
    for (let d = 30; d >= 1; d--) rows.push(`c1,${noon(d)},${d % 3}`);
    for (let d = 20; d >= 1; d--) rows.push(`c2,${noon(d)},1`);
    const run = await vitals(key, ['import', 'metrics', file('metrics.csv', rows), '--backfill']);
    assert.equal(run.code, 0, run.stderr);
    const from = dateOf(today() - 30);
    assert.match(run.stderr, /Imported metrics: 50 rows in .*: 50 recorded, 0 refused\./);
    assert.match(
      run.stderr,
      new RegExp(`Backfilling 3 customers from ${from} \\(the earliest point's day\\): bf_\\w+\\n`),
    );
    const runs = await client.healthScores.listBackfills();
    assert.equal(runs.length, 1);
    const [done] = runs as [Backfill];
    assert.deepEqual([done.status, done.from, done.customers_done, done.error], ['done', from, 3, null]);
    assert.match(
      run.stderr,
      new RegExp(
        `Backfilled 3 customers from ${from}: ${done.versions_written} versions written in [\\d.]+ s\\.\\n$`,
      ),
    );
    // Every version it wrote is in the histories, each dated a past day's end.
    const past: Record<string, HistoryEntry[]> = {};
    for (const id of ['c1', 'c2', 'c3']) {
      past[id] = (await all(client.healthScores.history(id))).filter((h) => h.reason === 'backfill');
    }
    const written = Object.values(past).flat();
    assert.equal(written.length, done.versions_written);
    // c2's sum climbs 1…7 over its first week and then holds: 7 versions; c3 has no points.
    assert.equal(past.c2?.length, 7);
    assert.equal(past.c3?.length, 0);
    assert.ok(written.length > 20, `${written.length} versions`);
    assert.ok(
      written.every((h) => h.created_at.endsWith('T23:59:59.999Z') && h.created_at < dateOf(today())),
    );
    const trend = (await client.healthScores.trend({ days: 31 })).data;
    assert.deepEqual(
      trend.map((d) => d.total),
      // c1 from 30 days back, c2 from 20; c3, without points, never.
      [...Array(10).fill(1), ...Array(21).fill(2)],
    );
  });

  test('NDJSON whose earliest point is more than 730 days back: the backfill starts 730 days back, and says so', async () => {
    const { key, client } = await account();
    const path = file('old.ndjson', [
      JSON.stringify({ customer_id: 'c1', values: { logins: 3 }, at: noon(10) }),
      JSON.stringify({ customer_id: 'c2', values: { logins: 5 }, at: noon(800) }),
    ]);
    const run = await vitals(key, ['import', 'metrics', path, '--backfill']);
    assert.equal(run.code, 0, run.stderr);
    const from = dateOf(today() - 730);
    assert.equal(backfillFrom(Date.parse(noon(800)), Date.now()), from);
    assert.match(
      run.stderr,
      new RegExp(
        `Backfilling 3 customers from ${from} \\(730 days back, the furthest a backfill reaches; the earliest point is of ${dateOf(today() - 800)}\\)`,
      ),
    );
    const [done] = (await client.healthScores.listBackfills()) as [Backfill];
    assert.deepEqual([done.status, done.from], ['done', from]);
  });

  test('no point imported: the backfill is skipped with a message; exit 1 for the refused rows', async () => {
    const { key, client } = await account();
    const run = await vitals(key, [
      'import',
      'metrics',
      file('nobody.csv', ['customer_id,at,logins', `ghost,${noon(3)},1`]),
      '--backfill',
    ]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /0 recorded, 1 refused/);
    assert.match(run.stderr, /No metric point was imported: no backfill was started\.\n$/);
    assert.deepEqual(await client.healthScores.listBackfills(), []);
  });

  test('points of today alone: no past day, no backfill; exit 0', async () => {
    const { key, client } = await account();
    const run = await vitals(key, [
      'import',
      'metrics',
      file('today.csv', ['customer_id,at,logins', 'c1,,2']),
      '--backfill',
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(
        `The earliest point imported is of ${dateOf(today())} \\(UTC\\): there is no past day to backfill\\.`,
      ),
    );
    assert.deepEqual(await client.healthScores.listBackfills(), []);
  });

  test('another backfill running: 409 said plainly, the metrics kept, exit 1', async () => {
    const { key, client, accountId } = await account();
    assert.equal(
      await transaction(app.t.store, (tx) => tx.insertBackfill(accountId, held('bf_heldelsewhere', 3))),
      true,
    );
    const run = await vitals(key, [
      'import',
      'metrics',
      file('busy.csv', ['customer_id,at,logins', `c1,${noon(5)},4`]),
      '--backfill',
    ]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /1 recorded, 0 refused/);
    const from = dateOf(today() - 5);
    assert.match(
      run.stderr,
      new RegExp(
        `vitals import: no backfill was started \\(409 backfill_running\\): A backfill is running for this account \\(bf_heldelsewhere\\); wait for it to finish\\. The metrics are imported; once that run is done, backfill from ${from} on the dashboard's Scoring page or with POST /api/health-scores/backfill \\{"from": "${from}"\\}\\.`,
      ),
    );
    assert.deepEqual(
      (await all(client.metrics.list('c1'))).map((p) => [p.metric, p.value]),
      [['logins', 4]],
    );
    assert.deepEqual(
      (await client.healthScores.listBackfills()).map((b) => [b.id, b.status]),
      [['bf_heldelsewhere', 'running']],
    );
  });

  test('--backfill with anything but metrics is a usage mistake: exit 2, nothing imported', async () => {
    const { key, client } = await account();
    const run = await vitals(key, [
      'import',
      'customers',
      file('customers.csv', ['customer_id,name,email', 'n1,New,n1@example.com']),
      '--backfill',
    ]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /--backfill is for metrics\. See vitals --help\./);
    await assert.rejects(client.customers.retrieve('n1'), { status: 404 });
  });
});

describe('following a run', () => {
  test('it is read until it fails; the progress sees each step; the end says the server’s reason, exit 1', async () => {
    const { client, accountId } = await account();
    const record = held('bf_followed', 3);
    await transaction(app.t.store, (tx) => tx.insertBackfill(accountId, record));
    const seen: BackfillCounts[] = [];
    let stopped = false;
    let step: () => void = () => {};
    const stepped = () =>
      new Promise<void>((resolve) => {
        step = resolve;
      });
    const first = stepped();
    const following = followBackfill(
      client,
      await client.healthScores.getBackfill('bf_followed'),
      {
        update(c) {
          if (JSON.stringify(c) !== JSON.stringify(seen.at(-1))) {
            seen.push(c);
            step();
          }
        },
        stop() {
          stopped = true;
        },
      },
      10,
    );
    await first;
    const second = stepped();
    const progressed = { ...record, customersDone: 1, versionsWritten: 40, cursor: 'c1' };
    await transaction(app.t.store, (tx) => tx.updateBackfill(accountId, progressed));
    await second;
    const error = 'An internal error stopped the backfill. Start a new backfill to fill the rest.';
    await transaction(app.t.store, (tx) =>
      tx.updateBackfill(accountId, { ...progressed, status: 'failed', error, finishedAt: Date.now() }),
    );
    const ended = await following;
    assert.equal(ended.status, 'failed');
    assert.equal(stopped, true);
    assert.deepEqual(seen, [
      { done: 0, total: 3, versions: 0 },
      { done: 1, total: 3, versions: 40 },
    ]);
    assert.deepEqual(backfillEnded(ended, 1), {
      line: `vitals import: the backfill bf_followed failed after 1 of 3 customers: ${error}`,
      status: 1,
    });
  });

  test('the plain progress line counts customers and versions', () => {
    assert.equal(
      backfillLine({ done: 1234, total: 5000, versions: 98765 }),
      'backfill: 1,234 of 5,000 customers (24%), 98,765 versions\n',
    );
    assert.equal(
      backfillLine({ done: 0, total: 0, versions: 0 }),
      'backfill: 0 of 0 customers (100%), 0 versions\n',
    );
  });
});
