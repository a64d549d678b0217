// The audit log (docs/people.md, "Audit log"): every change through /api, by a key or a person,
// with its action and object; never a secret; only for admins and write keys; per account.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/keys.ts';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

const actions = async () =>
  (await t.api.get('/api/audit-log?limit=100')).body.data.map(
    (e: { action: string; object_id: string | null }) => [e.action, e.object_id],
  );

describe('the audit log', () => {
  test('records each change with its actor, action and object, newest first (score writes in their own transaction); reads and refusals are not changes', async () => {
    const api = t.api;
    assert.equal((await api.post('/api/customers', customerBody('cus_a'))).status, 201);
    await api.patch('/api/customers/cus_a', { name: 'A' });
    await api.post('/api/customers/cus_a/health-score', { factors: { usage: 0.5 } });
    await api.patch('/api/customers/cus_a/health-score', { factors: { support: 0.7 } });
    assert.equal(
      (await api.post('/api/customers/cus_none/health-score', { factors: { usage: 1 } })).status,
      404,
    );
    await api.patch('/api/settings/health-score/weights', { weights: { usage: 1 } });
    await api.post('/api/settings/health-score/weights/preview', { weights: { usage: 1 } });
    const hook = await api.post('/api/webhooks', {
      url: 'http://127.0.0.1:9/h',
      events: ['customer.created'],
    });
    await api.post(`/api/webhooks/${hook.body.id}/rotate-secret`);
    await api.get('/api/customers');
    assert.equal((await api.post('/api/customers', customerBody('cus_a'))).status, 409);
    await api.delete('/api/customers/cus_a');
    assert.deepEqual(await actions(), [
      ['customer.deleted', 'cus_a'],
      ['webhook.secret_rotated', hook.body.id],
      ['webhook.created', hook.body.id],
      ['weights.updated', null],
      ['health_score.merged', 'cus_a'],
      ['health_score.replaced', 'cus_a'],
      ['customer.updated', 'cus_a'],
      ['customer.created', 'cus_a'],
    ]);
    const [first] = (await api.get('/api/audit-log?limit=1')).body.data;
    assert.deepEqual(Object.keys(first).sort(), ['action', 'actor', 'at', 'id', 'object_id', 'request_id']);
    assert.equal(first.actor.type, 'key');
    assert.equal(first.actor.label, `${api.key.slice(0, 7)}…`);
    assert.match(first.request_id, /^req_/);
  });

  test('pages with starting_after; a replayed Idempotency-Key is not a second change', async () => {
    const before = (await t.api.get('/api/audit-log?limit=100')).body.data.length;
    for (let i = 0; i < 2; i++) {
      await t.api.request('POST', '/api/customers', customerBody('cus_idem'), {
        'idempotency-key': 'idem-1',
      });
    }
    const all = (await t.api.get('/api/audit-log?limit=100')).body.data;
    assert.equal(all.length, before + 1);
    const page1 = await t.api.get('/api/audit-log?limit=2');
    assert.equal(page1.body.has_more, true);
    const page2 = await t.api.get(`/api/audit-log?limit=2&starting_after=${page1.body.data[1].id}`);
    assert.deepEqual(
      [...page1.body.data, ...page2.body.data].map((e: { id: string }) => e.id),
      all.slice(0, 4).map((e: { id: string }) => e.id),
    );
  });

  test('single metric writes written together record one entry each; a refused write and a replay none', async () => {
    const api = t.api;
    for (const id of ['cus_m1', 'cus_m2', 'cus_m3']) {
      assert.equal((await api.post('/api/customers', customerBody(id))).status, 201);
    }
    const before = (await api.get('/api/audit-log?limit=100')).body.data.length;
    // Sent at once: the group commit writes them in one transaction, their entries with them.
    const answers = await Promise.all([
      ...['cus_m1', 'cus_m2', 'cus_m3', 'cus_m1'].map((id, i) =>
        api.post(`/api/customers/${id}/metrics`, { values: { logins: i } }),
      ),
      api.post('/api/customers/cus_none/metrics', { values: { logins: 1 } }),
    ]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 404],
    );
    for (let i = 0; i < 2; i++) {
      const replay = await api.request(
        'POST',
        '/api/customers/cus_m2/metrics',
        { values: { logins: 9 } },
        { 'idempotency-key': 'metric-audit-1' },
      );
      assert.equal(replay.status, 200);
    }
    const log = (await api.get('/api/audit-log?limit=100')).body.data;
    const added = log.slice(0, log.length - before);
    assert.deepEqual(
      added.map((e: { action: string; object_id: string }) => [e.action, e.object_id]).sort(),
      [
        ['metrics.recorded', 'cus_m1'],
        ['metrics.recorded', 'cus_m1'],
        ['metrics.recorded', 'cus_m2'],
        ['metrics.recorded', 'cus_m2'],
        ['metrics.recorded', 'cus_m3'],
      ],
    );
    // Each entry names its own request.
    const requests = added.map((e: { request_id: string }) => e.request_id);
    assert.equal(new Set(requests).size, 5);
    for (const answer of answers.slice(0, 4)) {
      assert.ok(requests.includes(answer.headers['x-request-id']), 'an answer without its entry');
    }
  });

  test('the changes that rescore a whole account record their entry in their own transaction; a refused one records none', async () => {
    const api = t.api;
    assert.equal((await api.post('/api/customers', customerBody('cus_w'))).status, 201);
    await api.post('/api/customers/cus_w/health-score', { factors: { usage: 0.5 } });
    const before = (await api.get('/api/audit-log?limit=100')).body.data.length;
    const rule = {
      metric: 'logins',
      aggregate: 'sum',
      window_days: 30,
      scale: { type: 'linear', from: 0, to: 20 },
    };
    const answers = [
      await api.patch('/api/settings/health-score/thresholds', { at_risk: 0.3 }),
      await api.patch('/api/settings/health-score/weights', { weights: { usage: 0.5, support: 0.5 } }),
      await api.request('PUT', '/api/settings/health-score/factors/support', rule),
      await api.delete('/api/settings/health-score/factors/support'),
    ];
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200],
    );
    const refused = [
      // Refused by the write itself (the thresholds' order, the rule's existence) or before it.
      await api.patch('/api/settings/health-score/thresholds', { at_risk: 0.9 }),
      await api.delete('/api/settings/health-score/factors/support'),
      await api.patch('/api/settings/health-score/weights', { weights: { usage: 0.5 } }),
    ];
    assert.deepEqual(
      refused.map((a) => [a.status, a.body.error.code]),
      [
        [400, 'parameter_invalid'],
        [404, 'factor_rule_not_found'],
        [400, 'weights_sum_invalid'],
      ],
    );
    const log = (await api.get('/api/audit-log?limit=100')).body.data;
    const added = log.slice(0, log.length - before);
    assert.deepEqual(
      added.map((e: { action: string; object_id: string | null }) => [e.action, e.object_id]),
      [
        ['factor_rule.deleted', 'support'],
        ['factor_rule.put', 'support'],
        ['weights.updated', null],
        ['thresholds.updated', null],
      ],
    );
    // Each entry names its own request.
    assert.deepEqual(
      added.map((e: { request_id: string }) => e.request_id),
      answers.map((a) => a.headers['x-request-id']).reverse(),
    );
  });

  test('a person is named by their email; no secret, password or key is ever in it', async () => {
    const made = await t.api.post('/api/users', { email: 'auditor@example.com', role: 'admin' });
    const token = /#token=(.+)$/.exec(made.body.sign_in_link)?.[1] as string;
    await t.inject({
      method: 'POST',
      url: '/auth/password',
      payload: { token, password: 'a long enough password' },
    });
    const login = await t.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'auditor@example.com', password: 'a long enough password' },
    });
    const cookie = /vitals_session=[^;]+/.exec(String(login.headers['set-cookie']))?.[0] as string;
    const hook = await t.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: { cookie, 'x-csrf-token': login.body.csrf_token, 'content-type': 'application/json' },
      payload: JSON.stringify({ url: 'http://127.0.0.1:9/p', events: ['customer.created'] }),
    });
    assert.equal(hook.status, 201, hook.raw);
    const log = await t.api.get('/api/audit-log?limit=100');
    assert.deepEqual(log.body.data[0].actor, {
      type: 'user',
      id: made.body.user.id,
      label: 'auditor@example.com',
    });
    assert.equal(log.body.data[1].action, 'user.created');
    for (const secret of [
      t.api.key,
      hook.body.secret,
      token,
      'a long enough password',
      cookie.split('=')[1] as string,
    ]) {
      assert.equal(log.raw.includes(secret), false, `${secret.slice(0, 6)}… in the audit log`);
    }
  });

  test('only admins and write keys read it; another account sees none of it', async () => {
    const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
    const read = await t.as(`Bearer ${key}`).get('/api/audit-log');
    assert.deepEqual([read.status, read.body.error.code], [403, 'permission_denied']);
    const other = await t.newAccount('audit-other');
    assert.deepEqual((await other.get('/api/audit-log')).body, { data: [], has_more: false });
  });
});
