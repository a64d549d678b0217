import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';

describe('weights preview', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
    // plain means: a 0.75 healthy, b 0.5 at_risk, c 0.2 critical
    for (const [id, factors] of [
      ['a', { usage: 0.9, support: 0.6 }],
      ['b', { usage: 0.2, support: 0.8 }],
      ['c', { usage: 0.2, support: 0.2 }],
    ] as const) {
      await t.api.post('/api/customers', customerBody(id));
      await t.api.post(`/api/customers/${id}/health-score`, { factors });
    }
  });
  after(() => t.close());

  test('counts what new weights would change, and saves nothing', async () => {
    const weightsBefore = (await t.api.get('/api/settings/health-score/weights')).body;
    const scoresBefore = (await t.api.get('/api/health-scores?limit=100')).body;
    const eventsBefore = (await t.api.get('/api/events?limit=100')).body.data.length;
    // usage only: a 0.9 healthy (score moves, band stays), b 0.2 critical (band moves), c 0.2 unchanged
    const res = await t.api.post('/api/settings/health-score/weights/preview', { weights: { usage: 1 } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      customers: 3,
      scores_changed: 2,
      band_changes: 1,
      bands: { healthy: 1, at_risk: 0, critical: 2 },
    });
    assert.deepEqual((await t.api.get('/api/settings/health-score/weights')).body, weightsBefore);
    assert.deepEqual((await t.api.get('/api/health-scores?limit=100')).body, scoresBefore);
    assert.equal((await t.api.get('/api/events?limit=100')).body.data.length, eventsBefore);
  });

  test('weights that do not sum to 1 are refused as for PATCH', async () => {
    const res = await t.api.post('/api/settings/health-score/weights/preview', { weights: { usage: 0.5 } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'weights_sum_invalid');
    assert.equal(res.body.error.param, 'weights');
  });
});
