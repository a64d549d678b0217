// The dashboard's files at / beside the API: its pages answer index.html, its assets are cached
// for good, a browser that opens an unknown page gets the dashboard's not-found page (404), every
// other unknown path is still the 404 envelope, and an unbuilt dashboard is a 503.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp, tempDir } from '../helpers/app.ts';

const INDEX = '<!doctype html><title>Vitals</title><div id="app"></div>';

describe('the dashboard, built', () => {
  let t: TestApp;
  const dir = tempDir();
  before(async () => {
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    t = await buildTestApp({ dashboardDir: dir });
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const path of [
    '/',
    '/sign-in',
    '/inbox',
    '/customers/acme',
    '/customers/a%25b',
    '/settings',
    '/webhooks',
    '/webhooks/whk_1',
    '/sources',
    '/sources/src_1',
  ]) {
    test(`${path} answers the page, never cached, with a strict CSP`, async () => {
      const res = await t.inject({ method: 'GET', url: path });
      assert.equal(res.status, 200, res.raw);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.equal(res.raw, INDEX);
      assert.equal(res.headers['cache-control'], 'no-cache');
      assert.match(
        String(res.headers['content-security-policy']),
        /default-src 'self'.*frame-ancestors 'none'/,
      );
    });
  }

  test('a hashed asset is served and cached for good', async () => {
    const res = await t.inject({ method: 'GET', url: '/assets/index-abc123.js' });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /javascript/);
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
  });

  for (const path of [
    '/nope',
    '/api/nope',
    '/assets/missing.js',
    '/customers',
    '/customers/a/b',
    '/docs/nope',
  ]) {
    test(`${path} is still a 404 envelope`, async () => {
      const res = await t.inject({ method: 'GET', url: path });
      assert.equal(res.status, 404, res.raw);
      assert.equal(res.body.error.code, 'resource_missing');
    });
  }

  const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

  for (const path of ['/nope', '/customers', '/customers/a/b', '/setings', '/webhooks/a/b?x=1']) {
    test(`${path}, opened in a browser, is the dashboard's not-found page with 404`, async () => {
      const res = await t.inject({ method: 'GET', url: path, headers: { accept: BROWSER } });
      assert.equal(res.status, 404, res.raw);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.equal(res.raw, INDEX);
      assert.match(String(res.headers['content-security-policy']), /default-src 'self'/);
      const head = await t.inject({ method: 'HEAD', url: path, headers: { accept: BROWSER } });
      assert.equal(head.status, 404);
    });
  }

  for (const path of [
    '/api/nope',
    '/api/customers/a/b',
    '/auth/nope',
    '/assets/missing.js',
    '/docs/nope',
    '/metrics/x',
  ]) {
    test(`${path} stays a JSON 404 even for a browser: it is the API's`, async () => {
      const res = await t.inject({ method: 'GET', url: path, headers: { accept: BROWSER } });
      assert.equal(res.status, 404, res.raw);
      assert.equal(res.body.error.code, 'resource_missing');
    });
  }

  test('a browser POST to an unknown path, or a client asking for JSON, gets the envelope', async () => {
    const post = await t.inject({ method: 'POST', url: '/nope', headers: { accept: BROWSER } });
    assert.deepEqual([post.status, post.body.error.code], [404, 'resource_missing']);
    const json = await t.inject({ method: 'GET', url: '/nope', headers: { accept: 'application/json' } });
    assert.deepEqual([json.status, json.body.error.code], [404, 'resource_missing']);
  });

  test('a path that climbs out of the folder is refused', async () => {
    const res = await t.inject({ method: 'GET', url: '/assets/..%2f..%2findex.html' });
    assert.ok(res.status >= 400 && res.status < 500, `${res.status}`);
    assert.ok(res.body.error, res.raw);
  });

  test('the API is unchanged: authenticated, JSON', async () => {
    assert.equal((await t.as(undefined).get('/api/customers')).status, 401);
    assert.equal((await t.api.get('/api/customers')).status, 200);
  });

  test('the OpenAPI document lists none of the dashboard routes: only /api, the intakes, health and the sign-in routes', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).body;
    const intake = (p: string) => p.startsWith('/v1/') || p.startsWith('/ingest/');
    assert.deepEqual(
      Object.keys(doc.paths).filter((p) => !p.startsWith('/api/') && !intake(p)),
      [
        '/healthz',
        '/readyz',
        '/auth/login',
        '/auth/session',
        '/auth/logout',
        '/auth/password/link',
        '/auth/password',
      ],
    );
  });
});

describe('the dashboard, not built', () => {
  let t: TestApp;
  const dir = tempDir();
  before(async () => {
    t = await buildTestApp({ dashboardDir: join(dir, 'missing') });
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('/ answers 503 with the envelope saying to run npm run build', async () => {
    const res = await t.inject({ method: 'GET', url: '/' });
    assert.equal(res.status, 503);
    assert.equal(res.body.error.code, 'service_unavailable');
    assert.match(res.body.error.message, /npm run build/);
  });

  test('a dashboard page answers the same 503', async () => {
    assert.equal((await t.inject({ method: 'GET', url: '/customers/acme' })).status, 503);
  });

  test('the API and the health checks work meanwhile', async () => {
    assert.equal((await t.api.get('/api/customers')).status, 200);
    assert.equal((await t.inject({ method: 'GET', url: '/healthz' })).status, 200);
    assert.equal((await t.inject({ method: 'GET', url: '/api/nope' })).status, 404);
    const browser = await t.inject({ method: 'GET', url: '/nope', headers: { accept: 'text/html' } });
    assert.deepEqual([browser.status, browser.body.error.code], [404, 'resource_missing']);
  });

  test('the log says the dashboard is not built', () => {
    assert.match(t.logs(), /the dashboard is not built/);
  });
});
