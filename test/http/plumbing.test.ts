// What every route shares: body parsing, size and media-type limits, the error envelope,
// request ids, health and readiness, the OpenAPI document and the docs UI.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildTestApp, customerBody, type Response, type TestApp } from '../helpers/app.ts';

const PACKAGE_VERSION: string = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
).version;

const MiB = 1024 * 1024;
const STACK_FRAME = /\bat .*[:(]\d+:\d+\)?|\n\s+at /;

function assertEnvelope(res: Response, status: number, code: string): void {
  assert.equal(res.status, status, res.raw);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.match(String(res.headers['x-request-id']), /^req_[0-9A-Za-z]{20}$/);
  assert.deepEqual(Object.keys(res.body), ['error']);
  const { error } = res.body;
  assert.equal(error.code, code);
  assert.equal(typeof error.type, 'string');
  assert.equal(typeof error.message, 'string');
  assert.ok(error.message.length > 0);
  for (const key of Object.keys(error)) assert.ok(['type', 'code', 'message', 'param'].includes(key), key);
  if ('param' in error) assert.equal(typeof error.param, 'string');
  assert.doesNotMatch(res.raw, STACK_FRAME);
}

describe('plumbing', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    assert.equal((await t.api.post('/api/customers', customerBody('cus_base'))).status, 201);
  });
  after(() => t.close());

  const stored = async () => (await t.api.get('/api/customers?limit=100')).body;

  /** Sends a request with the default key and the given raw body and headers. */
  const send = (method: string, url: string, payload: string | Readable, headers: Record<string, string>) =>
    t.inject({
      method: method as 'POST',
      url,
      payload,
      headers: { authorization: `Bearer ${t.api.key}`, ...headers },
    });

  describe('JSON bodies', () => {
    for (const [what, body] of [
      ['truncated JSON', '{"customer_id":"cus_x",'],
      ['single quotes', "{'customer_id':'cus_x'}"],
      ['trailing garbage', '{"customer_id":"cus_x"} x'],
      ['a trailing comma', '{"customer_id":"cus_x",}'],
      ['not JSON at all', 'customer_id=cus_x'],
    ]) {
      test(`${what}: 400 invalid_json, nothing stored`, async () => {
        const before = await stored();
        const res = await t.api.request('POST', '/api/customers', body);
        assertEnvelope(res, 400, 'invalid_json');
        assert.equal(res.body.error.type, 'invalid_request_error');
        assert.equal(res.body.error.param, undefined);
        assert.deepEqual(await stored(), before);
      });
    }

    test('invalid JSON on PATCH: 400 invalid_json, customer unchanged', async () => {
      const before = await stored();
      const res = await t.api.request('PATCH', '/api/customers/cus_base', '{"name":');
      assertEnvelope(res, 400, 'invalid_json');
      assert.deepEqual(await stored(), before);
    });

    test('application/json with a charset is accepted', async () => {
      const res = await t.api.request('POST', '/api/customers', JSON.stringify(customerBody('cus_charset')), {
        'content-type': 'application/json; charset=utf-8',
      });
      assert.equal(res.status, 201, res.raw);
    });
  });

  describe('media types', () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
    ]) {
      test(`Content-Type ${type}: 415 unsupported_media_type, nothing stored`, async () => {
        const before = await stored();
        const res = await t.api.request('POST', '/api/customers', JSON.stringify(customerBody('cus_x')), {
          'content-type': type,
        });
        assertEnvelope(res, 415, 'unsupported_media_type');
        assert.equal(res.body.error.type, 'invalid_request_error');
        assert.deepEqual(await stored(), before);
      });
    }

    test('a body without Content-Type: 415 unsupported_media_type, nothing stored', async () => {
      const before = await stored();
      const res = await send('POST', '/api/customers', JSON.stringify(customerBody('cus_x')), {});
      assertEnvelope(res, 415, 'unsupported_media_type');
      assert.deepEqual(await stored(), before);
    });

    test('PATCH with text/plain: 415, customer unchanged', async () => {
      const before = await stored();
      const res = await t.api.request('PATCH', '/api/customers/cus_base', '{"name":"X"}', {
        'content-type': 'text/plain',
      });
      assertEnvelope(res, 415, 'unsupported_media_type');
      assert.deepEqual(await stored(), before);
    });
  });

  describe('body size', () => {
    const oversized = () => {
      const filler = 'x'.repeat(MiB);
      return JSON.stringify(customerBody('cus_big', { metadata: { filler } }));
    };

    test('a body over 1 MiB: 413 body_too_large, nothing stored', async () => {
      const before = await stored();
      const res = await send('POST', '/api/customers', oversized(), { 'content-type': 'application/json' });
      assertEnvelope(res, 413, 'body_too_large');
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.match(res.body.error.message, /\b1 MiB\b/);
      assert.deepEqual(await stored(), before);
    });

    test('a streamed body over 1 MiB without Content-Length: 413 body_too_large', async () => {
      const before = await stored();
      const res = await send('POST', '/api/customers', Readable.from([oversized()]), {
        'content-type': 'application/json',
      });
      assertEnvelope(res, 413, 'body_too_large');
      assert.deepEqual(await stored(), before);
    });

    test('a body just under 1 MiB is parsed (and then judged by the metadata rules)', async () => {
      const base = JSON.stringify(customerBody('cus_big', { metadata: { filler: '' } }));
      const body = JSON.stringify(
        customerBody('cus_big', { metadata: { filler: 'x'.repeat(MiB - Buffer.byteLength(base)) } }),
      );
      assert.equal(Buffer.byteLength(body), MiB);
      const res = await t.api.request('POST', '/api/customers', body);
      assertEnvelope(res, 400, 'parameter_invalid');
      assert.equal(res.body.error.param, 'metadata');
    });
  });

  describe('prototype pollution', () => {
    const cases: [string, string][] = [
      ['at the top level', '{"customer_id":"cus_p","name":"P","email":"p@example.com","__proto__":{"x":1}}'],
      [
        'inside metadata',
        '{"customer_id":"cus_p","name":"P","email":"p@example.com","metadata":{"__proto__":{"polluted":true}}}',
      ],
      [
        'deep inside a metadata value',
        '{"customer_id":"cus_p","name":"P","email":"p@example.com","metadata":{"a":[{"b":{"__proto__":{"polluted":true}}}]}}',
      ],
    ];
    for (const [where, body] of cases) {
      test(`a __proto__ key ${where}: 400, nothing stored, no prototype touched`, async () => {
        const before = await stored();
        const res = await t.api.request('POST', '/api/customers', body);
        assertEnvelope(res, 400, 'invalid_json');
        assert.match(res.body.error.message, /__proto__/);
        assert.deepEqual(await stored(), before);
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
        assert.equal(({} as Record<string, unknown>).x, undefined);
      });
    }

    test('a __proto__ key in a PATCH: 400, customer unchanged', async () => {
      const before = await stored();
      const res = await t.api.request(
        'PATCH',
        '/api/customers/cus_base',
        '{"metadata":{"__proto__":{"polluted":true}}}',
      );
      assertEnvelope(res, 400, 'invalid_json');
      assert.deepEqual(await stored(), before);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });

    test('a "constructor" key is plain data and pollutes nothing', async () => {
      const body =
        '{"customer_id":"cus_ctor","name":"C","email":"c@example.com","metadata":{"constructor":{"prototype":{"polluted":true}}}}';
      const res = await t.api.request('POST', '/api/customers', body);
      assert.equal(res.status, 201, res.raw);
      assert.deepEqual(res.body.metadata, { constructor: { prototype: { polluted: true } } });
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });
  });

  describe('routes that do not exist', () => {
    test('an unknown path: 404 resource_missing in the envelope', async () => {
      const res = await t.inject({ method: 'GET', url: '/nope?x=1' });
      assertEnvelope(res, 404, 'resource_missing');
      assert.equal(res.body.error.type, 'invalid_request_error');
      assert.match(res.body.error.message, /GET \/nope\b/);
      assert.doesNotMatch(res.body.error.message, /x=1/);
    });

    test('an unknown /api path: 404 resource_missing', async () => {
      assertEnvelope(await t.api.post('/api/customerz', {}), 404, 'resource_missing');
    });
  });

  describe('every error answers with the envelope and a request id', () => {
    const failures: [string, () => Promise<Response>, number, string][] = [
      ['invalid JSON', () => t.api.request('POST', '/api/customers', '{'), 400, 'invalid_json'],
      ['a schema violation', () => t.api.post('/api/customers', {}), 400, 'parameter_missing'],
      ['an unknown parameter', () => t.api.get('/api/customers?x=1'), 400, 'parameter_unknown'],
      ['a bad percent-encoding', () => t.api.get('/api/customers/%E0%A4%A'), 400, 'parameter_invalid'],
      ['no API key', () => t.as(undefined).get('/api/customers'), 401, 'api_key_missing'],
      ['an unknown API key', () => t.as('Bearer vk_nope').get('/api/customers'), 401, 'api_key_invalid'],
      ['an unknown route', () => t.inject({ method: 'GET', url: '/missing' }), 404, 'resource_missing'],
      ['an unknown customer', () => t.api.get('/api/customers/cus_none'), 404, 'customer_not_found'],
      ['a duplicate', () => t.api.post('/api/customers', customerBody('cus_base')), 409, 'customer_exists'],
      [
        'a wrong media type',
        () => t.api.request('POST', '/api/customers', 'x', { 'content-type': 'text/plain' }),
        415,
        'unsupported_media_type',
      ],
      [
        'a body too large',
        () => send('POST', '/api/customers', 'x'.repeat(MiB + 1), { 'content-type': 'application/json' }),
        413,
        'body_too_large',
      ],
    ];
    for (const [what, request, status, code] of failures) {
      test(`${what}: ${status} ${code}`, async () => {
        assertEnvelope(await request(), status, code);
      });
    }

    test('a method a path does not have answers 405 in the envelope too', async () => {
      const res = await t.api.delete('/api/customers');
      assertEnvelope(res, 405, 'method_not_allowed');
      assert.equal(res.headers.allow, 'GET, HEAD, POST');
    });
  });

  describe('health and readiness', () => {
    test('GET /healthz: 200 without a key, with the release package.json names', async () => {
      const res = await t.inject({ method: 'GET', url: '/healthz' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { status: 'ok', version: PACKAGE_VERSION });
      assert.match(PACKAGE_VERSION, /^\d+\.\d+\.\d+$/);
      assert.match(String(res.headers['x-request-id']), /^req_/);
    });

    test('GET /readyz: 200 with the database backend, without a key', async () => {
      const res = await t.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { status: 'ok', database: t.store.backend });
    });
  });

  describe('the OpenAPI document', () => {
    let doc: any;
    before(async () => {
      const res = await t.inject({ method: 'GET', url: '/openapi.json' });
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      doc = res.body;
    });

    test('is OpenAPI 3.1 and valid against the OpenAPI schema', async () => {
      assert.match(doc.openapi, /^3\.1\.\d+$/);
      const result = await new Validator().validate(structuredClone(doc));
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    });

    test('every /api operation takes the bearer key or the session cookie, and has an operationId', () => {
      const scheme = doc.components.securitySchemes.bearer;
      assert.equal(scheme.type, 'http');
      assert.equal(scheme.scheme, 'bearer');
      assert.deepEqual(doc.components.securitySchemes.session, {
        type: 'apiKey',
        in: 'cookie',
        name: 'vitals_session',
        description: doc.components.securitySchemes.session.description,
      });
      const apiPaths = Object.keys(doc.paths).filter((p) => p.startsWith('/api/'));
      assert.deepEqual(
        apiPaths.map((p) => `${p} ${Object.keys(doc.paths[p]).join(',')}`),
        [
          '/api/customers post,get,head',
          '/api/customers/{customer_id} get,head,patch,delete',
          '/api/customers/{customer_id}/rollup get,head',
          '/api/customers/{customer_id}/health-score post,patch,get,head',
          '/api/customers/{customer_id}/health-score/history get,head',
          '/api/health-scores get,head',
          '/api/customers/{customer_id}/health-score/explanation get,head',
          '/api/customers/{customer_id}/health-score/override put,delete',
          '/api/customers/{customer_id}/outcomes post,get,head',
          '/api/customers/{customer_id}/outcomes/{outcome_id} delete',
          '/api/outcomes/batch post',
          '/api/health-scores/calibration get,head',
          '/api/health-scores/summary get,head',
          '/api/health-scores/distribution get,head',
          '/api/health-scores/trend get,head',
          '/api/health-scores/movers get,head',
          '/api/customers/batch post',
          '/api/health-scores/batch post',
          '/api/settings/health-score/weights get,head,patch',
          '/api/settings/health-score/weights/preview post',
          '/api/settings/health-score/thresholds get,head,patch',
          '/api/settings/health-score/alerts get,head,patch',
          '/api/settings/health-score/factors get,head',
          '/api/settings/health-score/factors/{factor} get,head,put,delete',
          '/api/settings/health-score/factors/{factor}/preview post',
          '/api/customers/{customer_id}/metrics post,get,head',
          '/api/metrics/batch post',
          '/api/metrics/names get,head',
          '/api/events get,head',
          '/api/events/{event_id} get,head',
          '/api/webhooks post,get,head',
          '/api/webhooks/{webhook_id} get,head,patch,delete',
          '/api/webhooks/{webhook_id}/rotate-secret post',
          '/api/webhooks/{webhook_id}/test post',
          '/api/webhooks/{webhook_id}/deliveries get,head',
          '/api/webhooks/{webhook_id}/deliveries/{delivery_id}/retry post',
          '/api/me get,head,patch',
          '/api/users get,head,post',
          '/api/users/{user_id} patch,delete',
          '/api/views get,head,post',
          '/api/views/{view_id} delete',
          '/api/audit-log get,head',
          '/api/sources post,get,head',
          '/api/sources/{source_id} get,head,patch,delete',
          '/api/sources/{source_id}/log get,head',
          '/api/customers/{customer_id}/source-activity get,head',
          '/api/customers/{customer_id}/tasks post',
          '/api/tasks get,head',
          '/api/tasks/{task_id} get,head,patch,delete',
          '/api/customers/{customer_id}/notes post,get,head',
          '/api/notes/{note_id} patch,delete',
          '/api/customers/{customer_id}/timeline get,head',
          '/api/playbooks get,head,post',
          '/api/playbooks/{playbook_id} get,head,patch,delete',
          '/api/health-scores/backfill post,get,head',
          '/api/health-scores/backfill/{backfill_id} get,head',
        ],
        'the document describes every /api operation, HEAD beside GET',
      );
      const ids = new Set<string>();
      for (const [path, ops] of Object.entries<any>(doc.paths)) {
        for (const [method, op] of Object.entries<any>(ops)) {
          const what = `${method.toUpperCase()} ${path}`;
          assert.match(String(op.operationId), /^[a-z][A-Za-z]+$/, `${what} has no operationId`);
          assert.equal(ids.has(op.operationId), false, `${what}: operationId ${op.operationId} twice`);
          ids.add(op.operationId);
          if (!path.startsWith('/api/')) continue;
          // A person's own routes (docs/people.md, "Roles") take the session alone: a key is refused.
          const own = path === '/api/me' || path.startsWith('/api/views');
          assert.deepEqual(
            op.security ?? doc.security,
            own ? [{ session: [] }] : [{ bearer: [] }, { session: [] }],
            what,
          );
        }
      }
    });

    test('declares what the plumbing answers: 401, 403, 429, 503 and 500, with their headers', () => {
      for (const [path, ops] of Object.entries<any>(doc.paths)) {
        if (!path.startsWith('/api/')) continue;
        for (const [method, op] of Object.entries<any>(ops)) {
          const what = `${method.toUpperCase()} ${path}`;
          const declared = Object.keys(op.responses);
          for (const status of ['400', '401', '429', '500', '503'])
            assert.ok(declared.includes(status), `${what} ${status}`);
          if (!['get', 'head'].includes(method)) {
            for (const status of ['403', '413', '415'])
              assert.ok(declared.includes(status), `${what} ${status}`);
          }
          assert.ok(op.responses['429'].headers['Retry-After'], `${what}: 429 Retry-After`);
          assert.ok(op.responses['503'].headers['Retry-After'], `${what}: 503 Retry-After`);
          assert.ok(op.responses['401'].headers['WWW-Authenticate'], `${what}: 401 WWW-Authenticate`);
          for (const [status, answer] of Object.entries<any>(op.responses)) {
            assert.ok(answer.headers?.['X-Request-Id'], `${what} ${status}: X-Request-Id`);
          }
          if (method === 'post') {
            const param = op.parameters?.find((p: any) => p.name === 'Idempotency-Key');
            assert.equal(param?.in, 'header', `${what}: Idempotency-Key`);
            assert.ok(op.responses['409'], `${what}: 409 idempotency_request_in_progress`);
            const first = Object.keys(op.responses).find((s) => s.startsWith('2')) as string;
            assert.ok(op.responses[first].headers['Idempotent-Replayed'], `${what}: Idempotent-Replayed`);
          }
        }
      }
      for (const path of ['/api/users', '/api/audit-log'])
        assert.ok(doc.paths[path].get.responses['403'], path);
      const allow = doc.components.responses.MethodNotAllowed;
      assert.ok(allow.headers.Allow, 'a documented 405 with its Allow header');
    });

    test('bodies that may be left out are optional; sign-in needs no key; segment filters are a parameter', () => {
      for (const path of [
        '/api/webhooks/{webhook_id}/rotate-secret',
        '/api/webhooks/{webhook_id}/test',
        '/api/webhooks/{webhook_id}/deliveries/{delivery_id}/retry',
      ]) {
        assert.equal(doc.paths[path].post.requestBody.required, false, path);
      }
      assert.equal(doc.paths['/api/customers'].post.requestBody.required, true);
      assert.deepEqual(doc.paths['/auth/login'].post.security, []);
      assert.deepEqual(doc.paths['/auth/password'].post.security, []);
      assert.deepEqual(doc.paths['/auth/session'].get.security, [{ session: [] }]);
      for (const path of [
        '/api/customers',
        '/api/health-scores',
        '/api/health-scores/summary',
        '/api/health-scores/distribution',
        '/api/health-scores/trend',
        '/api/health-scores/movers',
      ]) {
        const filter = doc.paths[path].get.parameters.find((p: any) => p.name === 'metadata');
        assert.deepEqual([filter?.in, filter?.style, filter?.explode], ['query', 'deepObject', true], path);
        assert.equal(
          doc.paths[path].get.parameters.some((p: any) => p.name.startsWith('^')),
          false,
          `${path}: no pattern left as a parameter name`,
        );
      }
    });

    test('documents the customer routes', () => {
      assert.ok(doc.paths['/api/customers'].post);
      assert.ok(doc.paths['/api/customers'].get);
      for (const method of ['get', 'patch', 'delete']) {
        assert.ok(doc.paths['/api/customers/{customer_id}'][method], method);
      }
    });
  });

  describe('the docs UI', () => {
    test('GET /docs serves HTML whose assets all come from this server', async () => {
      const res = await t.inject({ method: 'GET', url: '/docs' });
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      const html = res.raw;
      assert.doesNotMatch(html, /<script[^>]+src=["']?(https?:)?\/\//i);
      assert.doesNotMatch(html, /<link[^>]+href=["']?(https?:)?\/\//i);
      const assets = [...html.matchAll(/(?:src|href)=["']([^"']+)["']/g)].map((m) => m[1] as string);
      assert.ok(
        assets.some((a) => a.endsWith('.js')),
        'the page loads scripts',
      );
      for (const asset of assets) {
        const url = new URL(asset, 'http://vitals.local/docs').pathname;
        const got = await t.inject({ method: 'GET', url });
        assert.equal(got.status, 200, `${url} is served locally`);
      }
    });

    test('the UI reads its spec from this server and calls no external validator', async () => {
      const init = await t.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
      assert.equal(init.status, 200);
      assert.match(init.raw, /validatorUrl: null/);
      const spec = await t.inject({ method: 'GET', url: '/docs/json' });
      assert.equal(spec.status, 200);
      assert.match(spec.body.openapi, /^3\.1/);
    });
  });
});

describe('plumbing: when the database is gone', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    await t.store.close();
  });
  after(() => t.close());

  test('GET /readyz: 503 in the envelope', async () => {
    const res = await t.inject({ method: 'GET', url: '/readyz' });
    assertEnvelope(res, 503, 'service_unavailable');
    assert.equal(res.body.error.type, 'api_error');
  });

  test('GET /healthz still answers 200 (the process is alive)', async () => {
    assert.equal((await t.inject({ method: 'GET', url: '/healthz' })).status, 200);
  });

  test('an API request: opaque 500 internal_error with no stack, SQL or driver message', async () => {
    const res = await t.api.get('/api/customers');
    assertEnvelope(res, 500, 'internal_error');
    assert.equal(res.body.error.type, 'api_error');
    assert.doesNotMatch(res.raw, /sqlite|select|database|\.ts\b/i);
    assert.match(t.logs(), /unhandled error/, 'the cause is logged for operators');
  });
});
