// Instants through HTTP (docs/api.md, "Dates and times"): every instant a request carries is a date
// and time that exists. Text that Date.parse would roll over (February 30th, 24:00, a 29th of
// February in a common year) is refused naming its field, on every path that takes an instant, and
// nothing is stored; the real edge cases (leap days, 23:59:59.999, offsets from -12:00 to +14:00)
// are accepted as the instants they name.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, type TestApp, TestClock } from '../helpers/app.ts';
import { refusedWithoutChange } from '../helpers/refusals.ts';

const clock = new TestClock('2027-12-31T12:00:00.000Z');
let t: TestApp;
before(async () => {
  t = await buildTestApp({ now: clock.now });
  for (const id of ['when_a', 'when_b']) {
    assert.equal((await t.api.post('/api/customers', customerBody(id))).status, 201);
    assert.equal(
      (await t.api.post(`/api/customers/${id}/health-score`, { factors: { support: 0.8 } })).status,
      200,
    );
  }
});
after(() => t.close());

/**
 * Text in the form of an instant whose date or time does not exist, in `year`. Metrics and outcomes
 * take the past (2027, before the clock) and an override's end the next 365 days (2028), so that
 * each field's own window would accept what the text rolls over to: only the calendar refuses it.
 */
const notReal = (year: number): string[] => [
  `${year}-02-30T00:00:00Z`,
  `${year}-04-31T12:00:00Z`,
  `${year}-06-01T24:00:00Z`,
  `${year}-06-01T25:00:00Z`,
  `${year}-06-01T12:60:00Z`,
  `${year}-06-01T12:00:60Z`,
  `${year}-06-01T12:00:61.5Z`,
  `${year}-13-01T00:00:00Z`,
  `${year}-00-10T00:00:00Z`,
  `${year}-06-00T00:00:00Z`,
  `${year}-06-01T00:00:00+24:00`,
  `${year}-06-01T00:00:00+05:60`,
  `${year}-06-01T00:00:00-25:00`,
];
const PAST = [...notReal(2027), '2027-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2023-02-29T12:00Z'];
const AHEAD = notReal(2028);

/** Real instants at the calendar's edges, each with the instant it names. */
const REAL_PAST: [string, string][] = [
  ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ['2000-02-29T12:00Z', '2000-02-29T12:00:00.000Z'],
  ['2027-06-30T23:59:59.999Z', '2027-06-30T23:59:59.999Z'],
  ['2027-12-31T23:59:59.999+14:00', '2027-12-31T09:59:59.999Z'],
  ['2027-12-30T12:00:00-12:00', '2027-12-31T00:00:00.000Z'],
  ['2027-01-31T00:00:00.123456789Z', '2027-01-31T00:00:00.123Z'],
  ['2027-03-01T00:00:00+23:59', '2027-02-28T00:01:00.000Z'],
];
const REAL_AHEAD: [string, string][] = [
  ['2028-02-29T12:00:00Z', '2028-02-29T12:00:00.000Z'],
  ['2028-12-29T23:59:59.999Z', '2028-12-29T23:59:59.999Z'],
  ['2028-03-01T00:00:00+14:00', '2028-02-29T10:00:00.000Z'],
  ['2028-02-28T12:00:00-12:00', '2028-02-29T00:00:00.000Z'],
];

const NOT_REAL = /real date and time/;

/** What any of these writes could change for customer when_a. */
const stored = async () => [
  (await t.api.get('/api/customers/when_a/metrics?limit=100')).body,
  (await t.api.get('/api/customers/when_a/outcomes?limit=100')).body,
  (await t.api.get('/api/customers/when_a/health-score')).body,
  (await t.api.get('/api/customers/when_a/health-score/history?limit=100')).body,
];

describe('an instant that does not exist is refused by its field, and nothing is stored', () => {
  for (const at of PAST) {
    test(`metric at ${at}`, async () => {
      const send = () => t.api.post('/api/customers/when_a/metrics', { values: { logins: 1 }, at });
      const res = await refusedWithoutChange(stored, send, 400, 'parameter_invalid', 'at');
      assert.match(res.body.error.message, NOT_REAL);
    });
    test(`outcome at ${at}`, async () => {
      const send = () => t.api.post('/api/customers/when_a/outcomes', { outcome: 'churned', at });
      const res = await refusedWithoutChange(stored, send, 400, 'parameter_invalid', 'at');
      assert.match(res.body.error.message, NOT_REAL);
    });
    test(`metrics list starting_after logins@${at}`, async () => {
      const send = () =>
        t.api.get(`/api/customers/when_a/metrics?starting_after=${encodeURIComponent(`logins@${at}`)}`);
      await refusedWithoutChange(stored, send, 400, 'parameter_invalid', 'starting_after');
    });
  }
  for (const at of AHEAD) {
    test(`override expires_at ${at}`, async () => {
      const send = () =>
        t.api.request('PUT', '/api/customers/when_a/health-score/override', {
          health_score: 0.4,
          reason: 'renewal call',
          expires_at: at,
        });
      const res = await refusedWithoutChange(stored, send, 400, 'parameter_invalid', 'expires_at');
      assert.match(res.body.error.message, NOT_REAL);
    });
  }

  test('in a metrics batch each such item is refused by its field, alone', async () => {
    const before = await stored();
    const batch = await t.api.post('/api/metrics/batch', {
      metrics: PAST.map((at) => ({ customer_id: 'when_a', values: { logins: 1 }, at })),
    });
    assert.equal(batch.status, 200, batch.raw);
    assert.equal(batch.body.results.length, PAST.length);
    for (const [i, result] of batch.body.results.entries()) {
      assert.equal(result.status, 400, `${PAST[i]}: ${JSON.stringify(result)}`);
      assert.equal(result.error.code, 'parameter_invalid', PAST[i]);
      assert.equal(result.error.param, 'at', PAST[i]);
    }
    assert.deepEqual(await stored(), before, 'stored data must not change');
  });

  test('in an outcomes batch each such item is refused by its field, alone', async () => {
    const before = await stored();
    const batch = await t.api.post('/api/outcomes/batch', {
      outcomes: PAST.map((at) => ({ customer_id: 'when_a', outcome: 'retained', at })),
    });
    assert.equal(batch.status, 200, batch.raw);
    assert.equal(batch.body.results.length, PAST.length);
    for (const [i, result] of batch.body.results.entries()) {
      assert.equal(result.status, 400, `${PAST[i]}: ${JSON.stringify(result)}`);
      assert.equal(result.error.code, 'parameter_invalid', PAST[i]);
      assert.equal(result.error.param, 'at', PAST[i]);
    }
    assert.deepEqual(await stored(), before, 'stored data must not change');
  });
});

describe('real instants at the edges are taken as the instants they name', () => {
  test('metric at, one call and in a batch', async () => {
    for (const [at, instant] of REAL_PAST) {
      const res = await t.api.post('/api/customers/when_b/metrics', { values: { logins: 1 }, at });
      assert.equal(res.status, 200, `${at}: ${res.raw}`);
      assert.equal(res.body.at, instant, at);
    }
    const batch = await t.api.post('/api/metrics/batch', {
      metrics: REAL_PAST.map(([at]) => ({ customer_id: 'when_b', values: { tickets: 2 }, at })),
    });
    assert.equal(batch.status, 200, batch.raw);
    assert.deepEqual(
      batch.body.results.map((r: { status: number; at: string }) => [r.status, r.at]),
      REAL_PAST.map(([, instant]) => [200, instant]),
    );
    const points = (await t.api.get('/api/customers/when_b/metrics?metric=logins&limit=100')).body.data;
    assert.deepEqual(
      points.map((p: { at: string }) => p.at),
      REAL_PAST.map(([, instant]) => instant).sort((a, b) => Date.parse(b) - Date.parse(a)),
    );
    // A page goes on from a real instant at the edge.
    const oldest = points.at(-2).at;
    const rest = await t.api.get(
      `/api/customers/when_b/metrics?metric=logins&starting_after=${encodeURIComponent(`logins@${oldest}`)}`,
    );
    assert.equal(rest.status, 200, rest.raw);
    assert.deepEqual(rest.body.data, [points.at(-1)]);
  });

  test('outcome at, one call and in a batch', async () => {
    for (const [at, instant] of REAL_PAST) {
      const res = await t.api.post('/api/customers/when_b/outcomes', { outcome: 'retained', at });
      assert.equal(res.status, 201, `${at}: ${res.raw}`);
      assert.equal(res.body.at, instant, at);
    }
    const batch = await t.api.post('/api/outcomes/batch', {
      outcomes: REAL_PAST.map(([at]) => ({ customer_id: 'when_b', outcome: 'churned', at })),
    });
    assert.equal(batch.status, 200, batch.raw);
    assert.deepEqual(
      batch.body.results.map((r: { status: number; outcome: { at: string } }) => [r.status, r.outcome.at]),
      REAL_PAST.map(([, instant]) => [201, instant]),
    );
  });

  test('override expires_at', async () => {
    for (const [at, instant] of REAL_AHEAD) {
      const res = await t.api.request('PUT', '/api/customers/when_b/health-score/override', {
        health_score: 0.4,
        reason: 'renewal call',
        expires_at: at,
      });
      assert.equal(res.status, 200, `${at}: ${res.raw}`);
      assert.equal(res.body.override.expires_at, instant, at);
    }
  });
});
