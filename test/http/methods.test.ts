// A known path with a method it does not serve: 405 method_not_allowed with Allow (docs/api.md,
// "Unsupported methods"); an unknown path stays 404. Both are answered before authentication.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';

describe('405 method_not_allowed', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    assert.equal((await t.api.post('/api/customers', customerBody('cus_1'))).status, 201);
  });
  after(() => t.close());

  const cases: [string, string, string][] = [
    ['DELETE', '/api/customers', 'GET, HEAD, POST'],
    ['PUT', '/api/customers/cus_1', 'GET, HEAD, PATCH, DELETE'],
    ['POST', '/api/customers/cus_1', 'GET, HEAD, PATCH, DELETE'],
    ['PUT', '/api/customers/cus_1/health-score', 'GET, HEAD, POST, PATCH'],
    ['DELETE', '/api/customers/cus_1/health-score/history', 'GET, HEAD'],
    ['POST', '/api/settings/health-score/weights', 'GET, HEAD, PATCH'],
    ['GET', '/api/webhooks/whk_x/rotate-secret', 'POST'],
    ['GET', '/api/webhooks/whk_x/test', 'POST'],
    ['PATCH', '/api/events', 'GET, HEAD'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['DELETE', '/api/customers/', 'GET, HEAD, POST'],
  ];
  for (const [method, url, allow] of cases) {
    test(`${method} ${url}: 405 with Allow: ${allow}`, async () => {
      const res = await t.api.request(method, url);
      assert.equal(res.status, 405, res.raw);
      assert.equal(res.headers.allow, allow);
      assert.deepEqual(res.body, {
        error: {
          type: 'invalid_request_error',
          code: 'method_not_allowed',
          message: `${method} is not served at ${url}; it serves ${allow}.`,
        },
      });
      assert.ok(res.headers['x-request-id']);
    });
  }

  test('a wrong method changes nothing: the customer is still there, unchanged', async () => {
    const before = await t.api.get('/api/customers/cus_1');
    const res = await t.api.request('PUT', '/api/customers/cus_1', { name: 'Replaced' });
    assert.equal(res.status, 405, res.raw);
    assert.deepEqual((await t.api.get('/api/customers/cus_1')).body, before.body);
  });

  test('it is answered before authentication, like a 404', async () => {
    const res = await t.as(undefined).request('PUT', '/api/customers/cus_1');
    assert.equal(res.status, 405, res.raw);
    assert.equal(res.headers['www-authenticate'], undefined);
  });

  test('an unknown path is still 404 resource_missing, without Allow', async () => {
    for (const [method, url] of [
      ['GET', '/api/customerz'],
      ['PUT', '/api/customers/cus_1/nope'],
      ['POST', '/nowhere'],
    ] as const) {
      const res = await t.api.request(method, url);
      assert.equal(res.status, 404, `${method} ${url}: ${res.raw}`);
      assert.equal(res.body.error.code, 'resource_missing');
      assert.equal(res.headers.allow, undefined);
    }
  });

  test('every path in the OpenAPI document answers 405 for a method it does not list', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).body;
    const all = ['get', 'post', 'put', 'patch', 'delete'];
    const paths = Object.entries<Record<string, unknown>>(doc.paths);
    const pattern = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    for (const [path] of paths) {
      const url = path.replace(/\{[^}]+\}/g, 'x');
      // A static path may also be a value of a parametric one (/customers/batch is a customer id
      // for GET): a method either serves is served.
      const matching = paths.filter(([other]) => pattern(other).test(path));
      const served = all.filter((m) => matching.some(([, ops]) => m in ops));
      for (const method of all.filter((m) => !served.includes(m))) {
        const res = await t.api.request(method.toUpperCase(), url);
        assert.equal(res.status, 405, `${method} ${url}: ${res.raw}`);
        const allow = String(res.headers.allow).toLowerCase().split(', ');
        for (const m of served) assert.ok(allow.includes(m), `${url} Allow ${allow} lacks ${m}`);
      }
    }
  });
});
