// The Stripe intake (docs/sources.md, "Stripe") through HTTP, every payload signed by the `stripe`
// package's own test helper: what each event type changes, and every bad delivery with its answer,
// its log entry, and proof that nothing else changed. Both backends (VITALS_TEST_BACKEND).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import { buildTestApp, type Response, type TestApp, TestClock } from '../helpers/app.ts';

const SECRET = 'whsec_test0123456789abcdefghijklmnopqrstuv';
const NOW = '2026-03-01T12:00:00.000Z';
const clock = new TestClock(NOW);
/** Seconds since the epoch, `ago` seconds before the test's clock: a `created` or a `t`. */
const sec = (ago = 0) => Math.floor(clock.ms / 1000) - ago;
const isoOf = (s: number) => new Date(s * 1000).toISOString();
const DAY = 86_400;

let t: TestApp;
let sourceId: string;
after(() => t.close());

const newStripeSource = async (api = t.api, secret = SECRET) => {
  const res = await api.post('/api/sources', { type: 'stripe', name: 'Stripe', signing_secret: secret });
  assert.equal(res.status, 201, res.raw);
  return res.body.id as string;
};

let seq = 0;
/** A Stripe event as Stripe sends it. */
const stripeEvent = (type: string, object: Record<string, unknown>, created = sec(60)) => ({
  id: `evt_${++seq}`,
  object: 'event',
  api_version: '2025-03-31.basil',
  created,
  data: { object },
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
  type,
});

interface Item {
  amount?: number | null;
  decimal?: string;
  currency?: string;
  interval?: string;
  count?: number;
  quantity?: number;
}

/** A subscription object with its items (amounts in minor units) and period end. */
const subscription = (id: string, customer: string, status: string, items: Item[], periodEnd: number) => ({
  id,
  object: 'subscription',
  customer,
  status,
  currency: 'usd',
  items: {
    object: 'list',
    data: items.map((it, i) => ({
      id: `si_${id}_${i}`,
      object: 'subscription_item',
      current_period_end: periodEnd,
      quantity: it.quantity ?? 1,
      price: {
        id: `price_${id}_${i}`,
        object: 'price',
        currency: it.currency ?? 'usd',
        unit_amount: it.amount === undefined ? 4900 : it.amount,
        unit_amount_decimal: it.decimal ?? (it.amount == null ? null : String(it.amount)),
        recurring: {
          interval: it.interval ?? 'month',
          interval_count: it.count ?? 1,
          usage_type: 'licensed',
        },
      },
    })),
  },
});

/** Stripe's own header for `payload`: t=…,v1=…. */
const sign = (payload: string, secret = SECRET, timestamp = sec()) =>
  Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });

/** Posts `event` (or raw text) to a source's ingest URL, signed unless `signature` says otherwise. */
async function deliver(
  event: unknown,
  opts: { source?: string; signature?: string | null; body?: string } = {},
): Promise<Response> {
  const payload = opts.body ?? JSON.stringify(event, null, 2);
  const signature = opts.signature === undefined ? sign(payload) : opts.signature;
  return t.inject({
    method: 'POST',
    url: `/ingest/stripe/${opts.source ?? sourceId}`,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      ...(signature === null ? {} : { 'stripe-signature': signature }),
    },
    payload,
  });
}

const log = async (id = sourceId, api = t.api) =>
  (await api.get(`/api/sources/${id}/log?limit=100`)).body.data;
const customer = async (id: string) => (await t.api.get(`/api/customers/${id}`)).body;
const points = async (id: string, metric: string) =>
  (await t.api.get(`/api/customers/${id}/metrics?metric=${metric}&limit=100`)).body.data;
/** The value of the customer's point of `metric` at `created` (seconds). */
const pointAt = async (id: string, metric: string, created: number) =>
  (await points(id, metric)).find((p: { at: string }) => p.at === isoOf(created))?.value;
const outcomes = async (id: string) => (await t.api.get(`/api/customers/${id}/outcomes`)).body.data;

/** Everything a delivery could change but its log entry and its source's counters. */
async function snapshot(api = t.api) {
  const customers = (await api.get('/api/customers?limit=100')).body.customers;
  const more: Record<string, unknown> = {};
  for (const c of customers) {
    more[c.id] = [
      (await api.get(`/api/customers/${c.id}/metrics?limit=100`)).body,
      (await api.get(`/api/customers/${c.id}/outcomes`)).body,
    ];
  }
  const events = (await api.get('/api/events?limit=100')).body.data;
  const audit = (await api.get('/api/audit-log?limit=100')).body.data;
  const sources = (await api.get('/api/sources')).body.data.map((s: { stats: unknown }) => ({
    ...s,
    stats: undefined,
  }));
  return { customers, more, events, audit, sources };
}

/** Delivers, then answers the new log entry, having checked that nothing but the log and the counters moved. */
async function judged(event: unknown, status: number, opts: Parameters<typeof deliver>[1] = {}) {
  const source = opts.source ?? sourceId;
  const before = await snapshot();
  const logged = await log(source);
  const stats = (await t.api.get(`/api/sources/${source}`)).body.stats;
  const res = await deliver(event, opts);
  assert.equal(res.status, status, res.raw);
  const entries = await log(source);
  assert.deepEqual(entries.slice(1), logged, 'one new log entry');
  assert.deepEqual(await snapshot(), before, 'nothing else changed');
  const entry = entries[0];
  const counted = (await t.api.get(`/api/sources/${source}`)).body.stats;
  assert.equal(counted.received, stats.received + 1);
  assert.equal(counted[entry.result], stats[entry.result] + 1);
  return { res, entry };
}

/** Delivers a signed event that must apply. */
async function applied(event: ReturnType<typeof stripeEvent>) {
  const res = await deliver(event);
  assert.equal(res.status, 200, res.raw);
  assert.deepEqual(res.body, { received: true });
  const entry = (await log())[0];
  assert.equal(entry.result, 'applied', JSON.stringify(entry));
  assert.equal(entry.kind, event.type);
  return entry;
}

const withStripeId = (id: string, stripeId: string | null) => ({
  customer_id: id,
  name: id,
  email: `${id}@example.com`,
  ...(stripeId === null ? {} : { metadata: { stripe_customer_id: stripeId } }),
});

before(async () => {
  t = await buildTestApp({ now: clock.now });
  for (const [id, stripeId] of [
    ['acme', 'cus_acme'],
    ['beta', 'cus_beta'],
    ['gamma', null],
    ['delta', 'cus_delta'],
  ] as const) {
    const res = await t.api.post('/api/customers', withStripeId(id, stripeId));
    assert.equal(res.status, 201, res.raw);
  }
  sourceId = await newStripeSource();
});

describe('Stripe-Signature', () => {
  const event = () => stripeEvent('invoice.paid', { id: 'in_1', object: 'invoice', customer: 'cus_acme' });

  test('unsigned: 400 signature_invalid, logged as refused, nothing else changed', async () => {
    const { res, entry } = await judged(event(), 400, { signature: null });
    assert.equal(res.body.error.code, 'signature_invalid');
    assert.deepEqual([entry.result, entry.kind, entry.customer_id], ['refused', 'invoice.paid', null]);
    assert.match(entry.reason, /^signature_invalid: the delivery has no Stripe-Signature header/);
  });

  test('signed with another secret: 400 signature_invalid', async () => {
    const e = event();
    const payload = JSON.stringify(e, null, 2);
    const { res, entry } = await judged(e, 400, { signature: sign(payload, 'whsec_somebodyelsesecret0000') });
    assert.equal(res.body.error.code, 'signature_invalid');
    assert.match(entry.reason, /^signature_invalid: no v1 signature matches/);
  });

  test('t 301 s old: 400 signature_invalid; 300 s old is taken', async () => {
    const old = event();
    const payload = JSON.stringify(old, null, 2);
    const { entry } = await judged(old, 400, { signature: sign(payload, SECRET, sec(301)) });
    assert.match(entry.reason, /^signature_invalid: t=\d+ is 301 s old/);
    const ahead = event();
    const early = JSON.stringify(ahead, null, 2);
    const refused = await judged(ahead, 400, { signature: sign(early, SECRET, sec(-301)) });
    assert.match(refused.entry.reason, /is 301 s ahead/);
    const inTime = event();
    const text = JSON.stringify(inTime, null, 2);
    const res = await deliver(inTime, { signature: sign(text, SECRET, sec(300)) });
    assert.equal(res.status, 200, res.raw);
  });

  test('a tampered body: 400 signature_invalid', async () => {
    const e = event();
    const signed = JSON.stringify(e, null, 2);
    const tampered = signed.replace('"cus_acme"', '"cus_beta"');
    assert.notEqual(tampered, signed);
    const { entry } = await judged(e, 400, { signature: sign(signed), body: tampered });
    assert.match(entry.reason, /^signature_invalid: no v1 signature matches/);
    // Whitespace is part of what is signed: the same JSON spaced otherwise does not check.
    const { entry: spaced } = await judged(e, 400, { signature: sign(signed), body: JSON.stringify(e) });
    assert.match(spaced.reason, /^signature_invalid: /);
  });

  test('a header without t= or v1=, or with v0= alone: 400 signature_invalid', async () => {
    const e = event();
    const payload = JSON.stringify(e, null, 2);
    const good = sign(payload);
    for (const header of ['garbage', good.replace(/^t=\d+,/, ''), good.replace('v1=', 'v0=')]) {
      const { entry } = await judged(e, 400, { signature: header });
      assert.match(entry.reason, /^signature_invalid: the Stripe-Signature header has no t=… and v1=…/);
    }
  });

  test('any v1 may match: a secret being rolled signs with both', async () => {
    const e = event();
    const payload = JSON.stringify(e, null, 2);
    const timestamp = sec();
    const wrong = sign(payload, 'whsec_theoldsecretbeingrolled00', timestamp);
    const right = sign(payload, SECRET, timestamp);
    const both = `${wrong},v1=${right.split('v1=')[1]}`;
    const res = await deliver(e, { signature: both });
    assert.equal(res.status, 200, res.raw);
    assert.equal((await log())[0].result, 'applied');
  });
});

describe('the ingest URL', () => {
  const event = () => stripeEvent('invoice.paid', { id: 'in_2', object: 'invoice', customer: 'cus_acme' });

  test('an unknown id, a deleted source, a Segment source: 404 source_not_found, nothing recorded', async () => {
    const segment = (await t.api.post('/api/sources', { type: 'segment', name: 'Segment' })).body.id;
    const gone = await newStripeSource();
    assert.equal((await t.api.delete(`/api/sources/${gone}`)).status, 200);
    const before = await snapshot();
    const stats = (await t.api.get('/api/sources')).body.data;
    for (const id of ['src_unknown', gone, segment, '%00']) {
      const res = await deliver(event(), { source: id });
      assert.equal(res.status, 404, res.raw);
      assert.equal(res.body.error.code, 'source_not_found');
    }
    assert.deepEqual(await snapshot(), before);
    assert.deepEqual((await t.api.get('/api/sources')).body.data, stats);
  });

  test('a disabled source: 401 source_disabled, nothing recorded', async () => {
    const off = await newStripeSource();
    assert.equal((await t.api.patch(`/api/sources/${off}`, { enabled: false })).status, 200);
    const before = await snapshot();
    const res = await deliver(event(), { source: off });
    assert.equal(res.status, 401, res.raw);
    assert.equal(res.body.error.code, 'source_disabled');
    assert.deepEqual(await snapshot(), before);
    assert.deepEqual(await log(off), []);
    assert.equal((await t.api.get(`/api/sources/${off}`)).body.stats.received, 0);
  });

  test("another account's source id: its secret refuses ours, and its events reach its own customers only", async () => {
    const other = await t.newAccount('other');
    assert.equal((await other.post('/api/customers', withStripeId('acme', 'cus_other'))).status, 201);
    const theirs = await newStripeSource(other, 'whsec_theotheraccountsecret00');
    const ours = await snapshot();
    const theirsBefore = await snapshot(other);
    // Our account's delivery, signed with our secret, sent to their source: refused there.
    const res = await deliver(event(), { source: theirs });
    assert.equal(res.status, 400, res.raw);
    assert.equal(res.body.error.code, 'signature_invalid');
    const [entry] = await log(theirs, other);
    assert.deepEqual([entry.result, entry.customer_id], ['refused', null]);
    assert.match(entry.reason, /^signature_invalid: /);
    // Signed with their secret, our Stripe customer is no customer of theirs.
    const e = event();
    const payload = JSON.stringify(e, null, 2);
    const signed = await deliver(e, {
      source: theirs,
      signature: sign(payload, 'whsec_theotheraccountsecret00'),
    });
    assert.equal(signed.status, 200, signed.raw);
    const [second] = await log(theirs, other);
    assert.equal(second.reason, 'customer_not_found: no customer has metadata.stripe_customer_id = cus_acme');
    assert.deepEqual(await snapshot(), ours);
    assert.deepEqual(await snapshot(other), theirsBefore);
    // Our log, seen from their account, is not theirs to read.
    assert.equal((await other.get(`/api/sources/${sourceId}/log`)).status, 404);
  });

  test('a body over 1 MiB: 413 body_too_large, nothing recorded', async () => {
    const before = await snapshot();
    const logged = await log();
    const big = JSON.stringify({ ...event(), padding: 'x'.repeat(1024 * 1024) });
    const res = await deliver(null, { body: big, signature: sign(big) });
    assert.equal(res.status, 413, res.raw);
    assert.equal(res.body.error.code, 'body_too_large');
    assert.deepEqual(await snapshot(), before);
    assert.deepEqual(await log(), logged);
  });

  test('past VITALS_INGEST_RATE: 429 with Retry-After, nothing recorded; another source is not held', async () => {
    const limited = await buildTestApp({ now: clock.now, ingestRate: { max: 2, windowMs: 60_000 } });
    try {
      const make = async () =>
        (await limited.api.post('/api/sources', { type: 'stripe', name: 'S', signing_secret: SECRET })).body
          .id as string;
      const [a, b] = [await make(), await make()];
      const post = (id: string, signature: string | null = null) =>
        limited.inject({
          method: 'POST',
          url: `/ingest/stripe/${id}`,
          headers: signature === null ? {} : { 'stripe-signature': signature },
          payload: '{}',
        });
      // Counted before the signature is checked: forged deliveries count too.
      assert.equal((await post(a)).status, 400);
      assert.equal((await post(a, sign('{}'))).status, 200);
      const over = await post(a, sign('{}'));
      assert.equal(over.status, 429, over.raw);
      assert.equal(over.body.error.code, 'rate_limited');
      assert.ok(Number(over.headers['retry-after']) >= 1);
      assert.equal((await post(b, sign('{}'))).status, 200);
      const stats = (await limited.api.get(`/api/sources/${a}`)).body.stats;
      assert.deepEqual([stats.received, stats.refused], [2, 2]);
    } finally {
      await limited.close();
    }
  });

  test('a signed body that is not JSON: 400 invalid_json, logged as refused', async () => {
    const { res, entry } = await judged(null, 400, { body: '{"id": "evt_', signature: sign('{"id": "evt_') });
    assert.equal(res.body.error.code, 'invalid_json');
    assert.deepEqual([entry.kind, entry.result], ['unknown', 'refused']);
  });
});

describe('events that change nothing', () => {
  test('an unmatched Stripe customer: refused customer_not_found, answered 200', async () => {
    const e = stripeEvent('invoice.payment_failed', {
      id: 'in_3',
      object: 'invoice',
      customer: 'cus_nobody',
    });
    const { res, entry } = await judged(e, 200);
    assert.deepEqual(res.body, { received: true });
    assert.deepEqual([entry.result, entry.customer_id], ['refused', null]);
    assert.equal(
      entry.reason,
      'customer_not_found: no customer has metadata.stripe_customer_id = cus_nobody',
    );
    const sub = stripeEvent(
      'customer.subscription.created',
      subscription('sub_nobody', 'cus_nobody', 'active', [{}], sec() + 30 * DAY),
    );
    assert.match((await judged(sub, 200)).entry.reason, /^customer_not_found: /);
  });

  test('the same event twice: applied once, then ignored as a duplicate', async () => {
    const e = stripeEvent('invoice.paid', { id: 'in_4', object: 'invoice', customer: 'cus_delta' });
    await applied(e);
    const { entry } = await judged(e, 200);
    assert.deepEqual([entry.result, entry.kind], ['ignored', 'invoice.paid']);
    assert.equal(entry.reason, `duplicate: event ${e.id} was applied within the last 7 days`);
    assert.equal((await points('delta', 'stripe_invoice_paid'))[0].value, 1);
  });

  test('a type Vitals does not read: ignored', async () => {
    const e = stripeEvent('charge.succeeded', { id: 'ch_1', object: 'charge', customer: 'cus_acme' });
    const { entry } = await judged(e, 200);
    assert.equal(entry.result, 'ignored');
    assert.match(entry.reason, /^not_used: Vitals reads no charge\.succeeded events/);
  });

  test('an event without an id, a created time or data.object: refused event_invalid', async () => {
    const { entry } = await judged({ type: 'invoice.paid', data: {} }, 200);
    assert.match(entry.reason, /^event_invalid: /);
  });
});

describe('customers', () => {
  test('customer.updated with metadata.vitals_customer_id sets stripe_customer_id on that customer', async () => {
    const e = stripeEvent('customer.updated', {
      id: 'cus_gamma',
      object: 'customer',
      email: 'billing@gamma.test',
      metadata: { vitals_customer_id: 'gamma' },
    });
    const entry = await applied(e);
    assert.equal(entry.customer_id, 'gamma');
    assert.deepEqual((await customer('gamma')).metadata, { stripe_customer_id: 'cus_gamma' });
    const [audit] = (await t.api.get('/api/audit-log?limit=1')).body.data;
    assert.deepEqual(audit.actor, { type: 'source', id: sourceId, label: 'Stripe' });
    assert.deepEqual([audit.action, audit.object_id], ['customer.updated', 'gamma']);
    assert.equal((await t.api.get('/api/events?limit=1')).body.data[0].type, 'customer.updated');
    // Now its subscription events find it.
    const sub = stripeEvent(
      'customer.subscription.created',
      subscription('sub_gamma', 'cus_gamma', 'active', [{ amount: 1000 }], sec() + 10 * DAY),
    );
    await applied(sub);
    assert.equal((await customer('gamma')).arr, 120);
  });

  test('naming no customer, an unknown one, or one whose Stripe id another holds: refused; already linked: ignored', async () => {
    const object = (id: string, vitals?: string) => ({
      id,
      object: 'customer',
      metadata: vitals === undefined ? {} : { vitals_customer_id: vitals },
    });
    const unknown = await judged(stripeEvent('customer.created', object('cus_new', 'nobody')), 200);
    assert.equal(unknown.entry.customer_id, 'nobody');
    assert.match(unknown.entry.reason, /^customer_not_found: no customer 'nobody'/);
    const bare = await judged(stripeEvent('customer.created', object('cus_new')), 200);
    assert.match(bare.entry.reason, /^customer_not_found: .*cus_new \(or set metadata\.vitals_customer_id/);
    const matched = await judged(stripeEvent('customer.updated', object('cus_acme')), 200);
    assert.deepEqual([matched.entry.result, matched.entry.customer_id], ['ignored', 'acme']);
    const taken = await judged(stripeEvent('customer.updated', object('cus_acme', 'beta')), 200);
    assert.match(taken.entry.reason, /^stripe_customer_taken: customer 'acme' already has/);
    const same = await judged(stripeEvent('customer.updated', object('cus_beta', 'beta')), 200);
    assert.deepEqual([same.entry.result, same.entry.customer_id], ['ignored', 'beta']);
    assert.match(same.entry.reason, /^unchanged: /);
  });
});

describe('subscriptions', () => {
  const end1 = sec() + 20 * DAY;
  const end2 = sec() + 200 * DAY;

  test('one subscription: arr, renewal_at, its status and a point of mrr at the event', async () => {
    const e = stripeEvent(
      'customer.subscription.created',
      subscription('sub_a1', 'cus_acme', 'active', [{ amount: 4900, quantity: 2 }], end1),
      sec(3600),
    );
    await applied(e);
    const acme = await customer('acme');
    assert.equal(acme.arr, 1176);
    assert.equal(acme.renewal_at, isoOf(end1));
    assert.equal(acme.lifecycle, 'active');
    assert.equal(acme.metadata.stripe_subscription_status, 'active');
    assert.equal(acme.metadata.stripe_customer_id, 'cus_acme');
    assert.deepEqual(await points('acme', 'mrr'), [{ metric: 'mrr', value: 98, at: isoOf(e.created) }]);
    const [audit] = (await t.api.get('/api/audit-log?limit=1')).body.data;
    assert.deepEqual(
      [audit.actor.type, audit.action, audit.object_id],
      ['source', 'customer.updated', 'acme'],
    );
  });

  test('two subscriptions: arr is the sum, renewal_at the soonest end', async () => {
    // 1,200 a year is 100 a month: with 98 a month, 12 × 198.
    const e = stripeEvent(
      'customer.subscription.created',
      subscription('sub_a2', 'cus_acme', 'trialing', [{ amount: 120000, interval: 'year' }], end2),
      sec(3000),
    );
    await applied(e);
    const acme = await customer('acme');
    assert.equal(acme.arr, 2376);
    assert.equal(acme.renewal_at, isoOf(end1));
    assert.equal(acme.metadata.stripe_subscription_status, 'trialing');
    assert.equal(await pointAt('acme', 'mrr', e.created), 198);
  });

  test('an older event than the last applied to its subscription: ignored out_of_order', async () => {
    const newer = stripeEvent(
      'customer.subscription.updated',
      subscription('sub_a1', 'cus_acme', 'past_due', [{ amount: 4900, quantity: 3 }], end1),
      sec(1000),
    );
    await applied(newer);
    assert.equal((await customer('acme')).arr, 12 * (147 + 100));
    const older = stripeEvent(
      'customer.subscription.updated',
      subscription('sub_a1', 'cus_acme', 'active', [{ amount: 4900, quantity: 1 }], end1),
      sec(2000),
    );
    const { entry } = await judged(older, 200);
    assert.deepEqual([entry.result, entry.customer_id], ['ignored', 'acme']);
    assert.match(entry.reason, /^out_of_order: sub_a1 was changed by an event created /);
    assert.equal((await customer('acme')).metadata.stripe_subscription_status, 'past_due');
    // The same `created` as the last applied still applies (Stripe's clock has seconds).
    const same = stripeEvent(
      'customer.subscription.updated',
      subscription('sub_a1', 'cus_acme', 'active', [{ amount: 4900, quantity: 3 }], end1),
      newer.created,
    );
    await applied(same);
    assert.equal((await customer('acme')).metadata.stripe_subscription_status, 'active');
  });

  test('paused: out of arr, but the customer stays active', async () => {
    await applied(
      stripeEvent(
        'customer.subscription.paused',
        subscription('sub_a2', 'cus_acme', 'paused', [{ amount: 120000, interval: 'year' }], end2),
        sec(900),
      ),
    );
    const acme = await customer('acme');
    assert.equal(acme.arr, 1764);
    assert.equal(acme.lifecycle, 'active');
    assert.equal(acme.metadata.stripe_subscription_status, 'paused');
  });

  test('the last live one deleted: arr 0, churned, a churned outcome at the event; a new one: active again', async () => {
    const one = stripeEvent(
      'customer.subscription.deleted',
      subscription('sub_a1', 'cus_acme', 'canceled', [{ amount: 4900, quantity: 3 }], end1),
      sec(800),
    );
    const entry = await applied(one);
    assert.match(entry.reason, /churned: no live subscription is left/);
    const acme = await customer('acme');
    assert.deepEqual([acme.arr, acme.lifecycle], [0, 'churned']);
    assert.equal(acme.renewal_at, isoOf(end1), 'the renewal is left as it was');
    const [outcome] = await outcomes('acme');
    assert.deepEqual([outcome.outcome, outcome.at], ['churned', isoOf(one.created)]);
    assert.match(outcome.note, /sub_a1/);
    assert.equal(await pointAt('acme', 'mrr', one.created), 0);
    const back = stripeEvent(
      'customer.subscription.created',
      subscription('sub_a3', 'cus_acme', 'active', [{ amount: 9900 }], end2),
      sec(700),
    );
    assert.match((await applied(back)).reason, /^active again: sub_a3 is active/);
    const again = await customer('acme');
    assert.deepEqual([again.arr, again.lifecycle, again.renewal_at], [1188, 'active', isoOf(end2)]);
    assert.equal((await outcomes('acme')).length, 1);
  });

  test('one of two deleted: arr drops, the customer stays active, no outcome', async () => {
    for (const [id, amount] of [
      ['sub_b1', 1000],
      ['sub_b2', 2000],
    ] as const) {
      await applied(
        stripeEvent(
          'customer.subscription.created',
          subscription(id, 'cus_beta', 'active', [{ amount }], end1),
          sec(600),
        ),
      );
    }
    assert.equal((await customer('beta')).arr, 360);
    await applied(
      stripeEvent(
        'customer.subscription.deleted',
        subscription('sub_b1', 'cus_beta', 'canceled', [{ amount: 1000 }], end1),
        sec(500),
      ),
    );
    const beta = await customer('beta');
    assert.deepEqual([beta.arr, beta.lifecycle], [240, 'active']);
    assert.deepEqual(await outcomes('beta'), []);
  });

  test('intervals, quantities, zero-decimal currencies, unit_amount_decimal; a tiered price is left out with a reason', async () => {
    const e = stripeEvent(
      'customer.subscription.updated',
      subscription(
        'sub_b2',
        'cus_beta',
        'active',
        [
          { amount: 1200, interval: 'week' }, // 12 × 52/12 a month
          { amount: 100, interval: 'day', count: 2 }, // 1 every 2 days
          { amount: 3000, currency: 'jpy', interval: 'month', count: 3, quantity: 2 }, // ¥2,000 a month
          { amount: null, decimal: '1050.4', interval: 'year' }, // 10.504 a year
          { amount: null, interval: 'month' }, // tiered: neither
        ],
        end1,
      ),
      sec(400),
    );
    const entry = await applied(e);
    assert.equal(
      entry.reason,
      'price_sub_b2_4: no unit_amount or unit_amount_decimal (a tiered price): left out of arr',
    );
    const monthly = (12 * 52) / 12 + 365 / 12 / 2 + 2000 + 10.504 / 12;
    assert.equal((await customer('beta')).arr, Math.round(12 * monthly * 100) / 100);
    assert.equal(await pointAt('beta', 'mrr', e.created), Math.round(monthly * 100) / 100);
  });
});

describe('invoices', () => {
  test('invoice.paid and invoice.payment_failed count per UTC day of their created', async () => {
    const day = Math.floor(sec(DAY) / DAY) * DAY;
    const invoice = (type: string, created: number) =>
      stripeEvent(type, { id: `in_${created}`, object: 'invoice', customer: 'cus_delta' }, created);
    await applied(invoice('invoice.paid', day + 60));
    await applied(invoice('invoice.paid', day + 7200));
    await applied(invoice('invoice.payment_failed', day + 3600));
    const paid = await points('delta', 'stripe_invoice_paid');
    assert.deepEqual(
      paid.find((p: { at: string }) => p.at === isoOf(day)),
      { metric: 'stripe_invoice_paid', value: 2, at: isoOf(day) },
    );
    assert.deepEqual(await points('delta', 'stripe_payment_failed'), [
      { metric: 'stripe_payment_failed', value: 1, at: isoOf(day) },
    ]);
  });

  test('a factor rule on a counted metric rescores the customer (metrics_updated)', async () => {
    const rule = {
      metric: 'stripe_payment_failed',
      aggregate: 'sum',
      window_days: 30,
      scale: { type: 'linear', from: 3, to: 0 },
    };
    const put = await t.api.request('PUT', '/api/settings/health-score/factors/billing', rule);
    assert.equal(put.status, 200, put.raw);
    await applied(
      stripeEvent(
        'invoice.payment_failed',
        { id: 'in_rule', object: 'invoice', customer: 'cus_delta' },
        sec(120),
      ),
    );
    const score = (await t.api.get('/api/customers/delta/health-score')).body;
    assert.ok(score.factors.billing < 1, JSON.stringify(score));
    const [latest] = (await t.api.get('/api/customers/delta/health-score/history?limit=1')).body.data;
    assert.equal(latest.reason, 'metrics_updated');
  });
});
