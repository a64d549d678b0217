// Saved views (docs/api.md, "Saved views"): a signed-in person saves, lists and deletes their own
// views of the portfolio, whatever their role; nobody else sees or deletes them, an API key is
// refused, bad input stores nothing, the limit holds under a parallel burst, and an
// Idempotency-Key replays the first answer. Also GET /api/me. Through real HTTP, on both backends.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { VIEWS_PER_PERSON } from '../../src/api/views.ts';
import type { UserRole } from '../../src/domain/people.ts';
import { createApiKey, createUser } from '../../src/keys.ts';
import { buildTestApp, type Response, type TestApp } from '../helpers/app.ts';

const PASSWORD = 'a long enough password';
let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

interface Person {
  id: string;
  email: string;
  request(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  views(): Promise<{ id: string; name: string; query: string; created_at: string }[]>;
  save(name: string, query: string): Promise<Response>;
}

/** A person of `account`, signed in through their one-time link as they would be. */
async function person(email: string, role: UserRole, account = 'default'): Promise<Person> {
  const made = await createUser(t.store, { email, accountName: account, role });
  assert.ok(made);
  const set = await t.inject({
    method: 'POST',
    url: '/auth/password',
    payload: { token: made.token, password: PASSWORD },
  });
  assert.equal(set.status, 200, set.raw);
  const cookie = /vitals_session=[^;]+/.exec(String(set.headers['set-cookie']))?.[0] as string;
  const csrf = set.body.csrf_token as string;
  const request = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.inject({
      method: method as 'GET',
      url,
      headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  return {
    id: made.id,
    email,
    request,
    views: async () => {
      const list = await request('GET', '/api/views');
      assert.equal(list.status, 200, list.raw);
      return list.body.data;
    },
    save: (name, query) => request('POST', '/api/views', { name, query }),
  };
}

describe('saved views', () => {
  test('a viewer saves views, lists them newest first, and deletes one', async () => {
    const vi = await person('vi@example.com', 'viewer');
    assert.deepEqual(await vi.views(), []);
    const first = await vi.save('At risk in EMEA', 'status=at_risk&metadata%5Bregion%5D=emea&sort=score');
    assert.equal(first.status, 201, first.raw);
    assert.match(first.body.id, /^view_[0-9A-Za-z]+$/);
    assert.equal(first.body.name, 'At risk in EMEA');
    assert.equal(first.body.query, 'status=at_risk&metadata%5Bregion%5D=emea&sort=score');
    assert.match(first.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(Object.keys(first.body), ['id', 'name', 'query', 'created_at']);
    const second = await vi.save('Everything — ünïcode "quoted"', '');
    assert.equal(second.status, 201, second.raw);
    assert.deepEqual(await vi.views(), [second.body, first.body]);

    const gone = await vi.request('DELETE', `/api/views/${first.body.id}`);
    assert.equal(gone.status, 200, gone.raw);
    assert.deepEqual(gone.body, { id: first.body.id, deleted: true });
    assert.deepEqual(await vi.views(), [second.body]);
    const again = await vi.request('DELETE', `/api/views/${first.body.id}`);
    assert.deepEqual([again.status, again.body.error.code], [404, 'view_not_found']);
    const unknown = await vi.request('DELETE', '/api/views/view_nope');
    assert.deepEqual([unknown.status, unknown.body.error.code], [404, 'view_not_found']);
  });

  test("another person's views, of the account or of another, are not seen and not deleted (404)", async () => {
    const ann = await person('ann@example.com', 'admin');
    const bea = await person('bea@example.com', 'editor');
    const cal = await person('cal@example.com', 'admin', 'views-other');
    const mine = await ann.save('Mine', 'status=critical');
    assert.equal(mine.status, 201, mine.raw);
    assert.deepEqual(await bea.views(), []);
    assert.deepEqual(await cal.views(), []);
    for (const other of [bea, cal]) {
      const res = await other.request('DELETE', `/api/views/${mine.body.id}`);
      assert.deepEqual([res.status, res.body.error.code], [404, 'view_not_found'], other.email);
    }
    // An admin of the account does not see an editor's views either: they are the person's own.
    const hers = await bea.save('Hers', 'sort=-score');
    assert.deepEqual(await ann.views(), [mine.body]);
    assert.deepEqual(await bea.views(), [hers.body]);
  });

  test('API keys of either scope are refused with 403 on /api/views and /api/me; nothing changes', async () => {
    const dee = await person('dee@example.com', 'viewer');
    const kept = await dee.save('Kept', 'status=healthy');
    const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
    for (const client of [t.api, t.as(`Bearer ${key}`)]) {
      for (const [method, url, body] of [
        ['GET', '/api/views', undefined],
        ['POST', '/api/views', { name: 'By key', query: '' }],
        ['DELETE', `/api/views/${kept.body.id}`, undefined],
        ['GET', '/api/me', undefined],
      ] as const) {
        const res = await client.request(method, url, body);
        assert.deepEqual([res.status, res.body.error.code], [403, 'permission_denied'], `${method} ${url}`);
        assert.match(res.body.error.message, /signed-in person's own/);
      }
    }
    const anonymous = await t.as(undefined).get('/api/views');
    assert.deepEqual([anonymous.status, anonymous.body.error.code], [401, 'api_key_missing']);
    assert.deepEqual(await dee.views(), [kept.body]);
  });

  test('GET /api/me answers the signed-in person', async () => {
    const eve = await person('eve@example.com', 'editor');
    const me = await eve.request('GET', '/api/me');
    assert.equal(me.status, 200, me.raw);
    assert.deepEqual(
      [me.body.id, me.body.email, me.body.role, me.body.account],
      [eve.id, 'eve@example.com', 'editor', 'default'],
    );
    assert.match(me.body.created_at, /Z$/);
  });

  test('bad input is 400 naming the field, and nothing is stored', async () => {
    const fay = await person('fay@example.com', 'viewer');
    const kept = await fay.save('Kept', '');
    for (const [body, code, param] of [
      [{ name: '', query: '' }, 'parameter_invalid', 'name'],
      [{ name: 'x'.repeat(101), query: '' }, 'parameter_invalid', 'name'],
      [{ name: 7, query: '' }, 'parameter_invalid', 'name'],
      [{ query: '' }, 'parameter_missing', 'name'],
      [{ name: 'Long', query: 'q'.repeat(2001) }, 'parameter_invalid', 'query'],
      [{ name: 'Number', query: 5 }, 'parameter_invalid', 'query'],
      [{ name: 'Null', query: null }, 'parameter_invalid', 'query'],
      [{ name: 'Missing' }, 'parameter_missing', 'query'],
      [{ name: 'Extra', query: '', shared: true }, 'parameter_unknown', 'shared'],
    ] as const) {
      const res = await fay.request('POST', '/api/views', body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.raw}`);
      assert.deepEqual([res.body.error.code, res.body.error.param], [code, param], JSON.stringify(body));
    }
    // The limits themselves are accepted.
    const longest = await fay.save('n'.repeat(100), 'q'.repeat(2000));
    assert.equal(longest.status, 201, longest.raw);
    assert.deepEqual(await fay.views(), [longest.body, kept.body]);
  });

  test(`at most ${VIEWS_PER_PERSON} views a person, even under a parallel burst`, async () => {
    const gus = await person('gus@example.com', 'viewer');
    const hal = await person('hal@example.com', 'viewer');
    const before = VIEWS_PER_PERSON - 10;
    for (let i = 0; i < before; i++) assert.equal((await gus.save(`v${i}`, `page=${i}`)).status, 201);
    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => gus.save(`burst ${i}`, '')));
    const statuses = burst.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, 10, JSON.stringify(statuses));
    for (const refused of burst.filter((r) => r.status !== 201)) {
      assert.equal(refused.status, 400, refused.raw);
      assert.deepEqual([refused.body.error.code, refused.body.error.param], ['parameter_invalid', 'name']);
      assert.match(refused.body.error.message, /at most 100 views/);
    }
    assert.equal((await gus.views()).length, VIEWS_PER_PERSON);
    assert.equal((await gus.save('one more', '')).status, 400);
    // The limit is each person's: another of the account still saves.
    assert.equal((await hal.save('mine', '')).status, 201);
    // And one deleted makes room for one.
    const [newest] = await gus.views();
    assert.equal((await gus.request('DELETE', `/api/views/${newest?.id}`)).status, 200);
    assert.equal((await gus.save('room again', '')).status, 201);
    assert.equal((await gus.save('but no more', '')).status, 400);
  });

  test('an Idempotency-Key replays the first answer and saves one view', async () => {
    const ida = await person('ida@example.com', 'viewer');
    const body = { name: 'Once', query: 'status=at_risk' };
    const headers = { 'idempotency-key': 'view-once' };
    const first = await ida.request('POST', '/api/views', body, headers);
    assert.equal(first.status, 201, first.raw);
    const replay = await ida.request('POST', '/api/views', body, headers);
    assert.equal(replay.status, 201, replay.raw);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.raw, first.raw);
    assert.deepEqual(await ida.views(), [first.body]);
    const reused = await ida.request('POST', '/api/views', { ...body, name: 'Twice' }, headers);
    assert.deepEqual([reused.status, reused.body.error.code], [400, 'idempotency_key_reused']);
    assert.deepEqual(await ida.views(), [first.body]);
    // The key is Ida's: another person of the account sending it, body and all, is never shown her view.
    const ivo = await person('ivo@example.com', 'viewer');
    const theirs = await ivo.request('POST', '/api/views', body, headers);
    assert.deepEqual([theirs.status, theirs.body.error?.code], [400, 'idempotency_key_reused']);
    assert.ok(!theirs.raw.includes(first.body.id));
    assert.deepEqual(await ivo.views(), []);
  });

  test('a person removed takes their views along', async () => {
    const jo = await person('jo@example.com', 'editor');
    assert.equal((await jo.save('Soon gone', '')).status, 201);
    const accountId = (await t.store.listUsers()).find((u) => u.id === jo.id)?.accountId as string;
    assert.equal((await t.store.listViews(accountId, jo.id)).length, 1);
    assert.equal((await t.api.delete(`/api/users/${jo.id}`)).status, 200);
    assert.deepEqual(await t.store.listViews(accountId, jo.id), []);
    assert.equal((await jo.request('GET', '/api/views')).status, 401);
  });
});
