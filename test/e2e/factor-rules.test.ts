// Factor rules in Chromium (docs/dashboard.md; docs/scoring.md, "Factors from metrics"): the
// settings page's rule editor draws the scale as it is typed, shows the server's preview of what
// saving would change, saves and lists the rule, and shows the server's refusals next to the field
// its `param` names; the customer page shows a derived factor's metric beside it. Metric points
// are seeded through the API; what was stored is checked through the API. Every view is saved as
// a screenshot and checked with axe-core at laptop and phone widths (Dashboard.shoot).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { DAY_MS } from '../../src/domain/portfolio.ts';
import { type Dashboard, openDashboard, skipReason } from './browser.ts';

const text = async (locator: Locator) => (await locator.textContent()) ?? '';
const RULES = '/api/settings/health-score/factors';
const daysAgo = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString();

describe('factor rules in Chromium', { skip: skipReason(), timeout: 120_000 }, () => {
  let dashboard: Dashboard;
  let page: Page;
  let call: Dashboard['call'];

  before(async () => {
    dashboard = await openDashboard();
    ({ page, call } = dashboard);
    const customers = [
      { customer_id: 'globex', name: 'Globex Corporation', email: 'ops@globex.example' },
      { customer_id: 'acme', name: 'Acme', email: 'ops@acme.example' },
      { customer_id: 'initech', name: 'Initech', email: 'ops@initech.example' },
      { customer_id: 'hooli', name: 'Hooli', email: 'ops@hooli.example' },
    ];
    await call('POST', '/api/customers/batch', { customers });
    await call('POST', '/api/health-scores/batch', {
      scores: customers.map((c) => ({ customer_id: c.customer_id, factors: { usage: 0.9, support: 0.5 } })),
    });
    // Globex logged in 3, 5 and 4 times in the last month and 9 times six weeks ago: a sum of 12
    // over 30 days. Acme logs in a lot; Hooli once; Initech never.
    const logins: [string, number, number][] = [
      ['globex', 42, 9],
      ['globex', 16, 4],
      ['globex', 9, 5],
      ['globex', 2, 3],
      ['acme', 20, 14],
      ['acme', 3, 11],
      ['hooli', 5, 1],
    ];
    for (const [id, ago, value] of logins) {
      await call('POST', `/api/customers/${id}/metrics`, { values: { logins: value }, at: daysAgo(ago) });
    }
  });

  after(async () => {
    await dashboard?.close();
  });

  test('a rule typed into the editor draws its curve and previews what saving would change; saved, it is listed', async () => {
    await dashboard.signIn();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Scoring' }).click();
    await page.getByRole('heading', { name: 'Factor rules' }).waitFor();
    await page.getByText('No factor rules yet').waitFor();

    await page.getByLabel('Factor', { exact: true }).fill('usage');
    // A misspelt metric is called out with the names the account has (GET /api/metrics/names),
    // which the field also offers as it is typed.
    const metric = page.getByLabel('Metric', { exact: true });
    assert.equal(await metric.getAttribute('list'), 'rule-metric-names');
    const options = page.locator('#rule-metric-names option');
    assert.equal(await options.count(), 1);
    assert.equal(await options.first().getAttribute('value'), 'logins');
    await metric.fill('login');
    const warning = page.getByTestId('rule-metric-warning');
    await warning.waitFor();
    assert.equal(
      (await text(warning)).replace(/\s+/g, ' ').trim(),
      'No customer has a metric named login yet: check the spelling; known metrics: logins.',
    );
    assert.match((await metric.getAttribute('aria-describedby')) ?? '', /rule-metric-warning/);
    await dashboard.shoot('factor-rule-metric-warning');
    await metric.fill('logins');
    await warning.waitFor({ state: 'detached' });
    await page.getByLabel('Aggregate').selectOption('sum');
    await page.getByLabel('Window (days)').fill('30');
    await page.getByLabel('From (scores 0)').fill('0');
    // Until "to" is typed there is no ramp to draw.
    await page.getByText('Enter from and to to see the curve.').waitFor();
    await page.getByLabel('To (scores 1)').fill('20');
    const curve = page.locator('svg.curve-chart[data-scale="linear"]');
    await curve.waitFor();
    assert.match((await curve.getAttribute('aria-label')) ?? '', /logins: 0 at 0, 1 at 20/);
    // Flat at 0 left of from, the ramp, flat at 1 right of to: four corners, from and to marked.
    assert.equal(await curve.getAttribute('data-corners'), '4');
    assert.deepEqual(await curve.locator('.scale-end text').allTextContents(), ['from 0', 'to 20']);

    // The preview is the server's: the same numbers as the route answers for this rule.
    const body = {
      metric: 'logins',
      aggregate: 'sum',
      window_days: 30,
      scale: { type: 'linear', from: 0, to: 20 },
    };
    const expected = await call('POST', `${RULES}/usage/preview`, body);
    assert.ok(expected.scores_changed >= 1 && expected.band_changes >= 1, JSON.stringify(expected));
    const preview = page.getByTestId('rule-preview');
    await preview.waitFor();
    assert.equal(await text(page.getByTestId('rule-scores-changed')), String(expected.scores_changed));
    assert.equal(await text(page.getByTestId('rule-band-changes')), String(expected.band_changes));
    assert.match(await text(preview), /Saving would change \d+ scores?; \d+ customers? would move band/i);
    const withRule = await preview.locator('tbody td:nth-child(3)').allTextContents();
    assert.deepEqual(withRule.map(Number), [
      expected.bands.critical,
      expected.bands.at_risk,
      expected.bands.healthy,
    ]);
    assert.deepEqual((await call('GET', RULES)).data, [], 'a preview saves nothing');
    await dashboard.shoot('factor-rule-editor');

    // Steps draw a staircase as they are typed; back to linear, from and to are as they were.
    await page.getByLabel('Steps').check();
    await page.getByLabel('Step 1 from value').fill('1');
    await page.getByLabel('Step 1 score').fill('0.5');
    await page.getByRole('button', { name: 'Add step' }).click();
    await page.getByLabel('Step 2 from value').fill('10');
    await page.getByLabel('Step 2 score').fill('1');
    const stairs = page.locator('svg.curve-chart[data-scale="steps"]');
    await stairs.waitFor();
    assert.equal(await stairs.locator('circle.marker').count(), 2);
    assert.equal(await stairs.getAttribute('data-corners'), '6');
    await dashboard.shoot('factor-rule-steps');
    await page.getByLabel('Linear ramp').check();
    await curve.waitFor();
    await page.getByTestId('rule-preview').waitFor();
    assert.equal(await text(page.getByTestId('rule-scores-changed')), String(expected.scores_changed));

    await page.getByRole('button', { name: 'Save rule' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `The rule of usage is saved. ${expected.scores_changed} score` })
      .waitFor();
    const row = page.getByRole('row', { name: /^usage/ });
    assert.match(await text(row), /usage\s*logins\s*sum over 30 days\s*linear: 0 at 0, 1 at 20\s*none/);
    const stored = await call('GET', RULES);
    assert.equal(stored.data.length, 1);
    assert.deepEqual(
      { ...stored.data[0], updated_at: undefined },
      { factor: 'usage', ...body, max_age_days: null, gate: null, updated_at: undefined },
    );
    // The form is ready for another rule.
    assert.equal(await page.getByLabel('Factor', { exact: true }).inputValue(), '');
  });

  test("a refused rule shows the server's message next to the field it names, and nothing is saved", async () => {
    await page.getByLabel('Factor', { exact: true }).fill('support');
    await page.getByLabel('Metric', { exact: true }).fill('tickets');
    await page.getByLabel('Aggregate').selectOption('last');
    await page.getByLabel('From (scores 0)').fill('5');
    await page.getByLabel('To (scores 1)').fill('5');
    await page.getByText('From and to are the same value').waitFor();

    // The preview's refusal, by the "to" field, as the API words it.
    const to = page.getByLabel('To (scores 1)');
    const toError = page.locator('#rule-to-error');
    await toError.waitFor();
    assert.match(await text(toError), /'scale\.to' must differ from 'scale\.from'/);
    assert.equal(await to.getAttribute('aria-invalid'), 'true');
    assert.equal(await to.getAttribute('aria-describedby'), 'rule-to-error');
    await page.getByText('No preview: the server refused the marked field.').waitFor();

    // Saving anyway: PUT refuses the same way, the message stays by the field, focus goes to it.
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not saved' }).waitFor();
    assert.match(await text(toError), /'scale\.to' must differ from 'scale\.from'/);
    assert.equal(await page.evaluate('document.activeElement.id'), 'rule-to');
    assert.equal(
      await page.getByRole('alert').filter({ hasText: 'No preview' }).count(),
      0,
      'said once, by the field',
    );
    await dashboard.shoot('factor-rule-refused');

    // Another field, another param: a window past a year is refused by the window field.
    await to.fill('0');
    await page.getByLabel('Window (days)').fill('400');
    const windowError = page.locator('#rule-window-days-error');
    await windowError.waitFor();
    assert.match(await text(windowError), /'window_days' must be <= 365/);
    assert.equal(await toError.count(), 0, 'the fixed field is clear');

    assert.deepEqual(
      (await call('GET', RULES)).data.map((r: { factor: string }) => r.factor),
      ['usage'],
      'nothing was saved',
    );
    assert.equal((await dashboard.request('GET', `${RULES}/support`)).status, 404);
    await page.getByRole('button', { name: 'Clear' }).click();
    assert.equal(await page.getByLabel('Factor', { exact: true }).inputValue(), '');
  });

  test("a customer's page shows the points of a derived factor's metric beside it", async () => {
    await page.goto(`${dashboard.base}/customers/globex`);
    await page.getByRole('heading', { name: 'Globex Corporation', level: 1 }).waitFor();
    // usage = 12 logins / 20 = 0.6, support 0.5 posted: the plain mean, 0.55.
    assert.equal(await text(page.getByTestId('current-score')), '0.550');
    const factors = page.locator('table.factors');
    assert.match(await text(factors.getByRole('row', { name: /^usage/ })), /usage\s*derived[\s\S]*0\.600/);
    assert.match(await text(factors.getByRole('row', { name: /^support/ })), /support\s*posted[\s\S]*0\.500/);
    const source = page.getByTestId('source-usage');
    assert.match(await text(source), /from logins \(sum over 30 days\)/);
    const spark = source.locator('svg.sparkline[data-points="4"]');
    await spark.waitFor();
    assert.equal(await spark.locator('circle.dot').count(), 4);
    assert.match(
      (await spark.getAttribute('aria-label')) ?? '',
      /logins: 4 points .* between 3 and 9; the newest as of this score 3\./,
    );
    assert.match(await text(source), /Newest point as of this score: 3 on/);
    assert.equal(await page.getByTestId('source-support').count(), 0, 'a posted factor has no metric');
    await dashboard.shoot('customer-metrics');
  });

  test('a gate set in the editor caps the status, and the customer page says which gate holds it', async () => {
    // Acme: usage 1 (25 logins), support 0.9, and an invoice 40 days overdue.
    await call('PATCH', '/api/customers/acme/health-score', { factors: { support: 0.9 } });
    await call('POST', '/api/customers/acme/metrics', { values: { days_overdue: 40 } });
    await page.goto(`${dashboard.base}/settings`);
    await page.getByRole('heading', { name: 'Factor rules' }).waitFor();
    await page.getByLabel('Factor', { exact: true }).fill('invoice_overdue');
    await page.getByLabel('Metric', { exact: true }).fill('days_overdue');
    await page.getByLabel('Aggregate').selectOption('last');
    await page.getByLabel('From (scores 0)').fill('60');
    await page.getByLabel('To (scores 1)').fill('0');
    assert.equal(
      await page.getByLabel('While the factor is below (0–1)').count(),
      0,
      'no gate, no threshold',
    );
    await page.getByLabel('Status at most').selectOption('critical');
    await page.getByLabel('While the factor is below (0–1)').fill('0.5');

    const body = {
      metric: 'days_overdue',
      aggregate: 'last',
      scale: { type: 'linear', from: 60, to: 0 },
      gate: { below: 0.5, status: 'critical' },
    };
    const expected = await call('POST', `${RULES}/invoice_overdue/preview`, body);
    // 1/3 averages Acme out at 0.744, healthy; the gate holds it at critical.
    assert.equal(expected.band_changes, 1, JSON.stringify(expected));
    await page.getByTestId('rule-preview').waitFor();
    await page.getByTestId('rule-band-changes').filter({ hasText: '1' }).waitFor();
    await dashboard.shoot('factor-rule-gate');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('status').filter({ hasText: 'The rule of invoice_overdue is saved.' }).waitFor();
    await page
      .getByRole('row', { name: /^invoice_overdue/ })
      .getByText('below 0.5: at most critical')
      .waitFor();
    assert.deepEqual((await call('GET', `${RULES}/invoice_overdue`)).gate, body.gate);

    await page.goto(`${dashboard.base}/customers/acme`);
    await page.getByRole('heading', { name: 'Acme', level: 1 }).waitFor();
    assert.equal(await text(page.getByTestId('current-score')), '0.744');
    assert.equal(await text(page.locator('.big-score .badge')), 'Critical');
    assert.match(
      await text(page.getByTestId('gated-note')),
      /Capped at critical by invoice_overdue \(0\.333, below its gate of 0\.5\)/,
    );
    const why = page.getByTestId('why-gates');
    await why.waitFor();
    assert.match(await text(why), /Capped at critical by invoice_overdue/);
    await dashboard.shoot('customer-gated');

    await call('DELETE', `${RULES}/invoice_overdue`);
    assert.equal(
      (await call('GET', '/api/customers/acme/health-score')).status,
      'healthy',
      'the gate goes with its rule',
    );
  });

  test('a rule is edited in place and deleted with a confirmation; its factor leaves the scores', async () => {
    await page.goto(`${dashboard.base}/settings`);
    await page.getByRole('button', { name: 'Edit the rule of usage' }).click();
    await page.getByRole('heading', { name: 'Edit the rule of usage' }).waitFor();
    assert.equal(await page.getByLabel('To (scores 1)').inputValue(), '20');
    assert.equal(await page.getByLabel('Factor', { exact: true }).getAttribute('readonly'), '');
    assert.equal(
      await page.getByRole('button', { name: 'Save rule' }).isDisabled(),
      true,
      'nothing changed yet',
    );
    await page.getByLabel('To (scores 1)').fill('12');
    await page.getByTestId('rule-preview').waitFor();
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('status').filter({ hasText: 'The rule of usage is saved.' }).waitFor();
    await page
      .getByRole('row', { name: /^usage/ })
      .getByText('linear: 0 at 0, 1 at 12')
      .waitFor();
    assert.equal((await call('GET', `${RULES}/usage`)).scale.to, 12);

    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Delete the rule of usage' }).click();
    await page.getByRole('status').filter({ hasText: 'The rule of usage is deleted' }).waitFor();
    await page.getByText('No factor rules yet').waitFor();
    assert.equal((await dashboard.request('GET', `${RULES}/usage`)).status, 404);
    const score = await call('GET', '/api/customers/globex/health-score');
    assert.deepEqual(score.factors, { support: 0.5 });
  });

  test('the server logged no errors and the pages threw none', () => {
    assert.doesNotMatch(dashboard.serverOutput(), /"level":50/);
    assert.deepEqual(dashboard.pageErrors, []);
  });
});
