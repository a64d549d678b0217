// History from day one (issue 52's "done when"), in Chromium against the real server, on SQLite or
// on PostgreSQL (VITALS_TEST_BACKEND=postgres): a fresh install imports a year of metrics and
// outcomes with `vitals import` (test/e2e/year-of-data.ts), and on its first day nothing has a past:
// "History starts today", every outcome unscored. An admin backfills from the Scoring page's
// "Backfill history" card (docs/dashboard.md): when a run started elsewhere (by the API, as a
// script would) is going, the card says so and follows that one; then it starts the rest of the
// year itself and follows it to its end. Opened from the navigation right after, with no reload,
// the portfolio draws a year of trend with the week's real drops and the calibration page judges
// every outcome. A viewer and a read key see the runs without the form. Each view is saved at 1440
// and 390 px as test-artifacts/backfill-*.png and checked by axe-core.
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { BACKFILL_MAX_DAYS } from '../../src/domain/backfill.ts';
import { dateOf, dayOf } from '../../src/domain/portfolio.ts';
import { tempDir } from '../helpers/app.ts';
import { runCli, serverEnv } from '../helpers/server.ts';
import { appBackend, createTestDatabase, type TestDatabase } from '../helpers/stores.ts';
import { chromiumSkip, type Dashboard, openDashboard, type Sizes } from './browser.ts';
import { CUSTOMERS, MOVERS, RULES, WEIGHTS, yearOfData } from './year-of-data.ts';

const SIZES: Sizes = [
  ['1440', { width: 1440, height: 900 }],
  ['390', { width: 390, height: 844 }],
];
const PASSWORD = 'a long enough password';
const RUNS = '/api/health-scores/backfill';
const text = async (locator: Locator) => ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
/** The UTC day `n` days back, as the API and the date field write it. */
const daysBack = (n: number) => dateOf(dayOf(Date.now()) - n);
/** The same day as the dashboard writes it for a person (format.ts, utcDate). */
const spoken = (ymd: string) =>
  new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(
    new Date(`${ymd}T00:00:00Z`),
  );

describe('history from day one in Chromium', { skip: chromiumSkip(), timeout: 300_000 }, () => {
  let dashboard: Dashboard;
  let page: Page;
  let db: TestDatabase | undefined;
  const dataDir = tempDir();
  const files = tempDir();
  const links: Record<string, string> = {};
  let readKey = '';

  const card = () => page.locator('section[aria-labelledby="backfill-title"]');
  const run = () => card().getByTestId('backfill-run');
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });

  before(async () => {
    db = appBackend() === 'postgres' ? await createTestDatabase('postgres') : undefined;
    const env = { VITALS_DATA_DIR: dataDir, ...(db?.url ? { DATABASE_URL: db.url } : {}) };
    dashboard = await openDashboard(env);
    page = dashboard.page;
    // The backend asked for is the one that serves: PostgreSQL leaves no SQLite file behind.
    assert.equal(existsSync(join(dataDir, 'vitals.db')), db === undefined);
    const cli = async (args: string[], environment = serverEnv(env)) => {
      const out = await runCli(args, environment);
      assert.equal(out.code, 0, `${args.join(' ')}: ${out.stderr}`);
      return out;
    };
    for (const role of ['admin', 'viewer'])
      links[role] = (
        await cli(['users', 'create', `${role}@example.com`, '--role', role, '--url', dashboard.base])
      ).stdout.trim();
    readKey = (await cli(['keys', 'create', '--scope', 'read'])).stdout.trim();

    // The rules first (a backfill reads those in force), then the files as the CLI imports them.
    for (const [factor, rule] of Object.entries(RULES))
      await dashboard.call('PUT', `/api/settings/health-score/factors/${factor}`, rule);
    await dashboard.call('PATCH', '/api/settings/health-score/weights', { weights: WEIGHTS });
    const data = yearOfData(Date.now());
    for (const kind of ['customers', 'metrics', 'outcomes'] as const) {
      const file = join(files, `${kind}.csv`);
      writeFileSync(file, data[kind]);
      const out = await cli(
        ['import', kind, file, '--url', dashboard.base, '--key', dashboard.key],
        serverEnv({}),
      );
      assert.match(out.stderr, /, 0 refused/, out.stderr);
    }
  });

  after(async () => {
    await dashboard?.close();
    await db?.drop();
    for (const dir of [dataDir, files]) rmSync(dir, { recursive: true, force: true });
  });

  async function setPassword(role: string): Promise<void> {
    await page.goto(links[role] as string);
    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByLabel('The same again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page
      .getByTestId('who')
      .filter({ hasText: `${role}@example.com` })
      .waitFor();
  }

  test('on the first day after the import nothing has a past: the trend starts today, every outcome is unscored', async () => {
    await setPassword('admin');
    await page.getByRole('heading', { name: 'Portfolio', level: 1 }).waitFor();
    assert.match(await text(page.getByTestId('history-start')), /^History starts today/);
    await nav('Calibration').click();
    await page.getByTestId('auc-words').waitFor();
    assert.equal(await text(page.getByTestId('count-unscored')), String(CUSTOMERS));
  });

  test("the Scoring page's card offers a year back, at most 730 days, and lists no run yet", async () => {
    await nav('Scoring').click();
    await card().getByRole('heading', { name: 'Backfill history' }).waitFor();
    await card().getByTestId('backfill-none').waitFor();
    const from = card().getByLabel('From (UTC day)');
    assert.equal(await from.inputValue(), daysBack(365));
    assert.equal(await from.getAttribute('min'), daysBack(BACKFILL_MAX_DAYS), "the server's bound");
    assert.equal(await from.getAttribute('max'), daysBack(1));
    await from.fill(daysBack(800));
    await card()
      .getByText(/^At most 730 days back: /)
      .waitFor();
    assert.equal(await card().getByRole('button', { name: 'Backfill history' }).isDisabled(), true);
    await from.fill(daysBack(365));
    assert.equal(await card().getByRole('button', { name: 'Backfill history' }).isEnabled(), true);
  });

  test('while a run started elsewhere goes, starting one says so and follows that run to its end', async () => {
    // A script's run over the last 180 days; the card, loaded before it, does not know of it yet.
    // The click's start arrives while it runs: tens of milliseconds after its answer, against the
    // run's 0.3–0.6 s over 40 customers (both backends, this machine).
    const other = await dashboard.call('POST', RUNS, { from: daysBack(180) });
    await card().getByRole('button', { name: 'Backfill history' }).click();
    const busy = card().getByRole('status').filter({ hasText: 'Not started' });
    await busy.waitFor();
    assert.match(
      await text(busy),
      new RegExp(
        `^Not started: A backfill is running for this account \\(${other.id}\\); wait for it to finish\\. Its progress is below\\.$`,
      ),
    );
    await card().locator('[data-testid="backfill-run"][data-status="done"]').waitFor();
    assert.equal(
      await text(run().getByTestId('backfill-counts')),
      `${CUSTOMERS} of ${CUSTOMERS} customers · ${(await dashboard.call('GET', `${RUNS}/${other.id}`)).versions_written.toLocaleString('en-US')} versions written`,
    );
    assert.match(
      await text(run().getByRole('status')),
      new RegExp(`^Backfill done: ${CUSTOMERS} customers from ${spoken(daysBack(180))}`),
    );
  });

  test('the card starts the rest of the year, shows it running, then how it ended, and lists both runs', async () => {
    await card().getByRole('button', { name: 'Backfill history' }).click();
    // The run as the start answered it, until the first read a second later.
    await card().locator('[data-testid="backfill-run"][data-status="running"]').waitFor();
    assert.equal(
      await card().getByRole('progressbar', { name: 'Customers backfilled' }).getAttribute('max'),
      String(CUSTOMERS),
    );
    await card().locator('[data-testid="backfill-run"][data-status="done"]').waitFor();
    const [mine] = (await dashboard.call('GET', RUNS)).data;
    assert.equal(mine.status, 'done');
    assert.equal(mine.from, daysBack(365));
    assert.ok(mine.versions_written > 0, JSON.stringify(mine));
    assert.equal(
      await card().getByRole('progressbar', { name: 'Customers backfilled' }).getAttribute('value'),
      String(CUSTOMERS),
    );
    assert.match(
      await text(run().getByRole('status')),
      new RegExp(
        `^Backfill done: ${CUSTOMERS} customers from ${spoken(daysBack(365))}, [\\d,]+ versions written\\. See the year on the Portfolio`,
      ),
    );
    const rows = card().getByRole('table', { name: 'Last backfills' }).locator('tbody tr');
    assert.equal(await rows.count(), 2);
    for (const row of await rows.all()) {
      const [, , status, customers] = await row.locator('td').allTextContents();
      assert.deepEqual([status, customers], ['Done', `${CUSTOMERS} of ${CUSTOMERS}`]);
    }
    await dashboard.shoot('backfill-card', SIZES);
  });

  test('right after, with no reload, the portfolio draws a year of trend and the week’s real drops', async () => {
    await page.evaluate('window.sameDocument = true');
    await run().getByRole('link', { name: 'Portfolio' }).click();
    await page.getByRole('heading', { name: 'Portfolio', level: 1 }).waitFor();
    await page.getByLabel('Over the last').selectOption('365');
    const chart = page.locator('svg.trend-chart[data-days="365"]');
    await chart.waitFor();
    assert.equal(await page.getByTestId('history-start').count(), 0, 'the history covers the whole year');
    assert.match(
      (await chart.getAttribute('aria-label')) ?? '',
      new RegExp(`^Customers per status band at the end of each day, ${daysBack(364)} to ${daysBack(0)}:`),
    );
    // The movers are the customers whose usage fell, not the backfill: backfilled versions move no one.
    const drops = page.locator('table.drops tbody tr');
    await drops.first().waitFor();
    const ids = await drops.locator('.sub').allTextContents();
    assert.deepEqual(ids.slice(0, MOVERS.length).sort(), [...MOVERS].sort());
    for (const change of await drops.locator('td.drop').allTextContents())
      assert.ok(Number(change) < 0, change);
    assert.equal(await page.evaluate('window.sameDocument'), true, 'no page load on the way');
    await dashboard.shoot('backfill-portfolio', SIZES);
  });

  test('and the calibration page judges every outcome by the score 90 days before it', async () => {
    await nav('Calibration').click();
    await page.getByRole('heading', { name: 'Calibration', level: 1 }).waitFor();
    const words = page.getByTestId('auc-words');
    await words.getByText(/^A retained customer outscored a churned one \d+% of the time/).waitFor();
    assert.equal(await text(page.getByTestId('count-unscored')), '0');
    assert.equal(await text(page.getByTestId('count-churned')), '10');
    assert.equal(await text(page.getByTestId('count-retained')), String(CUSTOMERS - 10));
    assert.equal(await page.evaluate('window.sameDocument'), true, 'no page load on the way');
    await dashboard.shoot('backfill-calibration', SIZES);
  });

  test('a viewer and a read key see the runs without the form', async () => {
    const withoutForm = async () => {
      await page.goto(`${dashboard.base}/settings`);
      await card().getByTestId('backfill-admin-only').waitFor();
      await card().getByRole('table', { name: 'Last backfills' }).waitFor();
      assert.equal(await card().getByLabel('From (UTC day)').count(), 0);
      assert.equal(await card().getByRole('button', { name: 'Backfill history' }).count(), 0);
    };
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await setPassword('viewer');
    await withoutForm();
    await dashboard.shoot('backfill-card-viewer', SIZES);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').fill(readKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Portfolio', level: 1 }).waitFor();
    await withoutForm();
    assert.deepEqual(dashboard.pageErrors, []);
  });
});
