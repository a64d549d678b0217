// People for the security tests: a user whose one-time link has set their password, and the
// /api operations of the OpenAPI document (so a new route is walked without being listed).
import assert from 'node:assert/strict';
import type { UserRole } from '../../src/domain/people.ts';
import { createUser } from '../../src/keys.ts';
import type { TestApp } from './app.ts';

/** A user of `account` with `password`, set through their link as a person would. */
export async function personWithPassword(
  t: TestApp,
  opts: { email: string; role: UserRole; password: string; account?: string; now?: number },
): Promise<{ id: string; token: string }> {
  const made = await createUser(
    t.store,
    { email: opts.email, accountName: opts.account ?? 'default', role: opts.role },
    opts.now,
  );
  assert.ok(made);
  const set = await t.inject({
    method: 'POST',
    url: '/auth/password',
    payload: { token: made.token, password: opts.password },
  });
  assert.equal(set.status, 200, set.raw);
  return made;
}

/** Every /api operation of the app's /openapi.json, HEAD included. */
export async function apiOperations(t: TestApp): Promise<{ method: string; path: string }[]> {
  const doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).body as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(doc.paths)
    .filter(([path]) => path.startsWith('/api/'))
    .flatMap(([path, ops]) => Object.keys(ops).map((method) => ({ method: method.toUpperCase(), path })));
}
