// Tenant isolation over every /api route, from one table (docs/api.md, "General"): account A stores
// a bit of everything; account B, with its own key, probes each route with A's ids. Every probe is
// a 404 with the resource's not-found code, shaped exactly like the answer for an id that never
// existed; no answer B gets carries anything of A's; and afterwards A's data is exactly as it was.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { snapshot } from '../fuzz/rules.ts';
import { buildTestApp, type Client, type Response, type TestApp } from '../helpers/app.ts';

/** Values only account A ever sent or received: none may reach B. */
const A_SECRETS = {
  name: 'Alice Secretname',
  email: 'alice@secret.example',
  metadata: 'meta-secret-value',
  url: 'http://127.0.0.1:9/secret-hook',
  description: 'secret description of A',
};

let t: TestApp;
let a: Client;
let b: Client;
const A: {
  customer: string;
  event: string;
  webhook: string;
  delivery: string;
  secret: string;
  outcome: string;
} = {
  customer: 'cus_secret',
  outcome: '',
  event: '',
  webhook: '',
  delivery: '',
  secret: '',
};
let bWebhook = '';
let before_: Awaited<ReturnType<typeof snapshot>>;

async function ok(res: Promise<Response>, status = 200): Promise<Response> {
  const r = await res;
  assert.equal(r.status, status, r.raw);
  return r;
}

before(async () => {
  t = await buildTestApp();
  a = t.api;
  b = await t.newAccount('b');
  await ok(a.patch('/api/settings/health-score/weights', { weights: { usage: 0.75, support: 0.25 } }));
  await ok(a.patch('/api/settings/health-score/thresholds', { healthy: 0.8, at_risk: 0.3 }));
  await ok(a.patch('/api/settings/health-score/alerts', { drop: { delta: 0.1, days: 30 } }));
  const webhook = await ok(
    a.post('/api/webhooks', {
      url: A_SECRETS.url,
      events: ['customer.created', 'customer.health_score.updated'],
      description: A_SECRETS.description,
    }),
    201,
  );
  A.webhook = webhook.body.id;
  A.secret = webhook.body.secret;
  await ok(
    a.post('/api/customers', {
      customer_id: A.customer,
      name: A_SECRETS.name,
      email: A_SECRETS.email,
      metadata: { token: A_SECRETS.metadata },
    }),
    201,
  );
  await ok(
    a.post(`/api/customers/${A.customer}/health-score`, { factors: { usage: 0.123456, support: 0.9 } }),
  );
  await ok(a.patch(`/api/customers/${A.customer}/health-score`, { factors: { billing: 0.654321 } }));
  A.outcome = (
    await ok(
      a.post(`/api/customers/${A.customer}/outcomes`, { outcome: 'churned', note: A_SECRETS.description }),
      201,
    )
  ).body.id;
  A.event = (await ok(a.get('/api/events?limit=1'))).body.data[0].id;
  A.delivery = (await ok(a.get(`/api/webhooks/${A.webhook}/deliveries?limit=1`))).body.data[0].id;
  bWebhook = (
    await ok(b.post('/api/webhooks', { url: 'http://127.0.0.1:9/b', events: ['customer.created'] }), 201)
  ).body.id;
  before_ = await snapshot(a);
});
after(() => t.close());

/** Nothing of A's in an answer to B (ids B sent itself may be echoed in a 404 message). */
function assertNothingOfA(res: Response, what: string): void {
  for (const [field, value] of Object.entries(A_SECRETS)) {
    assert.ok(!res.raw.includes(value), `${what}: A's ${field} in ${res.raw.slice(0, 300)}`);
  }
  for (const value of [A.secret, a.key, '0.123456', '0.654321']) {
    assert.ok(!res.raw.includes(value), `${what}: ${value} in ${res.raw.slice(0, 300)}`);
  }
}

interface Probe {
  method: string;
  /** The path, with {c} {e} {w} {d} {bw} for A's customer, event, webhook, delivery and B's webhook. */
  path: string;
  body?: unknown;
  code: string;
}

const PROBES: Probe[] = [
  { method: 'GET', path: '/api/customers/{c}', code: 'customer_not_found' },
  { method: 'PATCH', path: '/api/customers/{c}', body: { name: 'Hijacked' }, code: 'customer_not_found' },
  {
    method: 'PATCH',
    path: '/api/customers/{c}',
    body: { metadata: { token: null } },
    code: 'customer_not_found',
  },
  { method: 'DELETE', path: '/api/customers/{c}', code: 'customer_not_found' },
  { method: 'GET', path: '/api/customers/{c}/rollup', code: 'customer_not_found' },
  {
    method: 'POST',
    path: '/api/customers/{c}/health-score',
    body: { factors: { usage: 0 } },
    code: 'customer_not_found',
  },
  {
    method: 'PATCH',
    path: '/api/customers/{c}/health-score',
    body: { factors: { usage: null, x: 1 } },
    code: 'customer_not_found',
  },
  { method: 'GET', path: '/api/customers/{c}/health-score', code: 'customer_not_found' },
  { method: 'GET', path: '/api/customers/{c}/health-score/history', code: 'customer_not_found' },
  {
    method: 'GET',
    path: '/api/customers/{c}/health-score/history?limit=100&starting_after=2',
    code: 'customer_not_found',
  },
  { method: 'GET', path: '/api/customers/{c}/health-score/explanation', code: 'customer_not_found' },
  {
    method: 'GET',
    path: '/api/customers/{c}/health-score/explanation?version=1',
    code: 'customer_not_found',
  },
  {
    method: 'PUT',
    path: '/api/customers/{c}/health-score/override',
    body: { health_score: 0, reason: 'stolen' },
    code: 'customer_not_found',
  },
  { method: 'DELETE', path: '/api/customers/{c}/health-score/override', code: 'customer_not_found' },
  {
    method: 'POST',
    path: '/api/customers/{c}/outcomes',
    body: { outcome: 'churned' },
    code: 'customer_not_found',
  },
  { method: 'GET', path: '/api/customers/{c}/outcomes', code: 'customer_not_found' },
  { method: 'DELETE', path: '/api/customers/{c}/outcomes/{o}', code: 'customer_not_found' },
  { method: 'GET', path: '/api/events/{e}', code: 'event_not_found' },
  { method: 'GET', path: '/api/webhooks/{w}', code: 'webhook_not_found' },
  {
    method: 'PATCH',
    path: '/api/webhooks/{w}',
    body: { url: 'http://127.0.0.1:9/stolen', enabled: false },
    code: 'webhook_not_found',
  },
  { method: 'DELETE', path: '/api/webhooks/{w}', code: 'webhook_not_found' },
  { method: 'POST', path: '/api/webhooks/{w}/rotate-secret', code: 'webhook_not_found' },
  { method: 'GET', path: '/api/webhooks/{w}/deliveries', code: 'webhook_not_found' },
  { method: 'GET', path: '/api/webhooks/{w}/deliveries?status=pending&limit=100', code: 'webhook_not_found' },
  { method: 'POST', path: '/api/webhooks/{w}/deliveries/{d}/retry', code: 'webhook_not_found' },
  { method: 'POST', path: '/api/webhooks/{bw}/deliveries/{d}/retry', code: 'delivery_not_found' },
];

/** An id of the same shape that exists nowhere. */
const NEVER: Record<string, string> = {
  '{c}': 'cus_nowhere',
  '{e}': 'evt_000000000000000000000000',
  '{w}': 'whk_000000000000000000000000',
  '{d}': 'dlv_000000000000000000000000',
  '{o}': 'out_000000000000000000000000',
};

function fill(path: string, ids: Record<string, string>): string {
  return path.replace(/\{(c|e|w|d|o|bw)\}/g, (m) => ids[m] as string);
}

describe('another account probes every route with A’s ids', () => {
  for (const p of PROBES) {
    test(`${p.method} ${p.path} → 404 ${p.code}, like an id that never existed`, async () => {
      const real = {
        '{c}': A.customer,
        '{e}': A.event,
        '{w}': A.webhook,
        '{d}': A.delivery,
        '{o}': A.outcome,
        '{bw}': bWebhook,
      };
      const res = await b.request(p.method, fill(p.path, real), p.body);
      assert.equal(res.status, 404, res.raw);
      assert.equal(res.body.error.code, p.code);
      assertNothingOfA(res, `${p.method} ${p.path}`);

      const never = await b.request(p.method, fill(p.path, { ...NEVER, '{bw}': bWebhook }), p.body);
      assert.equal(never.status, 404);
      assert.equal(never.body.error.code, res.body.error.code);
      assert.equal(never.body.error.param, res.body.error.param);
      let message = res.body.error.message as string;
      for (const key of Object.keys(NEVER)) {
        message = message.replace(real[key as keyof typeof real], NEVER[key] as string);
      }
      assert.equal(message, never.body.error.message, 'the message tells nothing apart');
      assert.deepEqual(Object.keys(res.headers).sort(), Object.keys(never.headers).sort());
    });
  }
});

describe('another account’s lists and settings show nothing of A’s', () => {
  const LISTS: [string, (body: Record<string, unknown>) => void][] = [
    ['/api/customers?limit=100', (body) => assert.deepEqual(body, { customers: [], has_more: false })],
    [
      '/api/customers?starting_after=cus_a',
      (body) => assert.deepEqual(body, { customers: [], has_more: false }),
    ],
    ['/api/customers?search=secret', (body) => assert.deepEqual(body, { customers: [], has_more: false })],
    ['/api/customers?search=Alice', (body) => assert.deepEqual(body, { customers: [], has_more: false })],
    [
      '/api/health-scores?limit=100',
      (body) => assert.deepEqual(body, { data: [], has_more: false, next_cursor: null }),
    ],
    [
      '/api/health-scores?status=critical',
      (body) => assert.deepEqual(body, { data: [], has_more: false, next_cursor: null }),
    ],
    [
      '/api/health-scores/summary',
      (body) =>
        assert.deepEqual(body, {
          total: 0,
          counts: { healthy: 0, at_risk: 0, critical: 0 },
          average: null,
          arr: { total: 0, healthy: 0, at_risk: 0, critical: 0 },
          arr_at_risk: 0,
        }),
    ],
    [
      '/api/health-scores/distribution?bins=2',
      (body) =>
        assert.deepEqual(body, {
          total: 0,
          bins: [0, 0.5].map((from) => ({
            from,
            to: from + 0.5,
            total: 0,
            counts: { healthy: 0, at_risk: 0, critical: 0 },
            average: null,
          })),
        }),
    ],
    [
      '/api/health-scores/summary?group_by=metadata.token',
      (body) =>
        assert.deepEqual(body, {
          total: 0,
          counts: { healthy: 0, at_risk: 0, critical: 0 },
          average: null,
          arr: { total: 0, healthy: 0, at_risk: 0, critical: 0 },
          arr_at_risk: 0,
          groups: [],
          groups_truncated: false,
        }),
    ],
    [
      '/api/health-scores/trend?days=3',
      (body) =>
        assert.deepEqual(
          (body.data as { total: number; average: number | null }[]).map((d) => [d.total, d.average]),
          [
            [0, null],
            [0, null],
            [0, null],
          ],
        ),
    ],
    [
      '/api/customers?metadata%5Btoken%5D=meta-secret-value',
      (body) => assert.deepEqual(body, { customers: [], has_more: false }),
    ],
    [
      '/api/health-scores?metadata%5Btoken%5D=meta-secret-value',
      (body) => assert.deepEqual(body, { data: [], has_more: false, next_cursor: null }),
    ],
    ['/api/health-scores/movers?days=90', (body) => assert.deepEqual(body, { data: [] })],
    ['/api/health-scores/movers?days=90&direction=up', (body) => assert.deepEqual(body, { data: [] })],
    ['/api/settings/health-score/alerts', (body) => assert.deepEqual(body, { drop: null, updated_at: null })],
    [
      '/api/settings/health-score/weights',
      (body) => assert.deepEqual(body, { weights: {}, updated_at: null }),
    ],
    [
      '/api/settings/health-score/thresholds',
      (body) => assert.deepEqual(body, { healthy: 0.7, at_risk: 0.4, updated_at: null }),
    ],
    ['/api/events?limit=100', (body) => assert.deepEqual(body, { data: [], has_more: false })],
    ['/api/events?type=customer.created', (body) => assert.deepEqual(body, { data: [], has_more: false })],
    [
      '/api/webhooks',
      (body) =>
        assert.deepEqual(
          (body.webhooks as { id: string }[]).map((w) => w.id),
          [bWebhook],
        ),
    ],
    [
      `/api/webhooks/{bw}/deliveries?limit=100`,
      (body) => assert.deepEqual(body, { data: [], has_more: false }),
    ],
  ];
  for (const [path, expect] of LISTS) {
    test(`GET ${path}`, async () => {
      const res = await ok(b.get(path.replace('{bw}', bWebhook)));
      expect(res.body);
      assertNothingOfA(res, path);
    });
  }

  test('starting_after with A’s event id is refused exactly like an id that never existed', async () => {
    const res = await b.get(`/api/events?starting_after=${A.event}`);
    const never = await b.get(`/api/events?starting_after=${NEVER['{e}']}`);
    assert.equal(res.status, never.status, res.raw);
    assert.equal(res.body.error?.code, never.body.error?.code);
    assert.equal(res.raw.replace(A.event, 'ID'), never.raw.replace(NEVER['{e}'] as string, 'ID'));
    assertNothingOfA(res, 'events after A’s event');
  });

  test('a portfolio cursor pointing into A’s scores yields none of them', async () => {
    const page = await ok(a.get('/api/health-scores?limit=1'));
    assert.equal(page.body.data.length, 1);
    const cursor = Buffer.from(JSON.stringify(['critical', 0, ''])).toString('base64url');
    const res = await ok(b.get(`/api/health-scores?cursor=${cursor}`));
    assert.deepEqual(res.body.data, []);
  });

  test('ids are per account: B creates its own customer under A’s id, scores and deletes it', async () => {
    const mine = await ok(
      b.post('/api/customers', { customer_id: A.customer, name: 'B’s own', email: 'b@b.example' }),
      201,
    );
    assertNothingOfA(mine, 'create');
    assert.deepEqual(mine.body.metadata, {});
    const score = await ok(b.post(`/api/customers/${A.customer}/health-score`, { factors: { usage: 0.5 } }));
    assert.equal(score.body.health_score, 0.5, 'B has no weights: the plain mean');
    const history = await ok(b.get(`/api/customers/${A.customer}/health-score/history`));
    assert.equal(history.body.data.length, 1, 'only B’s own history');
    assertNothingOfA(history, 'history');
    await ok(b.delete(`/api/customers/${A.customer}`));
  });

  test('a weights preview counts only B’s own scores', async () => {
    const res = await ok(b.post('/api/settings/health-score/weights/preview', { weights: { usage: 1 } }));
    assert.deepEqual(res.body, {
      customers: 0,
      scores_changed: 0,
      band_changes: 0,
      bands: { healthy: 0, at_risk: 0, critical: 0 },
    });
  });

  test('B’s settings changes rescore none of A’s customers', async () => {
    await ok(b.patch('/api/settings/health-score/weights', { weights: { billing: 1 } }));
    await ok(b.patch('/api/settings/health-score/thresholds', { healthy: 0.95, at_risk: 0.9 }));
  });
});

describe('afterwards', () => {
  test('A’s customers, scores, settings, webhooks, deliveries and events are exactly as before', async () => {
    assert.deepEqual(await snapshot(a), before_);
    const history = await ok(a.get(`/api/customers/${A.customer}/health-score/history`));
    assert.equal(history.body.data.length, 2, 'no version was added');
  });
});
