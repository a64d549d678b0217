// Explanations and overrides in Chromium (docs/scoring.md, "Why this score" and "Overrides"): the
// customer page's "Why this score" panel draws each factor's contribution as a bar, names a
// derived factor's metric and says in words what moved since the version before, or since what
// stood 7 or 30 days ago or on a day (the picker, kept in the page's URL); a row of the score
// history shows that version in the panel. An editor pins the score through the form (the
// pin then marks the score on the customer page and in the portfolio's list), sees the server's
// refusals next to the field they name, and removes the pin after a confirmation; a viewer sees
// the pin and no form. Data is set up and checked through the API; every view is saved as a
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
const daysAgo = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString();
/** A local calendar day as a date input takes it. */
const localDay = (offsetDays: number) => {
  const d = new Date(Date.now() + offsetDays * DAY_MS);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
};
const SCORE = '/api/customers/globex/health-score';
const PASSWORD = 'a long enough password';

describe('explanations and overrides in Chromium', { skip: skipReason(), timeout: 180_000 }, () => {
  let dashboard: Dashboard;
  let page: Page;
  let call: Dashboard['call'];
  const dataDir = tempDir();
  let viewerLink: string;

  before(async () => {
    dashboard = await openDashboard({ VITALS_DATA_DIR: dataDir });
    ({ page, call } = dashboard);
    const viewer = await runCli(
      ['users', 'create', 'viewer@example.com', '--role', 'viewer', '--url', dashboard.base],
      serverEnv({ VITALS_DATA_DIR: dataDir }),
    );
    assert.equal(viewer.code, 0, viewer.stderr);
    viewerLink = viewer.stdout.trim();

    await call('PATCH', '/api/settings/health-score/weights', {
      weights: { usage: 0.5, support: 0.3, engagement: 0.2 },
    });
    // engagement: the logins of the last 30 days, 0 at none and 1 at 20.
    await call('PUT', '/api/settings/health-score/factors/engagement', {
      metric: 'logins',
      aggregate: 'sum',
      window_days: 30,
      scale: { type: 'linear', from: 0, to: 20 },
    });
    await call('POST', '/api/customers/batch', {
      customers: [
        { customer_id: 'globex', name: 'Globex Corporation', email: 'ops@globex.example' },
        { customer_id: 'initech', name: 'Initech', email: 'ops@initech.example' },
      ],
    });
    await call('POST', '/api/customers/initech/health-score', { factors: { usage: 0.3, support: 0.4 } });
    // Globex: version 1 from the posted factors (0.75), versions 2 and 3 as its logins arrive
    // (6, then 4 more: engagement 0.5, score 0.70), version 4 when usage falls from 0.9 to 0.5.
    await call('POST', SCORE, { factors: { usage: 0.9, support: 0.5 } });
    await call('POST', '/api/customers/globex/metrics', { values: { logins: 6 }, at: daysAgo(3) });
    await call('POST', '/api/customers/globex/metrics', { values: { logins: 4 }, at: daysAgo(1) });
    await call('PATCH', SCORE, { factors: { usage: 0.5 } });
    const history = await call('GET', `${SCORE}/history`);
    assert.deepEqual(
      history.data.map((h: { version: number; reason: string; health_score: number }) => [
        h.version,
        h.reason,
        h.health_score,
      ]),
      [
        [4, 'factors_updated', 0.5],
        [3, 'metrics_updated', 0.7],
        [2, 'metrics_updated', 0.66],
        [1, 'factors_updated', 0.75],
      ],
    );
  });

  after(async () => {
    await dashboard?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const panel = () => page.getByTestId('why-panel');
  const override = async () => (await call('GET', SCORE)).override;

  test('"Why this score" draws a bar per factor, names the metric of a derived one and says what moved', async () => {
    await dashboard.signIn();
    await page.goto(`${dashboard.base}/customers/globex`);
    await page.getByRole('heading', { name: 'Globex Corporation', level: 1 }).waitFor();
    await page.locator('[data-testid="why-panel"][data-version="4"][aria-busy="false"]').waitFor();
    assert.match(
      await text(page.getByTestId('why-version')),
      /^The current score, version 4 · .* · factors updated$/,
    );

    // Each bar is the server's contribution (weight × score), on a scale from 0 to 1.
    const explained = await call('GET', `${SCORE}/explanation`);
    assert.deepEqual(
      explained.factors.map((f: { factor: string }) => f.factor),
      ['engagement', 'support', 'usage'],
    );
    for (const f of explained.factors) {
      const row = panel().locator(`ul.contributions li[data-factor="${f.factor}"]`);
      assert.equal(await text(row.getByTestId(`contribution-${f.factor}`)), f.contribution.toFixed(3));
      const style = (await row.locator('.bar .fill').getAttribute('style')) ?? '';
      assert.equal(Number.parseFloat(/width: ([\d.]+)%/.exec(style)?.[1] ?? ''), f.contribution * 100, style);
    }
    const usage = panel().locator('ul.contributions li[data-factor="usage"]');
    assert.match(await text(usage), /usage posted\s*0\.250\s*scores 0\.500 × weight 50%/);
    const engagement = panel().locator('ul.contributions li[data-factor="engagement"]');
    assert.match(
      await text(engagement),
      /engagement derived\s*0\.100\s*scores 0\.500 × weight 20% from logins, sum over 30 days = 10 \(2 points, the newest on .+\)/,
    );
    assert.match(await text(panel()), /Together they make the computed score, 0\.500\./);

    // The change in words: the score shown, then each contribution that moved, biggest first.
    assert.equal(
      await text(page.getByTestId('why-change')),
      'Score 0.700 → 0.500 (−0.200) since version 3 (factors updated).',
    );
    assert.deepEqual(await panel().locator('ul.moves li').allTextContents(), [
      "usage's contribution fell from 0.450 to 0.250 (−0.200)",
    ]);
    await dashboard.shoot('explanation');
  });

  test('"Compared with" 7 days ago measures from what stood then; the choice is in the URL and survives a reload', async () => {
    const picker = page.getByLabel('Compared with');
    assert.equal(await picker.inputValue(), '', 'the version before, unless chosen');
    await picker.selectOption({ label: '7 days ago' });
    // Every version was made minutes ago: 7 days ago came before the first, so from version 1.
    const sinceWeek = 'Score 0.750 → 0.500 (−0.250) in the last 7 days, from version 1 to version 4.';
    await page.getByTestId('why-change').filter({ hasText: sinceWeek }).waitFor();
    assert.equal(new URL(page.url()).search, '?since=7d');
    const weekMoves = [
      "usage's contribution fell from 0.563 to 0.250 (−0.313)",
      "engagement's contribution rose from 0.000 to 0.100 (+0.100)",
      "support's contribution fell from 0.188 to 0.150 (−0.038)",
    ];
    assert.deepEqual(await panel().locator('ul.moves li').allTextContents(), weekMoves);
    // The figures are the API's for that instant.
    const api = await call('GET', `${SCORE}/explanation?since=${encodeURIComponent(daysAgo(7))}`);
    assert.deepEqual(
      [api.change.from_version, api.change.previous_score, api.change.delta],
      [1, 0.75, -0.25],
    );
    await dashboard.shoot('explanation-since');

    // An earlier version: from what stood 7 days ago up to it.
    const rows = page.locator('section[aria-labelledby="history-title"] tbody tr');
    await rows.nth(2).locator('td').nth(1).click();
    await page
      .getByTestId('why-change')
      .filter({ hasText: 'Score 0.750 → 0.660 (−0.090) in the last 7 days, from version 1 to version 2.' })
      .waitFor();
    await panel().getByRole('button', { name: 'Back to the current score' }).click();
    await page.getByTestId('why-change').filter({ hasText: sinceWeek }).waitFor();

    await page.reload();
    await page.getByTestId('why-change').filter({ hasText: sinceWeek }).waitFor();
    assert.equal(await page.getByLabel('Compared with').inputValue(), '7d');

    // A day: the first of this month to start with, then any day up to today.
    await page.getByLabel('Compared with').selectOption({ label: 'A day…' });
    const day = page.getByLabel('Since the start of');
    const first = `${localDay(0).slice(0, 8)}01`;
    await page.waitForURL((url) => url.search === `?since=${first}`);
    assert.equal(await day.inputValue(), first);
    assert.equal(await day.getAttribute('max'), localDay(0));
    await day.fill(localDay(0));
    await page.waitForURL((url) => url.search === `?since=${localDay(0)}`);
    const today = new Intl.DateTimeFormat('en', { dateStyle: 'medium' }).format(new Date());
    await page
      .getByTestId('why-change')
      .filter({ hasText: `Score 0.750 → 0.500 (−0.250) since ${today}, from version 1 to version 4.` })
      .waitFor();
    assert.deepEqual(await panel().locator('ul.moves li').allTextContents(), weekMoves);
    await dashboard.shoot('explanation-since-day');

    // Back goes to the window before; "The version before" is the page as it was.
    await page.goBack();
    await page.waitForURL((url) => url.search === `?since=${first}`);
    await page.getByLabel('Compared with').selectOption({ label: 'The version before' });
    await page.waitForURL((url) => url.search === '');
    await page
      .getByTestId('why-change')
      .filter({ hasText: 'Score 0.700 → 0.500 (−0.200) since version 3 (factors updated).' })
      .waitFor();
    assert.equal(await page.getByLabel('Since the start of').count(), 0);
  });

  test('a row of the score history shows its version in the panel, by pointer or keyboard, and the way back', async () => {
    const rows = page.locator('section[aria-labelledby="history-title"] tbody tr');
    assert.equal(await rows.count(), 4);
    assert.equal(
      await rows.nth(0).getAttribute('aria-current'),
      'true',
      'the current version is the one shown',
    );

    // A click anywhere on the row of version 2.
    await rows.nth(2).locator('td').nth(1).click();
    await page.locator('[data-testid="why-panel"][data-version="2"][aria-busy="false"]').waitFor();
    assert.equal(await rows.nth(2).getAttribute('aria-current'), 'true');
    assert.equal(await rows.nth(0).getAttribute('aria-current'), null);
    assert.equal(await page.evaluate('document.activeElement.id'), 'why-title', 'focus goes to the panel');
    assert.match(
      await text(page.getByTestId('why-version')),
      /^An earlier score: version 2, not the current one · /,
    );
    // Version 2: the first logins arrived, engagement came in at 0.3 and the others' weights shrank.
    assert.equal(
      await text(page.getByTestId('why-change')),
      'Score 0.750 → 0.660 (−0.090) since version 1 (metrics updated).',
    );
    assert.deepEqual(await panel().locator('ul.moves li').allTextContents(), [
      "usage's contribution fell from 0.563 to 0.450 (−0.113)",
      "engagement's contribution rose from 0.000 to 0.060 (+0.060)",
      "support's contribution fell from 0.188 to 0.150 (−0.038)",
    ]);
    assert.match(
      await text(panel().locator('ul.contributions li[data-factor="engagement"]')),
      /logins, sum over 30 days = 6 \(1 point,/,
    );
    await dashboard.shoot('explanation-version');

    // By keyboard: the row's button, Enter.
    await page.getByRole('button', { name: 'Explain version 1' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-testid="why-panel"][data-version="1"][aria-busy="false"]').waitFor();
    assert.equal(
      await text(page.getByTestId('why-change')),
      'Version 1 is the first score: nothing came before it.',
    );
    assert.equal(
      await panel().locator('ul.contributions li[data-factor="engagement"]').count(),
      0,
      'no logins yet',
    );

    await panel().getByRole('button', { name: 'Back to the current score' }).click();
    await page.locator('[data-testid="why-panel"][data-version="4"][aria-busy="false"]').waitFor();
    assert.equal(await panel().getByRole('button', { name: 'Back to the current score' }).count(), 0);
    assert.equal(await rows.nth(0).getAttribute('aria-current'), 'true');
  });

  test('an override set through the form pins the score on the customer page and in the portfolio', async () => {
    const form = page.locator('form.override-form');
    await page.getByRole('heading', { name: 'Override', level: 2 }).waitFor();
    // The end is 30 days ahead unless changed.
    assert.equal(await page.getByLabel('Ends on').inputValue(), localDay(30));
    await page.getByLabel('Score (0–1)').fill('0.2');
    await page.getByLabel('Reason').fill('Champion left last week');
    await form.getByRole('button', { name: 'Pin the score' }).click();
    await page.getByRole('status').filter({ hasText: 'The score is pinned at 0.200.' }).waitFor();

    const stored = await override();
    assert.equal(stored.health_score, 0.2);
    assert.equal(stored.computed_score, 0.5);
    assert.equal(stored.reason, 'Champion left last week');
    const end = Date.parse(stored.expires_at) - Date.now();
    assert.ok(Math.abs(end - 30 * DAY_MS) < 2 * 3_600_000, `ends 30 days from now: ${stored.expires_at}`);

    // The score header says it is pinned, by whom in effect, until when, what the factors compute and why.
    assert.equal(await text(page.getByTestId('current-score')), '0.200');
    assert.match(
      await text(page.getByTestId('pinned-note')),
      /^Pinned by a person: 0\.200 until .+ — computed 0\.500 — reason “Champion left last week”$/,
    );
    assert.match(await text(page.locator('.big-score')), /0\.200\s*Critical\s*pinned/);
    // The panel shows the new version: the factors still give 0.500, the pin moved the score.
    await page.locator('[data-testid="why-panel"][data-version="5"][aria-busy="false"]').waitFor();
    assert.equal(
      await text(page.getByTestId('why-change')),
      'Score 0.500 → 0.200 (−0.300) since version 4 (override set).',
    );
    assert.equal(
      await text(page.getByTestId('why-pin-change')),
      'The factors give 0.500 as before: a person pinned the score shown at 0.200.',
    );
    assert.match(await text(panel()), /No factor's contribution moved\./);
    const top = page.locator('section[aria-labelledby="history-title"] tbody tr').first();
    await top.getByRole('cell', { name: 'override set', exact: true }).waitFor();
    // The form now changes the pin; removing it is a button.
    await page.getByRole('heading', { name: 'Change the override' }).waitFor();
    assert.match(
      await text(page.getByTestId('override-now')),
      /^Pinned at 0\.200 by .+ on .+, until .+; the factors compute 0\.500\.$/,
    );
    await dashboard.shoot('override');

    // The portfolio's list marks it, with the computed score beside the pin.
    await page.goto(`${dashboard.base}/`);
    const list = page.locator('table.scores:not(.drops)');
    const globex = list.getByRole('row', { name: /Globex Corporation/ });
    await globex.waitFor();
    assert.match(await text(globex.locator('td.num').first()), /^0\.200\s*pinned\s*computed 0\.500$/);
    assert.match(
      (await globex.locator('.pinned-mark').getAttribute('title')) ?? '',
      /^Pinned by a person until .+: “Champion left last week”\. The factors compute 0\.500\.$/,
    );
    const initech = list.getByRole('row', { name: /Initech/ });
    assert.equal(await initech.locator('.pinned-mark').count(), 0, 'a score nobody pinned is not marked');
    await dashboard.shoot('override-portfolio');
  });

  test("a refused override shows the server's message by the field it names, and changes nothing", async () => {
    await page.goto(`${dashboard.base}/customers/globex`);
    await page.getByRole('heading', { name: 'Change the override' }).waitFor();
    const before = await override();
    const reason = page.getByLabel('Reason');
    assert.equal(await reason.inputValue(), 'Champion left last week', 'the form starts from the pin');

    // A blank reason: the server's word, next to the reason, and focus on it.
    await reason.fill('   ');
    await page.getByLabel('Score (0–1)').fill('0.3');
    await page.getByRole('button', { name: 'Change override' }).click();
    await page.getByRole('alert').filter({ hasText: 'Not pinned' }).waitFor();
    const reasonError = page.locator('#override-reason-error');
    assert.equal(await text(reasonError), "'reason' must say why the score is overridden.");
    assert.equal(await reason.getAttribute('aria-invalid'), 'true');
    assert.match((await reason.getAttribute('aria-describedby')) ?? '', /override-reason-error/);
    assert.equal(await page.evaluate('document.activeElement.id'), 'override-reason');

    // An end in the past: by the date.
    await reason.fill('Renewal signed');
    assert.equal(await reasonError.count(), 0, 'typing clears the refusal');
    await page.getByLabel('Ends on').fill(localDay(-2));
    await page.getByRole('button', { name: 'Change override' }).click();
    const expiresError = page.locator('#override-expires-error');
    await expiresError.waitFor();
    assert.equal(await text(expiresError), "'expires_at' must be in the future.");
    assert.equal(await page.getByLabel('Ends on').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.evaluate('document.activeElement.id'), 'override-expires');
    await dashboard.shoot('override-refused');

    assert.deepEqual(await override(), before, 'nothing changed');
  });

  test('"Remove override" asks first; confirmed, the computed score shows again everywhere', async () => {
    page.once('dialog', (dialog) => dialog.dismiss());
    await page.getByRole('button', { name: 'Remove override' }).click();
    assert.ok(await override(), 'dismissed: the pin stays');

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      return dialog.accept();
    });
    await page.getByRole('button', { name: 'Remove override' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'The override is removed: the score is the computed 0.500 again.' })
      .waitFor();
    assert.match(asked, /Remove the override\? The score goes back to what the factors compute, 0\.500\./);
    assert.equal(await override(), null);
    assert.equal(await text(page.getByTestId('current-score')), '0.500');
    assert.equal(await page.getByTestId('pinned-note').count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Remove override' }).count(), 0);
    await page.locator('[data-testid="why-panel"][data-version="6"][aria-busy="false"]').waitFor();
    assert.equal(
      await text(page.getByTestId('why-pin-change')),
      'The factors give 0.500 as before: the override no longer stands, so the score shown is theirs again.',
    );

    await page.goto(`${dashboard.base}/`);
    const globex = page.locator('table.scores:not(.drops)').getByRole('row', { name: /Globex Corporation/ });
    await globex.waitFor();
    assert.equal(await text(globex.locator('td.num').first()), '0.500');
  });

  test('a `last` rule is explained by the date of the one point it read', async () => {
    // adoption: the newest count of seats, at most 30 days old; Initech's, from two days ago.
    await call('PUT', '/api/settings/health-score/factors/adoption', {
      metric: 'seats',
      aggregate: 'last',
      max_age_days: 30,
      scale: { type: 'linear', from: 0, to: 40 },
    });
    const at = daysAgo(2);
    await call('POST', '/api/customers/initech/metrics', { values: { seats: 12 }, at });
    await call('POST', '/api/customers/initech/metrics', { values: { seats: 17 }, at: daysAgo(1) });
    const explained = await call('GET', '/api/customers/initech/health-score/explanation');
    const adoption = explained.factors.find((f: { factor: string }) => f.factor === 'adoption');
    assert.equal(adoption.metric.points, 1, 'the one point the aggregate read');
    assert.equal(adoption.score, 17 / 40);

    await page.goto(`${dashboard.base}/customers/initech`);
    await page.getByRole('heading', { name: 'Initech', level: 1 }).waitFor();
    await page.locator('[data-testid="why-panel"][data-version="3"][aria-busy="false"]').waitFor();
    const row = panel().locator('ul.contributions li[data-factor="adoption"]');
    const newest = new Intl.DateTimeFormat('en', { dateStyle: 'medium' }).format(
      new Date(adoption.metric.newest_at),
    );
    assert.match(await text(row.locator('.how')), /^scores 0\.425, but has no weight: it adds nothing/);
    assert.equal(await text(row.locator('.from')), `from seats, last value = 17 (recorded on ${newest})`);
    await dashboard.shoot('explanation-last');
  });

  test('a viewer sees the pin and the explanation, and no override form', async () => {
    await call('PUT', `${SCORE}/override`, { health_score: 0.9, reason: 'Renewal signed for 3 years' });
    // Signed out of the key first: a key in the tab would speak for the viewer.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.goto('about:blank');
    await page.goto(viewerLink);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('The same again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByTestId('who').filter({ hasText: 'viewer@example.com (viewer)' }).waitFor();
    await page.goto(`${dashboard.base}/customers/globex`);
    await page.getByRole('heading', { name: 'Globex Corporation', level: 1 }).waitFor();
    assert.match(
      await text(page.getByTestId('pinned-note')),
      /^Pinned by a person: 0\.900 until .+ — computed 0\.500 — reason “Renewal signed for 3 years”$/,
    );
    await page.locator('[data-testid="why-panel"][data-version="7"][aria-busy="false"]').waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Override' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Remove override' }).count(), 0);
    assert.equal(await page.getByLabel('Reason').count(), 0);
  });

  test('the server logged no errors and the pages threw none', () => {
    assert.doesNotMatch(dashboard.serverOutput(), /"level":50/);
    assert.deepEqual(dashboard.pageErrors, []);
  });
});
