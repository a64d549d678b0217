// Outcomes and calibration through HTTP (docs/api.md, "Outcomes and calibration"; docs/scoring.md,
// "Does the score predict churn?"): outcomes recorded, listed, deleted and batched; the report
// judges each by the score its customer had `horizon_days` before it; every refusal names its field
// and stores nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, type TestApp, TestClock } from '../helpers/app.ts';
import { refusedWithoutChange } from '../helpers/refusals.ts';

const DAY = 86_400_000;
const clock = new TestClock('2026-06-30T12:00:00.000Z');
let t: TestApp;
before(async () => {
  t = await buildTestApp({ now: clock.now });
});
after(() => t.close());

const iso = (ms: number) => new Date(ms).toISOString();
async function customer(id: string, metadata: Record<string, unknown> = {}): Promise<void> {
  const res = await t.api.post('/api/customers', { ...customerBody(id), metadata });
  assert.equal(res.status, 201, res.raw);
}
const record = (id: string, body: unknown) => t.api.post(`/api/customers/${id}/outcomes`, body);

describe('outcomes', () => {
  test('recorded (201), listed newest first across pages, deleted', async () => {
    await customer('o_a');
    const first = await record('o_a', {
      outcome: 'retained',
      at: iso(clock.ms - 400 * DAY),
      note: 'renewed 2025',
    });
    assert.equal(first.status, 201, first.raw);
    assert.match(first.body.id, /^out_/);
    assert.deepEqual(first.body, {
      id: first.body.id,
      customer_id: 'o_a',
      outcome: 'retained',
      at: iso(clock.ms - 400 * DAY),
      note: 'renewed 2025',
      created_at: iso(clock.ms),
    });
    const second = await record('o_a', { outcome: 'churned' });
    assert.equal(second.body.at, iso(clock.ms), 'now unless given');
    assert.equal(second.body.note, null);
    const page1 = await t.api.get('/api/customers/o_a/outcomes?limit=1');
    assert.deepEqual(
      page1.body.data.map((o: { id: string }) => o.id),
      [second.body.id],
    );
    assert.equal(page1.body.has_more, true);
    const page2 = await t.api.get(`/api/customers/o_a/outcomes?limit=1&starting_after=${second.body.id}`);
    assert.deepEqual(page2.body, { data: [first.body], has_more: false });

    const gone = await t.api.request('DELETE', `/api/customers/o_a/outcomes/${second.body.id}`);
    assert.deepEqual(gone.body, { id: second.body.id, deleted: true });
    const again = await t.api.request('DELETE', `/api/customers/o_a/outcomes/${second.body.id}`);
    assert.equal(again.status, 404);
    assert.equal(again.body.error.code, 'outcome_not_found');
    assert.deepEqual((await t.api.get('/api/customers/o_a/outcomes')).body.data, [first.body]);
  });

  test('a batch records each item in order; a refused item alone', async () => {
    await customer('o_b');
    const res = await t.api.post('/api/outcomes/batch', {
      outcomes: [
        { customer_id: 'o_b', outcome: 'retained', at: iso(clock.ms - DAY) },
        { customer_id: 'nobody', outcome: 'churned' },
        { customer_id: 'o_b', outcome: 'lost' },
        { customer_id: 'o_b', outcome: 'churned', note: 'moved to a competitor' },
      ],
    });
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(
      res.body.results.map((r: { status: number; error?: { code: string; param?: string } }) => [
        r.status,
        r.error?.code,
        r.error?.param,
      ]),
      [
        [201, undefined, undefined],
        [404, 'customer_not_found', undefined],
        [400, 'parameter_invalid', 'outcome'],
        [201, undefined, undefined],
      ],
    );
    assert.equal((await t.api.get('/api/customers/o_b/outcomes')).body.data.length, 2);
  });

  test('deleting the customer deletes its outcomes', async () => {
    await customer('o_gone');
    await record('o_gone', { outcome: 'churned' });
    assert.equal((await t.api.request('DELETE', '/api/customers/o_gone')).status, 200);
    await customer('o_gone');
    assert.deepEqual((await t.api.get('/api/customers/o_gone/outcomes')).body.data, []);
  });

  test('refusals name their field and store nothing', async () => {
    await customer('o_r');
    const stored = async () => (await t.api.get('/api/customers/o_r/outcomes?limit=100')).body;
    const cases: [unknown, number, string, string | undefined][] = [
      [{ outcome: 'lost' }, 400, 'parameter_invalid', 'outcome'],
      [{}, 400, 'parameter_missing', 'outcome'],
      [{ outcome: 'churned', at: iso(clock.ms + 60_000) }, 400, 'parameter_invalid', 'at'],
      [{ outcome: 'churned', at: '2026-06-01' }, 400, 'parameter_invalid', 'at'],
      [{ outcome: 'churned', at: 'yesterday' }, 400, 'parameter_invalid', 'at'],
      [{ outcome: 'churned', note: 'x'.repeat(501) }, 400, 'parameter_invalid', 'note'],
      [{ outcome: 'churned', reason: 'x' }, 400, 'parameter_unknown', 'reason'],
    ];
    for (const [body, status, code, param] of cases) {
      await refusedWithoutChange(stored, () => record('o_r', body), status, code, param);
    }
    await refusedWithoutChange(
      stored,
      () => record('nobody', { outcome: 'churned' }),
      404,
      'customer_not_found',
      undefined,
    );
    await refusedWithoutChange(
      stored,
      () => t.api.request('DELETE', '/api/customers/o_r/outcomes/out_nothing'),
      404,
      'outcome_not_found',
      undefined,
    );
  });
});

describe('calibration', () => {
  /** A customer whose score was `early` 100 days before its outcome and `late` on the day; then the outcome. */
  async function history(id: string, early: number, late: number, outcome: string, plan: string) {
    await customer(id, { plan });
    const at = clock.ms;
    clock.ms = at - 100 * DAY;
    await t.api.post(`/api/customers/${id}/health-score`, { factors: { usage: early, support: early } });
    clock.ms = at - DAY;
    await t.api.post(`/api/customers/${id}/health-score`, { factors: { usage: late, support: 1 - late } });
    clock.ms = at;
    const res = await record(id, { outcome, at: iso(at) });
    assert.equal(res.status, 201, res.raw);
  }

  before(async () => {
    // Judged 90 days ahead, the early scores separate the outcomes; on the day, the late ones do not.
    await history('c1', 0.2, 0.5, 'churned', 'pro');
    await history('c2', 0.3, 0.9, 'churned', 'basic');
    await history('r1', 0.8, 0.5, 'retained', 'pro');
    await history('r2', 0.9, 0.1, 'retained', 'basic');
    await customer('late_scored');
    await record('late_scored', { outcome: 'churned', at: iso(clock.ms - 500 * DAY) });
  });

  test('judged by the score the horizon before: AUC, bands, factors', async () => {
    const res = await t.api.get('/api/health-scores/calibration?horizon_days=90');
    assert.equal(res.status, 200, res.raw);
    const r = res.body;
    assert.equal(r.horizon_days, 90);
    assert.ok(r.outcomes.unscored >= 1, 'an outcome from before any score');
    assert.equal(r.auc, 1, 'the early scores rank every retained above every churned');
    const healthy = r.bands.find((b: { status: string }) => b.status === 'healthy');
    const critical = r.bands.find((b: { status: string }) => b.status === 'critical');
    assert.equal(healthy.churned, 0);
    assert.equal(critical.churn_rate, 1);
    assert.deepEqual(
      r.bands.map((b: { status: string }) => b.status),
      ['healthy', 'at_risk', 'critical'],
    );
    assert.equal(r.current_weights_auc, 1, 'no weights: the plain mean of the same factors ranks them alike');
    assert.equal(r.suggested_weights, null, 'fewer than 20 of either kind');
    assert.equal(r.suggested_auc, null);
    assert.ok(r.factors.some((f: { factor: string; auc: number }) => f.factor === 'usage' && f.auc === 1));
  });

  test('on the day itself the late scores are used, and a segment narrows the outcomes', async () => {
    const sameDay = (await t.api.get('/api/health-scores/calibration')).body;
    assert.equal(sameDay.horizon_days, 0);
    assert.notEqual(sameDay.auc, 1);
    const pro = (await t.api.get('/api/health-scores/calibration?horizon_days=90&metadata[plan]=pro')).body;
    assert.deepEqual(pro.outcomes, { churned: 1, retained: 1, unscored: 0 });
  });

  test('refusals: horizon outside 0–365 or not an integer, an unknown parameter', async () => {
    const stored = async () => (await t.api.get('/api/customers/c1/outcomes')).body;
    for (const [query, code, param] of [
      ['horizon_days=366', 'parameter_invalid', 'horizon_days'],
      ['horizon_days=-1', 'parameter_invalid', 'horizon_days'],
      ['horizon_days=1.5', 'parameter_invalid', 'horizon_days'],
      ['horizon_days=soon', 'parameter_invalid', 'horizon_days'],
      ['window=30', 'parameter_unknown', 'window'],
    ] as const) {
      await refusedWithoutChange(
        stored,
        () => t.api.get(`/api/health-scores/calibration?${query}`),
        400,
        code,
        param,
      );
    }
  });
});
