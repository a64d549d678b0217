// Who holds a backfill (issue 52; docs/api.md, "Backfill"): one run per account, however many
// start it at once, from one process or (PostgreSQL) two; and a run's lease: a process whose lease
// expired while it was alive but slow finds its next step `lost` and writes nothing, the process
// that took the run over finishes it, and of a step and a takeover at the same instant exactly one
// wins. The writes are called as the runner calls them (store.run), with the clock in the test's hand.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY_MS, dayOf } from '../../src/domain/portfolio.ts';
import type { FactorRule } from '../../src/domain/rules.ts';
import type { BackfillRecord, Store } from '../../src/store/store.ts';
import { backfillNext, claimBackfill, failBackfill, startBackfill } from '../../src/writes/backfill.ts';
import { buildTestApp, type TestApp, TestClock } from '../helpers/app.ts';
import { appBackend } from '../helpers/stores.ts';
import { transaction } from '../helpers/transaction.ts';

const LOGINS: FactorRule = {
  factor: 'usage',
  metric: 'logins',
  aggregate: 'sum',
  windowDays: 7,
  scale: { type: 'linear', from: 0, to: 14 },
  maxAgeDays: null,
  gate: null,
  updatedAt: 0,
};

/** `n` customers with a login count a day over the `days` days before the clock's, and the rule reading it. */
async function seed(t: TestApp, accountId: string, n: number, days: number, now: number): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `cus_${String(i).padStart(3, '0')}`);
  const today = dayOf(now);
  await transaction(t.store, async (tx) => {
    await tx.putFactorRule(accountId, { ...LOGINS, updatedAt: now });
    for (const [i, id] of ids.entries()) {
      await tx.insertCustomer(accountId, {
        id,
        name: id,
        email: `${id}@example.com`,
        metadata: {},
        createdAt: now,
        updatedAt: now,
      });
      const points = Array.from({ length: days }, (_, d) => ({
        customerId: id,
        metric: 'logins',
        at: (today - days + d) * DAY_MS + DAY_MS / 2,
        value: (i + d * d) % 5,
      }));
      await tx.insertMetricPoints(accountId, points);
    }
  });
  return ids;
}

const dateOf = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

describe('one backfill per account under a burst', () => {
  const clock = new TestClock('2026-06-10T12:00:00.000Z');
  let t: TestApp;
  let accountId: string;
  before(async () => {
    t = await buildTestApp({ now: clock.now });
    accountId = (await t.store.ensureAccount('default', 0)).id;
    // Enough customers that the run the winner drives outlasts the burst by far.
    await seed(t, accountId, 200, 120, clock.ms);
  });
  after(() => t.close());

  test(`20 starts at once${appBackend() === 'postgres' ? ', from two processes' : ''}: one 202, nineteen 409 backfill_running, one run stored`, async () => {
    const from = dateOf(dayOf(clock.ms) - 120);
    // On PostgreSQL every other start comes from a second store on the database, as another
    // process's would (a SQLite file is served by one process: docs/architecture.md).
    const other: Store | null = appBackend() === 'postgres' ? t.openStore() : null;
    const starts = Array.from({ length: 20 }, async (_, i) => {
      if (other && i % 2 === 1) {
        try {
          const { id } = await other.run(
            startBackfill,
            accountId,
            { fromDay: dayOf(clock.ms) - 120, customerIds: null },
            'another process',
            undefined,
            clock.ms,
            60_000,
          );
          return { status: 202, id, code: undefined, message: '' };
        } catch (err) {
          const e = err as { status: number; code: string; message: string };
          return { status: e.status, id: undefined, code: e.code, message: e.message };
        }
      }
      const res = await t.api.post('/api/health-scores/backfill', { from });
      return {
        status: res.status,
        id: res.body.id as string | undefined,
        code: res.body.error?.code as string | undefined,
        message: (res.body.error?.message ?? '') as string,
      };
    });
    const answers = await Promise.all(starts);
    const won = answers.filter((a) => a.status === 202);
    assert.equal(won.length, 1, JSON.stringify(answers));
    const winner = won[0]?.id as string;
    for (const a of answers.filter((a) => a.status !== 202)) {
      assert.equal(a.status, 409);
      assert.equal(a.code, 'backfill_running');
      assert.ok(a.message.includes(winner), a.message);
    }
    const stored = await t.store.listBackfills(accountId, 100);
    assert.deepEqual(
      stored.map((b) => [b.id, b.status]),
      [[winner, 'running']],
    );
    assert.ok((stored[0]?.customersDone ?? 0) < 200, 'the run was still going when the burst was answered');
    const listed = await t.api.get('/api/health-scores/backfill');
    assert.deepEqual(
      listed.body.data.map((b: { id: string }) => b.id),
      [winner],
    );
  });
});

describe("a backfill's lease", () => {
  const clock = new TestClock('2026-06-10T12:00:00.000Z');
  const LEASE = 60_000;
  let t: TestApp;
  let accountId: string;
  let ids: string[];
  const fromDay = dayOf(clock.ms) - 10;
  before(async () => {
    t = await buildTestApp({ now: clock.now });
    accountId = (await t.store.ensureAccount('default', 0)).id;
    ids = await seed(t, accountId, 3, 10, clock.ms);
  });
  after(() => t.close());

  const backfilledOf = async (id: string) =>
    (await t.store.listHistory(accountId, id, { limit: 100 })).data.filter((h) => h.reason === 'backfill');
  /** The run and every customer's history: what a step that was lost must leave as it was. */
  const snapshot = async (id: string) => ({
    run: await t.store.getBackfill(accountId, id),
    histories: await Promise.all(ids.map((c) => t.store.listHistory(accountId, c, { limit: 100 }))),
  });
  const step = (owner: string, id: string, now = clock.ms) =>
    t.store.run(backfillNext, accountId, id, owner, now, LEASE);
  const claim = (owner: string, id: string, now = clock.ms) =>
    t.store.run(claimBackfill, accountId, id, owner, now, LEASE);

  test('the old owner, alive but slow past its lease, finds its step lost and writes nothing; the new one finishes', async () => {
    const { id } = await t.store.run(
      startBackfill,
      accountId,
      { fromDay, customerIds: null },
      'A',
      undefined,
      clock.ms,
      LEASE,
    );
    clock.advance(1_000);
    const first = await step('A', id);
    assert.equal(first.lost, false);
    assert.equal(first.lost === false && first.run.cursor, ids[0]);
    assert.ok((await backfilledOf(ids[0] as string)).length > 0);

    // A stalls. Its lease, renewed by that step, holds until it expires, inclusive.
    clock.advance(LEASE);
    assert.equal(await claim('B', id), false);
    assert.equal((await t.store.getBackfill(accountId, id))?.leaseOwner, 'A');
    clock.advance(1);
    assert.equal(await claim('B', id), true);
    const taken = await snapshot(id);
    assert.equal(taken.run?.leaseOwner, 'B');
    assert.equal(taken.run?.leaseExpiresAt, clock.ms + LEASE);

    // A wakes up: its next step, by its clock or by the true one, is lost and writes nothing, nor
    // does its giving up (failBackfill).
    assert.deepEqual(await step('A', id, clock.ms - LEASE), { lost: true });
    clock.advance(5);
    assert.deepEqual(await step('A', id), { lost: true });
    await t.store.run(failBackfill, accountId, id, 'A', 'A gave up', clock.ms);
    assert.deepEqual(await snapshot(id), taken);
    assert.deepEqual(await backfilledOf(ids[1] as string), []);

    // B goes on from A's cursor to the end: each customer backfilled once.
    let run: BackfillRecord | undefined;
    for (let n = 0; n < 10; n++) {
      clock.advance(1_000);
      const next = await step('B', id);
      assert.equal(next.lost, false);
      if (next.lost === false && next.run.status !== 'running') {
        run = next.run;
        break;
      }
    }
    assert.equal(run?.status, 'done');
    assert.equal(run?.customersDone, 3);
    const versions = await Promise.all(ids.map(backfilledOf));
    assert.ok(versions.every((v) => v.length > 0));
    assert.equal(
      run?.versionsWritten,
      versions.reduce((sum, v) => sum + v.length, 0),
    );
    // Done, the run is no one's: neither the old owner's step nor a claim touches it.
    const ended = await snapshot(id);
    clock.advance(2 * LEASE);
    assert.deepEqual(await step('A', id), { lost: true });
    assert.equal(await claim('A', id), false);
    assert.deepEqual(await snapshot(id), ended);
  });

  test('a step and a takeover at the same instant past the lease: exactly one of them wins', async () => {
    // Another process where there can be one (PostgreSQL); on SQLite the writer thread orders them.
    const other = appBackend() === 'postgres' ? t.openStore() : t.store;
    for (let round = 0; round < 5; round++) {
      const { id } = await t.store.run(
        startBackfill,
        accountId,
        { fromDay, customerIds: [ids[round % 3] as string] },
        'A',
        undefined,
        clock.ms,
        LEASE,
      );
      clock.advance(LEASE + 1);
      const [stepped, claimed] = await Promise.all([
        step('A', id),
        other.run(claimBackfill, accountId, id, 'B', clock.ms, LEASE),
      ]);
      const run = await t.store.getBackfill(accountId, id);
      assert.equal(stepped.lost, claimed, JSON.stringify({ stepped, claimed }));
      // The step ran first (and renewed A's lease), or the claim did (and A's step was lost).
      assert.equal(run?.leaseOwner, claimed ? 'B' : 'A');
      assert.equal(run?.customersDone, claimed ? 0 : 1);
      // Ended, so the account may start the next round's.
      for (;;) {
        const next = await step(claimed ? 'B' : 'A', id);
        assert.equal(next.lost, false);
        if (next.lost === false && next.run.status !== 'running') break;
      }
    }
  });
});
