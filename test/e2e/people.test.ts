// People in the dashboard, in Chromium (docs/people.md): a one-time link sets the password, then
// each role signs in with email and password and sees what it may do; the API refuses the rest
// to that same browser session. Users are made with the real CLI on the server's data directory.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { tempDir } from '../helpers/app.ts';
import { runCli, serverEnv } from '../helpers/server.ts';
import { type Dashboard, openDashboard, skipReason } from './browser.ts';

const PASSWORD = 'a long enough password';

describe('people sign in to the dashboard in Chromium', { skip: skipReason(), timeout: 120_000 }, () => {
  let dashboard: Dashboard;
  let page: Page;
  const dataDir = tempDir();
  const links: Record<string, string> = {};

  before(async () => {
    dashboard = await openDashboard({ VITALS_DATA_DIR: dataDir });
    page = dashboard.page;
    for (const role of ['admin', 'editor', 'viewer']) {
      const out = await runCli(
        ['users', 'create', `${role}@example.com`, '--role', role, '--url', dashboard.base],
        serverEnv({ VITALS_DATA_DIR: dataDir }),
      );
      assert.equal(out.code, 0, out.stderr);
      links[role] = out.stdout.trim();
    }
    await dashboard.call('POST', '/api/customers', {
      customer_id: 'acme',
      name: 'Acme',
      email: 'ops@acme.example',
    });
  });

  after(async () => {
    await dashboard?.close();
  });

  async function signIn(email: string): Promise<void> {
    await page.goto(`${dashboard.base}/sign-in`);
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in with email' }).click();
    await page.getByRole('heading', { name: 'Portfolio', level: 1 }).waitFor();
    assert.match((await page.getByTestId('who').textContent()) ?? '', new RegExp(email));
  }

  async function signOut(): Promise<void> {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  }

  /** A change through this browser's own session cookie and CSRF token, as the pages make them. */
  async function changeAsThisBrowser(): Promise<number> {
    const session = await page.request.get(`${dashboard.base}/auth/session`);
    const { csrf_token } = (await session.json()) as { csrf_token: string };
    const res = await page.request.patch(`${dashboard.base}/api/customers/acme`, {
      data: { name: 'Changed' },
      headers: { 'x-csrf-token': csrf_token },
    });
    return res.status();
  }

  test('a one-time link names its person, sets the password once and signs them in', async () => {
    await page.goto(links.admin as string);
    await page.getByRole('heading', { name: 'Choose your password', level: 1 }).waitFor();
    assert.equal(
      await page.getByTestId('link-for').textContent(),
      'For admin@example.com (admin) in the account default.',
    );
    await page.getByLabel('New password').fill('too short');
    await page.getByText('At least 12 characters.').waitFor();
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('The same again').fill(PASSWORD);
    await dashboard.shoot('set-password');
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { name: 'Portfolio', level: 1 }).waitFor();
    assert.match((await page.getByTestId('who').textContent()) ?? '', /admin@example\.com \(admin\)/);
    assert.equal(new URL(page.url()).hash, '', 'the spent token leaves the address bar');
    assert.equal(new URL(page.url()).pathname, '/');
    await signOut();

    // Used once, the link says so as soon as it is opened, before anything is typed.
    await page.goto('about:blank'); // a new document: the same address again would only change its fragment
    await page.goto(links.admin as string);
    await page
      .getByRole('alert')
      .filter({ hasText: /^This sign-in link cannot be used: it was used already/ })
      .waitFor();
    assert.equal(await page.getByLabel('New password').count(), 0);
    await dashboard.shoot('set-password-used');
    for (const role of ['editor', 'viewer']) {
      await page.goto('about:blank');
      await page.goto(links[role] as string);
      await page
        .getByTestId('link-for')
        .filter({ hasText: `For ${role}@example.com (${role})` })
        .waitFor();
      await page.getByLabel('New password').fill(PASSWORD);
      await page.getByLabel('The same again').fill(PASSWORD);
      await page.getByRole('button', { name: 'Set password and sign in' }).click();
      await page
        .getByTestId('who')
        .filter({ hasText: `${role}@example.com (${role})` })
        .waitFor();
      await signOut();
    }
  });

  test('an admin sees every page and may change anything', async () => {
    await signIn('admin@example.com');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Webhooks' }).waitFor();
    await nav.getByRole('link', { name: 'Scoring' }).waitFor();
    await page.getByRole('heading', { name: 'Import a CSV file' }).waitFor();
    await dashboard.shoot('signed-in-admin');
    await page.reload();
    await page.getByRole('heading', { name: 'Portfolio', level: 1 }).waitFor();
    assert.match(
      (await page.getByTestId('who').textContent()) ?? '',
      /admin@example\.com \(admin\)/,
      'the session survives a reload',
    );
    assert.equal(await changeAsThisBrowser(), 200);

    // People: add someone (their link is shown once), change their role, remove them.
    await nav.getByRole('link', { name: 'People' }).click();
    await page.getByRole('heading', { name: 'People', level: 1 }).waitFor();
    await page.getByLabel('Email', { exact: true }).fill('dan@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption('editor');
    await page.getByRole('button', { name: 'Add person' }).click();
    const link = page.getByLabel('Sign-in link');
    await link.waitFor();
    assert.match(await link.inputValue(), /\/set-password#token=[A-Za-z0-9_-]{43}$/);
    await dashboard.shoot('people');
    await page.getByRole('button', { name: 'I have sent it' }).click();
    await page.getByLabel('Role of dan@example.com').selectOption('viewer');
    await page.getByText('Role saved.').waitFor();
    const dan = (await dashboard.call('GET', '/api/users')).data.find(
      (u: { email: string }) => u.email === 'dan@example.com',
    );
    assert.equal(dan.role, 'viewer');
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Remove dan@example.com' }).click();
    await page.getByLabel('Role of dan@example.com').waitFor({ state: 'detached' });
    assert.equal(
      (await dashboard.call('GET', '/api/users')).data.some(
        (u: { email: string }) => u.email === 'dan@example.com',
      ),
      false,
    );
    // The audit log names the admin for what they did, newest first.
    await nav.getByRole('link', { name: 'Audit log' }).click();
    const first = page.locator('table.audit tbody tr').first();
    await first.waitFor();
    assert.match((await first.textContent()) ?? '', /admin@example\.com[\s\S]*user\.deleted/);
    await dashboard.shoot('audit-log');
    await signOut();
  });

  test('an editor edits customers; settings and webhooks are hidden, and the API refuses them', async () => {
    await signIn('editor@example.com');
    const nav = page.getByRole('navigation', { name: 'Main' });
    assert.equal(await nav.getByRole('link', { name: 'Webhooks' }).count(), 0);
    assert.equal(await nav.getByRole('link', { name: 'Scoring' }).count(), 0);
    assert.equal(await nav.getByRole('link', { name: 'People' }).count(), 0);
    assert.equal(await nav.getByRole('link', { name: 'Audit log' }).count(), 0);
    await page.goto(`${dashboard.base}/customers/acme`);
    await page.getByLabel('Name', { exact: true }).fill('Acme Editor');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const session = await page.request.get(`${dashboard.base}/auth/session`);
    const { csrf_token } = (await session.json()) as { csrf_token: string };
    const weights = await page.request.patch(`${dashboard.base}/api/settings/health-score/weights`, {
      data: { weights: { usage: 1 } },
      headers: { 'x-csrf-token': csrf_token },
    });
    assert.equal(weights.status(), 403);
    await signOut();
  });

  test('a viewer reads; every control that changes data is hidden, and the API refuses a change', async () => {
    await signIn('viewer@example.com');
    assert.equal(await page.getByRole('heading', { name: 'Import a CSV file' }).count(), 0);
    await page.goto(`${dashboard.base}/customers/acme`);
    await page.getByRole('heading', { name: 'Acme Editor', level: 1 }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Edit customer' }).count(), 0);
    await dashboard.shoot('signed-in-viewer');
    assert.equal(await changeAsThisBrowser(), 403);
    await signOut();
    assert.equal(await changeAsThisBrowser(), 401, 'signed out: the cookie no longer works');
    assert.deepEqual(dashboard.pageErrors, []);
  });
});
