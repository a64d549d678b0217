// The portfolio page's CSV import in Chromium (docs/dashboard.md, "Importing a CSV"): the preview
// reads a file by the CLI's rules, the import sends the rows that can be read, and every refused
// row is listed with its line. What was stored is checked through the API.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { tempDir } from '../helpers/app.ts';
import { type Dashboard, openDashboard, skipReason } from './browser.ts';

const text = async (locator: Locator) => (await locator.textContent()) ?? '';

describe('importing a CSV file on the portfolio page', { skip: skipReason(), timeout: 120_000 }, () => {
  let dashboard: Dashboard;
  let page: Page;
  const files = tempDir();

  /** Writes `content` to a file of that name and picks it in the import's file input. */
  async function pick(name: string, content: string | Buffer): Promise<void> {
    const path = join(files, name);
    writeFileSync(path, content);
    await page.getByLabel('CSV file', { exact: true }).setInputFiles(path);
  }

  const importButton = () => page.getByRole('button', { name: /^Import / });

  before(async () => {
    dashboard = await openDashboard();
    page = dashboard.page;
    await dashboard.signIn();
  });

  after(async () => {
    await dashboard?.close();
    rmSync(files, { recursive: true, force: true });
  });

  test('a customers file is previewed as it will be read: each column → its field, then the first rows', async () => {
    await pick(
      'customers.csv',
      [
        'customer_id,name,email,metadata.plan,created_at',
        'imp_01,Alpha,alpha@example.com,pro,2024-01-01T00:00:00Z',
        'imp_02,Beta,not-an-email,pro,',
        'imp_03,Gamma', // ragged: two cells under five columns
        'imp_04,Delta,delta@example.com,enterprise,',
        'imp_05,Epsilon,epsilon@example.com,,',
        'imp_06,Zeta,zeta@example.com,pro,',
        'imp_07,Eta,eta@example.com,pro,',
        '',
      ].join('\n'),
    );
    const preview = page.getByRole('table', { name: /The first 5 rows of customers\.csv/ });
    await preview.waitFor();
    assert.equal(
      await page.getByLabel('The file holds').inputValue(),
      'customers',
      'guessed from the header',
    );
    const heads = await preview.locator('thead th').allTextContents();
    assert.deepEqual(heads, [
      'Line',
      'customer_id → customer_id',
      'name → name',
      'email → email',
      'metadata.plan → metadata.plan',
      'created_at → ignored',
    ]);
    const rows = preview.locator('tbody tr');
    assert.equal(await rows.count(), 5);
    assert.deepEqual(await rows.first().locator('th, td').allTextContents(), [
      '2',
      'imp_01',
      'Alpha',
      'alpha@example.com',
      'pro',
      '2024-01-01T00:00:00Z',
    ]);
    // The ragged row is not a row of the preview: line 4 is skipped.
    assert.deepEqual(await rows.locator('th').allTextContents(), ['2', '3', '5', '6', '7']);
    await page.getByText('6 rows to import. 1 cannot be read and will not be sent').waitFor();
    await dashboard.shoot('import-preview');
  });

  test('importing sends the rows that can be read and lists every refused row with its line', async () => {
    await importButton().click();
    const summary = page.getByRole('status').filter({ hasText: 'Import done' });
    await summary.waitFor();
    assert.equal(
      await text(summary),
      'Import done: 5 created, 0 updated. 2 rows were refused and not stored: see Refused rows below.',
    );
    const progress = page.getByRole('progressbar', { name: 'Rows sent' });
    assert.equal(await progress.getAttribute('value'), '6');
    assert.equal(await progress.getAttribute('max'), '6');

    const refused = page.getByRole('table', { name: 'Refused rows' });
    const rows = refused.locator('tbody tr');
    assert.equal(await rows.count(), 2);
    const [email, ragged] = [await text(rows.nth(0)), await text(rows.nth(1))];
    assert.match(email, /^3\s*imp_02\s*.*email.*param: email · parameter_invalid$/);
    assert.match(ragged, /^4\s*—\s*The row does not have one cell per header column/);
    await dashboard.shoot('import-results');

    const stored = await dashboard.call('GET', '/api/customers/imp_01');
    assert.equal(stored.name, 'Alpha');
    assert.deepEqual(stored.metadata, { plan: 'pro' });
    assert.notEqual(stored.created_at, '2024-01-01T00:00:00Z', 'created_at is the server’s to set');
    for (const id of ['imp_04', 'imp_05', 'imp_06', 'imp_07'])
      await dashboard.call('GET', `/api/customers/${id}`);
    assert.equal((await dashboard.request('GET', '/api/customers/imp_02')).status, 404);
    assert.equal((await dashboard.request('GET', '/api/customers/imp_03')).status, 404);
  });

  test('a header with a column of neither kind names it, says which columns there are, and offers no import', async () => {
    await pick('crm.csv', 'customer_id,name,email,Plan Tier\nimp_08,Theta,theta@example.com,gold\n');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(
      await text(alert),
      /column 4 \('Plan Tier'\) is not a customers column; the columns are customer_id, name, email, owner, arr, renewal_at, lifecycle, parent_id, metadata/,
    );
    assert.equal(await importButton().count(), 0);
    assert.equal(await page.getByRole('table', { name: /crm\.csv/ }).count(), 0);
  });

  test('a file that is not UTF-8 says so', async () => {
    await pick(
      'latin1.csv',
      Buffer.from('customer_id,name,email\nimp_09,Caf\xe9,cafe@example.com\n', 'latin1'),
    );
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await text(alert), /latin1\.csv cannot be imported\.\s*The file is not UTF-8 text/);
    assert.equal(await importButton().count(), 0);
  });

  test('a scores file is imported as health scores, and the portfolio shows them', async () => {
    const withScore = page.locator('.cards .stat').first();
    assert.match(await text(withScore), /Customers with a score\s*0\s*ARR 0$/);
    await pick(
      'scores.csv',
      'customer_id,usage,support,health_score\nimp_01,0.9,0.8,0.1\nimp_04,0.1,0.2,\nnobody,0.5,0.5,\n',
    );
    const preview = page.getByRole('table', { name: /of scores\.csv/ });
    await preview.waitFor();
    assert.equal(await page.getByLabel('The file holds').inputValue(), 'scores');
    assert.deepEqual((await preview.locator('thead th').allTextContents()).slice(1), [
      'customer_id → customer_id',
      'usage → factor usage',
      'support → factor support',
      'health_score → ignored',
    ]);
    await importButton().click();
    const summary = page.getByRole('status').filter({ hasText: 'Import done' });
    await summary.waitFor();
    assert.equal(
      await text(summary),
      'Import done: 2 scored. 1 row was refused and not stored: see Refused rows below.',
    );
    assert.match(
      await text(page.getByRole('table', { name: 'Refused rows' }).locator('tbody tr')),
      /^4\s*nobody/,
    );
    // The panels load again: the new scores are counted and listed.
    await page
      .locator('.cards .stat')
      .first()
      .filter({ hasText: /Customers with a score\s*2\s*ARR / })
      .waitFor();
    await page.locator('table.scores:not(.drops)').getByRole('link', { name: 'Delta' }).waitFor();
    const score = await dashboard.call('GET', '/api/customers/imp_04/health-score');
    assert.deepEqual(score.factors, { usage: 0.1, support: 0.2 });
  });

  test('a metrics file is imported as metric points: each row its values at its instant', async () => {
    const at = new Date(Date.now() - 2 * 86_400_000).toISOString();
    await pick(
      'metrics.csv',
      [
        'customer_id,at,logins,tickets',
        `imp_01,${at},12,3`,
        'imp_04,,7,',
        `nobody,${at},1,1`,
        `imp_05,${at},lots,2`,
        '',
      ].join('\n'),
    );
    const preview = page.getByRole('table', { name: /of metrics\.csv/ });
    await preview.waitFor();
    assert.equal(
      await page.getByLabel('The file holds').inputValue(),
      'metrics',
      'guessed from the at column',
    );
    assert.deepEqual((await preview.locator('thead th').allTextContents()).slice(1), [
      'customer_id → customer_id',
      'at → at',
      'logins → metric logins',
      'tickets → metric tickets',
    ]);
    await importButton().click();
    const summary = page.getByRole('status').filter({ hasText: 'Import done' });
    await summary.waitFor();
    assert.equal(
      await text(summary),
      'Import done: 2 rows of metrics recorded. 2 rows were refused and not stored: see Refused rows below.',
    );
    const refused = page.getByRole('table', { name: 'Refused rows' }).locator('tbody tr');
    assert.equal(await refused.count(), 2);
    assert.match(await text(refused.nth(0)), /^4\s*nobody/);
    assert.match(await text(refused.nth(1)), /^5\s*imp_05.*param: values\.logins/);
    await dashboard.shoot('import-metrics');

    const points = await dashboard.call('GET', '/api/customers/imp_01/metrics');
    assert.deepEqual(
      points.data.map((p: { metric: string; value: number; at: string }) => [p.metric, p.value, p.at]),
      [
        ['logins', 12, at],
        ['tickets', 3, at],
      ],
    );
    const now = await dashboard.call('GET', '/api/customers/imp_04/metrics');
    assert.deepEqual(
      now.data.map((p: { metric: string; value: number }) => [p.metric, p.value]),
      [['logins', 7]],
      'an empty cell is no value, an empty at is now',
    );
    assert.deepEqual((await dashboard.call('GET', '/api/customers/imp_05/metrics')).data, []);
  });

  test('the server logged no errors and the page threw none', () => {
    assert.doesNotMatch(dashboard.serverOutput(), /"level":50/);
    assert.deepEqual(dashboard.pageErrors, []);
  });
});
