// Numbers JSON can write but a double cannot hold (1e309 parses to Infinity, and Infinity has no
// JSON, so it would be stored as null): every write that could keep one refuses it with a 400
// naming the field, and stores nothing. The bodies are sent as text, since JSON.stringify would
// turn the Infinity into null before the server saw it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Response, type TestApp } from '../helpers/app.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
  const base = await t.api.post('/api/customers', {
    customer_id: 'base',
    name: 'Base',
    email: 'base@example.com',
    metadata: { plan: 'pro', tier: { level: 2 } },
  });
  assert.equal(base.status, 201, base.raw);
  const scored = await t.api.post('/api/customers/base/health-score', { factors: { usage: 0.5 } });
  assert.equal(scored.status, 200, scored.raw);
});
after(() => t.close());

function assertRefused(error: Record<string, unknown>, param: string): void {
  const shown = JSON.stringify(error);
  assert.equal(error.type, 'invalid_request_error', shown);
  assert.equal(error.code, 'parameter_invalid', shown);
  assert.equal(error.param, param, shown);
  assert.ok(typeof error.message === 'string' && error.message.length > 0, shown);
}

function assert400(res: Response, param: string): void {
  assert.equal(res.status, 400, res.raw);
  assertRefused(res.body.error, param);
}

const customerText = (id: string, metadata: string) =>
  `{"customer_id":"${id}","name":"N","email":"n@example.com","metadata":${metadata}}`;

/** Metadata as text, and the field each names. */
const HOSTILE = [
  ['{"x":1e309}', 'metadata.x'],
  ['{"x":-1e309}', 'metadata.x'],
  ['{"ok":1,"x":{"y":1e400}}', 'metadata.x.y'],
  ['{"tags":[1,2,-1e999]}', 'metadata.tags.2'],
] as const;

describe('metadata: a number beyond a double', () => {
  for (const [metadata, param] of HOSTILE) {
    test(`create with ${metadata}: 400 naming ${param}, no customer`, async () => {
      assert400(await t.api.post('/api/customers', customerText('new', metadata)), param);
      assert.equal((await t.api.get('/api/customers/new')).status, 404);
    });

    test(`PATCH with ${metadata}: 400 naming ${param}, metadata unchanged`, async () => {
      const before = (await t.api.get('/api/customers/base')).body;
      assert400(await t.api.patch('/api/customers/base', `{"metadata":${metadata}}`), param);
      assert.deepEqual((await t.api.get('/api/customers/base')).body, before);
    });
  }

  test('batch: the item is refused on its own (param from the item); the others apply', async () => {
    const before = (await t.api.get('/api/customers/base')).body;
    const res = await t.api.post(
      '/api/customers/batch',
      `{"customers":[${customerText('b1', '{"n":1}')},${customerText('b2', '{"x":1e309}')},
        {"customer_id":"base","metadata":{"x":{"y":-1e309}}},${customerText('b3', '{"n":3}')}]}`,
    );
    assert.equal(res.status, 200, res.raw);
    const [first, created, updated, last] = res.body.results;
    assert.equal(first.status, 201);
    assert.equal(created.status, 400);
    assertRefused(created.error, 'metadata.x');
    assert.equal(updated.status, 400);
    assertRefused(updated.error, 'metadata.x.y');
    assert.equal(last.status, 201);
    assert.equal((await t.api.get('/api/customers/b2')).status, 404);
    assert.deepEqual((await t.api.get('/api/customers/base')).body, before);
    assert.deepEqual((await t.api.get('/api/customers/b3')).body.metadata, { n: 3 });
  });

  test('the largest finite double and the smallest subnormal are kept as sent', async () => {
    const res = await t.api.post(
      '/api/customers',
      customerText('edge', '{"max":1.7976931348623157e308,"min":5e-324}'),
    );
    assert.equal(res.status, 201, res.raw);
    assert.deepEqual((await t.api.get('/api/customers/edge')).body.metadata, {
      max: Number.MAX_VALUE,
      min: Number.MIN_VALUE,
    });
  });
});

describe('factors and settings: the schemas bound them, so a number beyond a double is a 400', () => {
  test('replace: 400 naming the factor, no score', async () => {
    assert.equal((await t.api.post('/api/customers', customerText('plain', '{}'))).status, 201);
    assert400(
      await t.api.post('/api/customers/plain/health-score', '{"factors":{"usage":1e309}}'),
      'factors.usage',
    );
    assert.equal((await t.api.get('/api/customers/plain/health-score')).status, 404);
  });

  test('merge: 400 naming the factor, score unchanged', async () => {
    const before = (await t.api.get('/api/customers/base/health-score')).body;
    assert400(
      await t.api.patch('/api/customers/base/health-score', '{"factors":{"usage":-1e309}}'),
      'factors.usage',
    );
    assert.deepEqual((await t.api.get('/api/customers/base/health-score')).body, before);
  });

  test('score batch: the item is refused on its own', async () => {
    const before = (await t.api.get('/api/customers/base/health-score')).body;
    const res = await t.api.post(
      '/api/health-scores/batch',
      '{"scores":[{"customer_id":"base","factors":{"usage":1e309}},{"customer_id":"base","factors":{"support":-1e309},"merge":true}]}',
    );
    assert.equal(res.status, 200, res.raw);
    for (const [i, param] of ['factors.usage', 'factors.support'].entries()) {
      assert.equal(res.body.results[i].status, 400);
      assertRefused(res.body.results[i].error, param);
    }
    assert.deepEqual((await t.api.get('/api/customers/base/health-score')).body, before);
  });

  const settings = [
    ['weights', '{"weights":{"usage":1e309}}', 'weights.usage'],
    ['thresholds', '{"healthy":1e309}', 'healthy'],
    ['alerts', '{"drop":{"delta":1e309,"days":7}}', 'drop.delta'],
    ['alerts', '{"drop":{"delta":0.1,"days":1e309}}', 'drop.days'],
  ] as const;
  for (const [area, body, param] of settings) {
    test(`${area} ${body}: 400 naming ${param}, settings unchanged`, async () => {
      const url = `/api/settings/health-score/${area}`;
      const before = (await t.api.get(url)).body;
      assert400(await t.api.patch(url, body), param);
      assert.deepEqual((await t.api.get(url)).body, before);
    });
  }
});
