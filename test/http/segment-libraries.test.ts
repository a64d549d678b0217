// The Segment intake driven by the libraries themselves (docs/sources.md, "Segment"): Segment's
// @segment/analytics-node and RudderStack's @rudderstack/rudder-sdk-node (gzipped, labelled
// application/x-www-form-urlencoded) against a listening Vitals; the customers, the day's points,
// the scores, the log and the stats they leave.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Rudder from '@rudderstack/rudder-sdk-node';
import { Analytics } from '@segment/analytics-node';
import { buildTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let url: string;
before(async () => {
  t = await buildTestApp();
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  // A rule reads the reports metric: a track into it rescores the customer.
  const rule = await t.api.request('PUT', '/api/settings/health-score/factors/engagement', {
    metric: 'reports',
    aggregate: 'sum',
    window_days: 30,
    scale: { type: 'linear', from: 0, to: 10 },
  });
  assert.equal(rule.status, 200, rule.raw);
});
after(() => t.close());

const newSource = async (name: string, extra: Record<string, unknown> = {}) => {
  const res = await t.api.post('/api/sources', { type: 'segment', name, ...extra });
  assert.equal(res.status, 201, res.raw);
  return { id: res.body.id as string, key: res.body.write_key as string };
};
const today = () => {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())).toISOString();
};

describe("Segment's analytics-node", () => {
  test('group creates the customer, track counts into the day and rescores, identify links, page is ignored', async () => {
    const source = await newSource('Segment backend', {
      trusted: true,
      events: { 'Report Exported': 'reports' },
    });
    const analytics = new Analytics({ writeKey: source.key, host: url, flushAt: 20, maxRetries: 0 });
    const errors: unknown[] = [];
    analytics.on('error', (err) => errors.push(err));
    analytics.group({
      userId: 'seg_user',
      groupId: 'seg_acme',
      traits: { name: 'Seg Acme', email: 'ops@seg-acme.test', arr: 50_000, plan: 'pro' },
    });
    analytics.track({ userId: 'seg_user', event: 'Report Exported' });
    analytics.track({ userId: 'seg_user', event: 'Report Exported' });
    analytics.track({ userId: 'seg_user', event: 'Dashboard Opened', properties: { tab: 'home' } });
    analytics.identify({
      userId: 'seg_other',
      traits: { email: 'x@y.test' },
      context: { groupId: 'seg_acme' },
    });
    analytics.track({ userId: 'seg_other', event: 'Report Exported' });
    analytics.page({ userId: 'seg_user', name: 'Home' });
    await analytics.closeAndFlush();
    assert.deepEqual(errors, []);

    const customer = (await t.api.get('/api/customers/seg_acme')).body;
    assert.equal(customer.name, 'Seg Acme');
    assert.equal(customer.email, 'ops@seg-acme.test');
    assert.equal(customer.arr, 50_000);
    assert.deepEqual(customer.metadata, { plan: 'pro' });

    const reports = (await t.api.get('/api/customers/seg_acme/metrics?metric=reports')).body.data;
    assert.deepEqual(reports, [{ metric: 'reports', value: 3, at: today() }]);
    const opened = (await t.api.get('/api/customers/seg_acme/metrics?metric=dashboard_opened')).body.data;
    assert.deepEqual(opened, [{ metric: 'dashboard_opened', value: 1, at: today() }]);

    const score = (await t.api.get('/api/customers/seg_acme/health-score')).body;
    assert.equal(score.factors.engagement, 0.3);
    const history = (await t.api.get('/api/customers/seg_acme/health-score/history')).body.data;
    assert.equal(history.length, 1, 'rescored once for the batch');
    assert.equal(history[0].reason, 'metrics_updated');

    const log = (await t.api.get(`/api/sources/${source.id}/log?limit=100`)).body.data;
    assert.deepEqual(log.map((e: { kind: string; result: string }) => `${e.kind} ${e.result}`).reverse(), [
      'group applied',
      'track applied',
      'track applied',
      'track applied',
      'identify applied',
      'track applied',
      'page ignored',
    ]);
    const stats = (await t.api.get(`/api/sources/${source.id}`)).body.stats;
    assert.deepEqual([stats.received, stats.applied, stats.ignored, stats.refused], [7, 6, 1, 0]);
    assert.ok(stats.last_received_at);

    const audit = (await t.api.get('/api/audit-log?limit=10')).body.data.find(
      (e: { object_id: string }) => e.object_id === 'seg_acme',
    );
    assert.deepEqual(audit.actor, { type: 'source', id: source.id, label: 'Segment backend' });
    assert.equal(audit.action, 'customer.created');
  });

  test('an untrusted key: metadata on an existing customer only; the rest refused in the log', async () => {
    const source = await newSource('Segment browser');
    const analytics = new Analytics({ writeKey: source.key, host: url, flushAt: 20, maxRetries: 0 });
    analytics.group({ userId: 'b1', groupId: 'seg_acme', traits: { seats: 12 } });
    analytics.group({ userId: 'b1', groupId: 'seg_acme', traits: { arr: 1 } });
    analytics.group({ userId: 'b1', groupId: 'seg_new', traits: { email: 'new@x.test' } });
    await analytics.closeAndFlush();
    const customer = (await t.api.get('/api/customers/seg_acme')).body;
    assert.equal(customer.arr, 50_000);
    assert.deepEqual(customer.metadata, { plan: 'pro', seats: 12 });
    assert.equal((await t.api.get('/api/customers/seg_new')).status, 404);
    const log = (await t.api.get(`/api/sources/${source.id}/log`)).body.data;
    assert.deepEqual(
      log.map((e: { result: string }) => e.result),
      ['refused', 'refused', 'applied'],
    );
    assert.match(log[0].reason, /^not_trusted: /);
    assert.match(log[1].reason, /^not_trusted: this source is not trusted to set arr/);
  });
});

describe("RudderStack's rudder-sdk-node (gzipped, labelled form-urlencoded)", () => {
  test('group, track and identify arrive and apply; a retried messageId applies once', async () => {
    const source = await newSource('Rudder backend', { trusted: true });
    const client = new Rudder(source.key, { dataPlaneUrl: url, flushAt: 20, retryCount: 0 });
    client.group({
      userId: 'rs_user',
      groupId: 'rs_acme',
      traits: { email: 'ops@rs-acme.test', owner: 'csm@vendor.test', renewal_at: '2027-01-01T00:00:00Z' },
    });
    client.track({ userId: 'rs_user', event: 'Report Exported' });
    client.track({ userId: 'rs_user', event: 'Report Exported', context: { groupId: 'rs_acme' } });
    client.identify({ userId: 'rs_user', traits: { name: 'Someone' } });
    await client.flush();

    const customer = (await t.api.get('/api/customers/rs_acme')).body;
    assert.equal(customer.name, 'rs_acme', 'the name defaults to the groupId');
    assert.equal(customer.owner, 'csm@vendor.test');
    assert.equal(customer.renewal_at, '2027-01-01T00:00:00.000Z');
    const points = (await t.api.get('/api/customers/rs_acme/metrics?metric=report_exported')).body.data;
    assert.deepEqual(points, [{ metric: 'report_exported', value: 2, at: today() }]);
    const log = (await t.api.get(`/api/sources/${source.id}/log`)).body.data;
    assert.deepEqual(log.map((e: { kind: string; result: string }) => `${e.kind} ${e.result}`).reverse(), [
      'group applied',
      'track applied',
      'track applied',
      'identify ignored',
    ]);

    // The same message sent again, as a library's retry would: ignored, the count unchanged.
    const again = new Rudder(source.key, { dataPlaneUrl: url, flushAt: 20, retryCount: 0 });
    again.track({ userId: 'rs_user', event: 'Report Exported', messageId: 'rs-retry-1' } as never);
    again.track({ userId: 'rs_user', event: 'Report Exported', messageId: 'rs-retry-1' } as never);
    await again.flush();
    const after = (await t.api.get('/api/customers/rs_acme/metrics?metric=report_exported')).body.data;
    assert.equal(after[0].value, 3);
    const last = (await t.api.get(`/api/sources/${source.id}/log?limit=1`)).body.data[0];
    assert.equal(last.result, 'ignored');
    assert.match(last.reason, /^duplicate: /);
  });
});
