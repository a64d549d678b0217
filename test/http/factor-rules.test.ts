// Factor rules through HTTP (docs/api.md, "Factor rules"; docs/scoring.md, "Factors from metrics"):
// created, read, replaced and deleted; every score a change moves is recomputed in the same
// transaction with history and events; a derived factor cannot be posted; every refusal names its
// field and stores nothing. Metric points are written through the store until their endpoint lands.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/keys.ts';
import {
  buildTestApp,
  type Client,
  customerBody,
  type Response,
  type TestApp,
  TestClock,
} from '../helpers/app.ts';
import { refusedWithoutChange } from '../helpers/refusals.ts';
import { transaction } from '../helpers/transaction.ts';

const DAY = 86_400_000;
const clock = new TestClock('2026-03-31T12:00:00.000Z');
let t: TestApp;
let accountId: string;
before(async () => {
  t = await buildTestApp({ now: clock.now });
  accountId = (await t.store.ensureAccount('default', 0)).id;
});
after(() => t.close());

const put = (api: Client, factor: string, body: unknown) =>
  api.request('PUT', `/api/settings/health-score/factors/${factor}`, body);
const loginsRule = {
  metric: 'logins',
  aggregate: 'sum',
  window_days: 30,
  scale: { type: 'linear', from: 0, to: 20 },
};

async function points(customerId: string, metric: string, values: [number, number][]): Promise<void> {
  await transaction(t.store, (tx) =>
    tx.insertMetricPoints(
      accountId,
      values.map(([daysAgo, value]) => ({ customerId, metric, at: clock.ms - daysAgo * DAY, value })),
    ),
  );
}

async function customer(id: string, factors?: Record<string, number>): Promise<void> {
  assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
  if (factors) assert.equal((await t.api.post(`/api/customers/${id}/health-score`, { factors })).status, 200);
}

describe('factor rules: create, read, replace, delete', () => {
  test('PUT answers the rule as stored; GET one and the list; PUT again replaces it; DELETE removes it', async () => {
    const created = await put(t.api, 'engagement', loginsRule);
    assert.equal(created.status, 200, created.raw);
    assert.deepEqual(created.body, {
      factor: 'engagement',
      metric: 'logins',
      aggregate: 'sum',
      window_days: 30,
      scale: { type: 'linear', from: 0, to: 20 },
      max_age_days: null,
      gate: null,
      updated_at: '2026-03-31T12:00:00.000Z',
    });
    assert.deepEqual((await t.api.get('/api/settings/health-score/factors/engagement')).body, created.body);
    const steps = {
      type: 'steps',
      steps: [
        { min: 0, score: 0 },
        { min: 5, score: 0.5 },
        { min: 10, score: 1 },
      ],
    };
    const replaced = await put(t.api, 'engagement', {
      metric: 'logins',
      aggregate: 'last',
      scale: steps,
      max_age_days: 7,
    });
    assert.equal(replaced.status, 200, replaced.raw);
    assert.equal(replaced.body.window_days, null);
    assert.deepEqual(replaced.body.scale, steps);
    assert.equal(replaced.body.max_age_days, 7);
    assert.ok(replaced.body.updated_at > created.body.updated_at, 'updated_at moves forward');
    const list = await t.api.get('/api/settings/health-score/factors');
    assert.deepEqual(list.body, { data: [replaced.body] });
    const deleted = await t.api.delete('/api/settings/health-score/factors/engagement');
    assert.deepEqual(deleted.body, { factor: 'engagement', deleted: true });
    const gone = await t.api.get('/api/settings/health-score/factors/engagement');
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error.code, 'factor_rule_not_found');
    const again = await t.api.delete('/api/settings/health-score/factors/engagement');
    assert.equal(again.status, 404);
    assert.equal(again.body.error.code, 'factor_rule_not_found');
    assert.deepEqual((await t.api.get('/api/settings/health-score/factors')).body, { data: [] });
  });
});

describe('a rule change rescores every customer it moves, in the same transaction', () => {
  test('customers with points get the derived factor (a first score for one without), a posted factor of that name is replaced, and deleting the rule takes it out', async () => {
    await customer('r_points', { support: 0.5 });
    await customer('r_new');
    await customer('r_posted', { usage: 0.1, support: 0.9 });
    await customer('r_none', { support: 0.3 });
    await points('r_points', 'logins', [
      [1, 4],
      [2, 6],
      [40, 100],
    ]); // 10 in the window
    await points('r_new', 'logins', [[3, 20]]);
    await points('r_posted', 'logins', [[45, 9]]); // outside the window: a sum of 0
    clock.advance(1000);
    const res = await put(t.api, 'usage', loginsRule);
    assert.equal(res.status, 200, res.raw);
    const score = async (id: string) => (await t.api.get(`/api/customers/${id}/health-score`)).body;
    assert.deepEqual((await score('r_points')).factors, { support: 0.5, usage: 0.5 });
    assert.deepEqual((await score('r_new')).factors, { usage: 1 });
    assert.deepEqual((await score('r_posted')).factors, { support: 0.9, usage: 0 });
    assert.deepEqual(
      (await score('r_none')).factors,
      { support: 0.3 },
      'no point, no factor, no new version',
    );
    const history = (await t.api.get('/api/customers/r_points/health-score/history')).body.data;
    assert.equal(history[0].reason, 'rules_changed');
    assert.equal(history[0].version, 2);
    assert.equal((await t.api.get('/api/customers/r_none/health-score/history')).body.data.length, 1);
    const events = (await t.api.get('/api/events?type=customer.health_score.updated&limit=100')).body.data;
    assert.ok(events.some((e: { data: { customer_id: string } }) => e.data.customer_id === 'r_new'));

    // Posting the derived factor is refused, naming it; a merge of other factors keeps it.
    const before = await score('r_points');
    const posted = await t.api.post('/api/customers/r_points/health-score', { factors: { usage: 0.9 } });
    assert.equal(posted.status, 400);
    assert.equal(posted.body.error.code, 'factor_derived');
    assert.equal(posted.body.error.param, 'factors.usage');
    assert.deepEqual(await score('r_points'), before, 'the refused post changed nothing');
    const merged = await t.api.patch('/api/customers/r_points/health-score', { factors: { support: 1 } });
    assert.deepEqual(merged.body.factors, { support: 1, usage: 0.5 });
    const replaced = await t.api.post('/api/customers/r_points/health-score', { factors: { billing: 0.2 } });
    assert.deepEqual(
      replaced.body.factors,
      { billing: 0.2, usage: 0.5 },
      'a posted set replaces the posted factors only',
    );
    const batch = await t.api.post('/api/health-scores/batch', {
      scores: [{ customer_id: 'r_posted', factors: { usage: 1 } }],
    });
    assert.equal(batch.body.results[0].status, 400);
    assert.equal(batch.body.results[0].error.code, 'factor_derived');

    clock.advance(1000);
    assert.equal((await t.api.delete('/api/settings/health-score/factors/usage')).status, 200);
    assert.deepEqual((await score('r_points')).factors, { billing: 0.2 });
    assert.deepEqual((await score('r_posted')).factors, { support: 0.9 });
    assert.deepEqual(
      (await score('r_new')).factors,
      { usage: 1 },
      'a score left with no factor keeps its last version',
    );
    const audit = (await t.api.get('/api/audit-log?limit=100')).body.data.map(
      (e: { action: string; object_id: string }) => `${e.action} ${e.object_id}`,
    );
    assert.ok(
      audit.includes('factor_rule.put usage') && audit.includes('factor_rule.deleted usage'),
      audit.join('\n'),
    );
  });
});

describe('a rule change derives only its own factor, and brings a due time forward, never back', () => {
  test('another rule’s factor stays as it was; the customer stays due at the other rule’s earlier time', async () => {
    await customer('d_two', { support: 0.5 });
    await points('d_two', 'visits', [[6, 7]]); // leaves a 7-day window in a day
    await points('d_two', 'calls', [[20, 3]]); // leaves a 30-day window in ten days
    const week = {
      metric: 'visits',
      aggregate: 'sum',
      window_days: 7,
      scale: { type: 'linear', from: 0, to: 7 },
    };
    const month = {
      metric: 'calls',
      aggregate: 'sum',
      window_days: 30,
      scale: { type: 'linear', from: 0, to: 6 },
    };
    clock.advance(1000);
    assert.equal((await put(t.api, 'visits_week', week)).status, 200);
    assert.equal((await put(t.api, 'calls_month', month)).status, 200);
    const score = async () => (await t.api.get('/api/customers/d_two/health-score')).body.factors;
    assert.deepEqual(await score(), { support: 0.5, visits_week: 1, calls_month: 0.5 });
    const dueAt = async (at: number) =>
      (await t.store.dueForRederive(at, 1000)).some(
        (d) => d.accountId === accountId && d.customerId === 'd_two',
      );
    const oneDay = clock.ms - 1000 - 6 * DAY + 7 * DAY; // the visit leaves its window
    assert.equal(await dueAt(oneDay - 1), false);
    assert.equal(await dueAt(oneDay), true, 'the month rule’s later time did not push the week’s back');

    // A change of the month rule reads its own metric only: the week's factor is kept as stored.
    clock.advance(1000);
    assert.equal(
      (await put(t.api, 'calls_month', { ...month, scale: { type: 'linear', from: 0, to: 3 } })).status,
      200,
    );
    assert.deepEqual(await score(), { support: 0.5, visits_week: 1, calls_month: 1 });
    assert.equal(await dueAt(oneDay), true);
    clock.advance(1000);
    assert.equal((await t.api.delete('/api/settings/health-score/factors/visits_week')).status, 200);
    assert.deepEqual(await score(), { support: 0.5, calls_month: 1 });
    assert.equal((await t.api.delete('/api/settings/health-score/factors/calls_month')).status, 200);
  });
});

describe('a new scale alone puts each stored aggregate on it, reading again only what time has moved', () => {
  test('a customer the rescore job has not yet seen since a point left its window is read again; the others keep their inputs', async () => {
    const rule = {
      metric: 'sessions',
      aggregate: 'sum',
      window_days: 30,
      scale: { type: 'linear', from: 0, to: 20 },
    };
    await customer('s_fresh', { support: 0.5 });
    await customer('s_due', { support: 0.5 });
    await customer('s_quiet', { support: 0.5 });
    await points('s_fresh', 'sessions', [[1, 10]]);
    await points('s_due', 'sessions', [
      [1, 4],
      [29, 6],
    ]);
    clock.advance(1000);
    assert.equal((await put(t.api, 'sessions_month', rule)).status, 200);
    const factors = async (id: string) => (await t.api.get(`/api/customers/${id}/health-score`)).body.factors;
    assert.equal((await factors('s_fresh')).sessions_month, 0.5);
    assert.equal((await factors('s_due')).sessions_month, 0.5);

    // Two days on, s_due's older point has left the window; the rescore job has not run.
    clock.advance(2 * DAY);
    const due = await t.store.dueForRederive(clock.ms, 1000);
    assert.deepEqual(
      due.filter((d) => d.accountId === accountId && d.customerId.startsWith('s_')).map((d) => d.customerId),
      ['s_due'],
    );
    const why = async (id: string) => (await t.api.get(`/api/customers/${id}/health-score/explanation`)).body;
    const input = async (id: string) =>
      (await why(id)).factors.find((f: { factor: string }) => f.factor === 'sessions_month').metric;
    const freshBefore = await input('s_fresh');
    const wider = { ...rule, scale: { type: 'linear', from: 0, to: 40 } };
    const preview = await t.api.post('/api/settings/health-score/factors/sessions_month/preview', wider);
    assert.equal(preview.status, 200, preview.raw);
    assert.equal((await put(t.api, 'sessions_month', wider)).status, 200);
    assert.equal((await factors('s_fresh')).sessions_month, 0.25, 'its sum of 10 on the new scale');
    assert.equal((await factors('s_due')).sessions_month, 0.1, 'read again: a sum of 4, not the stored 10');
    assert.deepEqual(await factors('s_quiet'), { support: 0.5 }, 'no point, still no factor');
    assert.deepEqual(
      { value: (await input('s_fresh')).value, points: (await input('s_fresh')).points },
      { value: 10, points: 1 },
    );
    // Kept as stored, to the last field (PostgreSQL copies the stored column instead of being sent it).
    assert.deepEqual(await input('s_fresh'), freshBefore);
    assert.deepEqual(
      { value: (await input('s_due')).value, points: (await input('s_due')).points },
      { value: 4, points: 1 },
    );
    assert.equal(preview.body.scores_changed, 2, 'the preview saw what the PUT did');
    clock.advance(1000);
    assert.equal((await t.api.delete('/api/settings/health-score/factors/sessions_month')).status, 200);
  });
});

describe('a rule preview says what the PUT would do, and does none of it', () => {
  test('customers, scores changed (a first score counted), band moves and bands match the PUT that follows', async (t2) => {
    const own = await buildTestApp({ now: clock.now });
    t2.after(() => own.close());
    const ownAccount = (await own.store.ensureAccount('default', 0)).id;
    const add = async (id: string, factors?: Record<string, number>) => {
      assert.equal((await own.api.post('/api/customers', customerBody(id))).status, 201);
      if (factors) await own.api.post(`/api/customers/${id}/health-score`, { factors });
    };
    const logins = (customerId: string, daysAgo: number, value: number) =>
      transaction(own.store, (tx) =>
        tx.insertMetricPoints(ownAccount, [
          { customerId, metric: 'logins', at: clock.ms - daysAgo * DAY, value },
        ]),
      );
    await add('p_up', { usage: 0.1, support: 0.2 }); // critical; 20 logins lift usage to 1
    await logins('p_up', 2, 20);
    await add('p_new'); // no score; its point gives it one
    await logins('p_new', 1, 10);
    await add('p_down', { usage: 0.9, support: 0.9 }); // healthy; a point outside the window: usage 0
    await logins('p_down', 60, 50);
    await add('p_same', { usage: 0.5, support: 0.5 }); // 10 logins: usage 0.5, as posted
    await logins('p_same', 3, 10);
    await add('p_none', { support: 0.8 }); // no point: nothing to derive
    const state = async () => ({
      scores: (await own.api.get('/api/health-scores?limit=100')).body,
      events: (await own.api.get('/api/events?limit=100')).body,
      rules: (await own.api.get('/api/settings/health-score/factors')).body,
    });
    const before = await state();
    const statusOf = (s: { data: { customer_id: string; status: string }[] }) =>
      new Map(s.data.map((x) => [x.customer_id, x.status]));

    const preview = await own.api.post('/api/settings/health-score/factors/usage/preview', loginsRule);
    assert.equal(preview.status, 200, preview.raw);
    assert.deepEqual(await state(), before, 'a preview writes nothing');
    assert.deepEqual(preview.body, {
      customers: 5,
      scores_changed: 3,
      band_changes: 2,
      bands: preview.body.bands,
    });

    clock.advance(1000);
    assert.equal((await put(own.api, 'usage', loginsRule)).status, 200);
    const after = await state();
    const was = statusOf(before.scores);
    const now = statusOf(after.scores);
    assert.equal(now.size - was.size, 1, 'one first score');
    assert.equal([...was].filter(([id, status]) => now.get(id) !== status).length, preview.body.band_changes);
    const bands = { healthy: 0, at_risk: 0, critical: 0 } as Record<string, number>;
    for (const status of now.values()) bands[status] = (bands[status] ?? 0) + 1;
    assert.deepEqual(preview.body.bands, bands);
    const changed =
      after.events.data.filter((e: { type: string }) => e.type === 'customer.health_score.updated').length -
      before.events.data.filter((e: { type: string }) => e.type === 'customer.health_score.updated').length;
    assert.equal(changed, preview.body.scores_changed);
  });

  test('a bad rule is refused as PUT refuses it; a read key may not preview', async () => {
    const res = await t.api.post('/api/settings/health-score/factors/f/preview', {
      ...loginsRule,
      scale: { type: 'linear', from: 3, to: 3 },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'parameter_invalid');
    assert.equal(res.body.error.param, 'scale.to');
    const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
    const denied = await t
      .as(`Bearer ${key}`)
      .post('/api/settings/health-score/factors/f/preview', loginsRule);
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, 'permission_denied');
  });
});

describe('what PUT refuses (and stores nothing)', () => {
  const stored = async () => ({
    rules: (await t.api.get('/api/settings/health-score/factors')).body,
    history: (await t.api.get('/api/events?limit=100')).body,
  });
  const refused = async (
    send: () => Promise<Response>,
    status: number,
    code: string,
    param: string | undefined,
  ): Promise<void> => {
    await refusedWithoutChange(stored, send, status, code, param);
  };

  const body = (change: Record<string, unknown>) => ({ ...loginsRule, ...change });
  const cases: [string, string, unknown, string, string | undefined][] = [
    ['an unknown aggregate', 'f', body({ aggregate: 'median' }), 'parameter_invalid', 'aggregate'],
    [
      'an unknown scale type',
      'f',
      body({ scale: { type: 'log', from: 0, to: 1 } }),
      'parameter_invalid',
      'scale.type',
    ],
    [
      'a linear scale with from = to',
      'f',
      body({ scale: { type: 'linear', from: 3, to: 3 } }),
      'parameter_invalid',
      'scale.to',
    ],
    [
      'a linear scale without to',
      'f',
      body({ scale: { type: 'linear', from: 3 } }),
      'parameter_missing',
      'scale.to',
    ],
    [
      'a linear scale with steps',
      'f',
      body({ scale: { type: 'linear', from: 0, to: 1, steps: [{ min: 0, score: 1 }] } }),
      'parameter_invalid',
      'scale.steps',
    ],
    [
      'a steps scale without steps',
      'f',
      body({ scale: { type: 'steps' } }),
      'parameter_missing',
      'scale.steps',
    ],
    [
      'steps not ascending',
      'f',
      body({
        scale: {
          type: 'steps',
          steps: [
            { min: 5, score: 0 },
            { min: 5, score: 1 },
          ],
        },
      }),
      'parameter_invalid',
      'scale.steps.1.min',
    ],
    ['no steps', 'f', body({ scale: { type: 'steps', steps: [] } }), 'parameter_invalid', 'scale.steps'],
    [
      '21 steps',
      'f',
      body({ scale: { type: 'steps', steps: Array.from({ length: 21 }, (_, i) => ({ min: i, score: 0 })) } }),
      'parameter_invalid',
      'scale.steps',
    ],
    [
      'a step score above 1',
      'f',
      body({ scale: { type: 'steps', steps: [{ min: 0, score: 1.5 }] } }),
      'parameter_invalid',
      'scale.steps.0.score',
    ],
    [
      'a step score below 0',
      'f',
      body({ scale: { type: 'steps', steps: [{ min: 0, score: -0.1 }] } }),
      'parameter_invalid',
      'scale.steps.0.score',
    ],
    ['window_days 0', 'f', body({ window_days: 0 }), 'parameter_invalid', 'window_days'],
    ['window_days 366', 'f', body({ window_days: 366 }), 'parameter_invalid', 'window_days'],
    ['window_days 1.5', 'f', body({ window_days: 1.5 }), 'parameter_invalid', 'window_days'],
    ['max_age_days 0', 'f', body({ max_age_days: 0 }), 'parameter_invalid', 'max_age_days'],
    ['a metric name that breaks the pattern', 'f', body({ metric: 'Logins' }), 'parameter_invalid', 'metric'],
    ['a metric that is not a string', 'f', body({ metric: 5 }), 'parameter_invalid', 'metric'],
    ['a missing metric', 'f', { aggregate: 'sum', scale: loginsRule.scale }, 'parameter_missing', 'metric'],
    ['a missing scale', 'f', { metric: 'logins', aggregate: 'sum' }, 'parameter_missing', 'scale'],
    ['an unknown field', 'f', body({ weight: 1 }), 'parameter_unknown', 'weight'],
    ['a factor name that breaks the pattern', 'Bad-Name', loginsRule, 'parameter_invalid', 'factor'],
  ];
  for (const [what, factor, sent, code, param] of cases) {
    test(`${what}: 400 ${code} (${param})`, () => refused(() => put(t.api, factor, sent), 400, code, param));
  }
  test('a non-finite number: 400 parameter_invalid (scale.from)', () =>
    refused(
      () =>
        t.api.request(
          'PUT',
          '/api/settings/health-score/factors/f',
          '{"metric":"logins","aggregate":"sum","scale":{"type":"linear","from":-1e309,"to":1}}',
        ),
      400,
      'parameter_invalid',
      'scale.from',
    ));
  test('a 51st rule: 400 parameter_invalid (factor), and the 50 stay', async (t2) => {
    const own = await buildTestApp();
    t2.after(() => own.close());
    for (let i = 0; i < 50; i++) assert.equal((await put(own.api, `f${i}`, loginsRule)).status, 200);
    const res = await put(own.api, 'f50', loginsRule);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'factor');
    assert.equal((await own.api.get('/api/settings/health-score/factors')).body.data.length, 50);
    assert.equal(
      (await put(own.api, 'f0', { ...loginsRule, window_days: 7 })).status,
      200,
      'replacing one still works',
    );
  });
});

describe('factor rules: one account never sees another’s, and a read key cannot change them', () => {
  test('another account lists none, gets and deletes 404, and its own PUT changes nothing of this one', async () => {
    assert.equal((await put(t.api, 'secret_rule', loginsRule)).status, 200);
    const other = await t.newAccount('other-rules');
    assert.deepEqual((await other.get('/api/settings/health-score/factors')).body, { data: [] });
    assert.equal((await other.get('/api/settings/health-score/factors/secret_rule')).status, 404);
    assert.equal((await other.delete('/api/settings/health-score/factors/secret_rule')).status, 404);
    assert.equal((await put(other, 'secret_rule', { ...loginsRule, window_days: 1 })).status, 200);
    assert.equal((await t.api.get('/api/settings/health-score/factors/secret_rule')).body.window_days, 30);
  });
  test('a read key: 403 on PUT and DELETE, and the rule stays', async () => {
    const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
    const reader = t.as(`Bearer ${key}`);
    assert.equal((await reader.get('/api/settings/health-score/factors')).status, 200);
    assert.equal((await put(reader, 'secret_rule', loginsRule)).status, 403);
    assert.equal((await reader.delete('/api/settings/health-score/factors/secret_rule')).status, 403);
    assert.equal((await t.api.get('/api/settings/health-score/factors/secret_rule')).status, 200);
  });
});
