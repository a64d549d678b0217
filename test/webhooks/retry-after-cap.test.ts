// A receiver's Retry-After moves the next attempt at most 1 hour away (docs/webhooks.md,
// "Delivery and retries"): the real app and dispatcher, a real local receiver answering 503 with
// "Retry-After: 86400", and the delivery as the API and the store see it. Nothing waits for the
// hour: the store's claim takes the time as a parameter, so the test asks it at the due time.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_RETRY_AFTER_MS } from '../../src/webhooks/backoff.ts';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';
import { waitForDelivery } from '../helpers/deliveries.ts';
import { TestReceiver } from '../helpers/receiver.ts';

const HOUR = 3_600_000;
const DAY_S = 86_400;

describe('Retry-After is capped', () => {
  let t: TestApp;
  let receiver: TestReceiver;
  before(async () => {
    // Backoff steps of 20–60 ms (the test defaults), far below the cap: only Retry-After can
    // push the retry out that far.
    t = await buildTestApp({ dispatcher: true });
    receiver = await TestReceiver.start();
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });

  test('a 503 with Retry-After: 86400 is retried 1 hour after the attempt, not a day', async () => {
    assert.equal(MAX_RETRY_AFTER_MS, HOUR);
    receiver.script({ status: 503, headers: { 'retry-after': String(DAY_S) } });
    const hook = await t.api.post('/api/webhooks', {
      url: `${receiver.url}/hook`,
      events: ['customer.created'],
    });
    assert.equal(hook.status, 201, hook.raw);
    assert.equal((await t.api.post('/api/customers', customerBody('cus_ra'))).status, 201);

    const [request] = await receiver.waitFor(1);
    assert.equal(request?.headers['x-vitals-delivery-attempt'], '1');
    const d = await waitForDelivery(t.api, hook.body.id, (x) => x.attempt_count === 1);
    assert.equal(d.status, 'pending');
    const [first] = d.attempts;
    assert.ok(first && d.next_attempt_at, JSON.stringify(d));
    assert.equal(first.status_code, 503);

    // The dispatcher takes its clock after the answer: between the start of the attempt plus
    // its duration and a moment later. The next attempt is the cap after that, not a day.
    const started = Date.parse(first.started_at);
    const next = Date.parse(d.next_attempt_at);
    assert.ok(next - started >= HOUR, `honoured up to the cap: ${next - started} ms`);
    assert.ok(
      next - started <= HOUR + first.duration_ms + 1000,
      `at most the cap after the attempt: ${next - started} ms (Retry-After asked for ${DAY_S * 1000} ms)`,
    );

    // The store agrees: the delivery is not due a millisecond before then, and is due at it,
    // as attempt 2.
    const claim = (now: number) =>
      t.store.claimDeliveries({
        owner: 'dsp_test',
        now,
        leaseUntil: now + 60_000,
        limit: 10,
        perWebhook: { default: 10 },
        perAccount: 10,
      });
    assert.deepEqual(await claim(next - 1), []);
    const due = await claim(next);
    assert.deepEqual(
      due.map((c) => [c.id, c.attempt]),
      [[d.id, 2]],
    );
    assert.equal(receiver.requests.length, 1, 'nothing else was sent meanwhile');
  });
});
