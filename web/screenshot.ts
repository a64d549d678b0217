// README's picture of the portfolio page (docs/screenshot-portfolio.png), made from a believable
// account: 400 customers with 24 score changes each over the last 90 days, some drifting down,
// one falling off a cliff this week. Run by hand after changing the page:
//   ./node_modules/.bin/node web/screenshot.ts
import { join } from 'node:path';
import { scoreFactors } from '../src/domain/health.ts';
import { DAY_MS } from '../src/domain/portfolio.ts';
import type { ScoreRecord } from '../src/store/store.ts';
import { DESKTOP, openDashboard } from '../test/e2e/browser.ts';
import { ROOT } from '../test/helpers/server.ts';
import { createTestDatabase } from '../test/helpers/stores.ts';
import { transaction } from '../test/helpers/transaction.ts';

const CUSTOMERS = 400;
const CHANGES = 24;
const NAMES = [
  'Acme',
  'Initech',
  'Hooli',
  'Umbrella',
  'Stark',
  'Wayne',
  'Wonka',
  'Tyrell',
  'Cyberdyne',
  'Soylent',
];
const PLANS = ['starter', 'team', 'business', 'enterprise'];
const wave = (i: number, k: number) => {
  const x = Math.sin(i * 12.9898 + k * 78.233) * 43758.5453;
  return x - Math.floor(x);
};

const db = await createTestDatabase('sqlite');
const store = db.open();
await store.migrate();
const account = await store.ensureAccount('default', Date.now());
const settings = await store.getSettings(account.id);
const start = Date.now() - 90 * DAY_MS;
await transaction(store, async (tx) => {
  for (let i = 0; i < CUSTOMERS; i++) {
    await tx.insertCustomer(account.id, {
      id: `cus_${i}`,
      name: `${NAMES[i % NAMES.length]} ${Math.floor(i / NAMES.length) + 1}`,
      email: `ops${i}@example.com`,
      metadata: { plan: PLANS[i % PLANS.length] },
      createdAt: start,
      updatedAt: start,
    });
  }
});
const current: (ScoreRecord | null)[] = new Array(CUSTOMERS).fill(null);
for (let k = 0; k < CHANGES; k++) {
  await transaction(store, async (tx) => {
    const records: ScoreRecord[] = [];
    for (let i = 0; i < CUSTOMERS; i++) {
      // A quarter of the customers drift down over the quarter; the rest wander around their level.
      const level = 0.35 + 0.6 * wave(i, 0) - (i % 4 === 0 ? (0.3 * k) / CHANGES : 0);
      let usage = Math.min(1, Math.max(0, level + (wave(i, k + 1) - 0.5) * 0.2));
      if (i === 7 && k === CHANGES - 1) usage = 0.08; // this week's cliff
      const at = Math.floor(Math.min(Date.now(), start + (k + wave(i, k + 99)) * ((90 * DAY_MS) / CHANGES)));
      const u = scoreFactors(`cus_${i}`, current[i] ?? null, { usage, support: level }, settings, at);
      current[i] = u.record;
      records.push(u.record);
    }
    await tx.writeScores(account.id, records, 'factors_updated');
  });
}
await store.close();

const dashboard = await openDashboard({ VITALS_DATA_DIR: db.dir });
try {
  await dashboard.signIn();
  const { page } = dashboard;
  await page.getByLabel('Over the last').selectOption('90');
  await page.locator('svg.trend-chart[data-days="90"]').waitFor();
  await page.locator('table.drops tbody tr').first().waitFor();
  await page.locator('svg.histogram').waitFor();
  const path = join(ROOT, 'docs', 'screenshot-portfolio.png');
  await page.screenshot({ path, fullPage: true, clip: { x: 0, y: 0, width: DESKTOP.width, height: 1330 } });
  console.log(`Wrote ${path}`);
} finally {
  await dashboard.close();
  await db.drop();
}
