// A webhook's backlog on its page (docs/webhooks.md, "Backlog"), in Chromium: the server runs
// without a dispatcher (VITALS_ROLES=api), so the deliveries the test queues stay pending and the
// page shows how many there are and since when. Screenshots in test-artifacts/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Dashboard, openDashboard, skipReason } from './browser.ts';

describe('a webhook’s backlog in the dashboard', { skip: skipReason(), timeout: 120_000 }, () => {
  let dashboard: Dashboard;
  before(async () => {
    dashboard = await openDashboard({ VITALS_ROLES: 'api' });
  });
  after(() => dashboard?.close());

  test('the webhook page says how many deliveries are pending and since when', async () => {
    const { call, page, base } = dashboard;
    const idle = await call<{ id: string }>('POST', '/api/webhooks', {
      url: 'http://127.0.0.1:9/idle',
      events: ['customer.deleted'],
    });
    const busy = await call<{ id: string }>('POST', '/api/webhooks', {
      url: 'http://127.0.0.1:9/busy',
      events: ['customer.created'],
      description: 'CRM sync',
    });
    for (let i = 0; i < 3; i++) {
      await call('POST', '/api/customers', {
        customer_id: `cus_${i}`,
        name: `Customer ${i}`,
        email: `c${i}@example.com`,
      });
    }
    await dashboard.signIn();
    await page.goto(`${base}/webhooks/${busy.id}`);
    const backlog = page.getByText('Backlog:');
    await backlog.waitFor();
    assert.match((await backlog.textContent()) ?? '', /^Backlog: 3 pending, the oldest waiting since .+/);
    await dashboard.shoot('webhook-backlog');
    await page.goto(`${base}/webhooks/${idle.id}`);
    await page.getByText('Backlog: nothing pending').waitFor();
    assert.deepEqual(dashboard.pageErrors, []);
  });
});
