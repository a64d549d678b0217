// The book in the dashboard, in Chromium (docs/dashboard.md, "My book" and "Portfolio"): a person
// who owns customers opens on My book (their bands with ARR, their renewals of the next 90 days,
// soonest first); the portfolio's filters and sort live in its URL (Back returns to the last view)
// and a view is saved under a name into the navigation; the customer page shows and edits the
// book, a refused field named at that field, and a parent lists its children with their rollup.
// Each view is checked with axe-core at laptop and phone widths (Dashboard.shoot). What was stored
// is checked through the API.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { tempDir } from '../helpers/app.ts';
import { runCli, serverEnv } from '../helpers/server.ts';
import { type Dashboard, openDashboard, skipReason } from './browser.ts';

const PASSWORD = 'a long enough password';
const DAY = 86_400_000;
const inDays = (n: number) => new Date(Date.now() + n * DAY).toISOString();

describe('the book in Chromium', { skip: skipReason(), timeout: 180_000 }, () => {
  let dashboard: Dashboard;
  let page: Page;
  const dataDir = tempDir();

  before(async () => {
    dashboard = await openDashboard({ VITALS_DATA_DIR: dataDir });
    page = dashboard.page;
    const out = await runCli(
      ['users', 'create', 'csm@example.com', '--role', 'editor', '--url', dashboard.base],
      serverEnv({ VITALS_DATA_DIR: dataDir }),
    );
    assert.equal(out.code, 0, out.stderr);
    const customers = [
      { customer_id: 'acme', name: 'Acme', owner: 'CSM@example.com', arr: 120000, renewal_at: inDays(20) },
      {
        customer_id: 'acme_eu',
        name: 'Acme Europe',
        owner: 'csm@example.com',
        arr: 30000,
        parent_id: 'acme',
      },
      { customer_id: 'bolt', name: 'Bolt', owner: 'csm@example.com', arr: 50000.5, renewal_at: inDays(60) },
      { customer_id: 'crane', name: 'Crane', owner: 'csm@example.com', arr: 8000, renewal_at: inDays(200) },
      {
        customer_id: 'delta',
        name: 'Delta',
        owner: 'other@example.com',
        arr: 900000,
        renewal_at: inDays(10),
      },
      { customer_id: 'echo', name: 'Echo', owner: 'csm@example.com', arr: 1000, lifecycle: 'churned' },
    ].map((c) => ({ email: `ops@${c.customer_id}.example`, ...c }));
    // The parent first: a batch checks a parent among the customers that exist.
    await dashboard.call('POST', '/api/customers/batch', {
      customers: customers.filter((c) => !c.parent_id),
    });
    await dashboard.call('POST', '/api/customers/batch', { customers: customers.filter((c) => c.parent_id) });
    const usage: Record<string, number> = {
      acme: 0.2,
      acme_eu: 0.9,
      bolt: 0.5,
      crane: 0.8,
      delta: 0.1,
      echo: 0.1,
    };
    await dashboard.call('POST', '/api/health-scores/batch', {
      scores: Object.entries(usage).map(([customer_id, u]) => ({ customer_id, factors: { usage: u } })),
    });
    // The person sets a password with their one-time link, which signs them in.
    await page.goto(out.stdout.trim());
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('The same again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByTestId('who').filter({ hasText: 'csm@example.com' }).waitFor();
  });

  after(async () => {
    await dashboard?.close();
  });

  /** The customer ids of the first table under the heading `name`, in order. */
  async function idsIn(name: string): Promise<string[]> {
    const section = page.locator('section').filter({ has: page.getByRole('heading', { name, level: 2 }) });
    await section.locator('tbody tr').first().waitFor();
    // Once the table is not loading any more (a new order or filter loads it again).
    await section.locator('table[aria-busy="true"]').waitFor({ state: 'detached' });
    return section.locator('tbody tr td:first-child .sub').allTextContents();
  }

  test('a person who owns customers opens on My book: their bands with ARR, their renewals soonest first', async () => {
    await page.getByRole('heading', { name: 'My book', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/book');
    const cards = page.locator('ul.cards');
    // Acme, Acme Europe, Bolt and Crane are the person's active customers (Echo churned, Delta another's).
    await cards.getByText('ARR 208,000.5').waitFor();
    assert.deepEqual(await idsIn('Renewals in the next 90 days'), ['acme', 'bolt']);
    await dashboard.shoot('my-book');
  });

  test('the portfolio keeps its filters and sort in the URL; Back returns to the last view', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Portfolio' }).click();
    await page.getByRole('heading', { name: 'Portfolio', level: 1 }).waitFor();
    await page.getByLabel('Owner', { exact: true }).selectOption('me');
    await page.waitForURL((url) => url.searchParams.get('owner') === 'me');
    await page.getByLabel('Show').selectOption('all');
    await page.waitForURL((url) => url.searchParams.get('show') === 'all');
    assert.deepEqual(await idsIn('Customers by health'), ['acme', 'bolt', 'crane', 'acme_eu']);
    await page.getByRole('button', { name: 'ARR' }).click();
    await page.waitForURL((url) => url.searchParams.get('sort') === '-arr');
    assert.deepEqual(await idsIn('Customers by health'), ['acme', 'bolt', 'acme_eu', 'crane']);
    await dashboard.shoot('portfolio-book');
    await page.goBack();
    await page.waitForURL((url) => url.searchParams.get('sort') === null);
    assert.deepEqual(await idsIn('Customers by health'), ['acme', 'bolt', 'crane', 'acme_eu']);
    // Churned customers are out unless asked for.
    await page.getByLabel('Customers', { exact: true }).selectOption('churned');
    await page.waitForURL((url) => url.searchParams.get('lifecycle') === 'churned');
    assert.deepEqual(await idsIn('Customers by health'), ['echo']);
  });

  test('a view saved under a name is in the navigation and opens as it was', async () => {
    await page.goto(`${dashboard.base}/?owner=me&renewal=90&sort=renewal_at&show=all`);
    await page.getByLabel('Name of the view').fill('My renewals');
    await page.getByRole('button', { name: 'Save view' }).click();
    await page.getByText('Saved “My renewals”').waitFor();
    const session = await page.request.get(`${dashboard.base}/api/views`);
    const views = ((await session.json()) as { data: { name: string; query: string }[] }).data;
    assert.deepEqual(
      views.map((v) => [v.name, v.query]),
      [['My renewals', 'show=all&sort=renewal_at&owner=me&renewal=90']],
    );
    await page.goto(`${dashboard.base}/calibration`);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByText('Saved views').click();
    await nav.getByRole('link', { name: 'My renewals' }).click();
    await page.waitForURL((url) => url.searchParams.get('renewal') === '90');
    assert.deepEqual(await idsIn('Customers by health'), ['acme', 'bolt']);
  });

  test('the customer page shows and edits the book; a refused field is named at that field', async () => {
    await page.goto(`${dashboard.base}/customers/acme`);
    await page.getByRole('heading', { name: 'Acme', level: 1 }).waitFor();
    // Acme Europe is its child: the rollup over both, weighted by ARR.
    const hierarchy = page.locator('section').filter({
      has: page.getByRole('heading', { name: 'Accounts under this one' }),
    });
    await hierarchy.getByRole('link', { name: 'Acme Europe' }).waitFor();
    await hierarchy.getByText('150,000').waitFor();
    // A parent that is its own descendant is refused, and said at the parent's field.
    await page.getByLabel('Parent customer id').fill('acme_eu');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const parentError = page.locator('#customer-parent-error');
    await parentError.waitFor();
    assert.match(
      (await parentError.textContent()) ?? '',
      /descendant of 'acme': the tree would have a cycle/,
    );
    assert.equal((await dashboard.call('GET', '/api/customers/acme')).parent_id, null);
    await page.getByLabel('Parent customer id').fill('');
    await page.getByLabel('ARR').fill('125000.25');
    await page.getByLabel('Lifecycle').selectOption('churned');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    const stored = await dashboard.call('GET', '/api/customers/acme');
    assert.deepEqual([stored.arr, stored.lifecycle, stored.parent_id], [125000.25, 'churned', null]);
    await page.locator('.badge.churned').first().waitFor();
    await dashboard.shoot('customer-book');
    assert.deepEqual(dashboard.pageErrors, []);
  });
});
