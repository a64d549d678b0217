// The dashboard in a real browser: Debian's Chromium driven by playwright-core, against the real
// `vitals serve` on a temp SQLite data dir (./browser.ts), with a local webhook receiver. Data is
// seeded through the API. Every page is saved as a screenshot at desktop and phone widths in
// test-artifacts/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import type { Locator, Page } from 'playwright-core';
import { verifyVitalsSignature } from '../../src/domain/signing.ts';
import { TestReceiver } from '../helpers/receiver.ts';
import { type Dashboard, openDashboard, skipReason } from './browser.ts';

const text = async (locator: Locator) => (await locator.textContent()) ?? '';

describe('the dashboard in Chromium', { skip: skipReason(), timeout: 180_000 }, () => {
  let dashboard: Dashboard;
  let receiver: TestReceiver;
  let base: string;
  let KEY: string;
  let page: Page;
  const call: Dashboard['call'] = (method, path, body) => dashboard.call(method, path, body);
  const shoot = (name: string) => dashboard.shoot(name);

  async function seed(): Promise<void> {
    const names = ['Acme', 'Initech', 'Hooli', 'Umbrella', 'Stark', 'Wayne', 'Wonka', 'Tyrell', 'Cyberdyne'];
    for (let i = 0; i < 36; i++) {
      const id = `cus_${String(i).padStart(2, '0')}`;
      await call('POST', '/api/customers', {
        customer_id: id,
        name: `${names[i % names.length]} ${i}`,
        email: `${id}@example.com`,
        metadata: { plan: i % 3 === 0 ? 'enterprise' : 'pro' },
      });
      // Scores from 0.30 to 0.98, so that Globex (0.25) is the lowest of all.
      const base = 0.3 + ((i * 37) % 69) / 100;
      await call('POST', `/api/customers/${id}/health-score`, {
        factors: { usage: base, support: Math.min(1, base + 0.05), billing: Math.max(0, base - 0.05) },
      });
    }
    await call('POST', '/api/customers', {
      customer_id: 'globex',
      name: 'Globex Corporation',
      email: 'ops@globex.example',
      metadata: { plan: 'enterprise', region: 'eu', seats: 120 },
    });
    // Four changes: healthy, at risk, critical, then critical and lower still (0.25).
    for (const factors of [
      { usage: 0.9, support: 0.8, billing: 0.9 },
      { usage: 0.6, support: 0.5, billing: 0.5 },
      { usage: 0.3, support: 0.4, billing: 0.3 },
      { usage: 0.05, support: 0.6, billing: 0.1 },
    ]) {
      await call('POST', '/api/customers/globex/health-score', { factors });
      await setTimeout(200); // apart in time, as on the chart's time axis
    }
  }

  before(async () => {
    receiver = await TestReceiver.start();
    dashboard = await openDashboard({ VITALS_WEBHOOK_BACKOFF: '100ms,200ms,400ms' });
    ({ base, key: KEY, page } = dashboard);
    await seed();
  });

  after(async () => {
    await dashboard?.close();
    await receiver?.close();
  });

  test("a mistyped address shows the dashboard's not-found page (404), not JSON, signed in or not", async () => {
    const res = await page.goto(`${base}/setings`);
    assert.equal(res?.status(), 404);
    await page.getByRole('heading', { name: 'Page not found', level: 1 }).waitFor();
    assert.match(await text(page.locator('main')), /There is no page at \/setings\./);
    await shoot('not-found');
    await page.getByRole('link', { name: 'Portfolio', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/');
  });

  test('a wrong API key is refused with the reason', async () => {
    await page.goto(`${base}/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('API key').fill('vk_00000000000000000000000000000000');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await text(alert), /That API key was not accepted\. The API key is not valid/);
    await shoot('sign-in');
  });

  test('signing in shows the portfolio, critical customers first', async () => {
    await page.getByLabel('API key').fill(KEY);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Portfolio', level: 1 }).waitFor();
    const first = page.locator('table.scores:not(.drops) tbody tr').first();
    await first.waitFor();
    assert.match(await text(first), /Globex Corporation[\s\S]*0\.250[\s\S]*Critical/);
    // Every score, split by band: the critical ones (below 0.4) in the bins of 0.25, 0.30 and 0.35.
    const histogram = page.locator('svg.histogram[data-total="37"]');
    await histogram.waitFor();
    assert.equal(await histogram.locator('rect.bar.critical').count(), 3);
    const total = page.locator('.cards .stat').first();
    assert.match(await text(total), /37/);
    await shoot('portfolio');
  });

  test('the keyboard reaches the skip link first, then the navigation', async () => {
    await page.reload();
    await page.getByRole('heading', { name: 'Portfolio', level: 1 }).waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate('document.activeElement.textContent'), 'Skip to content');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    // The brand, then the first link: the Inbox (a key has no My book, and no count).
    assert.equal(await page.evaluate('document.activeElement.textContent'), 'Inbox');
    assert.equal(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle'), 'solid');
  });

  test('searching finds a customer by email', async () => {
    await page.getByLabel('Search customers by id, name or email').fill('globex.example');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const results = page.getByRole('table', { name: 'Customers matching “globex.example”' });
    await results.waitFor();
    assert.equal(await results.locator('tbody tr').count(), 1);
  });

  test("a customer's page shows its score, factors and a history chart with every change", async () => {
    await page.locator('table.scores:not(.drops)').getByRole('link', { name: 'Globex Corporation' }).click();
    await page.getByRole('heading', { name: 'Globex Corporation', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/customers/globex');
    assert.equal(await text(page.getByTestId('current-score')), '0.250');
    const points = page.locator('svg.history-chart circle.point');
    await points.first().waitFor();
    assert.equal(await points.count(), 4);
    assert.equal(await page.locator('svg.history-chart').getAttribute('data-points'), '4');
    await shoot('customer');
  });

  test('changing the weights previews the band changes, then moves the score', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Scoring' }).click();
    await page.getByRole('heading', { name: 'Factor weights' }).waitFor();
    await page.getByLabel('Factor 1 name').fill('usage');
    await page.getByLabel('Weight of factor 1').fill('0.1');
    await page.getByRole('button', { name: 'Add factor' }).click();
    await page.getByLabel('Factor 2 name').fill('support');
    await page.getByLabel('Weight of factor 2').fill('0.5');
    const sum = page.locator('p.sum');
    assert.match(await text(sum), /0\.6 — The weights add up to 0\.6; they must add up to 1/);
    await page.getByRole('button', { name: 'Add factor' }).click();
    await page.getByLabel('Factor 3 name').fill('Billing');
    await page.getByText('Lowercase letters, digits and _').waitFor();
    await page.getByLabel('Factor 3 name').fill('billing');
    await page.getByLabel('Weight of factor 3').fill('0.1');
    await page.getByLabel('Weight of factor 2').fill('0.8');
    await page.getByText('Sum: 1 ✓').waitFor();
    await page.getByText('Before you save').waitFor();
    // Globex goes from 0.25 (critical) to 0.495 (at risk): at least one customer changes band.
    assert.ok(Number(await text(page.getByTestId('band-changes'))) >= 1);
    await shoot('settings');
    await page.getByRole('button', { name: 'Save weights' }).click();
    await page.getByText(/Weights saved\./).waitFor();

    await page.goto(`${base}/customers/globex`);
    await page.getByRole('heading', { name: 'Globex Corporation', level: 1 }).waitFor();
    assert.equal(await text(page.getByTestId('current-score')), '0.495');
    // The chart draws once its width is measured, after the score: wait for it, then count.
    const points = page.locator('svg.history-chart circle.point');
    await points.first().waitFor();
    assert.equal(await points.count(), 5);
    // Weights read as shares (80%, not 0.8), the exact value on hover.
    const weight = page.locator('td[title="Weight 0.8"]');
    assert.equal(await text(weight), '80%');
    await shoot('customer-weights');
  });

  test('an API refusal is shown with its message', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Add a webhook' }).waitFor();
    await page.getByLabel('Endpoint URL').fill('http://169.254.169.254/latest');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await text(alert), /Not saved: 'url' .*\(parameter_invalid\)/);
  });

  test('a new webhook shows its secret once, and a triggered event appears in its delivery log', async () => {
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/hooks/vitals`);
    await page.getByLabel('customer.updated').check();
    await page.getByLabel('Description (optional)').fill('CRM sync');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = page.getByRole('textbox', { name: 'Signing secret' });
    await secret.waitFor();
    assert.match(await secret.inputValue(), /^whsec_[A-Za-z0-9+/=]+$/);
    await shoot('webhooks');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    await page.reload();
    await page.getByRole('heading', { name: 'Endpoints' }).waitFor();
    await page.getByRole('link', { name: `${receiver.url}/hooks/vitals` }).waitFor();
    assert.equal(
      await page.getByRole('textbox', { name: 'Signing secret' }).count(),
      0,
      'the secret is not shown again',
    );
    assert.doesNotMatch(await page.content(), /whsec_/);

    // The event: rename the customer in the dashboard.
    await page.goto(`${base}/customers/globex`);
    await page.getByLabel('Name', { exact: true }).fill('Globex Corp.');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('heading', { name: 'Globex Corp.', level: 1 }).waitFor();
    const [received] = await receiver.waitFor(1);
    assert.equal(received?.headers['x-vitals-event'], 'customer.updated');

    await page.goto(`${base}/webhooks`);
    await page.getByRole('link', { name: `${receiver.url}/hooks/vitals` }).click();
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
    const delivery = page.locator('li.delivery').first();
    await delivery.getByText('succeeded').waitFor();
    assert.match(await text(delivery), /customer\.updated[\s\S]*1 attempt/);
    await delivery.locator('summary').click();
    assert.match(await text(delivery), /#1 .* HTTP 200/);
    await shoot('webhook');

    await delivery.getByRole('button', { name: /^Retry/ }).click();
    await page.getByText(/is queued to be sent again/).waitFor();
    await receiver.waitFor(2);
  });

  test('"Send test event" sends one signed webhook.test, and the log follows its delivery to succeeded', async () => {
    const webhook = await call<{ id: string; secret: string }>('POST', '/api/webhooks', {
      url: `${receiver.url}/hooks/test`,
      events: ['customer.deleted'],
    });
    const before = receiver.requests.length;
    await page.goto(`${base}/webhooks/${webhook.id}`);
    await page.getByText(/^No deliveries yet/).waitFor();

    // The request is held until the button has been seen disabled, so that no timing is assumed.
    const endpoint = `${base}/api/webhooks/${webhook.id}/test`;
    let arrived!: () => void;
    let release!: () => void;
    const requested = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(endpoint, async (route) => {
      arrived();
      await released;
      await route.continue();
    });
    const send = page.getByRole('button', { name: 'Send test event' });
    await send.click();
    await requested;
    assert.equal(await send.isDisabled(), true, 'disabled while the request runs');
    release();

    const sent = page.getByRole('status').filter({ hasText: 'Test event sent' });
    await sent.waitFor();
    await page.unroute(endpoint);
    const deliveryId = /delivery (dlv_\S+) is/.exec(await text(sent))?.[1];
    assert.ok(deliveryId, await text(sent));
    const row = page.locator('li.delivery').first();
    await row.filter({ hasText: deliveryId }).getByText('succeeded', { exact: true }).waitFor();
    await row.getByTestId('delivery-customer').waitFor();
    assert.match(await text(row), /^webhook\.test\s*a test event, about no customer\s*succeeded\s*1 attempt/);
    await page
      .getByRole('status')
      .filter({ hasText: `Test delivery ${deliveryId} succeeded.` })
      .waitFor();
    assert.equal(await send.isEnabled(), true);

    const arrivals = receiver.requests.slice(before).filter((r) => r.path === '/hooks/test');
    assert.equal(arrivals.length, 1, 'exactly one request');
    const [got] = arrivals;
    assert.ok(got);
    assert.equal(got.headers['x-vitals-event'], 'webhook.test');
    const body = JSON.parse(got.body);
    assert.equal(body.type, 'webhook.test');
    assert.equal(body.data.webhook_id, webhook.id);
    assert.ok(verifyVitalsSignature(webhook.secret, got.body, String(got.headers['x-vitals-signature'])));
    await shoot('webhook-test-event');
  });

  test('a disabled webhook cannot be sent a test event: the button says why, and a 409 is shown', async () => {
    const webhook = await call<{ id: string }>('POST', '/api/webhooks', {
      url: `${receiver.url}/hooks/disabled`,
      events: ['customer.deleted'],
    });
    await call('PATCH', `/api/webhooks/${webhook.id}`, { enabled: false });
    await page.goto(`${base}/webhooks/${webhook.id}`);
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
    const send = page.getByRole('button', { name: 'Send test event' });
    await page.getByText('Status: disabled').waitFor();
    assert.equal(await send.isDisabled(), true);
    const hint = page.getByText('Enable the webhook to send a test event.');
    assert.equal(await hint.isVisible(), true);
    assert.equal(await send.getAttribute('aria-describedby'), await hint.getAttribute('id'));
    await shoot('webhook-disabled');

    // Enabled on the page, disabled behind its back: the API's refusal is shown as it says.
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByText(/Enabled: deliveries resume/).waitFor();
    assert.equal(await send.isEnabled(), true);
    await call('PATCH', `/api/webhooks/${webhook.id}`, { enabled: false });
    await send.click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await text(alert), /disabled; enable it .* to send it a test event\. \(webhook_disabled\)/);
    assert.equal(await send.isEnabled(), true, 'no longer busy');
    assert.equal(await page.locator('li.delivery').count(), 0);
    assert.equal(receiver.requests.filter((r) => r.path === '/hooks/disabled').length, 0);
  });

  test('rotating the secret with an overlap: deliveries carry both signatures until it ends', async () => {
    const webhook = await call<{ id: string; secret: string }>('POST', '/api/webhooks', {
      url: `${receiver.url}/hooks/rotated`,
      events: ['customer.deleted'],
    });
    await page.goto(`${base}/webhooks/${webhook.id}`);
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
    const overlap = page.getByLabel('The current secret keeps signing for');
    assert.equal(await overlap.inputValue(), '86400', 'a day by default: the receiver keeps verifying');
    await overlap.selectOption({ label: '1 hour' });
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      return dialog.accept();
    });
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const shown = page.getByRole('textbox', { name: 'Signing secret' });
    await shown.waitFor();
    assert.match(asked, /keeps signing beside the new one for 1 hour/);
    const secret = await shown.inputValue();
    assert.notEqual(secret, webhook.secret);
    await page.locator('#previous-secret').waitFor();
    assert.match(await text(page.locator('#previous-secret')), /The previous secret also signs until /);
    await shoot('webhook-rotated');

    await call('POST', `/api/webhooks/${webhook.id}/test`);
    const rotated = (requests: { path: string }[]) => requests.filter((r) => r.path === '/hooks/rotated');
    await receiver.until((requests) => rotated(requests).length >= 1);
    const [got] = rotated(receiver.requests) as typeof receiver.requests;
    const signatures = String(got?.headers['x-vitals-signature']).split(',');
    assert.equal(signatures.length, 2, 'the new signature, then the old one');
    assert.ok(verifyVitalsSignature(secret, String(got?.body), signatures[0] as string));
    assert.ok(verifyVitalsSignature(webhook.secret, String(got?.body), signatures[1] as string));
  });

  test('the server logged no errors and the pages threw none', () => {
    assert.doesNotMatch(dashboard.serverOutput(), /"level":50/);
    assert.deepEqual(dashboard.pageErrors, []);
  });
});
