// Metrics through HTTP (docs/api.md, "Metrics"; docs/scoring.md, "Factors from metrics"): points
// written one call or a batch at a time, read back newest first; a customer's derived factors and
// score follow a write at once (history reason metrics_updated, events, drop alerts); every refusal
// names its field and stores nothing; another account sees nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, type Response, type TestApp, TestClock } from '../helpers/app.ts';
import { refusedWithoutChange } from '../helpers/refusals.ts';

const DAY = 86_400_000;
const clock = new TestClock('2026-03-31T12:00:00.000Z');
let t: TestApp;
before(async () => {
  t = await buildTestApp({ now: clock.now });
  for (const id of ['m_plain', 'm_scored', 'm_batch', 'm_two']) {
    assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
  }
  assert.equal(
    (await t.api.post('/api/customers/m_scored/health-score', { factors: { support: 0.8 } })).status,
    200,
  );
  const rule = {
    metric: 'logins',
    aggregate: 'sum',
    window_days: 30,
    scale: { type: 'linear', from: 0, to: 20 },
  };
  assert.equal((await t.api.request('PUT', '/api/settings/health-score/factors/usage', rule)).status, 200);
});
after(() => t.close());

const post = (id: string, body: unknown) => t.api.post(`/api/customers/${id}/metrics`, body);
const isoAgo = (days: number) => new Date(clock.ms - days * DAY).toISOString();

describe('metrics: written, derived, read back', () => {
  test('a write answers the points and the score after it; a metric no rule reads leaves the score alone', async () => {
    const res = await post('m_scored', { values: { logins: 10, tickets: 3 } });
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.customer_id, 'm_scored');
    assert.equal(res.body.at, '2026-03-31T12:00:00.000Z', 'at defaults to now');
    assert.deepEqual(res.body.values, { logins: 10, tickets: 3 });
    assert.deepEqual(res.body.health_score.factors, { support: 0.8, usage: 0.5 });
    const history = (await t.api.get('/api/customers/m_scored/health-score/history')).body.data;
    assert.equal(history[0].reason, 'metrics_updated');
    const unread = await post('m_scored', { values: { tickets: 4 }, at: isoAgo(1) });
    assert.equal(unread.status, 200);
    assert.deepEqual(
      unread.body.health_score,
      res.body.health_score,
      'no rule reads tickets: the score as it was',
    );
    const after = (await t.api.get('/api/customers/m_scored/health-score/history')).body.data;
    assert.equal(after.length, history.length, 'no new version');
  });

  test('a customer without a score gets its first one when a rule yields a factor; without, the answer says null', async () => {
    const none = await post('m_plain', { values: { tickets: 1 } });
    assert.equal(none.body.health_score, null);
    const first = await post('m_plain', { values: { logins: 20 }, at: isoAgo(2) });
    assert.deepEqual(first.body.health_score.factors, { usage: 1 });
    assert.equal((await t.api.get('/api/customers/m_plain/health-score/history')).body.data.length, 1);
    const events = (await t.api.get('/api/events?type=customer.health_score.updated&limit=100')).body.data;
    assert.ok(events.some((e: { data: { customer_id: string } }) => e.data.customer_id === 'm_plain'));
  });

  test('a backfilled point in the window adds in; one outside it does not; the same instant again replaces', async () => {
    await post('m_two', { values: { logins: 4 }, at: isoAgo(3) });
    const backfilled = await post('m_two', { values: { logins: 6 }, at: isoAgo(10) });
    assert.equal(backfilled.body.health_score.factors.usage, 0.5);
    const old = await post('m_two', { values: { logins: 100 }, at: isoAgo(40) });
    assert.equal(old.body.health_score.factors.usage, 0.5);
    const again = await post('m_two', { values: { logins: 2 }, at: isoAgo(10) });
    assert.equal(again.body.health_score.factors.usage, 0.3);
  });

  test('GET lists points newest first, then by name, in pages; metric= filters', async () => {
    const page = await t.api.get('/api/customers/m_two/metrics?limit=2');
    assert.equal(page.status, 200, page.raw);
    assert.deepEqual(page.body.data, [
      { metric: 'logins', value: 4, at: isoAgo(3) },
      { metric: 'logins', value: 2, at: isoAgo(10) },
    ]);
    assert.equal(page.body.has_more, true);
    const last = page.body.data[1];
    const rest = await t.api.get(
      `/api/customers/m_two/metrics?limit=2&starting_after=${last.metric}@${last.at}`,
    );
    assert.deepEqual(rest.body, {
      data: [{ metric: 'logins', value: 100, at: isoAgo(40) }],
      has_more: false,
    });
    const tickets = await t.api.get('/api/customers/m_scored/metrics?metric=tickets');
    assert.deepEqual(
      tickets.body.data.map((p: { value: number }) => p.value),
      [3, 4],
    );
    const unknown = await t.api.get('/api/customers/nobody/metrics');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'customer_not_found');
    const none = await t.api.get('/api/customers/m_scored/metrics?metric=never_recorded');
    assert.equal(none.status, 200, 'a customer without points of a metric has an empty list');
    assert.deepEqual(none.body, { data: [], has_more: false });
  });

  test('a batch answers per item as the single call would, in order; refused items are refused alone', async () => {
    const res = await t.api.post('/api/metrics/batch', {
      metrics: [
        { customer_id: 'm_batch', values: { logins: 2 } },
        { customer_id: 'nobody', values: { logins: 2 } },
        { customer_id: 'm_batch', values: { logins: 8 }, at: isoAgo(1) },
        { customer_id: 'm_batch', values: { logins: 'many' } },
        { customer_id: 'm_batch', values: { logins: 1 }, at: '2026-03-31T12:10:00Z' },
      ],
    });
    assert.equal(res.status, 200, res.raw);
    const [first, missing, second, invalid, ahead] = res.body.results;
    assert.equal(first.status, 200);
    assert.equal(first.health_score.factors.usage, 0.1);
    assert.equal(missing.status, 404);
    assert.equal(missing.error.code, 'customer_not_found');
    assert.equal(second.status, 200);
    assert.equal(second.health_score.factors.usage, 0.5);
    const versions = (await t.api.get('/api/customers/m_batch/health-score/history')).body.data;
    assert.deepEqual(
      versions.map((v: { version: number; reason: string }) => [v.version, v.reason]),
      [
        [2, 'metrics_updated'],
        [1, 'metrics_updated'],
      ],
      'the second write builds on the first',
    );
    assert.equal(invalid.status, 400);
    assert.equal(invalid.error.param, 'values.logins');
    assert.equal(ahead.status, 400);
    assert.equal(ahead.error.param, 'at');
  });
});

describe('what a metric write refuses (and stores nothing)', () => {
  const stored = async () => [
    (await t.api.get('/api/customers/m_scored/metrics?limit=100')).body,
    (await t.api.get('/api/customers/m_scored/health-score')).body,
  ];
  const refused = async (
    send: () => Promise<Response>,
    status: number,
    code: string,
    param: string | undefined,
  ): Promise<void> => {
    await refusedWithoutChange(stored, send, status, code, param);
  };

  const cases: [string, unknown, string, string | undefined][] = [
    ['no values', {}, 'parameter_missing', 'values'],
    ['empty values', { values: {} }, 'parameter_invalid', 'values'],
    ['a value that is not a number', { values: { logins: '3' } }, 'parameter_invalid', 'values.logins'],
    ['a name that breaks the pattern', { values: { Logins: 3 } }, 'parameter_invalid', 'values.Logins'],
    [
      '51 values',
      { values: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`m${i}`, i])) },
      'parameter_invalid',
      'values',
    ],
    ['at not ISO 8601', { values: { logins: 1 }, at: '31/03/2026' }, 'parameter_invalid', 'at'],
    [
      'at without a time zone',
      { values: { logins: 1 }, at: '2026-03-31T12:00:00' },
      'parameter_invalid',
      'at',
    ],
    [
      'at more than 5 minutes ahead',
      { values: { logins: 1 }, at: '2026-03-31T12:05:01Z' },
      'parameter_invalid',
      'at',
    ],
    ['an unknown field', { values: { logins: 1 }, when: 'now' }, 'parameter_unknown', 'when'],
  ];
  for (const [what, body, code, param] of cases) {
    test(`${what}: 400 ${code} (${param})`, () => refused(() => post('m_scored', body), 400, code, param));
  }
  test('a non-finite value: 400 parameter_invalid (values.logins)', () =>
    refused(
      () => t.api.post('/api/customers/m_scored/metrics', '{"values":{"logins":1e309}}'),
      400,
      'parameter_invalid',
      'values.logins',
    ));
  test('an unknown customer: 404 customer_not_found, and no point is kept', async () => {
    const res = await post('nobody', { values: { logins: 1 } });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'customer_not_found');
  });
  test('exactly 5 minutes ahead is accepted', async () => {
    assert.equal((await post('m_plain', { values: { tickets: 9 }, at: '2026-03-31T12:05:00Z' })).status, 200);
  });
  test('a bad starting_after: 400 parameter_invalid (starting_after)', async () => {
    const res = await t.api.get('/api/customers/m_two/metrics?starting_after=yesterday');
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'starting_after');
  });
});

describe('metrics: one account never sees another’s', () => {
  test('another account writes to, and reads, none of this account’s customers', async () => {
    const other = await t.newAccount('other-metrics');
    const write = await other.post('/api/customers/m_scored/metrics', { values: { logins: 1 } });
    assert.equal(write.status, 404);
    assert.equal((await other.get('/api/customers/m_scored/metrics')).status, 404);
    const batch = await other.post('/api/metrics/batch', {
      metrics: [{ customer_id: 'm_scored', values: { logins: 1 } }],
    });
    assert.equal(batch.body.results[0].status, 404);
    assert.ok(
      (await t.api.get('/api/customers/m_scored/metrics?limit=100')).body.data.every(
        (p: { value: number }) => p.value !== 1,
      ),
    );
  });
});

describe('metrics: a fall their write causes alerts as a factor write would', () => {
  test('customer.health_score.dropped follows a metric write that drops the score by the rule', async (t2) => {
    const own = await buildTestApp({ now: clock.now });
    t2.after(() => own.close());
    const rule = { metric: 'logins', aggregate: 'last', scale: { type: 'linear', from: 0, to: 10 } };
    assert.equal(
      (await own.api.request('PUT', '/api/settings/health-score/factors/usage', rule)).status,
      200,
    );
    assert.equal(
      (await own.api.patch('/api/settings/health-score/alerts', { drop: { delta: 0.3, days: 7 } })).status,
      200,
    );
    assert.equal((await own.api.post('/api/customers', customerBody('falling'))).status, 201);
    assert.equal(
      (await own.api.post('/api/customers/falling/metrics', { values: { logins: 9 }, at: isoAgo(2) })).status,
      200,
    );
    const fell = await own.api.post('/api/customers/falling/metrics', {
      values: { logins: 2 },
      at: isoAgo(1),
    });
    assert.equal(fell.body.health_score.health_score, 0.2);
    const dropped = (await own.api.get('/api/events?type=customer.health_score.dropped')).body.data;
    assert.equal(dropped.length, 1);
    assert.equal(dropped[0].data.customer_id, 'falling');
  });
});
