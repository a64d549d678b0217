// People in the store (docs/people.md): users and their one-time links, failed sign-ins, sessions
// and the audit log, the same on every backend. The HTTP suites (test/security/sessions.test.ts,
// test/http/users.test.ts) prove the rules through the routes; this holds each method to its word.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import type { AuditEntry, Store } from '../../../src/store/store.ts';
import { type ContractContext, T0 } from './context.ts';

const HOUR = 3_600_000;

/** An email no other test of the shared database uses. */
const email = (name: string) => `${name}-${randomUUID().slice(0, 8)}@example.com`;

/** A user of `accountId` with a link (its token hash returned), as `vitals users create` adds one. */
async function addUser(
  store: Store,
  accountId: string,
  opts: { email?: string; role?: 'admin' | 'editor' | 'viewer'; linkExpires?: number } = {},
) {
  const user = {
    id: newId.user(),
    accountId,
    email: opts.email ?? email('user'),
    role: opts.role ?? 'viewer',
    createdAt: T0,
  };
  const tokenHash = randomUUID().replaceAll('-', '');
  const added = await store.createUser(user, { tokenHash, expiresAt: opts.linkExpires ?? T0 + 24 * HOUR });
  assert.equal(added, true);
  return { ...user, tokenHash };
}

const audit = (action: string, at: number, objectId: string | null = null): AuditEntry => ({
  id: newId.audit(),
  actor: { type: 'key', id: 'key_1', label: 'ci' },
  action,
  objectId,
  at,
  requestId: `req-${action}`,
});

export function peopleContract(c: ContractContext): void {
  describe('users and their one-time links', () => {
    test('a user is added with a link; an email is one user across accounts, nothing written the second time', async () => {
      const store = c.store();
      const [a, b] = [await c.account(), await c.account()];
      const ana = await addUser(store, a, { role: 'editor' });
      const again = await store.createUser(
        { id: newId.user(), accountId: b, email: ana.email, role: 'admin', createdAt: T0 },
        { tokenHash: 'other-hash', expiresAt: T0 + HOUR },
      );
      assert.equal(again, false);
      assert.equal(
        await store.findSignInLink('other-hash', T0),
        null,
        "the refused user's link was not kept",
      );
      assert.deepEqual(
        (await store.listUsers(b)).map((u) => u.email),
        [],
      );
      const found = await store.getUser(a, ana.id);
      assert.deepEqual(
        found && {
          email: found.email,
          role: found.role,
          accountId: found.accountId,
          hasPassword: found.hasPassword,
        },
        { email: ana.email, role: 'editor', accountId: a, hasPassword: false },
      );
      assert.equal(await store.getUser(b, ana.id), null, "another account's user is not found");
    });

    test("one account's users by email; every account's across them, with the account's name", async (t) => {
      const { store, account } = await c.isolated(t);
      const [a, b] = [await account(), await account()];
      await addUser(store, a, { email: 'zoe@example.com' });
      await addUser(store, a, { email: 'amy@example.com' });
      await addUser(store, b, { email: 'bob@example.com' });
      assert.deepEqual(
        (await store.listUsers(a)).map((u) => u.email),
        ['amy@example.com', 'zoe@example.com'],
      );
      const all = await store.listUsers();
      assert.deepEqual(all.map((u) => u.email).sort(), [
        'amy@example.com',
        'bob@example.com',
        'zoe@example.com',
      ]);
      const names = new Map(all.map((u) => [u.email, u.accountName]));
      assert.notEqual(names.get('amy@example.com'), names.get('bob@example.com'));
      assert.equal(names.get('amy@example.com'), names.get('zoe@example.com'));
    });

    test('a role changes within the account only; removal is per account, or by email', async () => {
      const store = c.store();
      const [a, b] = [await c.account(), await c.account()];
      const ana = await addUser(store, a);
      assert.equal(await store.setUserRole(b, ana.id, 'admin'), null);
      assert.equal((await store.setUserRole(a, ana.id, 'admin'))?.role, 'admin');
      assert.equal(await store.setUserRole(a, 'usr_missing', 'admin'), null);
      assert.equal(await store.removeAccountUser(b, ana.id), false);
      assert.equal(await store.removeAccountUser(a, ana.id), true);
      assert.equal(await store.getUser(a, ana.id), null);
      const bo = await addUser(store, a);
      assert.equal(await store.removeUser(bo.email), true);
      assert.equal(await store.removeUser(bo.email), false);
      assert.equal(await store.findUserByEmail(bo.email), null);
    });

    test('a link is looked at without being used, used once, and never after it expires', async () => {
      const store = c.store();
      const a = await c.account();
      const ana = await addUser(store, a, { linkExpires: T0 + HOUR });
      assert.equal((await store.findSignInLink(ana.tokenHash, T0))?.email, ana.email);
      assert.equal((await store.findSignInLink(ana.tokenHash, T0))?.id, ana.id, 'looking twice: still there');
      assert.equal(await store.findSignInLink(ana.tokenHash, T0 + HOUR), null, 'expired at its instant');
      assert.equal(await store.redeemSignInLink(ana.tokenHash, 'hash-1', T0 + HOUR), null);
      const used = await store.redeemSignInLink(ana.tokenHash, 'hash-1', T0 + 1);
      assert.deepEqual(used && [used.id, used.hasPassword], [ana.id, true]);
      assert.equal(await store.redeemSignInLink(ana.tokenHash, 'hash-2', T0 + 2), null, 'used once');
      assert.equal(await store.findSignInLink(ana.tokenHash, T0 + 2), null);
      assert.equal((await store.findUserByEmail(ana.email))?.passwordHash, 'hash-1');
      assert.equal(await store.findSignInLink('unknown', T0), null);
    });

    test('a link used by two requests at once sets one password', async () => {
      const store = c.store();
      const ana = await addUser(store, await c.account());
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.redeemSignInLink(ana.tokenHash, `hash-${i}`, T0 + 1)),
      );
      assert.equal(results.filter((r) => r !== null).length, 1);
    });
  });

  describe('failed sign-ins', () => {
    test('of a burst, at most `limit` are claimed; a release gives one back; the rest wait on the oldest', async () => {
      const store = c.store();
      const who = email('burst');
      const window = { since: T0 - HOUR, limit: 3 };
      const claims = await Promise.all(
        Array.from({ length: 10 }, (_, i) => store.claimSignInAttempt(who, T0 + i, window)),
      );
      const claimed = claims.filter((r) => r.claimed);
      assert.equal(claimed.length, 3);
      for (const r of claims) if (!r.claimed) assert.ok(r.oldest >= T0 && r.oldest < T0 + 10);
      const won = claims.findIndex((r) => r.claimed);
      await store.releaseSignInAttempt(who, T0 + won);
      assert.equal((await store.claimSignInAttempt(who, T0 + 20, window)).claimed, true);
      assert.equal((await store.claimSignInAttempt(who, T0 + 21, window)).claimed, false);
      // Once the window has moved past them, the old failures no longer count.
      const later = { since: T0 + 100, limit: 3 };
      assert.equal((await store.claimSignInAttempt(who, T0 + 200, later)).claimed, true);
    });

    test('prune forgets failures at or before a time, and says how many', async (t) => {
      const { store } = await c.isolated(t);
      const window = { since: T0 - HOUR, limit: 10 };
      for (const at of [T0, T0 + 1, T0 + 2]) await store.claimSignInAttempt('p@example.com', at, window);
      assert.equal(await store.pruneSignInFailures(T0 + 1), 2);
      assert.equal(await store.pruneSignInFailures(T0 + 1), 0);
      assert.equal(await store.pruneSignInFailures(T0 + 2), 1);
    });
  });

  describe('sessions', () => {
    test('a session is read with its user as they are now, until it expires, is deleted or the user goes', async () => {
      const store = c.store();
      const a = await c.account();
      const ana = await addUser(store, a, { role: 'viewer' });
      const id = `sess-${randomUUID()}`;
      await store.putSession(id, ana.id, '{"n":1}', T0 + HOUR);
      const read = await store.getSession(id, T0);
      assert.deepEqual(read && [read.data, read.user.id, read.user.role], ['{"n":1}', ana.id, 'viewer']);
      await store.setUserRole(a, ana.id, 'admin');
      assert.equal((await store.getSession(id, T0))?.user.role, 'admin', 'a role change applies at once');
      await store.putSession(id, ana.id, '{"n":2}', T0 + 2 * HOUR);
      assert.equal(
        (await store.getSession(id, T0 + HOUR))?.data,
        '{"n":2}',
        'put again: replaced and extended',
      );
      assert.equal(await store.getSession(id, T0 + 2 * HOUR), null, 'expired at its instant');
      await store.deleteSession(id);
      assert.equal(await store.getSession(id, T0), null);
      const other = `sess-${randomUUID()}`;
      await store.putSession(other, ana.id, '{}', T0 + HOUR);
      await store.removeAccountUser(a, ana.id);
      assert.equal(await store.getSession(other, T0), null, "a removed user's session is gone");
    });
  });

  describe('the audit log', () => {
    test("an account's entries, newest first, paged by id; another account sees none", async () => {
      const store = c.store();
      const [a, b] = [await c.account(), await c.account()];
      const entries = [audit('customer.created', T0, 'acme'), audit('customer.updated', T0 + 1, 'acme')];
      entries.push(audit('settings.weights.updated', T0 + 2));
      for (const e of entries) await store.appendAudit(a, e);
      const first = await store.listAudit(a, { limit: 2 });
      assert.deepEqual(
        first.data.map((e) => e.action),
        ['settings.weights.updated', 'customer.updated'],
      );
      assert.equal(first.hasMore, true);
      assert.deepEqual(first.data[0], entries[2]);
      const rest = await store.listAudit(a, { limit: 2, startingAfter: first.data[1]?.id });
      assert.deepEqual(rest.data, [entries[0]]);
      assert.equal(rest.hasMore, false);
      assert.deepEqual((await store.listAudit(b, { limit: 10 })).data, []);
    });

    test('prune removes up to `limit` entries older than a time, across accounts', async (t) => {
      const { store, account } = await c.isolated(t);
      const [a, b] = [await account(), await account()];
      for (const [acct, at] of [
        [a, T0],
        [a, T0 + 1],
        [b, T0 + 2],
        [b, T0 + 10],
      ] as const)
        await store.appendAudit(acct, audit('customer.created', at));
      assert.equal(await store.pruneAudit(T0 + 5, 2), 2);
      assert.equal(await store.pruneAudit(T0 + 5, 2), 1);
      assert.equal(await store.pruneAudit(T0 + 5, 2), 0);
      assert.deepEqual(
        (await store.listAudit(b, { limit: 10 })).data.map((e) => e.at),
        [T0 + 10],
      );
    });
  });
}
