// The portfolio's morning panels in Chromium (docs/dashboard.md, "Portfolio"): the segment picker
// filters every panel, the trend chart redraws over 30/90/365 days, the week's biggest drops are
// listed, and the drop alert rule is set on the settings page. Each view is checked with axe-core
// at laptop and phone widths (Dashboard.shoot). What was stored is checked through the API.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { type Dashboard, openDashboard, skipReason } from './browser.ts';

const text = async (locator: Locator) => (await locator.textContent()) ?? '';

describe('the portfolio panels in Chromium', { skip: skipReason(), timeout: 120_000 }, () => {
  let dashboard: Dashboard;
  let page: Page;

  before(async () => {
    dashboard = await openDashboard();
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

  test('the trend chart shows 30 days, then 90 and 365 when chosen', async () => {
    const chart = page.locator('svg.trend-chart');
    await chart.waitFor();
    assert.equal(await chart.getAttribute('data-days'), '30');
    assert.match(
      (await chart.getAttribute('aria-label')) ?? '',
      /Critical 0 → \d+, At risk 0 → \d+, Healthy 0 → \d+/,
    );
    for (const days of ['90', '365']) {
      await page.getByLabel('Over the last').selectOption(days);
      await page.locator(`svg.trend-chart[data-days="${days}"]`).waitFor();
    }
    assert.equal(await page.locator('svg.trend-chart path.area').count(), 3);
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
    assert.match((await page.locator('svg.trend-chart').getAttribute('aria-label')) ?? '', /Critical 0 → 2/);
    await dashboard.shoot('portfolio-segment');
    await page.getByRole('button', { name: 'Show everyone' }).click();
    await total.filter({ hasText: /^12$/ }).waitFor();
  });

  test('the drop alert rule is set on the settings page, and refused when out of range', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Weights, thresholds & alerts' })
      .click();
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
});
