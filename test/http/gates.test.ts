// Gates on factor rules (docs/scoring.md, "Gates"; docs/api.md, "Factor rules"): while a gated
// factor is below its gate, the customer's status is at most the gate's band — 40 days overdue
// never reads as healthy — with its health_score unchanged, `gated_by` naming the gate and the
// explanation showing it. Every path that bands a score applies it (a rule put, a metric or factor
// write, a weights or thresholds change, an override's end, the rescore job); an override pins the
// status; calibration judges scores without gates; a refused gate names its field and stores nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RescoreJob } from '../../src/rescore-job.ts';
import { buildTestApp, customerBody, type TestApp, TestClock } from '../helpers/app.ts';
import { refusedWithoutChange } from '../helpers/refusals.ts';

const DAY = 86_400_000;
const quiet = { info: () => {}, error: () => {} };

/** invoice_overdue from the days an invoice is overdue: 0 days scores 1, 60 days or more 0 (40 days: 1/3). */
const overdueRule = {
  metric: 'days_overdue',
  aggregate: 'last',
  scale: { type: 'linear', from: 60, to: 0 },
};
const criticalGate = { below: 0.5, status: 'critical' };

const putRule = (t: TestApp, factor: string, body: unknown) =>
  t.api.request('PUT', `/api/settings/health-score/factors/${factor}`, body);
const score = async (t: TestApp, id: string) => (await t.api.get(`/api/customers/${id}/health-score`)).body;
const history = async (t: TestApp, id: string) =>
  (await t.api.get(`/api/customers/${id}/health-score/history?limit=100`)).body.data as {
    version: number;
    status: string;
    reason: string;
    health_score: number;
  }[];
const statusEvents = async (t: TestApp, id: string) =>
  (
    (await t.api.get('/api/events?type=customer.status.changed&limit=100')).body.data as {
      data: { customer_id: string; status: string; previous_status: string | null };
    }[]
  )
    .filter((e) => e.data.customer_id === id)
    .map((e) => [e.data.previous_status, e.data.status]);

describe('gates', () => {
  const clock = new TestClock('2026-05-15T12:00:00.000Z');
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ now: clock.now });
    for (const id of ['late', 'paid']) {
      assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
      const posted = await t.api.post(`/api/customers/${id}/health-score`, {
        factors: { usage: 1, support: 1 },
      });
      assert.equal(posted.status, 200, posted.raw);
    }
    assert.equal((await putRule(t, 'invoice_overdue', overdueRule)).status, 200);
    await t.api.post('/api/customers/late/metrics', { values: { days_overdue: 40 } });
    await t.api.post('/api/customers/paid/metrics', { values: { days_overdue: 0 } });
  });
  after(() => t.close());

  test('without a gate, 40 days overdue reads healthy: the weighted mean hides it', async () => {
    const late = await score(t, 'late');
    assert.deepEqual(late.factors, { usage: 1, support: 1, invoice_overdue: 0.333333 });
    assert.equal(late.health_score, 0.777778);
    assert.equal(late.status, 'healthy');
    assert.deepEqual(late.gated_by, []);
  });

  test('a preview of the gate counts the move it would make, and saves nothing', async () => {
    const before = await score(t, 'late');
    const res = await t.api.post('/api/settings/health-score/factors/invoice_overdue/preview', {
      ...overdueRule,
      gate: criticalGate,
    });
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.band_changes, 1, res.raw);
    assert.equal(res.body.scores_changed, 0, 'a gate moves no score');
    assert.equal(res.body.bands.critical, 1, res.raw);
    assert.deepEqual(await score(t, 'late'), before);
    assert.equal((await t.api.get('/api/settings/health-score/factors/invoice_overdue')).body.gate, null);
  });

  test('a rule put that only adds the gate re-bands the customer it caps, with a version and a status event', async () => {
    const versions = (await history(t, 'late')).length;
    const paidVersions = (await history(t, 'paid')).length;
    const res = await putRule(t, 'invoice_overdue', { ...overdueRule, gate: criticalGate });
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body.gate, criticalGate);
    assert.deepEqual((await t.api.get('/api/settings/health-score/factors/invoice_overdue')).body, res.body);
    const listed = (await t.api.get('/api/settings/health-score/factors')).body.data;
    assert.deepEqual(listed, [res.body]);

    const late = await score(t, 'late');
    assert.equal(late.status, 'critical');
    assert.equal(late.health_score, 0.777778, 'the score itself is unchanged');
    assert.deepEqual(late.gated_by, ['invoice_overdue']);
    const [latest, ...older] = await history(t, 'late');
    assert.equal(older.length, versions, 'one new version');
    assert.deepEqual(
      [latest?.reason, latest?.status, latest?.health_score],
      ['rules_changed', 'critical', 0.777778],
    );
    assert.deepEqual((await statusEvents(t, 'late')).at(0), ['healthy', 'critical']);

    const paid = await score(t, 'paid');
    assert.deepEqual([paid.status, paid.gated_by], ['healthy', []]);
    assert.equal((await history(t, 'paid')).length, paidVersions, 'no version where the status stays');

    const critical = (await t.api.get('/api/health-scores?status=critical')).body.data;
    assert.deepEqual(
      critical.map((e: { customer_id: string; gated_by: string[] }) => [e.customer_id, e.gated_by]),
      [['late', ['invoice_overdue']]],
    );
  });

  test("the explanation's item for the gated factor carries the gate and whether it applied", async () => {
    const late = (await t.api.get('/api/customers/late/health-score/explanation')).body;
    assert.equal(late.status, 'critical');
    const item = late.factors.find((f: { factor: string }) => f.factor === 'invoice_overdue');
    assert.deepEqual(item.gate, { below: 0.5, status: 'critical', applied: true });
    const usage = late.factors.find((f: { factor: string }) => f.factor === 'usage');
    assert.equal(usage.gate, undefined, 'a posted factor has no rule, so no gate');
    const paid = (await t.api.get('/api/customers/paid/health-score/explanation')).body;
    const paidItem = paid.factors.find((f: { factor: string }) => f.factor === 'invoice_overdue');
    assert.deepEqual(paidItem.gate, { below: 0.5, status: 'critical', applied: false });
  });

  test('factor and metric writes keep the cap while the factor is below the gate, and lift it above', async () => {
    const posted = await t.api.post('/api/customers/late/health-score', {
      factors: { usage: 1, support: 0.9 },
    });
    assert.equal(posted.status, 200, posted.raw);
    assert.deepEqual([posted.body.status, posted.body.gated_by], ['critical', ['invoice_overdue']]);

    const seats = await t.api.post('/api/customers/late/metrics', { values: { seats: 3 } });
    assert.equal(seats.status, 200, seats.raw);
    assert.deepEqual(
      [seats.body.health_score.status, seats.body.health_score.gated_by],
      ['critical', ['invoice_overdue']],
      'a write no rule reads answers the score with its gate',
    );

    clock.advance(1000);
    const paidUp = await t.api.post('/api/customers/late/metrics', { values: { days_overdue: 0 } });
    assert.equal(paidUp.status, 200, paidUp.raw);
    assert.deepEqual([paidUp.body.health_score.status, paidUp.body.health_score.gated_by], ['healthy', []]);
    assert.deepEqual((await statusEvents(t, 'late')).at(0), ['critical', 'healthy']);

    clock.advance(1000);
    const overdue = await t.api.post('/api/customers/late/metrics', { values: { days_overdue: 40 } });
    assert.deepEqual(
      [overdue.body.health_score.status, overdue.body.health_score.gated_by],
      ['critical', ['invoice_overdue']],
    );
  });

  test('an override pins the status: no gate caps it, and the gate applies again once it is removed', async () => {
    const set = await t.api.request('PUT', '/api/customers/late/health-score/override', {
      health_score: 0.9,
      reason: 'paid by wire; the invoice system lags',
    });
    assert.equal(set.status, 200, set.raw);
    assert.deepEqual([set.body.status, set.body.gated_by], ['healthy', []]);
    assert.deepEqual([(await score(t, 'late')).status, (await score(t, 'late')).gated_by], ['healthy', []]);
    const explained = (await t.api.get('/api/customers/late/health-score/explanation')).body;
    const item = explained.factors.find((f: { factor: string }) => f.factor === 'invoice_overdue');
    assert.deepEqual(item.gate, { below: 0.5, status: 'critical', applied: false });

    const removed = await t.api.request('DELETE', '/api/customers/late/health-score/override');
    assert.equal(removed.status, 200, removed.raw);
    assert.deepEqual([removed.body.status, removed.body.gated_by], ['critical', ['invoice_overdue']]);
  });

  test('an override that has ended gives way to the gated status at once', async () => {
    const set = await t.api.request('PUT', '/api/customers/late/health-score/override', {
      health_score: 0.9,
      reason: 'for a day',
      expires_at: new Date(clock.ms + DAY).toISOString(),
    });
    assert.equal(set.status, 200, set.raw);
    clock.advance(DAY + 1);
    const late = await score(t, 'late');
    assert.deepEqual([late.status, late.gated_by, late.override], ['critical', ['invoice_overdue'], null]);
    const explained = (await t.api.get('/api/customers/late/health-score/explanation')).body;
    assert.equal(explained.status, 'critical');
    // Recorded by the next write, as the rescore job would.
    await t.api.request('PUT', '/api/customers/late/health-score/override', {
      health_score: 0.5,
      reason: 'x',
    });
    await t.api.request('DELETE', '/api/customers/late/health-score/override');
    assert.equal((await score(t, 'late')).status, 'critical');
  });

  test('weights and thresholds changes keep the gates', async () => {
    const thresholds = await t.api.request('PATCH', '/api/settings/health-score/thresholds', {
      healthy: 0.6,
    });
    assert.equal(thresholds.status, 200, thresholds.raw);
    assert.deepEqual(
      [(await score(t, 'late')).status, (await score(t, 'late')).gated_by],
      ['critical', ['invoice_overdue']],
    );
    const weights = await t.api.request('PATCH', '/api/settings/health-score/weights', {
      weights: { usage: 0.5, support: 0.25, invoice_overdue: 0.25 },
    });
    assert.equal(weights.status, 200, weights.raw);
    const late = await score(t, 'late');
    assert.equal(late.health_score, 0.808333);
    assert.deepEqual([late.status, late.gated_by], ['critical', ['invoice_overdue']]);
    const preview = await t.api.post('/api/settings/health-score/weights/preview', {
      weights: { usage: 0.4, support: 0.4, invoice_overdue: 0.2 },
    });
    assert.equal(preview.status, 200, preview.raw);
    assert.equal(preview.body.band_changes, 0, 'the gate keeps late critical under these weights too');
    assert.equal(
      (await t.api.request('PATCH', '/api/settings/health-score/thresholds', { healthy: 0.7 })).status,
      200,
    );
  });

  test('a gate of at_risk caps a healthy score at at_risk and leaves a critical one critical', async () => {
    const res = await putRule(t, 'invoice_overdue', {
      ...overdueRule,
      gate: { below: 0.5, status: 'at_risk' },
    });
    assert.equal(res.status, 200, res.raw);
    const late = await score(t, 'late');
    assert.deepEqual([late.status, late.gated_by], ['at_risk', ['invoice_overdue']]);
    assert.deepEqual((await statusEvents(t, 'late')).at(0), ['critical', 'at_risk']);
    assert.equal((await putRule(t, 'invoice_overdue', { ...overdueRule, gate: criticalGate })).status, 200);
  });

  test('calibration judges the score under the thresholds, without gates', async () => {
    const recorded = await t.api.post('/api/customers/late/outcomes', { outcome: 'churned' });
    assert.equal(recorded.status, 201, recorded.raw);
    assert.equal((await score(t, 'late')).status, 'critical');
    const report = (await t.api.get('/api/health-scores/calibration')).body;
    const bands = Object.fromEntries(
      report.bands.map((b: { status: string; churned: number }) => [b.status, b.churned]),
    );
    assert.deepEqual(bands, { healthy: 1, at_risk: 0, critical: 0 }, JSON.stringify(report.bands));
  });

  test('a gate put with null, and a deleted rule, lift the gate', async () => {
    const lifted = await putRule(t, 'invoice_overdue', { ...overdueRule, gate: null });
    assert.equal(lifted.status, 200, lifted.raw);
    assert.equal(lifted.body.gate, null);
    assert.deepEqual([(await score(t, 'late')).status, (await score(t, 'late')).gated_by], ['healthy', []]);
    assert.deepEqual((await statusEvents(t, 'late')).at(0), ['critical', 'healthy']);

    assert.equal((await putRule(t, 'invoice_overdue', { ...overdueRule, gate: criticalGate })).status, 200);
    assert.equal((await score(t, 'late')).status, 'critical');
    const deleted = await t.api.request('DELETE', '/api/settings/health-score/factors/invoice_overdue');
    assert.equal(deleted.status, 200, deleted.raw);
    const late = await score(t, 'late');
    assert.deepEqual([late.factors, late.status, late.gated_by], [{ usage: 1, support: 0.9 }, 'healthy', []]);
  });
});

describe('a refused gate', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    assert.equal((await t.api.post('/api/customers', customerBody('c'))).status, 201);
    await t.api.post('/api/customers/c/health-score', { factors: { usage: 1 } });
    await t.api.post('/api/customers/c/metrics', { values: { days_overdue: 40 } });
    assert.equal((await putRule(t, 'invoice_overdue', overdueRule)).status, 200);
  });
  after(() => t.close());

  test('names its field and stores nothing: neither the rule nor any score', async () => {
    const stored = async () => ({
      rules: (await t.api.get('/api/settings/health-score/factors')).body,
      score: await score(t, 'c'),
    });
    const cases: [unknown, string, string][] = [
      [{ below: 1.5, status: 'critical' }, 'parameter_invalid', 'gate.below'],
      [{ below: -0.1, status: 'critical' }, 'parameter_invalid', 'gate.below'],
      [{ below: '0.5', status: 'critical' }, 'parameter_invalid', 'gate.below'],
      [{ below: null, status: 'critical' }, 'parameter_invalid', 'gate.below'],
      [{ below: 0.5, status: 'healthy' }, 'parameter_invalid', 'gate.status'],
      [{ below: 0.5, status: 3 }, 'parameter_invalid', 'gate.status'],
      [{ status: 'critical' }, 'parameter_missing', 'gate.below'],
      [{ below: 0.5 }, 'parameter_missing', 'gate.status'],
      [{ below: 0.5, status: 'critical', above: 0.1 }, 'parameter_unknown', 'gate.above'],
      ['critical', 'parameter_invalid', 'gate'],
      [[0.5, 'critical'], 'parameter_invalid', 'gate'],
    ];
    for (const [gate, code, param] of cases) {
      await refusedWithoutChange(
        stored,
        () => putRule(t, 'invoice_overdue', { ...overdueRule, gate }),
        400,
        code,
        param,
      );
      await refusedWithoutChange(
        stored,
        () =>
          t.api.post('/api/settings/health-score/factors/invoice_overdue/preview', { ...overdueRule, gate }),
        400,
        code,
        param,
      );
    }
  });
});

describe('gates and the rescore job', () => {
  const clock = new TestClock('2026-05-15T12:00:00.000Z');
  let t: TestApp;
  let job: RescoreJob;
  before(async () => {
    t = await buildTestApp({ now: clock.now });
    job = new RescoreJob({ store: t.store, intervalMs: 3_600_000, log: quiet, now: clock.now, batch: 10 });
    assert.equal((await t.api.post('/api/customers', customerBody('aging'))).status, 201);
    await t.api.post('/api/customers/aging/health-score', { factors: { usage: 1 } });
    const rule = { ...overdueRule, window_days: 30, gate: criticalGate };
    assert.equal((await putRule(t, 'invoice_overdue', rule)).status, 200);
    const at = new Date(clock.ms - 29 * DAY).toISOString();
    assert.equal(
      (await t.api.post('/api/customers/aging/metrics', { values: { days_overdue: 40 }, at })).status,
      200,
    );
  });
  after(() => t.close());

  test('as the point that gates ages out of its window, the job lifts the gate (time_passed)', async () => {
    const gated = await score(t, 'aging');
    assert.deepEqual([gated.status, gated.gated_by], ['critical', ['invoice_overdue']]);
    clock.advance(DAY + 1);
    assert.deepEqual(await job.runOnce(), { checked: 1, rescored: 1, opened: 0 });
    const lifted = await score(t, 'aging');
    assert.deepEqual([lifted.factors, lifted.status, lifted.gated_by], [{ usage: 1 }, 'healthy', []]);
    const [latest] = await history(t, 'aging');
    assert.deepEqual([latest?.reason, latest?.status], ['time_passed', 'healthy']);
    assert.deepEqual((await statusEvents(t, 'aging')).at(0), ['critical', 'healthy']);
  });
});
