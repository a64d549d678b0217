// Calibration and outcomes in Chromium (docs/scoring.md, "Does the score predict churn?";
// docs/dashboard.md): the Calibration page says the AUC in words, draws the churn rate of each band
// with its counts, ranks the factors by their own AUC, and sets the suggested weights beside
// today's with what applying them would change (the server's weights preview); an admin applies
// them after a confirmation, a viewer sees no button. The customer page lists a customer's
// outcomes; an editor records one (the server's refusals by the field they name) and deletes one
// after a confirmation. The server has no test clock, so scores are posted first and the outcomes
// just after (at now): judged on the day (horizon 0), each outcome has its score, and 90 days
// before, none has. Data is set up and checked through the API; every view is saved as a
// screenshot and checked with axe-core at laptop and phone widths (Dashboard.shoot).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { DAY_MS } from '../../src/domain/portfolio.ts';
import { tempDir } from '../helpers/app.ts';
import { runCli, serverEnv } from '../helpers/server.ts';
import { type Dashboard, openDashboard, skipReason } from './browser.ts';

const text = async (locator: Locator) => ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
const attributes = async (locator: Locator, name: string) =>
  Promise.all((await locator.all()).map((l) => l.getAttribute(name)));
/** A local calendar day as a date input takes it. */
const localDay = (offsetDays: number) => {
  const d = new Date(Date.now() + offsetDays * DAY_MS);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};
const WEIGHTS = '/api/settings/health-score/weights';
const CALIBRATION = '/api/health-scores/calibration';
/** Today's weights: they lean on support (noise) and engagement (which points the wrong way). */
const TODAY = { usage: 0.2, support: 0.4, engagement: 0.4 };
const PASSWORD = 'a long enough password';
const percent = (x: number) => `${Math.round(x * 100)}%`;
const share = (w: number) => `${Math.round(w * 1000) / 10}%`;

interface Report {
  outcomes: { churned: number; retained: number; unscored: number };
  auc: number;
  bands: { status: string; outcomes: number; churned: number; churn_rate: number | null }[];
  factors: { factor: string; outcomes: number; auc: number }[];
  current_weights_auc: number;
  suggested_weights: Record<string, number>;
  suggested_auc: number;
}

describe('calibration and outcomes in Chromium', { skip: skipReason(), timeout: 180_000 }, () => {
  let dashboard: Dashboard;
  let page: Page;
  let call: Dashboard['call'];
  const dataDir = tempDir();
  let viewerLink: string;
  let report: Report;

  before(async () => {
    dashboard = await openDashboard({ VITALS_DATA_DIR: dataDir });
    ({ page, call } = dashboard);
    const viewer = await runCli(
      ['users', 'create', 'viewer@example.com', '--role', 'viewer', '--url', dashboard.base],
      serverEnv({ VITALS_DATA_DIR: dataDir }),
    );
    assert.equal(viewer.code, 0, viewer.stderr);
    viewerLink = viewer.stdout.trim();

    await call('PATCH', WEIGHTS, { weights: TODAY });
    // 25 customers who churned and 25 who stayed. Usage separates them; support is noise;
    // engagement was higher among those who left. Two more left before they ever had a score.
    const rows: { id: string; outcome: 'churned' | 'retained'; factors?: Record<string, number> }[] = [];
    for (let i = 0; i < 25; i++) {
      rows.push({
        id: `churned_${String(i).padStart(2, '0')}`,
        outcome: 'churned',
        factors: {
          usage: 0.1 + 0.014 * i,
          support: 0.1 + ((i * 7) % 25) * 0.032,
          engagement: 0.6 + 0.01 * i,
        },
      });
      rows.push({
        id: `retained_${String(i).padStart(2, '0')}`,
        outcome: 'retained',
        factors: {
          usage: 0.5 + 0.018 * i,
          support: 0.1 + ((i * 11) % 25) * 0.032,
          engagement: 0.3 + 0.016 * i,
        },
      });
    }
    rows.push({ id: 'unscored_1', outcome: 'churned' }, { id: 'unscored_2', outcome: 'retained' });
    await call('POST', '/api/customers/batch', {
      customers: [
        ...rows.map((r) => ({
          customer_id: r.id,
          name: r.id.replace('_', ' '),
          email: `ops@${r.id}.example`,
        })),
        { customer_id: 'globex', name: 'Globex Corporation', email: 'ops@globex.example' },
      ],
    });
    await call('POST', '/api/health-scores/batch', {
      scores: [
        ...rows.flatMap((r) => (r.factors ? [{ customer_id: r.id, factors: r.factors }] : [])),
        { customer_id: 'globex', factors: { usage: 0.8, support: 0.6, engagement: 0.5 } },
      ],
    });
    const recorded = await call('POST', '/api/outcomes/batch', {
      outcomes: rows.map((r) => ({ customer_id: r.id, outcome: r.outcome })),
    });
    assert.ok(recorded.results.every((r: { status: number }) => r.status === 201));
    report = await call('GET', `${CALIBRATION}?horizon_days=0`);
    // What the page is checked against: a suggestion that differs from today's weights.
    assert.deepEqual(report.outcomes, { churned: 25, retained: 25, unscored: 2 });
    assert.ok(report.suggested_weights, JSON.stringify(report));
    assert.ok(report.suggested_auc > report.auc, JSON.stringify(report));
    assert.deepEqual(report.factors.map((f) => f.factor).slice(0, 1), ['usage']);
    assert.ok((report.factors.at(-1) as { auc: number }).auc < 0.45, JSON.stringify(report.factors));
  });

  after(async () => {
    await dashboard?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const suggestion = () => page.getByTestId('suggestion');

  test('90 days before each outcome no customer had a score yet: the page says so, and why no weights', async () => {
    await dashboard.signIn();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Calibration' }).click();
    await page.getByRole('heading', { name: 'Calibration', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/calibration');
    assert.equal(await page.getByLabel('Judge each outcome by the score').inputValue(), '90');
    const words = page.getByTestId('auc-words');
    await words.waitFor();
    assert.match(
      await text(words),
      /^Needs at least one churned and one retained outcome judged by the score 90 days before each outcome: there are 0 churned outcomes and 0 retained ones\.$/,
    );
    assert.equal(await text(page.getByTestId('count-unscored')), '52');
    assert.equal(await text(page.getByTestId('churn-counts-healthy')), 'no outcomes');
    assert.match(
      await text(page.getByTestId('no-suggestion')),
      /needs at least 20 outcomes of each kind judged by a score, and there are 0 churned and 0 retained \(20 more churned and 20 more retained needed\)/,
    );
    assert.equal(await page.getByRole('button', { name: 'Apply the suggested weights' }).count(), 0);
  });

  test('judged on the day: the AUC in words, churn by band, factors ranked, the suggestion beside today and its preview', async () => {
    await page.getByLabel('Judge each outcome by the score').selectOption('0');
    const words = page.getByTestId('auc-words');
    await words.filter({ hasText: 'A retained customer outscored' }).waitFor();
    assert.equal(
      await text(words),
      `A retained customer outscored a churned one ${percent(report.auc)} of the time, judged by the score on the day of each outcome. (AUC ${report.auc.toFixed(3)}: 0.5 is a coin flip, 1 a perfect ranking.)`,
    );
    assert.equal(await text(page.getByTestId('count-churned')), '25');
    assert.equal(await text(page.getByTestId('count-retained')), '25');
    assert.equal(await text(page.getByTestId('count-unscored')), '2');

    // A bar per band, as long as its churn rate, with the counts beside it.
    const bars = page.locator('ul.band-bars li');
    assert.deepEqual(
      await attributes(bars, 'data-status'),
      report.bands.map((b) => b.status),
    );
    for (const b of report.bands) {
      const row = page.locator(`ul.band-bars li[data-status="${b.status}"]`);
      assert.equal(
        await text(row.getByTestId(`churn-rate-${b.status}`)),
        b.churn_rate === null ? '—' : percent(b.churn_rate),
      );
      assert.equal(
        await text(row.getByTestId(`churn-counts-${b.status}`)),
        b.outcomes === 0
          ? 'no outcomes'
          : `${b.churned} of ${b.outcomes} ${b.outcomes === 1 ? 'outcome' : 'outcomes'} churned`,
      );
      const style = (await row.locator('.band-fill').getAttribute('style')) ?? '';
      const width = Number.parseFloat(/width: ([\d.]+)%/.exec(style)?.[1] ?? '');
      assert.ok(Math.abs(width - (b.churn_rate ?? 0) * 100) < 1e-3, style);
    }

    // The factors, best first, each read in words; the one that points the wrong way says so.
    const factorRows = page.locator('table.factor-aucs tbody tr');
    assert.deepEqual(
      await attributes(factorRows, 'data-factor'),
      report.factors.map((f) => f.factor),
    );
    for (const f of report.factors) {
      const row = page.locator(`table.factor-aucs tr[data-factor="${f.factor}"]`);
      assert.equal(await text(row.locator('td').first()), f.auc.toFixed(3));
    }
    assert.match(await text(factorRows.first()), /strong/);
    assert.match(await text(factorRows.last()), /points the wrong way/);
    assert.match(await text(page.locator('section[aria-labelledby="factors-title"]')), /0\.5 is a coin flip/);

    // Today's weights beside the suggested ones, and the two AUCs.
    const suggested = report.suggested_weights;
    for (const name of new Set([...Object.keys(TODAY), ...Object.keys(suggested)])) {
      const cells = await suggestion()
        .locator(`table.weights-compare tr[data-factor="${name}"] td`)
        .allTextContents();
      assert.deepEqual(cells, [
        share(TODAY[name as keyof typeof TODAY]),
        suggested[name] === undefined ? '—' : share(suggested[name]),
      ]);
    }
    assert.equal(
      await text(suggestion().getByTestId('suggested-auc')),
      `AUC ${report.suggested_auc.toFixed(3)} (${percent(report.suggested_auc)})`,
    );
    assert.equal(
      await text(suggestion().getByTestId('current-weights-auc')),
      `AUC ${report.current_weights_auc.toFixed(3)} (${percent(report.current_weights_auc)})`,
    );
    assert.ok(report.suggested_auc > report.current_weights_auc, 'the suggestion beats today’s weights');
    assert.equal(
      await text(suggestion().getByTestId('current-auc')),
      `AUC ${report.auc.toFixed(3)} (${percent(report.auc)})`,
    );

    // The preview is the server's answer for the suggested weights.
    const expected = await call('POST', `${WEIGHTS}/preview`, { weights: suggested });
    assert.ok(expected.band_changes > 0, JSON.stringify(expected));
    const preview = suggestion().getByTestId('weights-preview');
    await preview.waitFor();
    assert.equal(await text(preview.getByTestId('preview-scores-changed')), String(expected.scores_changed));
    assert.equal(await text(preview.getByTestId('preview-band-changes')), String(expected.band_changes));
    const after = await preview.locator('tbody td:nth-child(3)').allTextContents();
    assert.deepEqual(after.map(Number), [
      expected.bands.critical,
      expected.bands.at_risk,
      expected.bands.healthy,
    ]);
    assert.deepEqual((await call('GET', WEIGHTS)).weights, TODAY, 'a preview changes nothing');
    await dashboard.shoot('calibration');
  });

  test('Apply asks first; confirmed, the weights are the suggested ones and nothing is left to apply', async () => {
    const expected = await call('POST', `${WEIGHTS}/preview`, { weights: report.suggested_weights });
    const apply = suggestion().getByRole('button', { name: 'Apply the suggested weights' });
    page.once('dialog', (dialog) => dialog.dismiss());
    await apply.click();
    assert.deepEqual((await call('GET', WEIGHTS)).weights, TODAY, 'dismissed: nothing changes');

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      return dialog.accept();
    });
    await apply.click();
    await page
      .getByRole('status')
      .filter({
        hasText: `The suggested weights are applied. ${expected.scores_changed} scores were recomputed`,
      })
      .waitFor();
    assert.equal(
      asked,
      `Apply the suggested weights? Every score is recomputed with them: ${expected.scores_changed} scores change and ${expected.band_changes} customers move band.`,
    );
    assert.deepEqual((await call('GET', WEIGHTS)).weights, report.suggested_weights);
    // The report loads again: today's weights are now the suggestion.
    await suggestion().getByTestId('nothing-to-apply').waitFor();
    assert.equal(await apply.count(), 0);
  });

  test("a customer's outcomes: recorded through the form (refusals by their field), listed, deleted after asking", async () => {
    await page.goto(`${dashboard.base}/customers/globex`);
    await page.getByRole('heading', { name: 'Globex Corporation', level: 1 }).waitFor();
    const card = page.locator('section[aria-labelledby="outcomes-title"]');
    await card.getByTestId('no-outcomes').waitFor();
    const kind = page.getByLabel('Outcome', { exact: true });
    const on = page.getByLabel('Date', { exact: true });
    assert.equal(await on.inputValue(), localDay(0), 'today unless changed');
    const record = card.getByRole('button', { name: 'Record outcome' });

    // No kind chosen: said by the kind, and nothing sent.
    await record.click();
    assert.equal(await text(page.locator('#outcome-kind-error')), 'Choose retained or churned.');
    assert.equal(await kind.getAttribute('aria-invalid'), 'true');
    assert.equal(await page.evaluate('document.activeElement.id'), 'outcome-kind');

    // A day ahead: the server's refusal, by the date, and focus on it.
    await kind.selectOption('retained');
    assert.equal(await page.locator('#outcome-kind-error').count(), 0, 'choosing clears it');
    await on.fill(localDay(2));
    await record.click();
    const atError = page.locator('#outcome-at-error');
    await atError.waitFor();
    assert.equal(await text(atError), "'at' may not be in the future.");
    assert.equal(await on.getAttribute('aria-invalid'), 'true');
    assert.match((await on.getAttribute('aria-describedby')) ?? '', /outcome-at-error/);
    assert.equal(await page.evaluate('document.activeElement.id'), 'outcome-at');
    await card.getByRole('alert').filter({ hasText: 'Not recorded' }).waitFor();
    assert.deepEqual((await call('GET', '/api/customers/globex/outcomes')).data, [], 'nothing recorded');

    // Three days ago, with a note; then a churn today.
    await on.fill(localDay(-3));
    await page.getByLabel('Note (optional)').fill('Renewed for 2 years');
    await record.click();
    await card.getByRole('status').filter({ hasText: 'Recorded: retained on' }).waitFor();
    await kind.selectOption('churned');
    await record.click();
    await card.getByRole('status').filter({ hasText: 'Recorded: churned on' }).waitFor();
    const items = card.getByTestId('outcome');
    await items.nth(1).waitFor();
    assert.equal(await text(items.nth(0).locator('.badge')), 'Churned');
    assert.equal(await items.nth(0).locator('.outcome-said').count(), 0, 'no note');
    assert.equal(await text(items.nth(1).locator('.badge')), 'Retained');
    assert.equal(await text(items.nth(1).locator('.outcome-said')), 'Renewed for 2 years');
    const stored = (await call('GET', '/api/customers/globex/outcomes')).data;
    assert.deepEqual(
      stored.map((o: { outcome: string; note: string | null }) => [o.outcome, o.note]),
      [
        ['churned', null],
        ['retained', 'Renewed for 2 years'],
      ],
    );
    const ago = Date.now() - Date.parse(stored[1].at);
    assert.ok(Math.abs(ago - 3 * DAY_MS) < 2 * 3_600_000, `three days ago: ${stored[1].at}`);
    await dashboard.shoot('outcomes');

    // Delete asks first.
    const del = card.getByRole('button', { name: /^Delete the churned outcome of / });
    page.once('dialog', (dialog) => dialog.dismiss());
    await del.click();
    assert.equal((await call('GET', '/api/customers/globex/outcomes')).data.length, 2, 'dismissed: kept');
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      return dialog.accept();
    });
    await del.click();
    await card.getByRole('status').filter({ hasText: 'Deleted the churned outcome of' }).waitFor();
    assert.match(asked, /^Delete the churned outcome of .+\? The calibration report stops counting it\.$/);
    await items.nth(1).waitFor({ state: 'detached' });
    assert.equal(await items.count(), 1);
    assert.deepEqual(
      (await call('GET', '/api/customers/globex/outcomes')).data.map((o: { outcome: string }) => o.outcome),
      ['retained'],
    );
  });

  test('a viewer sees the report and the suggestion, and no preview, Apply or outcome form', async () => {
    await call('PATCH', WEIGHTS, { weights: TODAY });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.goto('about:blank');
    await page.goto(viewerLink);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('The same again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByTestId('who').filter({ hasText: 'viewer@example.com (viewer)' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Calibration' }).click();
    await page.getByLabel('Judge each outcome by the score').selectOption('0');
    await page.getByTestId('auc-words').filter({ hasText: 'A retained customer outscored' }).waitFor();
    await suggestion().getByTestId('admin-only').waitFor();
    assert.equal(await suggestion().locator('table.weights-compare tbody tr').count(), 3);
    assert.equal(await suggestion().getByRole('button').count(), 0, 'no Apply');
    assert.equal(await suggestion().getByTestId('weights-preview').count(), 0, 'no preview');

    await page.goto(`${dashboard.base}/customers/globex`);
    const card = page.locator('section[aria-labelledby="outcomes-title"]');
    await card.getByTestId('outcome').first().waitFor();
    assert.equal(await card.getByRole('button').count(), 0, 'no Delete');
    assert.equal(await page.getByLabel('Note (optional)').count(), 0, 'no form');
  });

  test('the server logged no errors and the pages threw none', () => {
    assert.doesNotMatch(dashboard.serverOutput(), /"level":50/);
    assert.deepEqual(dashboard.pageErrors, []);
  });
});
