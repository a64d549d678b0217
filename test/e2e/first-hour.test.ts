// What a new user tripped on in the dashboard (issue 49), in Chromium against the real server: the
// navigation on one line at 1440 px, an import with refused rows said as a warning, the customer
// each webhook delivery is about, and a metric's newest point told apart from the one the score
// read. Each page is saved at 1440×900 and 390×844 in test-artifacts/ and checked with axe-core.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { tempDir } from '../helpers/app.ts';
import { TestReceiver } from '../helpers/receiver.ts';
import { ROOT, runCli, serverEnv } from '../helpers/server.ts';
import { type Dashboard, openDashboard, skipReason } from './browser.ts';

const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const PASSWORD = 'a long enough password';
const EMAIL = 'customer.success.lead@example.com';

const text = async (locator: Locator) => ((await locator.textContent()) ?? '').trim();

describe('the first hour in the dashboard', { skip: skipReason(), timeout: 180_000 }, () => {
  let dashboard: Dashboard;
  let page: Page;
  let receiver: TestReceiver;
  const dataDir = tempDir();
  const files = tempDir();

  /** The page at 1440×900 and 390×844, full length, saved, checked by axe, and no wider than the phone. */
  async function shoot(name: string): Promise<void> {
    for (const [size, viewport] of [
      ['1440', WIDE],
      ['390', PHONE],
    ] as const) {
      await page.setViewportSize(viewport);
      await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
      await page.screenshot({ path: join(ROOT, 'test-artifacts', `${name}-${size}.png`), fullPage: true });
      assert.deepEqual(await dashboard.accessibilityViolations(), [], `${name} at ${size} px`);
      const overflow = await page.evaluate<number>(
        'document.documentElement.scrollWidth - window.innerWidth',
      );
      assert.ok(overflow <= 0, `${name} is ${overflow}px wider than ${size} px`);
    }
    await page.setViewportSize(WIDE);
  }

  before(async () => {
    receiver = await TestReceiver.start();
    dashboard = await openDashboard({ VITALS_DATA_DIR: dataDir, VITALS_WEBHOOK_BACKOFF: '100ms' });
    page = dashboard.page;
    await page.setViewportSize(WIDE);
    const out = await runCli(
      ['users', 'create', EMAIL, '--role', 'admin', '--url', dashboard.base],
      serverEnv({ VITALS_DATA_DIR: dataDir }),
    );
    assert.equal(out.code, 0, out.stderr);
    await page.goto(out.stdout.trim());
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('The same again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByTestId('who').filter({ hasText: EMAIL }).waitFor();
  });

  after(async () => {
    await dashboard?.close();
    await receiver?.close();
    for (const dir of [dataDir, files]) rmSync(dir, { recursive: true, force: true });
  });

  test('at 1440 px the navigation, the person and Sign out share one line', async () => {
    await page.goto(`${dashboard.base}/`);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Audit log' }).waitFor();
    const tops = await nav
      .locator('li')
      .evaluateAll((items) => items.map((li) => Math.round(li.getBoundingClientRect().top)));
    assert.equal(
      tops.length,
      10,
      'every page of an admin (Sources and the Inbox among them), My book, and the API docs',
    );
    assert.deepEqual([...new Set(tops)], [tops[0]], `the links' tops: ${tops.join(', ')}`);
    const row = async (locator: Locator) => {
      const box = await locator.boundingBox();
      assert.ok(box);
      return box.y + box.height / 2;
    };
    const navRow = await row(nav);
    for (const other of [page.getByTestId('who'), page.getByRole('button', { name: 'Sign out' })]) {
      assert.ok(Math.abs((await row(other)) - navRow) < 8, `${await text(other)} is on the links' line`);
    }
    await shoot('first-hour-nav');
  });

  test('an import with a refused row says so as a warning, with the count; a clean one as done', async () => {
    await page.goto(`${dashboard.base}/`);
    const pick = async (name: string, lines: string[]) => {
      writeFileSync(join(files, name), `${lines.join('\n')}\n`);
      await page.getByLabel('CSV file', { exact: true }).setInputFiles(join(files, name));
      await page.getByRole('button', { name: /^Import / }).click();
      return page.getByRole('status').locator('.message').filter({ hasText: 'Import done' });
    };
    const refused = await pick('with-refused.csv', [
      'customer_id,name,email',
      'fh_1,First,first@example.com',
      'fh_2,Second,not-an-email',
      'fh_3,Third,third@example.com',
    ]);
    await refused.waitFor();
    assert.equal(
      await text(refused),
      'Import done: 2 created, 0 updated. 1 row was refused and not stored: see Refused rows below.',
    );
    assert.equal(await refused.getAttribute('class'), 'message warning');
    await page.getByRole('table', { name: 'Refused rows' }).waitFor();
    await shoot('first-hour-import-refused');
    assert.equal((await dashboard.request('GET', '/api/customers/fh_2')).status, 404);
    await dashboard.call('GET', '/api/customers/fh_3');

    const clean = await pick('clean.csv', ['customer_id,name,email', 'fh_4,Fourth,fourth@example.com']);
    await clean.waitFor();
    assert.equal(await text(clean), 'Import done: 1 created, 0 updated, 0 refused.');
    assert.equal(await clean.getAttribute('class'), 'message ok');
  });

  test('the delivery log names the customer each delivery is about, linked to its page', async () => {
    const webhook = await dashboard.call('POST', '/api/webhooks', {
      url: `${receiver.url}/hooks`,
      events: ['customer.created', 'customer.health_score.updated', 'customer.deleted'],
    });
    await dashboard.call('POST', '/api/customers', {
      customer_id: 'globex',
      name: 'Globex Corporation',
      email: 'ops@globex.example',
    });
    await dashboard.call('POST', '/api/customers/globex/health-score', { factors: { usage: 0.7 } });
    await dashboard.call('POST', '/api/customers', {
      customer_id: 'gone',
      name: 'Gone Ltd',
      email: 'ops@gone.example',
    });
    await dashboard.call('DELETE', '/api/customers/gone');
    await dashboard.call('POST', `/api/webhooks/${webhook.id}/test`);
    await receiver.waitFor(5);

    await page.goto(`${dashboard.base}/webhooks/${webhook.id}`);
    const deliveries = page.locator('li.delivery');
    await deliveries.nth(4).getByText('succeeded').waitFor();
    // Each delivery: its event type, who it is about, and where that links.
    const rows = [];
    for (const row of await deliveries.all()) {
      const subject = row.getByTestId('delivery-customer');
      await subject.waitFor();
      const link = subject.getByRole('link');
      rows.push([
        await text(row.locator('.delivery-head > .mono')),
        await text(subject),
        (await link.count()) === 0 ? null : await link.getAttribute('href'),
      ]);
    }
    assert.deepEqual(rows.sort(), [
      // A customer's own events carry its name; a score's event, the id alone.
      ['customer.created', 'about Globex Corporation (globex)', '/customers/globex'],
      ['customer.created', 'about Gone Ltd (gone)', '/customers/gone'],
      ['customer.deleted', 'about gone (deleted)', null],
      ['customer.health_score.updated', 'about globex', '/customers/globex'],
      ['webhook.test', 'a test event, about no customer', null],
    ]);
    await shoot('first-hour-deliveries');
  });

  test("a metric's newest point is the one the score read, or is said to be dated after it", async () => {
    await dashboard.call('PUT', '/api/settings/health-score/factors/billing', {
      metric: 'overdue',
      aggregate: 'last',
      scale: { type: 'linear', from: 60, to: 0 },
    });
    await dashboard.call('POST', '/api/customers', {
      customer_id: 'initech',
      name: 'Initech',
      email: 'ops@initech.example',
    });
    const hour = 3_600_000;
    await dashboard.call('POST', '/api/customers/initech/metrics', {
      values: { overdue: 39 },
      at: new Date(Date.now() - hour).toISOString(),
    });
    // Within the 5 minutes ahead a write may be dated: stored, and read from its time on.
    const ahead = new Date(Date.now() + 4 * 60_000).toISOString();
    await dashboard.call('POST', '/api/customers/initech/metrics', { values: { overdue: 40 }, at: ahead });
    const explained = await dashboard.call('GET', '/api/customers/initech/health-score/explanation');
    assert.equal(explained.factors[0].metric.value, 39, 'the score read 39');

    await page.goto(`${dashboard.base}/customers/initech`);
    const source = page.getByTestId('source-billing');
    const note = source.locator('.note');
    await note.waitFor();
    assert.match(await text(note), /^Newest point as of this score: 39 on \w+ \d+/);
    assert.match(await text(note), /1 point dated after this score, read from its time on: 40 at /);
    const why = page.getByTestId('why-panel');
    await why.getByText(/overdue, last value = 39/).waitFor();
    await shoot('first-hour-customer-metric');
  });
});
