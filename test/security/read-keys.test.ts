// Read keys (docs/api.md, "Key scopes"): every route that is not a GET, taken from the OpenAPI
// document so a new write route cannot be forgotten, refuses a read key with 403
// permission_denied and changes nothing; every GET answers it. Both backends. A person's own routes
// (/api/me, /api/views: docs/people.md, "Roles") refuse every key, of either scope.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/keys.ts';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';
import { apiOperations } from '../helpers/people.ts';

let t: TestApp;
let reader: Client;
const ids: Record<string, string> = { customer_id: 'cus_read', view_id: 'view_unknown' };
let routes: { method: string; path: string }[] = [];

/** A signed-in person's own route, which no key may use (domain/people.ts, area `own`). */
const own = (path: string) => path === '/api/me' || path.startsWith('/api/views');
const OWN_REFUSAL = /signed-in person's own: an API key may not use it/;

/** Everything the account has, as the API shows it. */
async function snapshot(api: Client): Promise<unknown[]> {
  const paths = [
    '/api/customers?limit=100',
    '/api/health-scores?limit=100',
    '/api/settings/health-score/weights',
    '/api/settings/health-score/thresholds',
    '/api/settings/health-score/alerts',
    '/api/settings/health-score/factors',
    '/api/webhooks',
    '/api/events?limit=100',
    `/api/webhooks/${ids.webhook_id}/deliveries?limit=100`,
    '/api/users',
    '/api/sources',
    '/api/health-scores/backfill',
    '/api/tasks?status=all&include_snoozed=true&limit=100',
    '/api/playbooks',
    `/api/customers/${ids.customer_id}/notes?limit=100`,
    `/api/customers/${ids.customer_id}/outcomes?limit=100`,
    `/api/customers/${ids.customer_id}/health-score/history?limit=100`,
    `/api/customers/${ids.customer_id}/timeline?limit=100`,
  ];
  return Promise.all(paths.map(async (p) => (await api.get(p)).body));
}

const fill = (path: string) =>
  path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const id = ids[name];
    assert.ok(id, `no id for {${name}} in ${path}`);
    return encodeURIComponent(id);
  });

before(async () => {
  t = await buildTestApp();
  const api = t.api;
  assert.equal((await api.post('/api/customers', customerBody(ids.customer_id as string))).status, 201);
  assert.equal(
    (await api.post(`/api/customers/${ids.customer_id}/health-score`, { factors: { usage: 0.5 } })).status,
    200,
  );
  const hook = await api.post('/api/webhooks', {
    url: 'http://127.0.0.1:9/hook',
    events: ['customer.updated'],
  });
  ids.webhook_id = hook.body.id;
  assert.equal((await api.patch(`/api/customers/${ids.customer_id}`, { name: 'Renamed' })).status, 200);
  ids.delivery_id = (await api.get(`/api/webhooks/${ids.webhook_id}/deliveries?limit=1`)).body.data[0].id;
  ids.event_id = (await api.get('/api/events?limit=1')).body.data[0].id;
  ids.user_id = (await api.post('/api/users', { email: 'ro@example.com', role: 'viewer' })).body.user.id;
  ids.outcome_id = (
    await api.post(`/api/customers/${ids.customer_id}/outcomes`, { outcome: 'retained' })
  ).body.id;
  ids.task_id = (await api.post(`/api/customers/${ids.customer_id}/tasks`, { title: 'Call them' })).body.id;
  ids.playbook_id = (
    await api.post('/api/playbooks', {
      name: 'Calls',
      trigger: { type: 'score_dropped' },
      task: { title: 'Call' },
    })
  ).body.id;
  ids.note_id = (await api.post(`/api/customers/${ids.customer_id}/notes`, { body: 'Happy' })).body.id;
  ids.source_id = (await api.post('/api/sources', { type: 'segment', name: 'Product events' })).body.id;
  const backfill = await api.post('/api/health-scores/backfill', {
    from: new Date().toISOString().slice(0, 10),
  });
  assert.equal(backfill.status, 202, backfill.raw);
  ids.backfill_id = backfill.body.id;
  await t.app.backfills.settled(backfill.body.id);
  ids.factor = 'engagement';
  const rule = { metric: 'logins', aggregate: 'sum', scale: { type: 'linear', from: 0, to: 10 } };
  assert.equal(
    (await api.request('PUT', `/api/settings/health-score/factors/${ids.factor}`, rule)).status,
    200,
  );
  const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
  reader = t.as(`Bearer ${key}`);
  routes = await apiOperations(t);
});
after(() => t.close());

describe('a read key', () => {
  test('the OpenAPI document lists the write routes this test walks', () => {
    const writes = routes.filter((r) => !['GET', 'HEAD'].includes(r.method));
    assert.ok(writes.length >= 17, `${writes.length} write routes`);
    for (const method of ['POST', 'PATCH', 'DELETE']) assert.ok(writes.some((r) => r.method === method));
  });

  test('is refused with 403 permission_denied on every write route, and nothing changes', async () => {
    const before = await snapshot(t.api);
    for (const { method, path } of routes.filter((r) => !['GET', 'HEAD'].includes(r.method))) {
      const body = method === 'DELETE' ? undefined : { name: 'X', factors: { usage: 0.1 }, role: 'admin' };
      const res = await reader.request(method, fill(path), body);
      const what = `${method} ${path}`;
      assert.equal(res.status, 403, `${what}: ${res.raw}`);
      assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message', 'type'], what);
      assert.equal(res.body.error.type, 'permission_error', what);
      assert.equal(res.body.error.code, 'permission_denied', what);
      assert.match(
        res.body.error.message,
        own(path) ? OWN_REFUSAL : new RegExp(`read-only.*${method}`),
        what,
      );
    }
    assert.deepEqual(await snapshot(t.api), before);
  });

  test('is refused even with a body that could not be read, an Idempotency-Key or a foreign id', async () => {
    const before = await snapshot(t.api);
    const bad = await reader.request('POST', '/api/customers', '{not json', {
      'content-type': 'application/json',
    });
    assert.equal(bad.status, 403);
    const keyed = await reader.request('POST', '/api/customers', customerBody('cus_new'), {
      'idempotency-key': 'k1',
    });
    assert.equal(keyed.status, 403);
    const foreign = await reader.request('DELETE', '/api/customers/cus_nobody');
    assert.equal(foreign.status, 403);
    assert.deepEqual(await snapshot(t.api), before);
    // The refused Idempotency-Key was not taken: a write key may use it.
    assert.equal(
      (await t.api.request('POST', '/api/customers', customerBody('cus_new'), { 'idempotency-key': 'k1' }))
        .status,
      201,
    );
  });

  test('answers every GET route as a write key would, but the audit log (write keys and admins only)', async () => {
    const audit = await reader.get('/api/audit-log');
    assert.deepEqual([audit.status, audit.body.error.code], [403, 'permission_denied']);
    for (const { path } of routes.filter((r) => r.method === 'GET' && own(r.path))) {
      const res = await reader.get(fill(path));
      assert.deepEqual([res.status, res.body.error.code], [403, 'permission_denied'], `GET ${path}`);
      assert.match(res.body.error.message, OWN_REFUSAL, `GET ${path}`);
    }
    const shared = routes.filter((r) => r.method === 'GET' && r.path !== '/api/audit-log' && !own(r.path));
    for (const { path } of shared) {
      const res = await reader.get(fill(path));
      assert.equal(res.status, 200, `GET ${path}: ${res.raw}`);
      assert.deepEqual(res.body, (await t.api.get(fill(path))).body, `GET ${path}`);
    }
  });

  test("and a write key is not refused on those routes (the walk above is not vacuous), but a person's own", async () => {
    for (const { method, path } of routes.filter((r) => !['GET', 'HEAD'].includes(r.method))) {
      const res = await t.api.request(method, fill(path), method === 'DELETE' ? undefined : {});
      if (own(path)) assert.match(res.body.error.message, OWN_REFUSAL, `${method} ${path}`);
      else assert.notEqual(res.status, 403, `${method} ${path}: ${res.raw}`);
    }
  });
});
