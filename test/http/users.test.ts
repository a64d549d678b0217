// People over the API (docs/people.md): admins and write keys list, add, re-role and remove the
// account's people; the one-time link in the answer works; nobody else may (both backends).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/keys.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

const tokenOf = (link: string) => /#token=([A-Za-z0-9_-]{43})$/.exec(link)?.[1] as string;

async function signIn(email: string, password: string): Promise<{ cookie: string; csrf: string }> {
  const res = await t.inject({ method: 'POST', url: '/auth/login', payload: { email, password } });
  assert.equal(res.status, 200, res.raw);
  return {
    cookie: /vitals_session=[^;]+/.exec(String(res.headers['set-cookie']))?.[0] as string,
    csrf: res.body.csrf_token,
  };
}

describe('people over the API', () => {
  test('a write key adds a person whose link works; lists, re-roles and removes them', async () => {
    const created = await t.api.post('/api/users', { email: 'Bo@Example.com', role: 'editor' });
    assert.equal(created.status, 201, created.raw);
    assert.deepEqual(
      [created.body.user.email, created.body.user.role, created.body.user.account],
      ['bo@example.com', 'editor', 'default'],
    );
    assert.match(created.body.sign_in_link, /^http:\/\/localhost(:\d+)?\/set-password#token=/);
    const set = await t.inject({
      method: 'POST',
      url: '/auth/password',
      payload: { token: tokenOf(created.body.sign_in_link), password: 'a long enough password' },
    });
    assert.equal(set.status, 200, set.raw);
    const id = created.body.user.id;
    assert.deepEqual(
      (await t.api.get('/api/users')).body.data.map((u: { id: string }) => u.id),
      [id],
    );
    const session = await signIn('bo@example.com', 'a long enough password');
    const asBo = (method: string, url: string, body?: unknown) =>
      t.inject({
        method: method as 'GET',
        url,
        headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    assert.equal(
      (await asBo('PATCH', '/api/settings/health-score/thresholds', { healthy: 0.8 })).status,
      403,
    );
    const promoted = await t.api.patch(`/api/users/${id}`, { role: 'admin' });
    assert.equal(promoted.body.role, 'admin');
    assert.equal(
      (await asBo('PATCH', '/api/settings/health-score/thresholds', { healthy: 0.8 })).status,
      200,
      'the open session follows at once',
    );
    assert.deepEqual((await t.api.delete(`/api/users/${id}`)).body, { id, deleted: true });
    assert.equal((await asBo('GET', '/api/customers')).status, 401);
    assert.equal((await t.api.delete(`/api/users/${id}`)).status, 404);
  });

  test('refusals: a taken email, a bad email or role, an unknown id; nothing changes', async () => {
    assert.equal((await t.api.post('/api/users', { email: 'cy@example.com', role: 'viewer' })).status, 201);
    const before = (await t.api.get('/api/users')).body;
    for (const [body, status, code, param] of [
      [{ email: 'CY@example.com', role: 'admin' }, 409, 'user_exists', 'email'],
      [{ email: 'not an email', role: 'admin' }, 400, 'parameter_invalid', 'email'],
      [{ email: 'dee@example.com', role: 'owner' }, 400, 'parameter_invalid', 'role'],
      [{ email: 'dee@example.com' }, 400, 'parameter_missing', 'role'],
      [{ email: 'dee@example.com', role: 'viewer', password: 'x' }, 400, 'parameter_unknown', 'password'],
    ] as const) {
      const res = await t.api.post('/api/users', body);
      assert.equal(res.status, status, res.raw);
      assert.deepEqual([res.body.error.code, res.body.error.param], [code, param]);
    }
    const unknown = await t.api.patch('/api/users/usr_nobody', { role: 'admin' });
    assert.deepEqual([unknown.status, unknown.body.error.code], [404, 'user_not_found']);
    assert.deepEqual((await t.api.get('/api/users')).body, before);
  });

  test('another account sees none of them and cannot change them (404)', async () => {
    const mine = await t.api.post('/api/users', { email: 'ed@example.com', role: 'viewer' });
    const other = await t.newAccount('users-other');
    assert.deepEqual((await other.get('/api/users')).body, { data: [] });
    assert.equal((await other.patch(`/api/users/${mine.body.user.id}`, { role: 'admin' })).status, 404);
    assert.equal((await other.delete(`/api/users/${mine.body.user.id}`)).status, 404);
    assert.equal(
      (await t.api.get('/api/users')).body.data.find((u: { id: string }) => u.id === mine.body.user.id).role,
      'viewer',
    );
  });

  test('only admins and write keys: an editor cannot even list them, a read key can only list', async () => {
    const made = await t.api.post('/api/users', { email: 'flo@example.com', role: 'editor' });
    await t.inject({
      method: 'POST',
      url: '/auth/password',
      payload: { token: tokenOf(made.body.sign_in_link), password: 'a long enough password' },
    });
    const flo = await signIn('flo@example.com', 'a long enough password');
    const list = await t.inject({ method: 'GET', url: '/api/users', headers: { cookie: flo.cookie } });
    assert.deepEqual([list.status, list.body.error.code], [403, 'permission_denied']);
    const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
    const reader = t.as(`Bearer ${key}`);
    assert.equal((await reader.get('/api/users')).status, 200);
    assert.equal((await reader.post('/api/users', { email: 'gil@example.com', role: 'viewer' })).status, 403);
  });
});
