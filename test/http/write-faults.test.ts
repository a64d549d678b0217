// When the database throws a whole batch of writes away (docs/operations.md, "When a write cannot
// be committed"): every request of the batch is answered, the ones that did nothing wrong with a
// 503 and Retry-After, nothing of the batch is stored, the process lives on, and the next batch
// commits. SQLite: a trigger that rolls back the whole group-commit transaction. PostgreSQL: the
// connection running a batch of score updates killed with pg_terminate_backend.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import postgres from 'postgres';
import { buildTestApp, customerBody, type Response, type TestApp } from '../helpers/app.ts';
import { onDatabase } from '../helpers/database.ts';
import { appBackend } from '../helpers/stores.ts';

const backend = appBackend();

function assertUnavailable(res: Response, what: string): void {
  assert.equal(res.status, 503, `${what}: ${res.raw}`);
  assert.equal(res.headers['retry-after'], '1', what);
  assert.equal(res.body.error.code, 'service_unavailable', what);
}

describe('a SQLite group-commit transaction rolled back by the database', {
  skip: backend === 'sqlite' ? false : 'SQLite only (VITALS_TEST_BACKEND is postgres)',
}, () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    await onDatabase(t, {
      sqlite: `CREATE TRIGGER poison BEFORE INSERT ON customers WHEN NEW.id LIKE 'poison%'
               BEGIN SELECT RAISE(ROLLBACK, 'poisoned by the test'); END`,
      postgres: '',
    });
  });
  after(() => t.close());

  test('its innocent requests get 503 and stored nothing; retried, they commit', async () => {
    // Requests sent together usually share a group commit, but arrival is up to the scheduler:
    // send the burst until the refused create shared its transaction with others.
    const refused: string[] = [];
    const created: string[] = [];
    for (let round = 0; round < 20 && refused.length === 0; round++) {
      const ids = ['a', 'b', 'poison', 'c', 'd'].map((id) => `${id}${round}`);
      const answers = await Promise.all(ids.map((id) => t.api.post('/api/customers', customerBody(id))));
      for (const [i, res] of answers.entries()) {
        const id = ids[i] as string;
        if (id.startsWith('poison')) {
          assert.equal(res.status, 500, res.raw);
          assert.equal(res.body.error.code, 'internal_error');
          assert.doesNotMatch(res.raw, /poison/, 'the database message stays in the log');
        } else if (res.status === 503) {
          assertUnavailable(res, id);
          refused.push(id);
        } else {
          assert.equal(res.status, 201, `${id}: ${res.raw}`);
          created.push(id);
        }
      }
    }
    assert.notEqual(refused.length, 0, 'in 20 bursts the poisoned create never shared a transaction');
    for (const id of refused) assert.equal((await t.api.get(`/api/customers/${id}`)).status, 404, id);
    for (const id of created) assert.equal((await t.api.get(`/api/customers/${id}`)).status, 200, id);
    assert.match(t.logs(), /"code":"SQLITE_TRANSACTION_LOST"|the database is not reachable/);

    await onDatabase(t, { sqlite: 'DROP TRIGGER poison', postgres: '' });
    for (const id of [...refused, 'poison-retried']) {
      assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201, id);
    }
    const all = await t.api.get('/api/customers?limit=100');
    assert.deepEqual(
      all.body.customers.map((c: { id: string }) => c.id).sort(),
      [...created, ...refused, 'poison-retried'].sort(),
    );
  });
});

describe('a PostgreSQL connection killed while it writes a batch of score updates', {
  skip: backend === 'postgres' ? false : 'PostgreSQL only (set VITALS_TEST_BACKEND=postgres)',
}, () => {
  let t: TestApp;
  let sql: postgres.Sql;
  before(async () => {
    t = await buildTestApp();
    sql = postgres(t.databaseUrl as string, { max: 1, onnotice: () => {} });
    for (const id of ['gate', 'sleepy', 'd', 'e']) {
      assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
    }
    // 'gate' waits for the test's advisory lock, holding its batch in flight while the next
    // batch gathers behind it; 'sleepy' holds the next batch's connection until it is killed.
    await onDatabase(t, {
      sqlite: '',
      postgres: `CREATE FUNCTION hold() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN
                   IF NEW.customer_id = 'gate' THEN
                     PERFORM pg_advisory_lock(4242); PERFORM pg_advisory_unlock(4242);
                   END IF;
                   IF NEW.customer_id = 'sleepy' THEN PERFORM pg_sleep(60); END IF;
                   RETURN NEW;
                 END $$;
                 CREATE TRIGGER hold BEFORE INSERT ON score_history FOR EACH ROW EXECUTE FUNCTION hold()`,
    });
  });
  after(async () => {
    await sql.end();
    await t.close();
  });

  /** The pid of the app's backend waiting on `event`, once there is one. */
  async function waiting(event: 'advisory' | 'PgSleep'): Promise<number> {
    for (;;) {
      const [row] = await sql<{ pid: number }[]>`
        SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event = ${event} AND pid <> pg_backend_pid()`;
      if (row) return row.pid;
      await delay(5);
    }
  }

  const post = (id: string, usage: number) =>
    t.api.post(`/api/customers/${id}/health-score`, { factors: { usage } });

  test('the batch is answered with 503, nothing of it is stored, and the next batch commits', async () => {
    await sql`SELECT pg_advisory_lock(4242)`;
    const gate = post('gate', 0.5);
    await waiting('advisory');
    // Queued behind the gate's batch (one batch per account at a time): they leave together.
    const batch = ['sleepy', 'd', 'e'].map((id) => post(id, 0.25));
    await sql`SELECT pg_advisory_unlock(4242)`;
    const pid = await waiting('PgSleep');
    const [killed] = await sql<{ ok: boolean }[]>`SELECT pg_terminate_backend(${pid}) AS ok`;
    assert.equal(killed?.ok, true);

    assert.equal((await gate).status, 200);
    const answers = await Promise.all(batch);
    assertUnavailable(answers[0] as Response, 'sleepy');
    for (const [i, id] of ['sleepy', 'd', 'e'].entries()) {
      const res = answers[i] as Response;
      const stored = await t.api.get(`/api/customers/${id}/health-score`);
      // d and e usually share sleepy's batch; one that reached the server later is its own batch.
      if (res.status === 503) assert.equal(stored.status, 404, `${id}: nothing of the batch is stored`);
      else assert.equal(stored.body.factors.usage, 0.25, `${id}: ${res.raw}`);
    }

    await onDatabase(t, { sqlite: '', postgres: 'DROP TRIGGER hold ON score_history' });
    const retried = await Promise.all(['sleepy', 'd', 'e'].map((id) => post(id, 0.75)));
    assert.deepEqual(
      retried.map((r) => r.status),
      [200, 200, 200],
    );
    for (const id of ['sleepy', 'd', 'e']) {
      assert.equal((await t.api.get(`/api/customers/${id}/health-score`)).body.factors.usage, 0.75);
    }
  });
});
