// Tenant isolation for health scores, settings, history, the portfolio and events (docs/api.md,
// "General"):
// another account's objects are invisible — 404, never 403, and nothing in the answer tells
// them apart from objects that never existed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, customerBody, type Response, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let mine: Client;
let other: Client;
let myEventId: string;

async function ok(res: Promise<Response>, status = 200): Promise<Response> {
  const r = await res;
  assert.equal(r.status, status, r.raw);
  return r;
}

/** What the first account has stored, as the API shows it to that account. */
async function firstAccountView(): Promise<Record<string, unknown>> {
  const urls = [
    '/api/customers/cus_shared/health-score',
    '/api/customers/cus_private/health-score',
    '/api/customers/cus_shared/health-score/history?limit=100',
    '/api/customers/cus_private/health-score/history?limit=100',
    '/api/settings/health-score/weights',
    '/api/settings/health-score/thresholds',
    '/api/health-scores?limit=100',
    '/api/health-scores/summary',
    '/api/events?limit=100',
  ];
  const out: Record<string, unknown> = {};
  for (const url of urls) {
    const res = await mine.get(url);
    out[url] = { status: res.status, body: res.body };
  }
  return out;
}

before(async () => {
  t = await buildTestApp();
  mine = t.api;
  other = await t.newAccount('other');
  await ok(mine.patch('/api/settings/health-score/weights', { weights: { usage: 0.7, support: 0.3 } }));
  await ok(mine.patch('/api/settings/health-score/thresholds', { healthy: 0.8, at_risk: 0.5 }));
  for (const id of ['cus_shared', 'cus_private']) {
    await ok(mine.post('/api/customers', customerBody(id)), 201);
    await ok(mine.post(`/api/customers/${id}/health-score`, { factors: { usage: 0.9, support: 0.1 } }));
    await ok(mine.patch(`/api/customers/${id}/health-score`, { factors: { support: 0.5 } }));
  }
  const events = await ok(mine.get('/api/events?limit=1'));
  myEventId = events.body.data[0].id;
});
after(() => t.close());

/** The same error as for an id that never existed anywhere, apart from the id in the message. */
function assertLooksMissing(res: Response, never: Response, id: string, neverId: string): void {
  assert.equal(res.status, 404, res.raw);
  assert.equal(res.body.error.code, never.body.error.code);
  assert.equal(res.body.error.type, never.body.error.type);
  assert.equal(res.body.error.param, never.body.error.param);
  assert.equal(res.body.error.message.replace(id, 'ID'), never.body.error.message.replace(neverId, 'ID'));
}

describe('another account cannot see the first account’s scores', () => {
  test('GET health-score of the first account’s customer → 404 customer_not_found', async () => {
    const res = await other.get('/api/customers/cus_private/health-score');
    const never = await other.get('/api/customers/cus_never/health-score');
    assert.equal(res.body.error.code, 'customer_not_found');
    assertLooksMissing(res, never, 'cus_private', 'cus_never');
  });

  test('history of the first account’s customer → 404 customer_not_found', async () => {
    const res = await other.get('/api/customers/cus_private/health-score/history');
    const never = await other.get('/api/customers/cus_never/health-score/history');
    assert.equal(res.body.error.code, 'customer_not_found');
    assertLooksMissing(res, never, 'cus_private', 'cus_never');
  });

  test('POST and PATCH on the first account’s customer → 404, and nothing changes', async () => {
    const before = await firstAccountView();
    for (const method of ['POST', 'PATCH']) {
      const res = await other.request(method, '/api/customers/cus_private/health-score', {
        factors: { usage: 0 },
      });
      const never = await other.request(method, '/api/customers/cus_never/health-score', {
        factors: { usage: 0 },
      });
      assert.equal(res.body.error.code, 'customer_not_found');
      assertLooksMissing(res, never, 'cus_private', 'cus_never');
    }
    assert.deepEqual(await firstAccountView(), before);
  });

  test('the portfolio and summary of a new account are empty', async () => {
    assert.deepEqual((await ok(other.get('/api/health-scores?limit=100'))).body, {
      data: [],
      has_more: false,
      next_cursor: null,
    });
    for (const status of ['healthy', 'at_risk', 'critical']) {
      assert.deepEqual((await ok(other.get(`/api/health-scores?status=${status}`))).body.data, []);
    }
    assert.deepEqual((await ok(other.get('/api/health-scores/summary'))).body, {
      total: 0,
      counts: { healthy: 0, at_risk: 0, critical: 0 },
      average: null,
      arr: { total: 0, healthy: 0, at_risk: 0, critical: 0 },
      arr_at_risk: 0,
    });
  });

  test('a portfolio cursor from the first account reveals nothing of it', async () => {
    const page = await ok(mine.get('/api/health-scores?limit=1'));
    assert.equal(page.body.has_more, true);
    const res = await ok(other.get(`/api/health-scores?cursor=${page.body.next_cursor}`));
    assert.deepEqual(res.body, { data: [], has_more: false, next_cursor: null });
  });

  test('weights and thresholds of a new account are the unconfigured defaults', async () => {
    assert.deepEqual((await ok(other.get('/api/settings/health-score/weights'))).body, {
      weights: {},
      updated_at: null,
    });
    assert.deepEqual((await ok(other.get('/api/settings/health-score/thresholds'))).body, {
      healthy: 0.7,
      at_risk: 0.4,
      updated_at: null,
    });
  });
});

describe('another account cannot see the first account’s events', () => {
  test('the event list is empty', async () => {
    assert.deepEqual((await ok(other.get('/api/events?limit=100'))).body, { data: [], has_more: false });
    const typed = await ok(other.get('/api/events?type=customer.health_score.updated'));
    assert.deepEqual(typed.body.data, []);
  });

  test('GET of the first account’s event id → 404 event_not_found, as for an id that never existed', async () => {
    const res = await other.get(`/api/events/${myEventId}`);
    const never = await other.get('/api/events/evt_000000000000000000000000');
    assert.equal(res.body.error.code, 'event_not_found');
    assertLooksMissing(res, never, myEventId, 'evt_000000000000000000000000');
    assert.equal((await mine.get(`/api/events/${myEventId}`)).status, 200);
  });

  test('starting_after with the first account’s event id is refused as an unknown event, showing nothing', async () => {
    const res = await other.get(`/api/events?starting_after=${myEventId}&limit=100`);
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'parameter_invalid');
    assert.equal(res.body.error.param, 'starting_after');
    assert.equal(res.body.data, undefined);
  });
});

describe('the same customer id in two accounts is two customers', () => {
  test('scores, history and events stay with their own account', async () => {
    const before = await firstAccountView();
    await ok(other.post('/api/customers', customerBody('cus_shared')), 201);
    const none = await other.get('/api/customers/cus_shared/health-score');
    assert.equal(none.status, 404);
    assert.equal(none.body.error.code, 'health_score_not_found');
    assert.deepEqual((await ok(other.get('/api/customers/cus_shared/health-score/history'))).body, {
      data: [],
      has_more: false,
    });

    const scored = await ok(
      other.post('/api/customers/cus_shared/health-score', { factors: { usage: 0.2 } }),
    );
    // The second account has no weights: plain mean, default thresholds.
    assert.equal(scored.body.health_score, 0.2);
    assert.equal(scored.body.status, 'critical');
    const otherEvents = (await ok(other.get('/api/events?limit=100'))).body.data;
    assert.deepEqual(
      otherEvents.map((e: { type: string; data: { customer_id?: string; id?: string } }) => [
        e.type,
        e.data.customer_id ?? e.data.id,
      ]),
      [
        ['customer.status.changed', 'cus_shared'],
        ['customer.health_score.updated', 'cus_shared'],
        ['customer.created', 'cus_shared'],
      ],
    );
    const updated = otherEvents.find((e: { type: string }) => e.type === 'customer.health_score.updated');
    assert.equal(updated.data.previous_score, null, 'the first account’s score is not the previous one');
    assert.deepEqual((await ok(other.get('/api/health-scores/summary'))).body.total, 1);

    assert.deepEqual(await firstAccountView(), before);

    await ok(other.delete('/api/customers/cus_shared'));
    assert.deepEqual(await firstAccountView(), before, 'a delete in one account leaves the other alone');
  });
});

describe('another account’s settings changes leave the first account alone', () => {
  test('its weights change neither the first account’s weights nor recomputes its scores', async () => {
    await ok(other.post('/api/customers', customerBody('cus_o')), 201);
    await ok(other.post('/api/customers/cus_o/health-score', { factors: { usage: 0.9, support: 0.1 } }));
    const before = await firstAccountView();
    const res = await ok(other.patch('/api/settings/health-score/weights', { weights: { support: 1 } }));
    assert.deepEqual(res.body.weights, { support: 1 });
    // The second account's own score moved …
    assert.equal((await ok(other.get('/api/customers/cus_o/health-score'))).body.health_score, 0.1);
    // … the first account's scores, history, events and weights did not.
    assert.deepEqual(await firstAccountView(), before);
  });

  test('its thresholds change neither the first account’s thresholds nor re-bands its scores', async () => {
    const before = await firstAccountView();
    const res = await ok(
      other.patch('/api/settings/health-score/thresholds', { healthy: 0.95, at_risk: 0.9 }),
    );
    assert.equal(res.body.healthy, 0.95);
    assert.equal((await ok(other.get('/api/customers/cus_o/health-score'))).body.status, 'critical');
    assert.deepEqual(await firstAccountView(), before);
  });

  test('the first account’s settings changes do not touch the second account', async () => {
    const otherScore = (await ok(other.get('/api/customers/cus_o/health-score'))).body;
    const otherEvents = (await ok(other.get('/api/events?limit=100'))).body;
    await ok(mine.patch('/api/settings/health-score/weights', { weights: { usage: 1 } }));
    await ok(mine.patch('/api/settings/health-score/thresholds', { healthy: 0.6, at_risk: 0.2 }));
    assert.deepEqual((await ok(other.get('/api/customers/cus_o/health-score'))).body, otherScore);
    assert.deepEqual((await ok(other.get('/api/events?limit=100'))).body, otherEvents);
    assert.deepEqual((await ok(other.get('/api/settings/health-score/weights'))).body.weights, {
      support: 1,
    });
    // The first account's own scores did follow its change.
    assert.equal((await ok(mine.get('/api/customers/cus_private/health-score'))).body.health_score, 0.9);
  });
});

describe('authentication', () => {
  for (const [method, path] of [
    ['GET', '/api/customers/cus_private/health-score'],
    ['POST', '/api/customers/cus_private/health-score'],
    ['PATCH', '/api/customers/cus_private/health-score'],
    ['GET', '/api/customers/cus_private/health-score/history'],
    ['GET', '/api/health-scores'],
    ['GET', '/api/health-scores/summary'],
    ['GET', '/api/settings/health-score/weights'],
    ['PATCH', '/api/settings/health-score/weights'],
    ['GET', '/api/settings/health-score/thresholds'],
    ['PATCH', '/api/settings/health-score/thresholds'],
    ['GET', '/api/events'],
    ['GET', `/api/events/evt_000000000000000000000000`],
  ] as const) {
    test(`${method} ${path} without a valid key → 401 and nothing changes`, async () => {
      const before = await firstAccountView();
      const body = method === 'GET' ? undefined : { factors: { usage: 0 }, weights: { usage: 1 } };
      for (const auth of [undefined, 'Bearer vk_00000000000000000000000000000000', `Basic ${mine.key}`]) {
        const res = await t.as(auth).request(method, path, body);
        assert.equal(res.status, 401, res.raw);
        assert.equal(res.body.error.type, 'authentication_error');
        assert.equal(res.headers['www-authenticate'], 'Bearer');
      }
      assert.deepEqual(await firstAccountView(), before);
    });
  }
});
