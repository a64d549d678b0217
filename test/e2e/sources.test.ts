// The Sources page (issue 53; docs/dashboard.md, "Sources") in Chromium against the real server, on
// SQLite or on PostgreSQL (VITALS_TEST_BACKEND=postgres): a write key connects a Segment source in
// the page and copies its write key, shown once, from it; Segment's own library
// (@segment/analytics-node) then sends a group, tracks and a page to the running server while the
// source's page is open, and its live log shows each message as it comes, coloured by its result,
// with its reason, and its counters follow; the customer's page says which source last touched it.
// A disabled source refuses the library; a webhook source is connected with a mapping (a mapping
// that does not parse is refused at its field) and deleted; a viewer and a read key read it all
// without a control to change it. Each view is saved at 1440 and 390 px as
// test-artifacts/sources-*.png and checked by axe-core.
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Analytics } from '@segment/analytics-node';
import type { Locator, Page } from 'playwright-core';
import { tempDir } from '../helpers/app.ts';
import { runCli, serverEnv } from '../helpers/server.ts';
import { appBackend, createTestDatabase, type TestDatabase } from '../helpers/stores.ts';
import { chromiumSkip, type Dashboard, openDashboard, type Sizes } from './browser.ts';

const SIZES: Sizes = [
  ['1440', { width: 1440, height: 900 }],
  ['390', { width: 390, height: 844 }],
];
const PASSWORD = 'a long enough password';
const text = async (locator: Locator) => ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();

describe('the Sources page in Chromium', { skip: chromiumSkip(), timeout: 240_000 }, () => {
  let dashboard: Dashboard;
  let page: Page;
  let db: TestDatabase | undefined;
  const dataDir = tempDir();
  let viewerLink = '';
  let readKey = '';
  let writeKey = '';
  let sourceId = '';

  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });
  const logEntries = () => page.getByTestId('log-entry');
  /** Sends with Segment's library, as a backend would, to the running server; the errors it met. */
  async function sendWithSegment(key: string, send: (analytics: Analytics) => void): Promise<unknown[]> {
    const analytics = new Analytics({ writeKey: key, host: dashboard.base, flushAt: 20, maxRetries: 0 });
    const errors: unknown[] = [];
    analytics.on('error', (err) => errors.push(err));
    send(analytics);
    await analytics.closeAndFlush();
    return errors;
  }

  before(async () => {
    db = appBackend() === 'postgres' ? await createTestDatabase('postgres') : undefined;
    const env = { VITALS_DATA_DIR: dataDir, ...(db?.url ? { DATABASE_URL: db.url } : {}) };
    dashboard = await openDashboard(env);
    page = dashboard.page;
    assert.equal(existsSync(join(dataDir, 'vitals.db')), db === undefined);
    const cli = async (args: string[]) => {
      const out = await runCli(args, serverEnv(env));
      assert.equal(out.code, 0, `${args.join(' ')}: ${out.stderr}`);
      return out.stdout.trim();
    };
    viewerLink = await cli([
      'users',
      'create',
      'viewer@example.com',
      '--role',
      'viewer',
      '--url',
      dashboard.base,
    ]);
    readKey = await cli(['keys', 'create', '--scope', 'read']);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: dashboard.base });
  });

  after(async () => {
    await dashboard?.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('everyone has Sources in the navigation; none is connected yet', async () => {
    await dashboard.signIn();
    await nav('Sources').click();
    await page.getByRole('heading', { name: 'Sources', level: 1 }).waitFor();
    await page.getByText('No sources yet. Connect one below.').waitFor();
    await page.getByRole('heading', { name: 'Connect a source' }).waitFor();
  });

  test('a Segment source is connected, its ingest URL and write key shown once, copied from the page', async () => {
    assert.equal(
      await page.getByRole('radio', { name: /^Segment/ }).isChecked(),
      true,
      'Segment is the default type',
    );
    await page.getByRole('button', { name: 'Create source' }).click();
    await page.getByText('Give the source a name').waitFor();
    assert.equal(await page.evaluate('document.activeElement.id'), 'src-name', 'the field is focused');
    await page.getByLabel('Name', { exact: true }).fill('Backend');
    await page.getByLabel(/^Trusted: a server-side key/).check();
    await page.getByText('Leave it off for a key used in a browser or an app').waitFor();
    await page.getByRole('button', { name: 'Create source' }).click();

    const shown = page.getByTestId('shown-once');
    await shown.getByRole('heading', { name: 'Connect Backend' }).waitFor();
    assert.match(await text(shown), /you will not see it again/);
    assert.equal(await shown.getByLabel('Ingest URL').inputValue(), `${dashboard.base}/v1/batch`);
    writeKey = await shown.getByLabel('Write key').inputValue();
    assert.match(writeKey, /^sk_[A-Za-z0-9]{32}$/);
    await shown.getByRole('button', { name: 'Copy write key' }).click();
    await shown.getByText('Copied to the clipboard.').waitFor();
    assert.equal(
      await page.evaluate('navigator.clipboard.readText()'),
      writeKey,
      'the key is on the clipboard',
    );
    await dashboard.shoot('sources-created', SIZES);

    await shown.getByRole('button', { name: 'I have saved it' }).click();
    await page.reload();
    await page.getByRole('link', { name: 'Backend' }).waitFor();
    assert.equal(await page.getByTestId('shown-once').count(), 0);
    assert.doesNotMatch(await page.content(), /sk_[A-Za-z0-9]{32}/, 'the key is not shown again');
    sourceId = (await dashboard.call('GET', '/api/sources')).data[0].id;
  });

  test("with its page open, the log shows Segment's library's messages as they arrive, coloured, with reasons", async () => {
    await page.getByRole('link', { name: 'Backend' }).click();
    await page.getByRole('heading', { name: 'Backend', level: 1 }).waitFor();
    await page.getByText(/^Nothing received yet. Messages show here/).waitFor();
    await page.evaluate('window.sameDocument = true');
    const errors = await sendWithSegment(writeKey, (analytics) => {
      analytics.group({
        userId: 'u_1',
        groupId: 'acme',
        traits: { name: 'Acme Inc.', email: 'ops@acme.example', plan: 'pro' },
      });
      analytics.track({ userId: 'u_1', event: 'Report Exported' });
      analytics.track({ userId: 'u_stranger', event: 'Report Exported' });
      analytics.page({ userId: 'u_1', name: 'Home' });
    });
    assert.deepEqual(errors, []);

    // The counters and the log are read side by side: wait for both.
    await page.locator('[data-testid="stat-received"]', { hasText: /^4$/ }).waitFor();
    await logEntries().nth(3).waitFor();
    assert.equal(await logEntries().count(), 4);
    // (The tests' tsconfig has no DOM types: what runs in the page is a string.)
    const rows = await page.evaluate(
      `[...document.querySelectorAll('[data-testid="log-entry"]')].map((li) => [li.className, li.querySelector('.mono').textContent])`,
    );
    assert.deepEqual(rows, [
      ['log-entry ignored', 'page'],
      ['log-entry refused', 'track'],
      ['log-entry applied', 'track'],
      ['log-entry applied', 'group'],
    ]);
    assert.match(await text(logEntries().nth(1)), /no_group: /, 'the refusal says why');
    assert.equal(
      await page.evaluate(
        `getComputedStyle(document.querySelectorAll('[data-testid="log-entry"]')[1]).borderLeftColor`,
      ),
      'rgb(207, 34, 46)',
      'a refused message is marked red',
    );
    assert.equal(await text(page.getByTestId('stat-applied')), '2');
    assert.equal(await text(page.getByTestId('stat-refused')), '1');
    assert.equal(await page.evaluate('window.sameDocument'), true, 'no reload on the way');
    assert.match(await text(page.getByTestId('log-live')), /^Live: read every 3 s/);
    await dashboard.shoot('sources-log', SIZES);
  });

  test("the customer's page says which source last touched it", async () => {
    await logEntries().nth(2).getByRole('link', { name: 'acme' }).click();
    await page.getByRole('heading', { name: 'Acme Inc.', level: 1 }).waitFor();
    const touch = page.getByTestId('source-touch');
    await touch.waitFor();
    assert.match(await text(touch), /^Last touched by source: Backend · \w+/);
    await page.getByText('Its latest source messages').click();
    assert.equal(await page.locator('.source-touch .log-entry').count(), 2, 'its group and its track');
    await dashboard.shoot('sources-customer', SIZES);
    await touch.getByRole('link', { name: 'Backend' }).click();
    await page.getByRole('heading', { name: 'Backend', level: 1 }).waitFor();
  });

  test('a disabled source refuses the library and records nothing; enabled again, it takes it', async () => {
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByText('Disabled: its tool’s messages are refused with 401.').waitFor();
    const refused = await sendWithSegment(writeKey, (a) =>
      a.track({ userId: 'u_1', event: 'Report Exported' }),
    );
    assert.equal(refused.length, 1, 'the library met the 401');
    assert.equal((await dashboard.call('GET', `/api/sources/${sourceId}`)).stats.received, 4);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    assert.deepEqual(
      await sendWithSegment(writeKey, (a) => a.track({ userId: 'u_1', event: 'Report Exported' })),
      [],
    );
    await page.locator('[data-testid="stat-received"]', { hasText: /^5$/ }).waitFor();
  });

  test('a webhook source: a mapping that does not parse is refused at its field; then connected, shown once, deleted', async () => {
    await nav('Sources').click();
    await page.getByRole('heading', { name: 'Connect a source' }).waitFor();
    await page.getByRole('radio', { name: /^Webhook/ }).check();
    await page.getByLabel('Name', { exact: true }).fill('Zendesk');
    const customerId = page.getByLabel('Customer id');
    assert.equal(await customerId.getAttribute('placeholder'), 'body.detail.organization_id');
    await customerId.fill('body.detail.organization_id');
    await page.getByLabel('Counts (optional)').fill("{'tickets': ");
    await page.getByRole('button', { name: 'Create source' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not created:' }).waitFor();
    assert.equal(await page.evaluate('document.activeElement.id'), 'src-mapping-counts');
    assert.equal(await page.getByLabel('Counts (optional)').getAttribute('aria-invalid'), 'true');
    await dashboard.shoot('sources-webhook-form', SIZES);
    await page.getByRole('radio', { name: /^An HMAC-SHA256 signature/ }).check();
    await page.getByLabel('Header', { exact: true }).fill('X-Hub-Signature-256');
    await dashboard.shoot('sources-webhook-signature', SIZES);
    await page.getByRole('radio', { name: /^A secret token in the URL/ }).check();

    await page
      .getByLabel('Counts (optional)')
      .fill("body.type = 'zen:event-type:ticket.created' ? {'tickets': 1}");
    await page.getByRole('button', { name: 'Create source' }).click();
    const shown = page.getByTestId('shown-once');
    await shown.getByRole('heading', { name: 'Connect Zendesk' }).waitFor();
    const url = await shown.getByLabel('Ingest URL').inputValue();
    assert.match(
      url,
      new RegExp(`^${dashboard.base}/ingest/webhook/src_\\w+/\\w+$`),
      'the URL with its token',
    );
    assert.match(await text(shown), /ingest URL, whose token authenticates, now .*you will not see it again/);
    await shown.getByRole('button', { name: 'I have saved it' }).click();
    await dashboard.shoot('sources-list', SIZES);

    await page.getByRole('link', { name: 'Zendesk' }).click();
    await page.getByRole('heading', { name: 'Zendesk', level: 1 }).waitFor();
    assert.match(
      await text(page.locator('section[aria-labelledby="connection-title"]')),
      /\/…, where … is the token/,
    );
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      return dialog.accept();
    });
    await page.getByRole('button', { name: 'Delete source' }).click();
    await page.getByRole('heading', { name: 'Sources', level: 1 }).waitFor();
    assert.match(asked, /^Delete the source “Zendesk”\?/);
    assert.deepEqual(
      (await dashboard.call('GET', '/api/sources')).data.map((s: { name: string }) => s.name),
      ['Backend'],
    );
  });

  test('a viewer and a read key read the sources and the log without a control to change them', async () => {
    const readOnly = async () => {
      await nav('Sources').click();
      await page.getByRole('link', { name: 'Backend' }).waitFor();
      assert.equal(await page.getByRole('heading', { name: 'Connect a source' }).count(), 0);
      assert.equal(await page.getByRole('checkbox').count(), 0, 'no enabled switch');
      assert.equal(await text(page.getByTestId(`source-${sourceId}`).locator('.badge').nth(1)), 'Enabled');
      await page.getByRole('link', { name: 'Backend' }).click();
      await page.locator('[data-testid="stat-received"]', { hasText: /^5$/ }).waitFor();
      await logEntries().nth(4).waitFor();
      assert.equal(await logEntries().count(), 5);
      assert.equal(await page.getByRole('button', { name: /Disable|Delete/ }).count(), 0);
    };
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.goto(viewerLink);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('The same again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByTestId('who').filter({ hasText: 'viewer@example.com' }).waitFor();
    await readOnly();
    await dashboard.shoot('sources-viewer', SIZES);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').fill(readKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Portfolio', level: 1 }).waitFor();
    await readOnly();
    assert.deepEqual(dashboard.pageErrors, []);
  });
});
