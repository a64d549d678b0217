// Group commit of score updates (docs/postgresql.md, "Reads and writes under load"): updates that arrive
// together are written as one batch in one transaction, and each still gets the answer it
// would get alone — in order for one customer, its own 404 or 400, and its own failure when
// the database refuses it, without taking the rest of the batch down.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { buildTestApp, customerBody, histogramTotals, type TestApp } from '../helpers/app.ts';

/** Runs SQL on the app's database over a connection of the test's own. */
async function onDatabase(t: TestApp, sql: { sqlite: string; postgres: string }): Promise<void> {
  if (t.databaseUrl) {
    const pg = postgres(t.databaseUrl, { max: 1, onnotice: () => {} });
    await pg.unsafe(sql.postgres);
    await pg.end();
  } else {
    const db = new DatabaseSync(join(t.dir, 'vitals.db'));
    db.exec(sql.sqlite);
    db.close();
  }
}

/** Batches written so far and updates in them. */
const batches = (t: TestApp) => histogramTotals(t, 'vitals_score_batch_size');

const post = (t: TestApp, id: string, factors: Record<string, number | null>, method = 'POST') =>
  t.api.request(method, `/api/customers/${id}/health-score`, { factors });

describe('score updates written in batches', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    for (const id of ['solo', 'a', 'b', 'c', 'poison']) {
      assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
    }
  });
  after(() => t.close());

  test('40 updates of one customer at once: versions 1 to 40, one history entry and event each, fewer batches than updates', async () => {
    const before = await batches(t);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => post(t, 'solo', { usage: i / 40 })),
    );
    for (const res of answers) assert.equal(res.status, 200, res.raw);
    for (const [i, res] of answers.entries()) assert.equal(res.body.factors.usage, i / 40);
    // One history entry per update, versions 1 to 40, each holding one of the factor sets sent.
    const history = await t.api.get('/api/customers/solo/health-score/history?limit=100');
    assert.deepEqual(
      history.body.data.map((h: { version: number }) => h.version),
      Array.from({ length: 40 }, (_, i) => 40 - i),
    );
    assert.deepEqual(
      history.body.data.map((h: { factors: { usage: number } }) => h.factors.usage).sort(),
      answers.map((r) => r.body.factors.usage).sort(),
    );
    // What is stored is the answer of the update that made version 40.
    const newest = history.body.data[0];
    const stored = await t.api.get('/api/customers/solo/health-score');
    assert.deepEqual(stored.body.factors, newest.factors);
    assert.deepEqual(answers.find((r) => r.body.factors.usage === newest.factors.usage)?.body, stored.body);
    const events = await t.api.get('/api/events?type=customer.health_score.updated&limit=100');
    const solo = events.body.data.filter(
      (e: { data: { customer_id: string } }) => e.data.customer_id === 'solo',
    );
    assert.equal(solo.length, 40);
    // Newest first, in the order the versions were made.
    assert.deepEqual(
      solo.map((e: { data: { factors: { usage: number } } }) => e.data.factors.usage),
      history.body.data.map((h: { factors: { usage: number } }) => h.factors.usage),
    );
    const after = await batches(t);
    assert.equal(after.sum - before.sum, 40, 'every update went through a batch');
    assert.ok(after.count - before.count < 40, `40 updates took ${after.count - before.count} batches`);
  });

  test('in one batch, an unknown customer gets its 404 and an update leaving no factor its 400; the rest apply', async () => {
    for (const id of ['a', 'b', 'c']) assert.equal((await post(t, id, { usage: 0.1 })).status, 200);
    // Distinct customers: requests sent together may reach the server in any order.
    const answers = await Promise.all([
      post(t, 'a', { usage: 0.5 }),
      post(t, 'nobody', { usage: 0.5 }),
      post(t, 'b', { usage: null }, 'PATCH'),
      post(t, 'c', { support: 1 }, 'PATCH'),
    ]);
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 404, 400, 200],
    );
    assert.equal(answers[1]?.body.error.code, 'customer_not_found');
    assert.equal(answers[2]?.body.error.code, 'parameter_invalid');
    assert.equal(answers[2]?.body.error.param, 'factors');
    assert.deepEqual(answers[3]?.body.factors, { usage: 0.1, support: 1 });
    // The refused ones changed nothing.
    assert.equal((await t.api.get('/api/customers/nobody/health-score')).status, 404);
    const b = await t.api.get('/api/customers/b/health-score/history');
    assert.deepEqual(
      b.body.data.map((h: { version: number; factors: unknown }) => [h.version, h.factors]),
      [[1, { usage: 0.1 }]],
    );
  });

  test('when the database refuses one update of a batch, that one fails alone and the others commit', async () => {
    await onDatabase(t, {
      sqlite: `CREATE TRIGGER poison BEFORE INSERT ON score_history WHEN NEW.customer_id = 'poison'
               BEGIN SELECT RAISE(ABORT, 'poisoned by the test'); END`,
      postgres: `CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN IF NEW.customer_id = 'poison' THEN RAISE EXCEPTION 'poisoned by the test'; END IF;
                 RETURN NEW; END $$;
                 CREATE TRIGGER poison BEFORE INSERT ON score_history FOR EACH ROW EXECUTE FUNCTION poison()`,
    });
    const ids = ['a', 'b', 'c', 'poison', 'a', 'b', 'c', 'a'];
    const version = async (id: string): Promise<number> =>
      (await t.api.get(`/api/customers/${id}/health-score/history?limit=1`)).body.data[0].version;
    // Requests sent together usually share a batch, but arrival is up to the scheduler: send
    // the burst until the refused update was in a batch with others (it is then written again
    // one by one: more updates written than sent), checking every answer each time.
    let rewritten = false;
    for (let round = 0; round < 20 && !rewritten; round++) {
      const before = await batches(t);
      const versionsBefore = new Map<string, number>();
      for (const id of ['a', 'b', 'c']) versionsBefore.set(id, await version(id));
      const answers = await Promise.all(ids.map((id, i) => post(t, id, { usage: i / 10 })));
      assert.deepEqual(
        answers.map((r) => r.status),
        [200, 200, 200, 500, 200, 200, 200, 200],
      );
      assert.equal(answers[3]?.body.error.code, 'internal_error');
      assert.doesNotMatch(answers[3]?.raw ?? '', /poison/, 'the database message stays in the log');
      assert.equal((await t.api.get('/api/customers/poison/health-score')).status, 404);
      for (const id of ['a', 'b', 'c']) {
        const n = ids.filter((x) => x === id).length;
        const expected = (versionsBefore.get(id) as number) + n;
        assert.equal(await version(id), expected, `${id} has every acknowledged update`);
      }
      rewritten = (await batches(t)).sum - before.sum > ids.length;
    }
    assert.ok(rewritten, 'in 20 bursts the refused update never shared a batch');
    await onDatabase(t, {
      sqlite: 'DROP TRIGGER poison',
      postgres: 'DROP TRIGGER poison ON score_history; DROP FUNCTION poison()',
    });
  });
});
