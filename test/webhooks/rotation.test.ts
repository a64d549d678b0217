// Rotating a webhook's secret with an overlap (docs/webhooks.md, "Rotating the secret"): while it
// lasts every delivery is signed with the new secret and the old one, in both headers, so a
// receiver verifies with either (the `standardwebhooks` library and our own verifyWebhook); once
// it ends, or with none (the default), the old secret signs nothing. The app and its dispatcher
// share a clock the tests move: the overlap ends by the send time, with no job.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError } from '../../src/client/index.ts';
import { iso } from '../../src/domain/time.ts';
import { Dispatcher } from '../../src/webhooks/dispatcher.ts';
import { buildTestApp, type Client, TEST_WEBHOOK_CONFIG, type TestApp, TestClock } from '../helpers/app.ts';
import { type Received, TestReceiver } from '../helpers/receiver.ts';

const hex = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

/** Does the delivery verify with this secret, for the standardwebhooks library? */
function standardVerifies(secret: string, got: Received): boolean {
  try {
    new Webhook(secret.slice('whsec_'.length)).verify(got.body, got.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

describe('webhook secret rotation', () => {
  // Real time to start with: standardwebhooks checks webhook-timestamp against the real clock
  // (5 minutes either way), so the tests move this one by at most a few minutes.
  const clock = new TestClock(new Date().toISOString());
  let t: TestApp;
  let dispatcher: Dispatcher;
  let receiver: TestReceiver;
  let accounts = 0;
  before(async () => {
    t = await buildTestApp({ now: clock.now });
    dispatcher = new Dispatcher({
      store: t.store,
      config: { ...TEST_WEBHOOK_CONFIG, pollMs: 3_600_000 },
      log: t.app.log,
      now: clock.now,
    });
    dispatcher.start();
    receiver = await TestReceiver.start();
  });
  after(async () => {
    await dispatcher.stop();
    await t.close();
    await receiver.close();
  });

  const setup = async () => {
    const api = await t.newAccount(`rotation-${++accounts}`);
    const res = await api.post('/api/webhooks', {
      url: `${receiver.url}/rotation-${accounts}`,
      events: ['customer.created'],
    });
    assert.equal(res.status, 201, res.raw);
    return { api, id: res.body.id as string, secret: res.body.secret as string };
  };

  const rotate = async (api: Client, id: string, body?: unknown) => {
    const res = await api.post(`/api/webhooks/${id}/rotate-secret`, body);
    assert.equal(res.status, 200, res.raw);
    return res.body as { secret: string; previous_secret_expires_at: string | null };
  };

  /** Sends a test event and answers the request the receiver got for it. */
  const delivered = async (api: Client, id: string): Promise<Received> => {
    const sent = await api.post(`/api/webhooks/${id}/test`);
    assert.equal(sent.status, 200, sent.raw);
    const eventId = sent.body.event_id as string;
    const byEvent = (r: Received) => r.headers['x-vitals-event-id'] === eventId;
    await receiver.until((all) => all.some(byEvent));
    return receiver.requests.find(byEvent) as Received;
  };

  const verifies = (secret: string, got: Received) => {
    try {
      verifyWebhook(secret, got.body, got.headers, { now: clock.ms });
      return true;
    } catch (err) {
      assert.ok(err instanceof WebhookVerificationError, String(err));
      return false;
    }
  };

  test('during an overlap both headers carry both signatures, new first, and either secret verifies', async () => {
    const { api, id, secret: old } = await setup();
    const rotated = await rotate(api, id, { expire_previous_in: 3600 });
    assert.notEqual(rotated.secret, old);
    assert.equal(rotated.previous_secret_expires_at, iso(clock.ms + 3_600_000));
    const shown = await api.get(`/api/webhooks/${id}`);
    assert.equal(shown.body.previous_secret_expires_at, rotated.previous_secret_expires_at);
    assert.ok(!shown.raw.includes(old.slice(6)) && !shown.raw.includes(rotated.secret.slice(6)), shown.raw);

    const got = await delivered(api, id);
    assert.equal(got.headers['x-vitals-signature'], `${hex(rotated.secret, got.body)},${hex(old, got.body)}`);
    const standard = String(got.headers['webhook-signature']).split(' ');
    assert.equal(standard.length, 2);
    assert.ok(standard.every((s) => s.startsWith('v1,')));
    assert.equal(standardVerifies(old, got), true, 'standardwebhooks with the old secret');
    assert.equal(standardVerifies(rotated.secret, got), true, 'standardwebhooks with the new secret');
    assert.equal(verifies(old, got), true, 'verifyWebhook with the old secret');
    assert.equal(verifies(rotated.secret, got), true, 'verifyWebhook with the new secret');
  });

  test('the old secret signs until the overlap ends by the send time, then verifies nothing', async () => {
    const { api, id, secret: old } = await setup();
    const { secret } = await rotate(api, id, { expire_previous_in: 60 });
    clock.advance(59_999);
    const last = await delivered(api, id);
    assert.equal(verifies(old, last), true);
    assert.equal(standardVerifies(old, last), true);

    clock.advance(1);
    const after = await delivered(api, id);
    assert.equal(after.headers['x-vitals-signature'], hex(secret, after.body));
    assert.equal(String(after.headers['webhook-signature']).split(' ').length, 1);
    assert.equal(verifies(old, after), false, 'verifyWebhook refuses the old secret');
    assert.equal(standardVerifies(old, after), false, 'standardwebhooks refuses the old secret');
    assert.equal(verifies(secret, after), true);
    assert.equal(standardVerifies(secret, after), true);
    assert.equal((await api.get(`/api/webhooks/${id}`)).body.previous_secret_expires_at, null);
  });

  test('with no overlap (no body, {}, null or 0) the old secret stops at once', async () => {
    const { api, id, secret: first } = await setup();
    let old = first;
    for (const body of [undefined, {}, null, { expire_previous_in: 0 }]) {
      const rotated = await rotate(api, id, body);
      assert.equal(rotated.previous_secret_expires_at, null, JSON.stringify(body));
      const got = await delivered(api, id);
      assert.equal(got.headers['x-vitals-signature'], hex(rotated.secret, got.body));
      assert.equal(verifies(old, got), false, JSON.stringify(body));
      assert.equal(standardVerifies(old, got), false, JSON.stringify(body));
      assert.equal(verifies(rotated.secret, got), true);
      old = rotated.secret;
    }
  });

  test('a second rotation ends the oldest secret: one previous secret is kept, with the new expiry', async () => {
    const { api, id, secret: s0 } = await setup();
    const { secret: s1 } = await rotate(api, id, { expire_previous_in: 3600 });
    clock.advance(1000);
    const second = await rotate(api, id, { expire_previous_in: 600 });
    assert.equal(second.previous_secret_expires_at, iso(clock.ms + 600_000));
    const got = await delivered(api, id);
    assert.equal(got.headers['x-vitals-signature'], `${hex(second.secret, got.body)},${hex(s1, got.body)}`);
    assert.equal(verifies(s0, got), false);
    assert.equal(standardVerifies(s0, got), false);
    assert.equal(verifies(s1, got), true);
    assert.equal(verifies(second.secret, got), true);

    // A rotation without an overlap drops the previous one too.
    const third = await rotate(api, id);
    assert.equal(third.previous_secret_expires_at, null);
    const last = await delivered(api, id);
    assert.equal(verifies(s1, last), false);
    assert.equal(verifies(second.secret, last), false);
    assert.equal(verifies(third.secret, last), true);
  });

  test('the longest overlap is a week', async () => {
    const { api, id } = await setup();
    const rotated = await rotate(api, id, { expire_previous_in: 604_800 });
    assert.equal(rotated.previous_secret_expires_at, iso(clock.ms + 604_800_000));
  });

  test('a bad expire_previous_in or an unknown field is 400 with its param, and the secrets stay as they were', async () => {
    const { api, id, secret: s0 } = await setup();
    const { secret: s1, previous_secret_expires_at } = await rotate(api, id, { expire_previous_in: 3600 });
    const before = (await api.get(`/api/webhooks/${id}`)).body;
    const cases: [unknown, string, string][] = [
      [{ expire_previous_in: -1 }, 'parameter_invalid', 'expire_previous_in'],
      [{ expire_previous_in: 604_801 }, 'parameter_invalid', 'expire_previous_in'],
      [{ expire_previous_in: '60' }, 'parameter_invalid', 'expire_previous_in'],
      [{ expire_previous_in: 1.5 }, 'parameter_invalid', 'expire_previous_in'],
      [{ expire_previous_in: null }, 'parameter_invalid', 'expire_previous_in'],
      [{ expire_previous_in: 60, secret: 'whsec_mine' }, 'parameter_unknown', 'secret'],
      [{ expires_in: 60 }, 'parameter_unknown', 'expires_in'],
    ];
    for (const [body, code, param] of cases) {
      const res = await api.post(`/api/webhooks/${id}/rotate-secret`, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.raw}`);
      assert.equal(res.body.error.code, code, res.raw);
      assert.equal(res.body.error.param, param, res.raw);
    }
    assert.deepEqual((await api.get(`/api/webhooks/${id}`)).body, before);
    assert.equal(before.previous_secret_expires_at, previous_secret_expires_at);
    const got = await delivered(api, id);
    assert.equal(got.headers['x-vitals-signature'], `${hex(s1, got.body)},${hex(s0, got.body)}`);
    assert.equal(verifies(s1, got), true);
    assert.equal(verifies(s0, got), true);
  });

  test("another account's rotate-secret is 404 and changes nothing", async () => {
    const { api, id, secret } = await setup();
    const other = await t.newAccount(`rotation-other-${++accounts}`);
    const res = await other.post(`/api/webhooks/${id}/rotate-secret`, { expire_previous_in: 60 });
    assert.equal(res.status, 404, res.raw);
    assert.equal(res.body.error.code, 'webhook_not_found');
    const got = await delivered(api, id);
    assert.equal(got.headers['x-vitals-signature'], hex(secret, got.body));
  });
});
