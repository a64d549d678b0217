// What Vitals reads of a Stripe delivery (src/domain/stripe.ts): the signature judged as the
// `stripe` package's own verifier judges it, and a subscription's monthly amount.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Stripe from 'stripe';
import { readEvent, signatureProblem, subscriptionOf, summarize } from '../../src/domain/stripe.ts';

const SECRET = 'whsec_domaintest0123456789';
const NOW = Date.parse('2026-03-01T12:00:00Z');
const T = NOW / 1000;

/** Whether Stripe's own library takes the delivery at NOW (its tolerance: 300 s). */
function stripeTakes(payload: string, header: string, secret = SECRET): boolean {
  try {
    Stripe.webhooks.signature?.verifyHeader(payload, header, secret, 300, undefined, NOW);
    return true;
  } catch {
    return false;
  }
}

describe('the signature', () => {
  const payload = '{"id":"evt_1","type":"invoice.paid"}';
  const sign = (opts: { payload?: string; secret?: string; timestamp?: number; scheme?: string } = {}) =>
    Stripe.webhooks.generateTestHeaderString({
      payload: opts.payload ?? payload,
      secret: opts.secret ?? SECRET,
      timestamp: opts.timestamp ?? T,
      ...(opts.scheme ? { scheme: opts.scheme } : {}),
    });

  test('agrees with Stripe’s own verifier on every header here (past or present t)', () => {
    const good = sign();
    const cases = [
      good,
      sign({ timestamp: T - 300 }),
      sign({ timestamp: T - 301 }),
      sign({ secret: 'whsec_another' }),
      sign({ payload: `${payload} ` }),
      sign({ scheme: 'v0' }),
      `${good},v1=deadbeef`,
      `t=${T},v1=deadbeef,${good.split(',')[1]}`,
      good.replace(/^t=/, 't=0'),
      `${good},t=${T - 1000}`,
      `v1=${good.split('v1=')[1]}`,
      `t=${T}`,
      '',
      'nonsense',
    ];
    for (const header of cases) {
      const ours = signatureProblem(header, Buffer.from(payload), SECRET, NOW) === null;
      assert.equal(ours, stripeTakes(payload, header), header);
    }
  });

  test('a t ahead of the clock by more than 300 s is refused too (Stripe’s verifier takes it)', () => {
    const ahead = sign({ timestamp: T + 301 });
    assert.match(String(signatureProblem(ahead, Buffer.from(payload), SECRET, NOW)), /301 s ahead/);
    assert.equal(signatureProblem(sign({ timestamp: T + 300 }), Buffer.from(payload), SECRET, NOW), null);
  });

  test('the body is the bytes signed: multi-byte text counts as sent', () => {
    const text = '{"name":"Café ✓"}';
    const header = sign({ payload: text });
    assert.equal(signatureProblem(header, Buffer.from(text), SECRET, NOW), null);
    assert.notEqual(signatureProblem(header, Buffer.from(text, 'latin1'), SECRET, NOW), null);
  });
});

describe('a subscription', () => {
  const item = (price: Record<string, unknown>, quantity?: number) => ({
    price,
    ...(quantity ? { quantity } : {}),
  });
  const sub = (items: unknown[], extra: Record<string, unknown> = {}) =>
    subscriptionOf('customer.subscription.updated', {
      id: 'sub_1',
      status: 'active',
      currency: 'usd',
      items: { data: items },
      ...extra,
    });

  test('older API versions name the price `plan`, with amount and interval on it', () => {
    const s = sub([
      { plan: { id: 'plan_1', amount: 12000, interval: 'year', interval_count: 1 }, quantity: 5 },
    ]);
    assert.ok(typeof s !== 'string');
    assert.equal(s.monthly, 50);
  });

  test('metered and one-time prices are left out with their reasons', () => {
    const s = sub([
      item({ id: 'price_m', unit_amount: 10, recurring: { interval: 'month', usage_type: 'metered' } }),
      item({ id: 'price_o', unit_amount: 500 }),
      item({ id: 'price_k', unit_amount: 1000, currency: 'KWD', recurring: { interval: 'month' } }),
    ]);
    assert.ok(typeof s !== 'string');
    assert.equal(s.monthly, 1);
    assert.deepEqual(s.leftOut, [
      'price_m: metered, billed by usage after the period: left out of arr',
      'price_o: not a recurring price: left out of arr',
    ]);
  });

  test('the period end is the subscription’s, else its first item’s; a deleted one is over', () => {
    const own = sub([], { current_period_end: 1_800_000_000 });
    const first = sub([{ current_period_end: 1_700_000_000, price: { unit_amount: 1 } }]);
    assert.ok(typeof own !== 'string' && typeof first !== 'string');
    assert.equal(own.periodEnd, 1_800_000_000_000);
    assert.equal(first.periodEnd, 1_700_000_000_000);
    const gone = subscriptionOf('customer.subscription.deleted', { id: 'sub_1', status: 'active' });
    assert.ok(typeof gone !== 'string');
    assert.deepEqual([gone.status, gone.ended], ['canceled', true]);
  });

  test('only live subscriptions count; the soonest end is the renewal', () => {
    const sum = summarize([
      { status: 'active', monthly: 10, periodEnd: 300 },
      { status: 'past_due', monthly: 5, periodEnd: 200 },
      { status: 'canceled', monthly: 100, periodEnd: 100 },
      { status: 'trialing', monthly: 0, periodEnd: null },
    ]);
    assert.deepEqual(sum, { live: 3, monthly: 15, renewalAt: 200 });
  });
});

describe('an event', () => {
  test('a vitals_customer_id that is no customer id is refused', () => {
    const e = readEvent(
      {
        id: 'evt_1',
        type: 'customer.updated',
        created: T,
        data: { object: { id: 'cus_1', object: 'customer', metadata: { vitals_customer_id: 'a\nb' } } },
      },
      NOW,
    );
    assert.match(String(e.refused), /^event_invalid: metadata\.vitals_customer_id/);
  });

  test('an expanded customer object names its id', () => {
    const e = readEvent(
      {
        id: 'evt_2',
        type: 'invoice.paid',
        created: T,
        data: { object: { id: 'in_1', object: 'invoice', customer: { id: 'cus_9', object: 'customer' } } },
      },
      NOW,
    );
    assert.equal(e.customer, 'cus_9');
  });
});
