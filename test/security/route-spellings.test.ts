// Permissions are decided on the route that serves a request, never on the text of its target
// (docs/people.md, "Roles"): for every /api operation of the OpenAPI document, a read key, a
// viewer and an editor get the same answer at the canonical path and at every other spelling
// the router accepts (a percent-escaped letter, an escaped hyphen, the absolute form, a trailing
// `#`). The requests are written byte for byte on a socket: fetch and inject normalize targets.
// Writes carry a body with an unknown field and paths name objects that do not exist, so an
// allowed request is refused by validation (400) or not found (404) and nothing changes.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/keys.ts';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';
import { apiOperations, personWithPassword } from '../helpers/people.ts';
import { rawRequest } from '../helpers/raw-http.ts';

const PASSWORD = 'correct horse battery';
let t: TestApp;
let port = 0;
let operations: { method: string; path: string }[] = [];

interface Principal {
  name: string;
  headers: Record<string, string>;
}
const principals: Principal[] = [];

async function signedIn(email: string, role: 'viewer' | 'editor'): Promise<Principal> {
  await personWithPassword(t, { email, role, password: PASSWORD });
  const login = await t.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email, password: PASSWORD },
  });
  assert.equal(login.status, 200, login.raw);
  const cookie = /vitals_session=[^;]+/.exec(String(login.headers['set-cookie']))?.[0] as string;
  return { name: role, headers: { cookie, 'x-csrf-token': login.body.csrf_token } };
}

/** The same path, spelled as the router also accepts it. */
function spellings(path: string): string[] {
  const escaped = path.replace(/^\/api\/([a-z])/, (_, c: string) => `/api/%${c.charCodeAt(0).toString(16)}`);
  const all = [escaped, `http://127.0.0.1:${port}${path}`, `${path}#`];
  if (path.includes('-')) all.push(path.replace('-', '%2d'));
  return all;
}

const fill = (path: string) => path.replace(/\{\w+\}/g, 'nope');

before(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  assert.equal((await t.api.post('/api/customers', customerBody('cus_1'))).status, 201);
  const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
  principals.push({ name: 'read key', headers: { authorization: `Bearer ${key}` } });
  principals.push(await signedIn('viewer@example.com', 'viewer'));
  principals.push(await signedIn('editor@example.com', 'editor'));
  operations = await apiOperations(t);
});
after(() => t.close());

describe('permissions under every spelling of a path', () => {
  test('the walk covers every /api operation, reads and writes', () => {
    assert.ok(operations.length >= 37, `${operations.length} operations`);
    assert.ok(operations.some((o) => o.path === '/api/audit-log'));
    assert.ok(operations.some((o) => o.method === 'DELETE'));
  });

  test('a read key, a viewer and an editor get the same answer at every spelling', async (ctx) => {
    let compared = 0;
    for (const who of principals) {
      for (const { method, path } of operations) {
        const body = ['POST', 'PATCH', 'PUT'].includes(method) ? '{"not_a_field":1}' : undefined;
        const send = (target: string) => rawRequest(port, method, target, { ...who.headers }, body);
        const canonical = await send(fill(path));
        for (const target of spellings(fill(path))) {
          const other = await send(target);
          const what = `${who.name}: ${method} ${target}`;
          assert.equal(other.status, canonical.status, `${what}: ${other.body}`);
          assert.equal(other.body, canonical.body, what);
          compared++;
        }
      }
    }
    assert.ok(compared > 350, `${compared} spellings compared`);
    ctx.diagnostic(
      `${operations.length} operations, ${compared} other spellings compared with the plain one`,
    );
  });

  test('the answers the spellings share are the refusals each role is due', async () => {
    const answer = async (who: Principal, method: string, target: string) => {
      const res = await rawRequest(
        port,
        method,
        target,
        { ...who.headers },
        method === 'GET' ? undefined : '{}',
      );
      return res.status;
    };
    const [reader, viewer, editor] = principals as [Principal, Principal, Principal];
    for (const target of ['/api/audit-log', ...spellings('/api/audit-log')]) {
      assert.equal(await answer(reader, 'GET', target), 403, `read key ${target}`);
      assert.equal(await answer(editor, 'GET', target), 403, `editor ${target}`);
    }
    for (const target of ['/api/users', ...spellings('/api/users')]) {
      assert.equal(await answer(viewer, 'GET', target), 403, `viewer ${target}`);
    }
    const weights = '/api/settings/health-score/weights';
    for (const target of [weights, ...spellings(weights)]) {
      assert.equal(await answer(editor, 'PATCH', target), 403, `editor PATCH ${target}`);
    }
  });
});
