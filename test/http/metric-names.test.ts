// GET /api/metrics/names (docs/api.md, "Metrics"): the account's metric names, by name, each
// with its customers, points and newest instant; every key and role may read it; another
// account's names are never in it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/keys.ts';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';
import { personWithPassword } from '../helpers/people.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

describe('GET /api/metrics/names', () => {
  test('lists each name with its customers, points and newest instant, by name', async () => {
    const api = await t.newAccount('names');
    assert.deepEqual((await api.get('/api/metrics/names')).body, { data: [] }, 'no points, no names');
    for (const id of ['a', 'b', 'c'])
      assert.equal((await api.post('/api/customers', customerBody(id))).status, 201);
    const res = await api.post('/api/metrics/batch', {
      metrics: [
        { customer_id: 'a', values: { logins: 3, tickets: 1 }, at: '2026-03-01T00:00:00Z' },
        { customer_id: 'a', values: { logins: 4 }, at: '2026-03-02T00:00:00Z' },
        { customer_id: 'b', values: { logins: 5, days_overdue: 40 }, at: '2026-03-05T12:00:00Z' },
      ],
    });
    assert.equal(res.status, 200, res.raw);
    const names = await api.get('/api/metrics/names');
    assert.equal(names.status, 200, names.raw);
    assert.deepEqual(names.body, {
      data: [
        { name: 'days_overdue', customers: 1, points: 1, last_at: '2026-03-05T12:00:00.000Z' },
        { name: 'logins', customers: 2, points: 3, last_at: '2026-03-05T12:00:00.000Z' },
        { name: 'tickets', customers: 1, points: 1, last_at: '2026-03-01T00:00:00.000Z' },
      ],
    });
    const other = await t.newAccount('names-other');
    assert.deepEqual(
      (await other.get('/api/metrics/names')).body,
      { data: [] },
      "another account's names are not its",
    );
    assert.equal((await api.delete('/api/customers/b')).status, 200);
    assert.deepEqual(
      (await api.get('/api/metrics/names')).body.data.map((n: { name: string; customers: number }) => [
        n.name,
        n.customers,
      ]),
      [
        ['logins', 1],
        ['tickets', 1],
      ],
      "a deleted customer's points, and the names only it had, are gone",
    );
  });

  test('a read key and a viewer may read it; no key is 401', async () => {
    const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
    const byKey = await t.as(`Bearer ${key}`).get('/api/metrics/names');
    assert.equal(byKey.status, 200, byKey.raw);
    await personWithPassword(t, {
      email: 'viewer@example.com',
      role: 'viewer',
      password: 'a long passphrase 1',
    });
    const signIn = await t.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'viewer@example.com', password: 'a long passphrase 1' },
    });
    assert.equal(signIn.status, 200, signIn.raw);
    const cookie = /vitals_session=[^;]+/.exec(String(signIn.headers['set-cookie']))?.[0] as string;
    const byViewer = await t.inject({ method: 'GET', url: '/api/metrics/names', headers: { cookie } });
    assert.equal(byViewer.status, 200, byViewer.raw);
    const none = await t.as(undefined).get('/api/metrics/names');
    assert.equal(none.status, 401);
    assert.equal(none.body.error.code, 'api_key_missing');
  });
});
