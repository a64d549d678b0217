// The dashboard in a real browser, for the e2e tests: the real `vitals serve` on a temp SQLite
// data dir (or the database a test's `env` names), and Debian's Chromium driven by playwright-core,
// signed out on a blank page. Every page a test saves with shoot() is a screenshot at desktop and
// phone widths (or the test's own) in test-artifacts/, checked by axe-core and, at a phone's width,
// for sideways overflow.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { tempDir } from '../helpers/app.ts';
import { buildDashboardIfStale } from '../helpers/dashboard-build.ts';
import { ROOT, serverEnv, VitalsProcess } from '../helpers/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(ROOT, 'test-artifacts');
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// Run in the page through the DevTools protocol, which the page's CSP does not govern.
const AXE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 375, height: 812 };
/** Each screenshot's label (its file name's end) and viewport. */
export type Sizes = readonly (readonly [string, { width: number; height: number }])[];
const DEFAULT_SIZES: Sizes = [
  ['desktop', DESKTOP],
  ['phone', PHONE],
];
/** A viewport this narrow is a phone's: the page must not scroll sideways in it. */
const PHONE_WIDTHS = 480;

/** Chromium is installed by .ci/run; a developer without it gets a skip that says how to get it. */
export function chromiumSkip(): string | false {
  if (existsSync(CHROMIUM) || process.env.CI) return false;
  return `no ${CHROMIUM}: apt-get install -y chromium to run the dashboard tests`;
}

/** The dashboard's tests run once, on SQLite (a test that must run on both backends uses chromiumSkip). */
export function skipReason(): string | false {
  if (process.env.VITALS_TEST_BACKEND === 'postgres') return 'the dashboard runs once, on SQLite';
  return chromiumSkip();
}

/** The page's script and stylesheet answer 200 (a server started before the build finished would not serve them). */
async function assertAssetsServed(base: string): Promise<void> {
  const html = await (await fetch(`${base}/`)).text();
  const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
  assert.ok(assets.length >= 2, `the dashboard's page names its script and stylesheet:\n${html}`);
  for (const path of assets) {
    const res = await fetch(`${base}${path}`);
    await res.arrayBuffer();
    assert.equal(res.status, 200, `${path} is served`);
  }
}

export interface Dashboard {
  /** http://127.0.0.1:port */
  base: string;
  /** The server's API key. */
  key: string;
  page: Page;
  /** Errors the pages threw or logged (Chromium's own "Failed to load resource" lines aside), and scripts or stylesheets they could not load. */
  pageErrors: string[];
  /** What the server has logged so far. */
  serverOutput(): string;
  /** The test's own HTTP client: a JSON request with the key, and its answer. */
  request<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** request(), where anything but 2xx fails the test. */
  call<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** axe-core's WCAG 2.1 A and AA rules on the page as it is now; each violation named with its elements. */
  accessibilityViolations(): Promise<string[]>;
  /**
   * The page at desktop and phone widths (or the `sizes` given, each saved as `NAME-LABEL.png`), full
   * length, saved and checked (see the top of this file).
   */
  shoot(name: string, sizes?: Sizes): Promise<void>;
  /** Opens the dashboard, signs in with the key and waits for the portfolio. */
  signIn(): Promise<void>;
  close(): Promise<void>;
}

/** Builds the dashboard if web/ changed, then starts a server (with `env` over the defaults) and a browser. */
export async function openDashboard(env: Record<string, string> = {}): Promise<Dashboard> {
  buildDashboardIfStale();
  mkdirSync(ARTIFACTS, { recursive: true });
  const dataDir = tempDir();
  const profile = tempDir();
  const key = `vk_${Array.from({ length: 32 }, () => BASE62[randomInt(62)]).join('')}`;
  const server = await VitalsProcess.start(
    serverEnv({ VITALS_DATA_DIR: dataDir, VITALS_API_KEY: key, VITALS_RATE_LIMIT: 'off', ...env }),
  );
  const base = server.url;
  await assertAssetsServed(base);
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
    viewport: DESKTOP,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  // A script or stylesheet the page could not load leaves it blank without an error of its own.
  // (An API request a navigation cuts short fails too, and is no error.)
  const asset = (url: string) => new URL(url).pathname.startsWith('/assets/');
  page.on('requestfailed', (req) => {
    if (asset(req.url())) pageErrors.push(`${req.url()} failed: ${req.failure()?.errorText}`);
  });
  page.on('response', (res) => {
    if (res.status() >= 400 && asset(res.url())) pageErrors.push(`${res.url()} answered ${res.status()}`);
  });
  page.on('console', (msg) => {
    // Chromium logs every 4xx answer; the tests that expect one check the message the page shows.
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource'))
      pageErrors.push(msg.text());
  });

  async function request<T = any>(method: string, path: string, body?: unknown) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  }

  async function call<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await request<T>(method, path, body);
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async function accessibilityViolations(): Promise<string[]> {
    const result = (await page.evaluate(
      `${AXE};axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] })`,
    )) as {
      passes: unknown[];
      violations: { id: string; help: string; nodes: { target: string[] }[] }[];
    };
    assert.ok(result.passes.length > 10, 'axe ran its rules');
    return result.violations.map(
      (v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`,
    );
  }

  async function shoot(name: string, sizes: Sizes = DEFAULT_SIZES): Promise<void> {
    for (const [size, viewport] of sizes) {
      await page.setViewportSize(viewport);
      // Two frames: the charts redraw at the new width (the test's tsconfig has no DOM types, so strings).
      await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
      await page.screenshot({ path: join(ARTIFACTS, `${name}-${size}.png`), fullPage: true });
      assert.deepEqual(await accessibilityViolations(), [], `${name} at the ${size} width`);
      if (viewport.width <= PHONE_WIDTHS) {
        const overflow = await page.evaluate<number>(
          'document.documentElement.scrollWidth - window.innerWidth',
        );
        assert.ok(overflow <= 0, `${name} is ${overflow}px wider than a ${viewport.width}px phone`);
      }
    }
    await page.setViewportSize(DESKTOP);
  }

  async function signIn(): Promise<void> {
    await page.goto(`${base}/`);
    await page.getByLabel('API key').fill(key);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Portfolio', level: 1 }).waitFor();
  }

  return {
    base,
    key,
    page,
    pageErrors,
    serverOutput: () => server.stdout,
    request,
    call,
    accessibilityViolations,
    shoot,
    signIn,
    async close() {
      await context.close();
      await server.stop();
      for (const dir of [dataDir, profile]) rmSync(dir, { recursive: true, force: true });
    },
  };
}
