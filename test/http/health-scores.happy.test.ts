// Health scores through HTTP (docs/scoring.md; docs/api.md, "Health scores", "Settings",
// "Events"): writing and reading scores, weights and thresholds with their recomputation,
// history, the portfolio, and the events every change leaves behind.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';

/** The summary's ARR of customers without one (docs/api.md, "Segments, trends and movers"). */
const NO_ARR = { arr: { total: 0, healthy: 0, at_risk: 0, critical: 0 }, arr_at_risk: 0 };
/** A portfolio entry's book and metadata, unset (docs/api.md, "Health scores"). */
const NO_BOOK = {
  owner: null,
  arr: null,
  renewal_at: null,
  lifecycle: 'active',
  parent_id: null,
  metadata: {},
};

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface Ev {
  id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: string;
}

async function customer(api: Client, id: string): Promise<void> {
  const res = await api.post('/api/customers', customerBody(id));
  assert.equal(res.status, 201, res.raw);
}

async function score(api: Client, id: string, factors: Record<string, number>) {
  const res = await api.post(`/api/customers/${encodeURIComponent(id)}/health-score`, { factors });
  assert.equal(res.status, 200, res.raw);
  return res.body;
}

async function current(api: Client, id: string) {
  const res = await api.get(`/api/customers/${encodeURIComponent(id)}/health-score`);
  assert.equal(res.status, 200, res.raw);
  return res.body;
}

/** Every history entry of a customer, newest first. */
async function history(api: Client, id: string) {
  const res = await api.get(`/api/customers/${encodeURIComponent(id)}/health-score/history?limit=100`);
  assert.equal(res.status, 200, res.raw);
  assert.equal(res.body.has_more, false);
  return res.body.data;
}

async function latestEventId(api: Client): Promise<string | undefined> {
  const res = await api.get('/api/events?limit=1');
  assert.equal(res.status, 200, res.raw);
  return res.body.data[0]?.id;
}

/** Runs `action` and returns it with the events it emitted, oldest first. */
async function withEvents<T>(api: Client, action: () => Promise<T>): Promise<{ result: T; events: Ev[] }> {
  const marker = await latestEventId(api);
  const result = await action();
  const res = await api.get('/api/events?limit=100');
  assert.equal(res.status, 200, res.raw);
  const events: Ev[] = [];
  for (const e of res.body.data as Ev[]) {
    if (e.id === marker) break;
    events.push(e);
  }
  assert.ok(events.length < 100, 'the window covers every new event');
  return { result, events: events.reverse() };
}

/** previous_score of a score event, previous_status of a status event. */
const previousOf = (e: Ev) => ('previous_score' in e.data ? e.data.previous_score : e.data.previous_status);

const byteCompare = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

describe('health scores: write and read', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('POST answers the health score object; GET returns the same', async () => {
    await customer(t.api, 'cus_read');
    const res = await t.api.post('/api/customers/cus_read/health-score', {
      factors: { usage: 0.8, support: 0.6, billing: 1 },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body).sort(), [
      'customer_id',
      'factors',
      'gated_by',
      'health_score',
      'override',
      'status',
      'updated_at',
    ]);
    assert.equal(res.body.override, null);
    assert.deepEqual(res.body.gated_by, []);
    assert.equal(res.body.customer_id, 'cus_read');
    assert.equal(res.body.health_score, 0.8);
    assert.deepEqual(res.body.factors, { usage: 0.8, support: 0.6, billing: 1 });
    assert.equal(res.body.status, 'healthy');
    assert.match(res.body.updated_at, ISO_MS);
    assert.deepEqual(await current(t.api, 'cus_read'), res.body);
  });

  test('with no weights configured the score is the plain mean, rounded to 6 places', async () => {
    await customer(t.api, 'cus_mean');
    assert.equal((await score(t.api, 'cus_mean', { a: 0.1, b: 0.2, c: 0.3 })).health_score, 0.2);
    assert.equal((await score(t.api, 'cus_mean', { a: 1, b: 0, c: 0 })).health_score, 0.333333);
    assert.equal((await score(t.api, 'cus_mean', { a: 1, b: 1, c: 0 })).health_score, 0.666667);
    assert.equal((await score(t.api, 'cus_mean', { only: 0.123 })).health_score, 0.123);
  });

  test('any factor name matching the rules is accepted, up to 50 of them', async () => {
    await customer(t.api, 'cus_names');
    const factors: Record<string, number> = { a: 0, ['z'.repeat(64)]: 1, nps_2024: 0.5 };
    for (let i = 0; Object.keys(factors).length < 50; i++) factors[`f${i}`] = 0.5;
    const body = await score(t.api, 'cus_names', factors);
    assert.deepEqual(body.factors, factors);
    assert.equal(body.health_score, 0.5);
  });

  test('bounds 0 and 1 are valid factor values', async () => {
    await customer(t.api, 'cus_edges');
    assert.equal((await score(t.api, 'cus_edges', { usage: 0 })).health_score, 0);
    assert.equal((await score(t.api, 'cus_edges', { usage: 0 })).status, 'critical');
    assert.equal((await score(t.api, 'cus_edges', { usage: 1 })).health_score, 1);
    assert.equal((await score(t.api, 'cus_edges', { usage: 1 })).status, 'healthy');
  });

  test('POST replaces the whole factor set', async () => {
    await customer(t.api, 'cus_replace');
    await score(t.api, 'cus_replace', { usage: 0.2, support: 0.4 });
    const body = await score(t.api, 'cus_replace', { billing: 0.9 });
    assert.deepEqual(body.factors, { billing: 0.9 });
    assert.equal(body.health_score, 0.9);
    assert.deepEqual((await current(t.api, 'cus_replace')).factors, { billing: 0.9 });
  });

  test('PATCH merges factors, null removes one, and the score is recomputed', async () => {
    await customer(t.api, 'cus_merge');
    await score(t.api, 'cus_merge', { usage: 0.2, support: 0.4, billing: 0.6 });
    const res = await t.api.patch('/api/customers/cus_merge/health-score', {
      factors: { usage: 1, billing: null, nps: 0.5 },
    });
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body.factors, { usage: 1, support: 0.4, nps: 0.5 });
    assert.equal(res.body.health_score, 0.633333);
    assert.equal(res.body.status, 'at_risk');
    assert.deepEqual(await current(t.api, 'cus_merge'), res.body);
  });

  test('PATCH removing a factor that is not there changes nothing else', async () => {
    await customer(t.api, 'cus_merge_absent');
    await score(t.api, 'cus_merge_absent', { usage: 0.5 });
    const res = await t.api.patch('/api/customers/cus_merge_absent/health-score', {
      factors: { ghost: null },
    });
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body.factors, { usage: 0.5 });
    assert.equal(res.body.health_score, 0.5);
  });

  test('PATCH works when there is no score yet: it creates the first one', async () => {
    await customer(t.api, 'cus_patch_first');
    const { result: res, events } = await withEvents(t.api, () =>
      t.api.patch('/api/customers/cus_patch_first/health-score', { factors: { usage: 0.3, gone: null } }),
    );
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body.factors, { usage: 0.3 });
    assert.equal(res.body.health_score, 0.3);
    assert.equal(res.body.status, 'critical');
    assert.deepEqual(
      events.map((e) => [e.type, previousOf(e)]),
      [
        ['customer.health_score.updated', null],
        ['customer.status.changed', null],
      ],
    );
    const entries = await history(t.api, 'cus_patch_first');
    assert.deepEqual(
      entries.map((h: { version: number; reason: string }) => [h.version, h.reason]),
      [[1, 'factors_updated']],
    );
  });

  test('status bands with default thresholds: a score at a bound belongs to the band above', async () => {
    await customer(t.api, 'cus_band');
    const cases: [Record<string, number>, number, string][] = [
      [{ usage: 1 }, 1, 'healthy'],
      [{ usage: 0.8, support: 0.6 }, 0.7, 'healthy'], // 1.4 / 2 is 0.7000000000000001 before rounding
      [{ usage: 0.699999 }, 0.699999, 'at_risk'],
      [{ usage: 0.4 }, 0.4, 'at_risk'],
      [{ usage: 0.399999 }, 0.399999, 'critical'],
      [{ usage: 0 }, 0, 'critical'],
    ];
    for (const [factors, expected, status] of cases) {
      const body = await score(t.api, 'cus_band', factors);
      assert.equal(body.health_score, expected, JSON.stringify(factors));
      assert.equal(body.status, status, JSON.stringify(factors));
    }
  });

  test('updated_at strictly increases across back-to-back writes', async () => {
    await customer(t.api, 'cus_fast');
    let previous = (await score(t.api, 'cus_fast', { usage: 0.5 })).updated_at;
    for (let i = 0; i < 20; i++) {
      const res =
        i % 2 === 0
          ? await t.api.post('/api/customers/cus_fast/health-score', { factors: { usage: 0.5 } })
          : await t.api.patch('/api/customers/cus_fast/health-score', { factors: { usage: 0.5 } });
      assert.ok(res.body.updated_at > previous, `${res.body.updated_at} > ${previous}`);
      previous = res.body.updated_at;
    }
  });

  test('ids with unicode and punctuation work in the health-score paths', async () => {
    const id = 'ünï.cøde-ID_9:@+';
    await customer(t.api, id);
    const body = await score(t.api, id, { usage: 0.5 });
    assert.equal(body.customer_id, id);
    assert.deepEqual(await current(t.api, id), body);
    assert.equal((await history(t.api, id)).length, 1);
  });
});

describe('health scores: weights', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const putWeights = async (weights: Record<string, number>) => {
    const res = await t.api.patch('/api/settings/health-score/weights', { weights });
    assert.equal(res.status, 200, res.raw);
    return res.body;
  };

  test('GET before any configuration answers {} and null', async () => {
    const res = await t.api.get('/api/settings/health-score/weights');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { weights: {}, updated_at: null });
  });

  test('PATCH replaces the whole map and answers {weights, updated_at}; GET returns the same', async () => {
    const first = await putWeights({ usage: 0.5, support: 0.5 });
    assert.deepEqual(first.weights, { usage: 0.5, support: 0.5 });
    assert.match(first.updated_at, ISO_MS);
    const second = await putWeights({ usage: 0.5, support: 0.3, billing: 0.2 });
    assert.deepEqual(second.weights, { usage: 0.5, support: 0.3, billing: 0.2 });
    assert.ok(second.updated_at > first.updated_at);
    assert.deepEqual((await t.api.get('/api/settings/health-score/weights')).body, second);
  });

  test('weighted mean when the weights cover every factor', async () => {
    await putWeights({ usage: 0.5, support: 0.3, billing: 0.2 });
    await customer(t.api, 'cus_w_all');
    const body = await score(t.api, 'cus_w_all', { usage: 0.8, support: 0.6, billing: 1 });
    assert.equal(body.health_score, 0.78); // 0.4 + 0.18 + 0.2
  });

  test('weights are renormalized over the factors present', async () => {
    await putWeights({ usage: 0.5, support: 0.3, billing: 0.2 });
    await customer(t.api, 'cus_w_renorm');
    const body = await score(t.api, 'cus_w_renorm', { usage: 0.8, support: 0.6 });
    assert.equal(body.health_score, 0.725); // (0.4 + 0.18) / 0.8
  });

  test('factors without a weight are left out when another factor has one', async () => {
    await putWeights({ usage: 0.6, support: 0.2, billing: 0.2 });
    await customer(t.api, 'cus_w_extra');
    const body = await score(t.api, 'cus_w_extra', { usage: 0.1, support: 0.2, nps: 0.9 });
    assert.equal(body.health_score, 0.125); // (0.06 + 0.04) / 0.8; nps has no weight
  });

  test('a weighted score is rounded to 6 places', async () => {
    await putWeights({ usage: 0.3, support: 0.7 });
    await customer(t.api, 'cus_w_round');
    const body = await score(t.api, 'cus_w_round', { usage: 0.123457, support: 0.987654 });
    assert.equal(body.health_score, 0.728395); // 0.7283949
  });

  test('a zero weight does not cover a factor; with no covered factor the plain mean applies', async () => {
    await putWeights({ usage: 0, support: 1 });
    await customer(t.api, 'cus_w_zero');
    assert.equal((await score(t.api, 'cus_w_zero', { usage: 0.2, support: 0.6 })).health_score, 0.6);
    assert.equal((await score(t.api, 'cus_w_zero', { usage: 0.2, nps: 0.6 })).health_score, 0.4);
    assert.equal((await score(t.api, 'cus_w_zero', { a: 0.1, b: 0.2 })).health_score, 0.15);
  });

  test('a sum within 1e-6 of 1.0 is accepted', async () => {
    const body = await putWeights({ usage: 0.5, support: 0.5000005 });
    assert.deepEqual(body.weights, { usage: 0.5, support: 0.5000005 });
    const low = await putWeights({ usage: 0.5, support: 0.4999995 });
    assert.deepEqual(low.weights, { usage: 0.5, support: 0.4999995 });
  });

  test('updated_at strictly increases across back-to-back weight changes', async () => {
    let previous = (await putWeights({ usage: 1 })).updated_at;
    for (let i = 0; i < 20; i++) {
      const body = await putWeights(i % 2 === 0 ? { usage: 0.5, support: 0.5 } : { usage: 1 });
      assert.ok(body.updated_at > previous, `${body.updated_at} > ${previous}`);
      previous = body.updated_at;
    }
  });
});

describe('health scores: a weights change recomputes stored scores', () => {
  let t: TestApp;
  // Before any weights every score is the plain mean.
  const factors = {
    cus_moves_band: { usage: 0.9, support: 0.1 }, // 0.5 at_risk → usage only: 0.9 healthy
    cus_moves_score: { usage: 0.8, support: 0.7 }, // 0.75 healthy → 0.8 healthy
    cus_uncovered: { nps: 0.5 }, // plain mean before and after
    cus_same_value: { usage: 0.5, support: 0.5 }, // 0.5 whatever the weights
  };
  const ids = Object.keys(factors) as (keyof typeof factors)[];
  const scoresBefore: Record<string, { health_score: number; status: string; updated_at: string }> = {};

  before(async () => {
    t = await buildTestApp();
    for (const id of ids) {
      await customer(t.api, id);
      scoresBefore[id] = await score(t.api, id, factors[id]);
    }
  });
  after(() => t.close());

  test('GET right after the change returns the new scores, and only the moved ones got history and events', async () => {
    const { result: res, events } = await withEvents(t.api, () =>
      t.api.patch('/api/settings/health-score/weights', { weights: { usage: 1 } }),
    );
    assert.equal(res.status, 200, res.raw);

    const band = await current(t.api, 'cus_moves_band');
    assert.equal(band.health_score, 0.9);
    assert.equal(band.status, 'healthy');
    assert.deepEqual(band.factors, factors.cus_moves_band);
    assert.ok(band.updated_at > scoresBefore.cus_moves_band!.updated_at);
    const moved = await current(t.api, 'cus_moves_score');
    assert.equal(moved.health_score, 0.8);
    assert.equal(moved.status, 'healthy');
    assert.deepEqual(await current(t.api, 'cus_uncovered'), scoresBefore.cus_uncovered);
    assert.deepEqual(await current(t.api, 'cus_same_value'), scoresBefore.cus_same_value);

    const reasons = async (id: string) =>
      (await history(t.api, id)).map((h: { version: number; reason: string }) => [h.version, h.reason]);
    assert.deepEqual(await reasons('cus_moves_band'), [
      [2, 'weights_changed'],
      [1, 'factors_updated'],
    ]);
    assert.deepEqual(await reasons('cus_moves_score'), [
      [2, 'weights_changed'],
      [1, 'factors_updated'],
    ]);
    assert.deepEqual(await reasons('cus_uncovered'), [[1, 'factors_updated']]);
    assert.deepEqual(await reasons('cus_same_value'), [[1, 'factors_updated']]);

    const newest = (await history(t.api, 'cus_moves_band'))[0];
    assert.equal(newest.health_score, 0.9);
    assert.equal(newest.status, 'healthy');
    assert.equal(newest.created_at, band.updated_at);

    const got = events
      .map((e) => ({ type: e.type, data: e.data }))
      .sort((a, b) => byteCompare(`${a.data.customer_id}${a.type}`, `${b.data.customer_id}${b.type}`));
    assert.deepEqual(got, [
      {
        type: 'customer.health_score.updated',
        data: {
          customer_id: 'cus_moves_band',
          health_score: 0.9,
          previous_score: 0.5,
          factors: factors.cus_moves_band,
          updated_at: band.updated_at,
          status: 'healthy',
        },
      },
      {
        type: 'customer.status.changed',
        data: {
          customer_id: 'cus_moves_band',
          status: 'healthy',
          previous_status: 'at_risk',
          health_score: 0.9,
          updated_at: band.updated_at,
        },
      },
      {
        type: 'customer.health_score.updated',
        data: {
          customer_id: 'cus_moves_score',
          health_score: 0.8,
          previous_score: 0.75,
          factors: factors.cus_moves_score,
          updated_at: moved.updated_at,
          status: 'healthy',
        },
      },
    ]);
  });

  test('setting the same weights again changes no score and emits nothing', async () => {
    const before = await Promise.all(ids.map((id) => history(t.api, id)));
    const { result: res, events } = await withEvents(t.api, () =>
      t.api.patch('/api/settings/health-score/weights', { weights: { usage: 1 } }),
    );
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(events, []);
    assert.deepEqual(await Promise.all(ids.map((id) => history(t.api, id))), before);
  });

  test('new writes after the change are scored with the new weights', async () => {
    const body = await score(t.api, 'cus_uncovered', { nps: 0.5, usage: 0.2 });
    assert.equal(body.health_score, 0.2);
  });
});

describe('health scores: thresholds', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const putThresholds = async (body: Record<string, number>) => {
    const res = await t.api.patch('/api/settings/health-score/thresholds', body);
    assert.equal(res.status, 200, res.raw);
    return res.body;
  };

  test('GET before any configuration answers the defaults and null', async () => {
    const res = await t.api.get('/api/settings/health-score/thresholds');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { healthy: 0.7, at_risk: 0.4, updated_at: null });
  });

  test('PATCH of one bound keeps the other; GET returns the same', async () => {
    const body = await putThresholds({ healthy: 0.75 });
    assert.equal(body.healthy, 0.75);
    assert.equal(body.at_risk, 0.4);
    assert.match(body.updated_at, ISO_MS);
    assert.deepEqual((await t.api.get('/api/settings/health-score/thresholds')).body, body);
    const both = await putThresholds({ at_risk: 0.5, healthy: 1 });
    assert.deepEqual({ ...both, updated_at: 'x' }, { healthy: 1, at_risk: 0.5, updated_at: 'x' });
    assert.ok(both.updated_at > body.updated_at);
    await putThresholds({ healthy: 0.7, at_risk: 0.4 });
  });

  test('new scores are banded by the account thresholds', async () => {
    await putThresholds({ healthy: 0.9, at_risk: 0.1 });
    await customer(t.api, 'cus_custom_band');
    assert.equal((await score(t.api, 'cus_custom_band', { usage: 0.89 })).status, 'at_risk');
    assert.equal((await score(t.api, 'cus_custom_band', { usage: 0.9 })).status, 'healthy');
    assert.equal((await score(t.api, 'cus_custom_band', { usage: 0.1 })).status, 'at_risk');
    assert.equal((await score(t.api, 'cus_custom_band', { usage: 0.099999 })).status, 'critical');
    await putThresholds({ healthy: 0.7, at_risk: 0.4 });
  });

  test('a change re-bands stored scores: status.changed events and history, no score events', async () => {
    await customer(t.api, 'cus_t_down');
    await customer(t.api, 'cus_t_up');
    await customer(t.api, 'cus_t_same');
    const down = await score(t.api, 'cus_t_down', { usage: 0.75 }); // healthy → at_risk
    const up = await score(t.api, 'cus_t_up', { usage: 0.35 }); // critical → at_risk
    const same = await score(t.api, 'cus_t_same', { usage: 0.95 }); // healthy either way

    const { events } = await withEvents(t.api, () => putThresholds({ healthy: 0.8, at_risk: 0.3 }));

    const nowDown = await current(t.api, 'cus_t_down');
    const nowUp = await current(t.api, 'cus_t_up');
    assert.deepEqual({ ...nowDown, updated_at: down.updated_at }, { ...down, status: 'at_risk' });
    assert.deepEqual({ ...nowUp, updated_at: up.updated_at }, { ...up, status: 'at_risk' });
    assert.ok(nowDown.updated_at > down.updated_at);
    assert.deepEqual(await current(t.api, 'cus_t_same'), same);

    const latest = async (id: string) => {
      const [h, ...rest] = await history(t.api, id);
      return { ...h, count: rest.length + 1 };
    };
    assert.deepEqual(await latest('cus_t_down'), {
      version: 2,
      health_score: 0.75,
      status: 'at_risk',
      factors: { usage: 0.75 },
      reason: 'thresholds_changed',
      created_at: nowDown.updated_at,
      count: 2,
    });
    assert.equal((await latest('cus_t_up')).reason, 'thresholds_changed');
    assert.equal((await latest('cus_t_same')).count, 1);

    const got = events
      .map((e) => ({ type: e.type, data: e.data }))
      .sort((a, b) => byteCompare(String(a.data.customer_id), String(b.data.customer_id)));
    assert.deepEqual(got, [
      {
        type: 'customer.status.changed',
        data: {
          customer_id: 'cus_t_down',
          status: 'at_risk',
          previous_status: 'healthy',
          health_score: 0.75,
          updated_at: nowDown.updated_at,
        },
      },
      {
        type: 'customer.status.changed',
        data: {
          customer_id: 'cus_t_up',
          status: 'at_risk',
          previous_status: 'critical',
          health_score: 0.35,
          updated_at: nowUp.updated_at,
        },
      },
    ]);

    const summary = await t.api.get('/api/health-scores/summary');
    // cus_custom_band (0.099999) stays critical under every threshold set of this suite.
    assert.deepEqual(summary.body.counts, { healthy: 1, at_risk: 2, critical: 1 });
  });
});

describe('health scores: history', () => {
  let t: TestApp;
  const versions = 23;
  before(async () => {
    t = await buildTestApp();
    await customer(t.api, 'cus_hist');
    for (let v = 1; v <= versions; v++) await score(t.api, 'cus_hist', { usage: v / 100 });
  });
  after(() => t.close());

  test('entries carry the score at each version, newest first; the default page is 10', async () => {
    const res = await t.api.get('/api/customers/cus_hist/health-score/history');
    assert.equal(res.status, 200);
    assert.equal(res.body.has_more, true);
    assert.deepEqual(
      res.body.data.map((h: { version: number }) => h.version),
      [23, 22, 21, 20, 19, 18, 17, 16, 15, 14],
    );
    const newest = res.body.data[0];
    assert.deepEqual(Object.keys(newest).sort(), [
      'created_at',
      'factors',
      'health_score',
      'reason',
      'status',
      'version',
    ]);
    assert.deepEqual(
      { ...newest, created_at: 'x' },
      {
        version: 23,
        health_score: 0.23,
        status: 'critical',
        factors: { usage: 0.23 },
        reason: 'factors_updated',
        created_at: 'x',
      },
    );
    assert.equal(newest.created_at, (await current(t.api, 'cus_hist')).updated_at);
  });

  test('walking pages with starting_after visits every version once, in order', async () => {
    const seen: number[] = [];
    let cursor: number | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const q = cursor === undefined ? '' : `&starting_after=${cursor}`;
      const res = await t.api.get(`/api/customers/cus_hist/health-score/history?limit=5${q}`);
      assert.equal(res.status, 200, res.raw);
      assert.ok(res.body.data.length <= 5);
      seen.push(...res.body.data.map((h: { version: number; health_score: number }) => h.version));
      for (const h of res.body.data) assert.equal(h.health_score, h.version / 100);
      if (!res.body.has_more) break;
      cursor = seen.at(-1);
    }
    assert.deepEqual(
      seen,
      Array.from({ length: versions }, (_, i) => versions - i),
    );
  });

  test('has_more is false when the page ends exactly at version 1', async () => {
    const res = await t.api.get('/api/customers/cus_hist/health-score/history?limit=3&starting_after=4');
    assert.deepEqual(
      res.body.data.map((h: { version: number }) => h.version),
      [3, 2, 1],
    );
    assert.equal(res.body.has_more, false);
  });

  test('starting_after beyond the newest version starts at the newest', async () => {
    const res = await t.api.get('/api/customers/cus_hist/health-score/history?limit=2&starting_after=1000');
    assert.deepEqual(
      res.body.data.map((h: { version: number }) => h.version),
      [23, 22],
    );
  });

  test('starting_after=1 (or below: 0, −1, …) gives an empty last page; limit 1 and 100 are accepted', async () => {
    for (const below of [1, 0, -1]) {
      const last = await t.api.get(`/api/customers/cus_hist/health-score/history?starting_after=${below}`);
      assert.deepEqual(last.body, { data: [], has_more: false });
    }
    assert.equal(
      (await t.api.get('/api/customers/cus_hist/health-score/history?limit=1')).body.data.length,
      1,
    );
    const all = await t.api.get('/api/customers/cus_hist/health-score/history?limit=100');
    assert.equal(all.body.data.length, versions);
    assert.equal(all.body.has_more, false);
  });

  test('a customer without a score has an empty history', async () => {
    await customer(t.api, 'cus_hist_empty');
    const res = await t.api.get('/api/customers/cus_hist_empty/health-score/history');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: [], has_more: false });
  });
});

describe('health scores: portfolio and summary', () => {
  let t: TestApp;
  // Ties on purpose: equal scores are ordered by customer id, byte-wise.
  const scores: Record<string, number> = {
    B: 0.5,
    a: 0.5,
    Z: 0.5,
    'a-1': 0.1,
    a_1: 0.1,
    c: 0.9,
    d: 0.7,
    e: 0.4,
    f: 0.399999,
    g: 0,
    h: 1,
    i: 0.45,
    j: 0.69,
    k: 0.2,
    l: 0.55,
    m: 0.4,
    é: 0.4,
    '~': 0.75,
    n: 0.3,
    o: 0.62,
    p: 0.05,
  };
  const ids = Object.keys(scores);
  const band = (s: number) => (s >= 0.7 ? 'healthy' : s >= 0.4 ? 'at_risk' : 'critical');
  const expected = (status?: string) =>
    ids
      .filter((id) => status === undefined || band(scores[id]!) === status)
      .sort((x, y) => scores[x]! - scores[y]! || byteCompare(x, y));

  before(async () => {
    t = await buildTestApp();
    await customer(t.api, 'no_score_yet');
    for (const id of ids) {
      await customer(t.api, id);
      await score(t.api, id, { usage: scores[id]! });
    }
  });
  after(() => t.close());

  async function walk(query: string, limit: number) {
    const seen: { customer_id: string; health_score: number; status: string }[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 50; pages++) {
      const c: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const res = await t.api.get(`/api/health-scores?limit=${limit}${query}${c}`);
      assert.equal(res.status, 200, res.raw);
      assert.ok(res.body.data.length <= limit);
      seen.push(...res.body.data);
      if (!res.body.has_more) {
        assert.equal(res.body.next_cursor, null);
        return seen;
      }
      assert.equal(typeof res.body.next_cursor, 'string');
      cursor = res.body.next_cursor;
    }
    assert.fail('the walk did not end');
  }

  test('the default page is 10, lowest score first, ties by customer id', async () => {
    const res = await t.api.get('/api/health-scores');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.data.map((s: { customer_id: string }) => s.customer_id),
      expected().slice(0, 10),
    );
    assert.equal(res.body.has_more, true);
    assert.equal(typeof res.body.next_cursor, 'string');
    // Each entry is the customer's health score with its name, so a page needs no other request.
    const { name, owner, arr, renewal_at, lifecycle, parent_id, metadata, ...first } = res.body.data[0];
    assert.equal(name, `Customer ${first.customer_id}`);
    // …and its book and metadata (docs/api.md, "Health scores"), unset here.
    assert.deepEqual(
      { owner, arr, renewal_at, lifecycle, parent_id, metadata },
      { owner: null, arr: null, renewal_at: null, lifecycle: 'active', parent_id: null, metadata: {} },
    );
    assert.deepEqual(first, await current(t.api, first.customer_id));
  });

  test('walking every page with next_cursor visits each score exactly once, in order', async () => {
    for (const limit of [1, 4, 7]) {
      const seen = await walk('', limit);
      assert.deepEqual(
        seen.map((s) => s.customer_id),
        expected(),
        `limit ${limit}`,
      );
      for (const s of seen) {
        assert.equal(s.health_score, scores[s.customer_id]);
        assert.equal(s.status, band(s.health_score));
      }
    }
  });

  test('a status filter walks only that band', async () => {
    for (const status of ['healthy', 'at_risk', 'critical']) {
      const seen = await walk(`&status=${status}`, 3);
      assert.deepEqual(
        seen.map((s) => s.customer_id),
        expected(status),
        status,
      );
      assert.ok(seen.every((s) => s.status === status));
    }
  });

  test('a page that ends exactly at the last score has has_more false and no cursor', async () => {
    const res = await t.api.get(`/api/health-scores?limit=${ids.length}`);
    assert.equal(res.body.data.length, ids.length);
    assert.equal(res.body.has_more, false);
    assert.equal(res.body.next_cursor, null);
    const atRisk = expected('at_risk');
    const filtered = await t.api.get(`/api/health-scores?status=at_risk&limit=${atRisk.length}`);
    assert.equal(filtered.body.has_more, false);
    assert.equal(filtered.body.next_cursor, null);
  });

  test('summary counts the customers in each band; customers without a score are not counted', async () => {
    const res = await t.api.get('/api/health-scores/summary');
    assert.equal(res.status, 200);
    const sum = ids.reduce((a, id) => a + Math.round(scores[id]! * 1e6), 0);
    assert.deepEqual(res.body, {
      total: ids.length,
      counts: {
        healthy: expected('healthy').length,
        at_risk: expected('at_risk').length,
        critical: expected('critical').length,
      },
      average: Math.round(sum / ids.length) / 1e6,
      ...NO_ARR,
    });
  });

  test('the portfolio follows score changes at once', async () => {
    await score(t.api, 'c', { usage: 0.01 });
    const res = await t.api.get('/api/health-scores?status=critical&limit=3');
    assert.deepEqual(
      res.body.data.map((s: { customer_id: string }) => s.customer_id),
      ['g', 'c', 'p'],
    );
    const summary = await t.api.get('/api/health-scores/summary');
    assert.equal(summary.body.counts.healthy, expected('healthy').length - 1);
    assert.equal(summary.body.counts.critical, expected('critical').length + 1);
    await score(t.api, 'c', { usage: 0.9 });
  });

  test('an account without scores has an empty portfolio and zero counts', async () => {
    const other = await t.newAccount('empty');
    const res = await other.get('/api/health-scores');
    assert.deepEqual(res.body, { data: [], has_more: false, next_cursor: null });
    assert.deepEqual((await other.get('/api/health-scores/summary')).body, {
      total: 0,
      counts: { healthy: 0, at_risk: 0, critical: 0 },
      average: null,
      ...NO_ARR,
    });
  });
});

describe('health scores: events', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('the first score emits health_score.updated with previous_score null and status.changed with previous_status null', async () => {
    await customer(t.api, 'cus_ev');
    const { result: body, events } = await withEvents(t.api, () =>
      score(t.api, 'cus_ev', { usage: 0.8, support: 0.6 }),
    );
    assert.deepEqual(
      events.map((e) => ({ type: e.type, data: e.data })),
      [
        {
          type: 'customer.health_score.updated',
          data: {
            customer_id: 'cus_ev',
            health_score: 0.7,
            previous_score: null,
            factors: { usage: 0.8, support: 0.6 },
            updated_at: body.updated_at,
            status: 'healthy',
          },
        },
        {
          type: 'customer.status.changed',
          data: {
            customer_id: 'cus_ev',
            status: 'healthy',
            previous_status: null,
            health_score: 0.7,
            updated_at: body.updated_at,
          },
        },
      ],
    );
    for (const e of events) {
      assert.match(e.id, /^evt_[0-9A-Za-z]{24}$/);
      assert.match(e.created_at, ISO_MS);
      assert.deepEqual(Object.keys(e).sort(), ['created_at', 'data', 'id', 'type']);
    }
  });

  test('a later score in the same band carries the old score and emits no status.changed', async () => {
    const { result: body, events } = await withEvents(t.api, () => score(t.api, 'cus_ev', { usage: 0.9 }));
    assert.deepEqual(
      events.map((e) => ({ type: e.type, data: e.data })),
      [
        {
          type: 'customer.health_score.updated',
          data: {
            customer_id: 'cus_ev',
            health_score: 0.9,
            previous_score: 0.7,
            factors: { usage: 0.9 },
            updated_at: body.updated_at,
            status: 'healthy',
          },
        },
      ],
    );
  });

  test('a write that leaves the score as it was still emits health_score.updated (it was an update)', async () => {
    const { events } = await withEvents(t.api, () => score(t.api, 'cus_ev', { usage: 0.9 }));
    assert.deepEqual(
      events.map((e) => [e.type, e.data.health_score, e.data.previous_score]),
      [['customer.health_score.updated', 0.9, 0.9]],
    );
  });

  test('a band change emits status.changed with the previous status', async () => {
    const { result: body, events } = await withEvents(t.api, () =>
      t.api.patch('/api/customers/cus_ev/health-score', { factors: { usage: 0.2 } }),
    );
    assert.deepEqual(
      events.map((e) => ({ type: e.type, data: e.data })),
      [
        {
          type: 'customer.health_score.updated',
          data: {
            customer_id: 'cus_ev',
            health_score: 0.2,
            previous_score: 0.9,
            factors: { usage: 0.2 },
            updated_at: body.body.updated_at,
            status: 'critical',
          },
        },
        {
          type: 'customer.status.changed',
          data: {
            customer_id: 'cus_ev',
            status: 'critical',
            previous_status: 'healthy',
            health_score: 0.2,
            updated_at: body.body.updated_at,
          },
        },
      ],
    );
  });

  test('a refused write emits nothing', async () => {
    const { events } = await withEvents(t.api, async () => {
      const res = await t.api.post('/api/customers/cus_ev/health-score', { factors: { usage: 2 } });
      assert.equal(res.status, 400);
    });
    assert.deepEqual(events, []);
  });

  test('creating a customer emits customer.created with the Customer object', async () => {
    const { result: res, events } = await withEvents(t.api, () =>
      t.api.post('/api/customers', customerBody('cus_ev_created', { metadata: { plan: 'pro' } })),
    );
    assert.equal(res.status, 201);
    assert.deepEqual(
      events.map((e) => ({ type: e.type, data: e.data })),
      [{ type: 'customer.created', data: res.body }],
    );
  });

  test('updating a customer emits customer.updated with the Customer object', async () => {
    await customer(t.api, 'cus_ev_upd');
    const { result: res, events } = await withEvents(t.api, () =>
      t.api.patch('/api/customers/cus_ev_upd', { name: 'Renamed', metadata: { tier: 'gold' } }),
    );
    assert.equal(res.status, 200);
    assert.deepEqual(
      events.map((e) => ({ type: e.type, data: e.data })),
      [{ type: 'customer.updated', data: res.body }],
    );
  });

  test('deleting a customer emits customer.deleted with {id, deleted: true}', async () => {
    await customer(t.api, 'cus_ev_del');
    const { events } = await withEvents(t.api, () => t.api.delete('/api/customers/cus_ev_del'));
    assert.deepEqual(
      events.map((e) => ({ type: e.type, data: e.data })),
      [{ type: 'customer.deleted', data: { id: 'cus_ev_del', deleted: true } }],
    );
  });

  test('GET /api/events/{id} returns the event as listed', async () => {
    const list = await t.api.get('/api/events?limit=3');
    assert.equal(list.status, 200);
    for (const e of list.body.data) {
      const one = await t.api.get(`/api/events/${e.id}`);
      assert.equal(one.status, 200);
      assert.deepEqual(one.body, e);
    }
  });

  /**
   * A new account with a known history of events, the newest first: a customer created, scored
   * five times (0.1 critical, 0.5 at risk, 0.9 healthy, 0.95 still healthy, 0.2 critical),
   * renamed and deleted. Each score records health_score.updated, then status.changed if the
   * band moved.
   */
  async function eventful(name: string): Promise<{ api: Client; types: string[] }> {
    const api = await t.newAccount(name);
    await customer(api, 'cus_walk');
    for (const usage of [0.1, 0.5, 0.9, 0.95, 0.2]) await score(api, 'cus_walk', { usage });
    assert.equal((await api.patch('/api/customers/cus_walk', { name: 'Walked' })).status, 200);
    assert.equal((await api.delete('/api/customers/cus_walk')).status, 200);
    const HS = 'customer.health_score.updated';
    const SC = 'customer.status.changed';
    const types = [
      'customer.deleted',
      'customer.updated',
      ...[SC, HS], // 0.2
      HS, // 0.95
      ...[SC, HS], // 0.9
      ...[SC, HS], // 0.5
      ...[SC, HS], // 0.1
      'customer.created',
    ];
    return { api, types };
  }

  test('the default page is 10', async () => {
    const { api, types } = await eventful('ev-page');
    const all = await api.get('/api/events?limit=100');
    assert.equal(types.length, 12);
    assert.deepEqual(
      all.body.data.map((e: Ev) => e.type),
      types,
    );
    const res = await api.get('/api/events');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.data.map((e: Ev) => e.id),
      all.body.data.slice(0, 10).map((e: Ev) => e.id),
    );
    assert.equal(res.body.has_more, true);
  });

  test('the list is newest first; walking with starting_after visits every event once', async () => {
    const { api, types } = await eventful('ev-walk');
    const all = await api.get('/api/events?limit=100');
    assert.equal(all.body.has_more, false);
    assert.deepEqual(
      all.body.data.map((e: Ev) => e.type),
      types,
      'newest first',
    );
    const ids = all.body.data.map((e: Ev) => e.id);
    const seen: string[] = [];
    let pages = 0;
    let cursor: string | undefined;
    while (pages < 50) {
      const q = cursor === undefined ? '' : `&starting_after=${cursor}`;
      const res = await api.get(`/api/events?limit=2${q}`);
      assert.equal(res.status, 200, res.raw);
      pages++;
      seen.push(...res.body.data.map((e: Ev) => e.id));
      if (!res.body.has_more) break;
      cursor = seen.at(-1);
    }
    assert.deepEqual(seen, ids);
    assert.equal(pages, 6, '12 events in pages of 2');
  });

  test('a type filter lists only that type, and pages through it', async () => {
    const { api } = await eventful('ev-types');
    const all = (await api.get('/api/events?limit=100')).body.data as Ev[];
    for (const [type, count] of [
      ['customer.health_score.updated', 5],
      ['customer.status.changed', 4],
      ['customer.deleted', 1],
    ] as const) {
      const want = all.filter((e) => e.type === type).map((e) => e.id);
      assert.equal(want.length, count, type);
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 50; pages++) {
        const q = cursor === undefined ? '' : `&starting_after=${cursor}`;
        const res = await api.get(`/api/events?type=${type}&limit=1${q}`);
        assert.equal(res.status, 200, res.raw);
        seen.push(...res.body.data.map((e: Ev) => e.id));
        if (!res.body.has_more) break;
        cursor = seen.at(-1);
      }
      assert.deepEqual(seen, want, type);
    }
  });
});

describe('health scores: concurrent writes', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('parallel writes to one customer each get their own version, and the events chain', async () => {
    await customer(t.api, 'cus_race');
    const n = 12;
    const { events } = await withEvents(t.api, () =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          t.api.post('/api/customers/cus_race/health-score', { factors: { usage: i / 20 } }),
        ),
      ),
    );
    const entries = await history(t.api, 'cus_race');
    assert.deepEqual(
      entries.map((h: { version: number }) => h.version),
      Array.from({ length: n }, (_, i) => n - i),
    );
    const now = await current(t.api, 'cus_race');
    assert.equal(now.health_score, entries[0].health_score);
    assert.equal(now.updated_at, entries[0].created_at);

    const updates = events.filter((e) => e.type === 'customer.health_score.updated');
    assert.equal(updates.length, n);
    assert.equal(updates[0]!.data.previous_score, null);
    for (let i = 1; i < n; i++) {
      assert.equal(updates[i]!.data.previous_score, updates[i - 1]!.data.health_score);
    }
    assert.equal(updates.at(-1)!.data.health_score, now.health_score);
  });

  test('scores written while the weights change all end up following the final weights', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `cus_par_${i}`);
    for (const id of ids) {
      await customer(t.api, id);
      await score(t.api, id, { usage: 0.2, support: 0.8 });
    }
    const writes = ids.map((id, i) =>
      t.api.post(`/api/customers/${id}/health-score`, { factors: { usage: 0.2, support: 0.8, nps: i / 10 } }),
    );
    const change = t.api.patch('/api/settings/health-score/weights', {
      weights: { usage: 0.25, support: 0.75 },
    });
    for (const res of await Promise.all([...writes, change])) assert.equal(res.status, 200, res.raw);
    for (const id of ids) {
      const body = await current(t.api, id);
      assert.equal(body.health_score, 0.65, id); // 0.05 + 0.6; nps has no weight
      assert.equal(body.status, 'at_risk', id);
    }
  });
});

describe('health scores: deleting a customer', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('removes its score, history, portfolio entry and count; a re-created id starts clean', async () => {
    await customer(t.api, 'cus_gone');
    await customer(t.api, 'cus_stays');
    await score(t.api, 'cus_gone', { usage: 0.2 });
    await score(t.api, 'cus_gone', { usage: 0.3 });
    const stays = await score(t.api, 'cus_stays', { usage: 0.9 });

    assert.equal((await t.api.delete('/api/customers/cus_gone')).status, 200);
    for (const path of ['', '/history']) {
      const res = await t.api.get(`/api/customers/cus_gone/health-score${path}`);
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'customer_not_found');
    }
    assert.deepEqual((await t.api.get('/api/health-scores')).body.data, [
      { ...stays, name: 'Customer cus_stays', ...NO_BOOK },
    ]);
    assert.deepEqual((await t.api.get('/api/health-scores/summary')).body, {
      total: 1,
      counts: { healthy: 1, at_risk: 0, critical: 0 },
      average: 0.9,
      ...NO_ARR,
    });

    await customer(t.api, 'cus_gone');
    const none = await t.api.get('/api/customers/cus_gone/health-score');
    assert.equal(none.status, 404);
    assert.equal(none.body.error.code, 'health_score_not_found');
    assert.deepEqual((await t.api.get('/api/customers/cus_gone/health-score/history')).body, {
      data: [],
      has_more: false,
    });

    const { events } = await withEvents(t.api, () => score(t.api, 'cus_gone', { usage: 0.6 }));
    assert.deepEqual(
      events.map((e) => [e.type, previousOf(e)]),
      [
        ['customer.health_score.updated', null],
        ['customer.status.changed', null],
      ],
    );
    const entries = await history(t.api, 'cus_gone');
    assert.deepEqual(
      entries.map((h: { version: number; health_score: number }) => [h.version, h.health_score]),
      [[1, 0.6]],
    );
  });

  test('a weights change after a delete does not touch the deleted customer', async () => {
    await customer(t.api, 'cus_del_w');
    await score(t.api, 'cus_del_w', { usage: 0.9, support: 0.1 });
    await t.api.delete('/api/customers/cus_del_w');
    const { result: res, events } = await withEvents(t.api, () =>
      t.api.patch('/api/settings/health-score/weights', { weights: { support: 1 } }),
    );
    assert.equal(res.status, 200, res.raw);
    assert.ok(events.every((e) => e.data.customer_id !== 'cus_del_w'));
    assert.equal((await t.api.get('/api/customers/cus_del_w/health-score')).status, 404);
  });
});
