// Background jobs isolate accounts (docs/operations.md, "Background jobs"): an account whose
// rescore fails, or a kind of row whose pruning fails, is logged and counted in
// vitals_job_failures_total{job}, and the others go on in the same pass. The failures are real:
// an account's rule made unreadable, a table made to refuse deletes, by SQL of the test's own.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RescoreJob } from '../../src/rescore-job.ts';
import { RetentionJob } from '../../src/retention.ts';
import { buildTestApp, type Client, customerBody, type TestApp, TestClock } from '../helpers/app.ts';
import { onDatabase } from '../helpers/database.ts';

const DAY = 86_400_000;

/** A job's log: its error lines kept to be read. */
function recordingLog() {
  const errors: Record<string, unknown>[] = [];
  return {
    errors,
    log: { info: () => {}, error: (obj: object) => errors.push(obj as Record<string, unknown>) },
  };
}

const failures = async (t: TestApp, job: string): Promise<number> => {
  const text = (await t.inject({ method: 'GET', url: '/metrics' })).raw;
  const line = text.split('\n').find((l) => l.startsWith(`vitals_job_failures_total{job="${job}"}`));
  return line ? Number(line.split(' ')[1]) : 0;
};

describe('the rescore job: one account failing leaves the others their time_passed versions', () => {
  const clock = new TestClock('2026-03-01T00:00:00.000Z');
  let t: TestApp;
  let broken: Client;
  let healthy: Client;
  let brokenId: string;
  before(async () => {
    t = await buildTestApp({ now: clock.now });
    broken = await t.newAccount('broken');
    healthy = await t.newAccount('healthy');
    const rule = {
      metric: 'logins',
      aggregate: 'sum',
      window_days: 7,
      scale: { type: 'linear', from: 0, to: 10 },
    };
    const at = (daysAgo: number) => new Date(clock.ms - daysAgo * DAY).toISOString();
    assert.equal(
      (await broken.request('PUT', '/api/settings/health-score/factors/broken_usage', rule)).status,
      200,
    );
    assert.equal(
      (await healthy.request('PUT', '/api/settings/health-score/factors/usage', rule)).status,
      200,
    );
    // The broken account's customers are due first, and more of them than a page of the pass.
    for (const id of ['b1', 'b2', 'b3']) {
      assert.equal((await broken.post('/api/customers', customerBody(id))).status, 201);
      const res = await broken.post(`/api/customers/${id}/metrics`, { values: { logins: 5 }, at: at(6.5) });
      assert.equal(res.status, 200, res.raw);
    }
    assert.equal((await healthy.post('/api/customers', customerBody('h1'))).status, 201);
    const res = await healthy.post('/api/customers/h1/metrics', { values: { logins: 5 }, at: at(6) });
    assert.equal(res.status, 200, res.raw);
    const due = await t.store.dueForRederive(clock.ms + 7 * DAY, 10);
    brokenId = due.find((d) => d.customerId === 'b1')?.accountId as string;
    // A rule no code can read (its scale is JSON null): every rescore of that account throws.
    await onDatabase(t, {
      sqlite: `UPDATE factor_rules SET scale = 'null' WHERE factor = 'broken_usage'`,
      postgres: `UPDATE factor_rules SET scale = 'null'::json WHERE factor = 'broken_usage'`,
    });
  });
  after(() => t.close());

  const reasons = async (api: Client, id: string) =>
    (await api.get(`/api/customers/${id}/health-score/history`)).body.data.map(
      (h: { reason: string }) => h.reason,
    );

  test('the pass goes on past the failed account, which is logged with its id and counted', async () => {
    const { errors, log } = recordingLog();
    const job = new RescoreJob({
      store: t.store,
      intervalMs: 3_600_000,
      log,
      now: clock.now,
      batch: 2,
      metrics: t.metrics,
    });
    clock.advance(DAY + 1);
    const before = await failures(t, 'rescore');
    assert.deepEqual(await job.runOnce(), { checked: 1, rescored: 1, opened: 0 });
    assert.deepEqual(await reasons(healthy, 'h1'), ['time_passed', 'metrics_updated']);
    assert.deepEqual((await healthy.get('/api/customers/h1/health-score')).body.factors, { usage: 0 });
    for (const id of ['b1', 'b2', 'b3']) assert.deepEqual(await reasons(broken, id), ['metrics_updated'], id);
    assert.equal(await failures(t, 'rescore'), before + 1);
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.equal(errors[0]?.accountId, brokenId);
    assert.ok(errors[0]?.err instanceof Error);
  });

  test('its customers stay due: the next pass tries the account again, and nothing else is due', async () => {
    const { errors, log } = recordingLog();
    const job = new RescoreJob({
      store: t.store,
      intervalMs: 3_600_000,
      log,
      now: clock.now,
      batch: 2,
      metrics: t.metrics,
    });
    const before = await failures(t, 'rescore');
    assert.deepEqual(await job.runOnce(), { checked: 0, rescored: 0, opened: 0 });
    assert.equal(await failures(t, 'rescore'), before + 1);
    assert.equal(errors[0]?.accountId, brokenId);
    const due = await t.store.dueForRederive(clock.ms, 10);
    assert.deepEqual(due.map((d) => d.customerId).sort(), ['b1', 'b2', 'b3']);
  });
});

describe('the retention job: one kind failing leaves the others pruned', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    await onDatabase(t, {
      sqlite: `CREATE TRIGGER refuse BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
      postgres: `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
                 BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
                 CREATE TRIGGER refuse BEFORE DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse()`,
    });
  });
  after(() => t.close());

  test('audit entries that cannot be deleted: logged and counted; the events and metric points after it still pruned', async () => {
    const api = await t.newAccount('retention');
    assert.equal((await api.post('/api/customers', customerBody('r1'))).status, 201);
    assert.equal((await api.post('/api/customers/r1/metrics', { values: { logins: 1 } })).status, 200);
    const audited = (await api.get('/api/audit-log')).body;
    assert.ok(audited.data.length > 0, JSON.stringify(audited));
    const { errors, log } = recordingLog();
    const job = new RetentionJob({
      store: t.store,
      keepMs: 30 * DAY,
      auditKeepMs: 365 * DAY,
      metricKeepMs: 400 * DAY,
      log,
      metrics: t.metrics,
      pauseMs: 0,
      now: () => Date.now() + 401 * DAY,
    });
    const before = await failures(t, 'retention');
    const pass = await job.runOnce();
    assert.ok(pass.events > 0, JSON.stringify(pass));
    assert.equal(pass.metricPoints, 1, JSON.stringify(pass));
    assert.equal(pass.audit, 0);
    assert.deepEqual((await api.get('/api/events')).body.data, []);
    assert.deepEqual((await api.get('/api/customers/r1/metrics')).body.data, []);
    assert.deepEqual((await api.get('/api/audit-log')).body, audited, 'the audit log as it was');
    assert.equal(await failures(t, 'retention'), before + 1);
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.equal(errors[0]?.kind, 'audit');
  });
});
