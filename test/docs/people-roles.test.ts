// docs/people.md, "Roles", says which changes an editor may make, route by route. This holds that
// list to the API: every change of the OpenAPI document is sent by a signed-in editor and a
// viewer, and the ones not refused with 403 permission_denied must be exactly the ones listed
// (for a viewer, only those of their own saved views). Each request names objects that do not
// exist and carries an unknown field, so one that is allowed is refused by validation (400) or not
// found (404), and nothing changes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { apiOperations, personWithPassword } from '../helpers/people.ts';

const PASSWORD = 'correct horse battery';
let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

const CHANGE = /`((?:POST|PUT|PATCH|DELETE) \/api\/[^`]+)`/g;

/** docs/people.md's "Roles" section. */
function rolesSection(): string {
  const page = readFileSync(new URL('../../docs/people.md', import.meta.url), 'utf8');
  return page.slice(page.indexOf('\n## Roles\n'), page.indexOf('\n## ', page.indexOf('\n## Roles\n') + 1));
}

/** The `METHOD /api/…` code spans of the "Roles" section: what an editor may change. */
function documentedEditorChanges(): string[] {
  return [...rolesSection().matchAll(CHANGE)].map((m) => m[1] as string).sort();
}

/** Those of its paragraph on a person's own things (saved views): what every role may change. */
function documentedOwnChanges(): string[] {
  const roles = rolesSection();
  const start = roles.indexOf('\nEvery person, whatever their role,');
  assert.ok(start > 0, 'the Roles section has its paragraph on what every person keeps');
  const paragraph = roles.slice(start, roles.indexOf('\n\n', start + 1));
  return [...paragraph.matchAll(CHANGE)].map((m) => m[1] as string).sort();
}

async function signedIn(email: string, role: 'viewer' | 'editor'): Promise<Record<string, string>> {
  await personWithPassword(t, { email, role, password: PASSWORD });
  const login = await t.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email, password: PASSWORD },
  });
  assert.equal(login.status, 200, login.raw);
  const cookie = /vitals_session=[^;]+/.exec(String(login.headers['set-cookie']))?.[0] as string;
  return { cookie, 'x-csrf-token': login.body.csrf_token };
}

/** The changes (`METHOD /api/path`) this person is not refused by their role. */
async function allowed(headers: Record<string, string>): Promise<string[]> {
  const changes = (await apiOperations(t)).filter((o) => o.method !== 'GET' && o.method !== 'HEAD');
  assert.ok(changes.length >= 25, `${changes.length} changes`);
  const out: string[] = [];
  for (const { method, path } of changes) {
    const res = await t.inject({
      method: method as 'POST',
      url: path.replace(/\{\w+\}/g, 'nope'),
      headers: { ...headers, 'content-type': 'application/json' },
      payload: '{"not_a_field":1}',
    });
    const refused = res.status === 403 && res.body.error.code === 'permission_denied';
    if (!refused) {
      assert.ok([400, 404].includes(res.status), `${method} ${path}: ${res.raw}`);
      out.push(`${method} ${path}`);
    }
  }
  return out.sort();
}

test('docs/people.md lists exactly the changes an editor may make, and a viewer makes only their own', async () => {
  const documented = documentedEditorChanges();
  assert.ok(documented.includes('POST /api/customers/{customer_id}/metrics'), 'editors write metrics');
  assert.ok(documented.includes('POST /api/customers/{customer_id}/outcomes'), 'editors write outcomes');
  assert.ok(documented.includes('PUT /api/customers/{customer_id}/health-score/override'), 'and overrides');
  assert.deepEqual(await allowed(await signedIn('editor@example.com', 'editor')), documented);
  const own = documentedOwnChanges();
  assert.deepEqual(
    own,
    ['DELETE /api/views/{view_id}', 'PATCH /api/me', 'POST /api/views'],
    'every person keeps their views and their digest choice',
  );
  assert.deepEqual(await allowed(await signedIn('viewer@example.com', 'viewer')), own);
});
