// The portfolio's morning panels in Chromium (docs/dashboard.md, "Portfolio"): the segment picker
// filters every panel, the trend chart redraws over 30/90/365 days, the week's biggest drops are
// listed, and the drop alert rule is set on the settings page. Each view is checked with axe-core
// at laptop and phone widths (Dashboard.shoot). What was stored is checked through the API.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { scoreFactors } from '../../src/domain/health.ts';
import { DAY_MS } from '../../src/domain/portfolio.ts';
import { sqlitePath } from '../../src/store/open.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { tempDir } from '../helpers/app.ts';
import { transaction } from '../helpers/transaction.ts';
import { type Dashboard, openDashboard, skipReason } from './browser.ts';

const text = async (locator: Locator) => (await locator.textContent()) ?? '';

describe('the portfolio panels in Chromium', { skip: skipReason(), timeout: 120_000 }, () => {
  let dashboard: Dashboard;
  let page: Page;
  let historyStart: string;

  before(async () => {
    // Four customers scored 10 days ago, written straight into the data directory (the API stamps
    // every write with now): the trend's history starts on that day.
    const dataDir = tempDir();
    const store = new SqliteStore({ path: sqlitePath(dataDir), synchronous: 'normal' });
    await store.migrate();
    const account = await store.ensureAccount('default', Date.now());
    const settings = await store.getSettings(account.id);
    const then = Date.now() - 10 * DAY_MS;
    await transaction(store, async (tx) => {
      for (let i = 0; i < 4; i++) {
        const id = `early_${i}`;
        await tx.insertCustomer(account.id, {
          id,
          name: `Early ${i}`,
          email: `early${i}@example.com`,
          metadata: { plan: 'legacy' },
          createdAt: then,
          updatedAt: then,
        });
        const scored = scoreFactors(id, null, { usage: 0.2 + i * 0.2 }, settings, then);
        await tx.writeScores(account.id, [scored.record], 'factors_updated');
      }
    });
    await store.close();
    historyStart = new Date(then).toISOString().slice(0, 10);
    dashboard = await openDashboard({ VITALS_DATA_DIR: dataDir });
    page = dashboard.page;
    const { call } = dashboard;
    const plans = ['enterprise', 'pro', 'pro', 'starter'];
    const customers = Array.from({ length: 12 }, (_, i) => ({
      customer_id: `cus_${i}`,
      name: `Company ${i}`,
      email: `c${i}@example.com`,
      metadata: { plan: plans[i % plans.length] },
    }));
    await call('POST', '/api/customers/batch', { customers });
    await call('POST', '/api/health-scores/batch', {
      scores: customers.map((c, i) => ({ customer_id: c.customer_id, factors: { usage: 0.3 + i * 0.05 } })),
    });
    // This week's falls: an enterprise customer off a cliff, a pro one a little.
    await call('POST', '/api/customers/cus_8/health-score', { factors: { usage: 0.1 } });
    await call('POST', '/api/customers/cus_9/health-score', { factors: { usage: 0.6 } });
    await dashboard.signIn();
  });

  after(async () => {
    await dashboard?.close();
  });

  test('the trend chart starts where the history does, and says so, over 30, 90 and 365 days', async () => {
    const chart = page.locator('svg.trend-chart');
    await chart.waitFor();
    // Ten days ago to today: not 19 empty days of zero customers before them.
    assert.equal(await chart.getAttribute('data-days'), '11');
    assert.match(
      (await chart.getAttribute('aria-label')) ?? '',
      new RegExp(
        `^Customers per status band at the end of each day, ${historyStart} to .*Critical 1 → \\d+, At risk 2 → \\d+, Healthy 1 → \\d+`,
      ),
    );
    const start = page.getByTestId('history-start');
    const date = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(
      new Date(`${historyStart}T00:00:00Z`),
    );
    assert.equal(await start.textContent(), `History starts on ${date}: the chart begins there.`);
    for (const days of ['90', '365']) {
      await page.getByLabel('Over the last').selectOption(days);
      await page.locator('svg.trend-chart[data-days="11"]').waitFor();
      await start.waitFor();
    }
    assert.equal(await page.locator('svg.trend-chart path.area').count(), 3);
    await dashboard.shoot('portfolio-trend');
    await page.getByLabel('Over the last').selectOption('30');
  });

  test("the week's biggest drops, biggest first, each linking to its customer", async () => {
    const rows = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: 'Change' }) });
    const first = rows.locator('tbody tr').first();
    await first.waitFor();
    assert.match(await text(first), /Company 8[\s\S]*-0\.60[\s\S]*0\.100[\s\S]*0\.700/);
    assert.match(await text(rows.locator('tbody tr').nth(1)), /Company 9[\s\S]*-0\.15/);
    assert.equal(await rows.locator('tbody tr').count(), 2);
    await dashboard.shoot('portfolio-panels');
  });

  test('a segment, picked by key and value, filters every panel', async () => {
    await page.getByLabel('Metadata key').fill('plan');
    await page.getByRole('button', { name: 'Show values' }).click();
    const value = page.getByLabel('Show only customers whose plan is');
    await value.waitFor();
    // Worst average first: enterprise (cus_0, 4, 8) has the lowest.
    assert.match(await text(value.locator('option').nth(1)), /^enterprise: 3 customers, average /);
    await value.selectOption('enterprise');
    await page
      .getByRole('status')
      .filter({ hasText: 'Every panel shows the customers whose plan is enterprise' })
      .waitFor();
    // The first card counts the customers with a score: the segment's 3.
    const total = page.locator('.cards .stat').first().locator('.value');
    await total.filter({ hasText: /^3$/ }).waitFor();
    const drops = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: 'Change' }) });
    await drops.locator('tbody tr', { hasText: 'Company 9' }).waitFor({ state: 'detached' });
    assert.equal(await drops.locator('tbody tr').count(), 1);
    assert.match(await text(drops.locator('tbody tr')), /Company 8/);
    const list = page.locator('table.scores:not(.drops) tbody tr');
    await page.getByLabel('Show', { exact: true }).selectOption('all');
    await list
      .filter({ hasText: /Company (1|2|3|5|6|7|9|10|11)\b/ })
      .first()
      .waitFor({ state: 'detached' });
    await list.filter({ hasText: 'Company 4' }).waitFor();
    assert.deepEqual(
      (await list.allTextContents()).map((t) => /Company \d+/.exec(t)?.[0]),
      ['Company 8', 'Company 0', 'Company 4'],
    );
    // The segment's history is today alone: told in words, not drawn as a line.
    await page
      .getByTestId('history-start')
      .filter({
        hasText:
          /^History starts today \(.+\): 3 customers with a score, 2 critical, 1 at risk, 0 healthy\. The chart fills in day by day\.$/,
      })
      .waitFor();
    assert.equal(await page.locator('svg.trend-chart').count(), 0);
    await page.locator('svg.histogram[data-total="3"]').waitFor();
    await dashboard.shoot('portfolio-segment');
    await page.getByRole('button', { name: 'Show everyone' }).click();
    await total.filter({ hasText: /^16$/ }).waitFor();
  });

  test('the drop alert rule is set on the settings page, and refused when out of range', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Scoring' }).click();
    await page.getByRole('heading', { name: 'Drop alerts' }).waitFor();
    const save = page.getByRole('button', { name: 'Save alert rule' });
    await page.getByLabel('Alert on drops').check();
    await page.getByLabel('Within (days)').fill('91');
    await page.getByText('The window must be a whole number of days from 1 to 90.').waitFor();
    assert.equal(await save.isDisabled(), true);
    await page.getByLabel('Within (days)').fill('14');
    await page.getByLabel('A fall of at least').fill('0.3');
    await save.click();
    await page.getByText('Drop alerts are on.').waitFor();
    assert.deepEqual((await dashboard.call('GET', '/api/settings/health-score/alerts')).drop, {
      delta: 0.3,
      days: 14,
    });
    await dashboard.shoot('settings-alerts');
    await page.getByLabel('Alert on drops').uncheck();
    await save.click();
    await page.getByText('Drop alerts are off.').waitFor();
    assert.equal((await dashboard.call('GET', '/api/settings/health-score/alerts')).drop, null);
    assert.deepEqual(dashboard.pageErrors, []);
  });

  test('the score distribution counts every score, the healthiest too, however many there are', async () => {
    // More than the 5,000 lowest the chart once paged through, all of them healthy.
    const many = Array.from({ length: 6000 }, (_, i) => ({
      customer_id: `bulk_${i}`,
      name: `Bulk ${i}`,
      email: `bulk${i}@example.com`,
    }));
    for (let i = 0; i < many.length; i += 1000) {
      const chunk = many.slice(i, i + 1000);
      await dashboard.call('POST', '/api/customers/batch', { customers: chunk });
      await dashboard.call('POST', '/api/health-scores/batch', {
        scores: chunk.map((c, j) => ({
          customer_id: c.customer_id,
          factors: { usage: 0.9 + (j % 10) / 100 },
        })),
      });
    }
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Portfolio' }).click();
    const chart = page.locator('svg.histogram[data-total="6016"]');
    await chart.waitFor();
    assert.match((await chart.getAttribute('aria-label')) ?? '', /all 6,016 health scores in 20 bins/);
    // 0.90–0.94 in the 0.90 bin, 0.95–0.99 in the 0.95 bin: 3,000 each, beside the 16 from before.
    const titles = await chart.locator('rect.bar title').allTextContents();
    assert.ok(titles.includes('0.90–0.95: 3,000 customers'), titles.join('; '));
    assert.ok(titles.includes('0.95–1.00: 3,000 customers'), titles.join('; '));
    await page.getByText('All 6,016 scores, in bins of 0.05').waitFor();
    await dashboard.shoot('portfolio-distribution');
  });
});
