// Stripe (docs/sources.md, "Stripe"): a delivery's Stripe-Signature checked as Stripe specifies,
// and what Vitals reads of an event — its id, type and `created`, the Stripe customer it is about,
// and a subscription's status, monthly amount and period end. Pure: an event becomes plain data a
// write can take to another thread.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far `t` may be from Vitals' clock, in seconds: Stripe's own libraries' default tolerance. */
export const SIGNATURE_TOLERANCE_S = 300;
/** The largest delivery read (an event is a few KB; an invoice's lines are cut at 10 by Stripe). */
export const STRIPE_BODY_MAX = 1024 * 1024;

/** The statuses whose subscription counts in `arr` and keeps its customer active (docs/sources.md). */
export const LIVE_STATUSES: readonly string[] = ['active', 'trialing', 'past_due'];
/** Statuses of a subscription that is over for good: its customer churns when it was the last live one. */
const ENDED_STATUSES: readonly string[] = ['canceled', 'incomplete_expired'];

/** Stripe's zero-decimal currencies: amounts are whole units (docs.stripe.com/currencies). */
const ZERO_DECIMAL = new Set('bif clp djf gnf jpy kmf krw mga pyg rwf ugx vnd vuv xaf xof xpf'.split(' '));
/** Stripe's three-decimal currencies: amounts are thousandths. */
const THREE_DECIMAL = new Set('bhd jod kwd omr tnd'.split(' '));

/** Intervals in a month: a month is 365/12 days or 52/12 weeks (docs/sources.md, "Stripe"). */
const PER_MONTH: Record<string, number> = { day: 365 / 12, week: 52 / 12, month: 1, year: 1 / 12 };

/** The event types whose subscription Vitals keeps. */
export const SUBSCRIPTION_EVENTS: readonly string[] = [
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.resumed',
  'customer.subscription.paused',
  'customer.subscription.deleted',
];
/** The event types that may link a Stripe customer to a Vitals customer. */
export const CUSTOMER_EVENTS: readonly string[] = ['customer.created', 'customer.updated'];
/** The event types counted per day, and the metric each counts into. */
export const COUNTED_EVENTS: Readonly<Record<string, string>> = {
  'invoice.paid': 'stripe_invoice_paid',
  'invoice.payment_failed': 'stripe_payment_failed',
};

/** A Stripe id as Vitals keeps it (cus_…, sub_…, evt_…): letters, digits and `_`. */
const STRIPE_ID = /^[A-Za-z0-9_]{1,255}$/;
/** A Vitals customer id as a Stripe customer's metadata may name one: 1-255 characters, none a space or control. */
const isCustomerId = (s: string): boolean =>
  s.length >= 1 &&
  s.length <= 255 &&
  !/\s/.test(s) &&
  ![...s].some((c) => {
    const code = c.codePointAt(0) ?? 0;
    return code < 0x20 || (code >= 0x7f && code <= 0x9f);
  });

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Whether `header` signs `body` with `secret` at a `t` within the tolerance of `nowMs`, as
 * Stripe's libraries check it: the header's `t=` and `v1=` pairs (any `v1` may match; others,
 * such as `v0`, are not read), HMAC-SHA256 of `${t}.${body}` keyed by the secret as written,
 * hex, compared in constant time; the signature first, then the time. null when it does, else why not.
 */
export function signatureProblem(
  header: string | undefined,
  body: Buffer,
  secret: string,
  nowMs: number,
): string | null {
  if (header === undefined || header === '') return 'the delivery has no Stripe-Signature header';
  let t: number | null = null;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    const [key, value] = eq === -1 ? [item, ''] : [item.slice(0, eq), item.slice(eq + 1)];
    if (key === 't') t = /^\d{1,15}$/.test(value) ? Number(value) : null;
    if (key === 'v1') signatures.push(value);
  }
  if (t === null || signatures.length === 0) {
    return 'the Stripe-Signature header has no t=… and v1=… pair (it looks like t=1700000000,v1=5257a8…)';
  }
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex'));
  // Every candidate is compared, in constant time for its length: which one matched leaks nothing.
  let matched = false;
  for (const signature of signatures) {
    const given = Buffer.from(signature);
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) {
    return "no v1 signature matches this body signed with the source's signing secret: check that the secret is this endpoint's (whsec_…), and that nothing between Stripe and Vitals changed the body";
  }
  const age = Math.floor(nowMs / 1000) - t;
  if (Math.abs(age) > SIGNATURE_TOLERANCE_S) {
    return `t=${t} is ${Math.abs(age)} s ${age > 0 ? 'old' : 'ahead of Vitals’ clock'}; a delivery is taken within ${SIGNATURE_TOLERANCE_S} s (a replayed or delayed delivery, or a clock that is off)`;
  }
  return null;
}

/** A subscription as an event shows it. */
export interface SubscriptionChange {
  id: string;
  status: string;
  /** Its items' amounts per month, in major units (the items left out are in `leftOut`). */
  monthly: number;
  /** Its current period's end (epoch ms), or null. */
  periodEnd: number | null;
  /** Over for good (deleted, canceled, incomplete_expired): its customer churns when no live one is left. */
  ended: boolean;
  /** Why an item is not in `monthly`, in words a person understands. */
  leftOut: string[];
}

/** An event as the write takes it: what Vitals reads of it, or its refusal already decided. */
export interface StripeEvent {
  /** Its type (`customer.subscription.updated`, …): what the log shows as its kind. */
  kind: string;
  /** evt_…: applied once. */
  id: string | null;
  /** Its `created`, in epoch ms. */
  created: number;
  /** The Stripe customer it is about (cus_…), or null. */
  customer: string | null;
  /** customer.created/updated: the Vitals customer its metadata.vitals_customer_id names. */
  vitalsCustomerId: string | null;
  subscription: SubscriptionChange | null;
  /** Decided before the write (a bad signature, an event that is not one): logged as refused. */
  refused: string | null;
}

/** A refused delivery: `kind` what its body says it is, when that is readable. */
export function refusedEvent(kind: string, reason: string, now: number): StripeEvent {
  return {
    kind,
    id: null,
    created: now,
    customer: null,
    vitalsCustomerId: null,
    subscription: null,
    refused: reason,
  };
}

/** An event's type as a log may show it, from a body not (yet) trusted: else `unknown`. */
export function kindOf(body: unknown): string {
  const type = isObject(body) ? body.type : undefined;
  return typeof type === 'string' && /^[a-z0-9_.]{1,100}$/.test(type) ? type : 'unknown';
}

/** The id of what `v` refers to: the id itself, or an expanded object's `id`. */
function idOf(v: unknown): string | null {
  const id = isObject(v) ? v.id : v;
  return typeof id === 'string' && STRIPE_ID.test(id) ? id : null;
}

/** The amount of `minor` units of `currency` in its major unit. */
const major = (minor: number, currency: string): number =>
  ZERO_DECIMAL.has(currency) ? minor : minor / (THREE_DECIMAL.has(currency) ? 1000 : 100);

/** One item's amount per month in major units, or why it is left out. */
function itemMonthly(item: unknown, fallbackCurrency: string): number | string {
  const it = isObject(item) ? item : {};
  // `plan` is the older API versions' name for the price (amount, interval, interval_count).
  const price = isObject(it.price) ? it.price : isObject(it.plan) ? it.plan : null;
  const name = idOf(price?.id) ?? idOf(it.id) ?? 'an item';
  if (!price) return `${name}: no price`;
  const recurring = isObject(price.recurring) ? price.recurring : price;
  const interval = typeof recurring.interval === 'string' ? recurring.interval : null;
  const count = typeof recurring.interval_count === 'number' ? recurring.interval_count : 1;
  if (interval === null || !(interval in PER_MONTH) || !(count >= 1)) {
    return `${name}: not a recurring price`;
  }
  if (recurring.usage_type === 'metered') return `${name}: metered, billed by usage after the period`;
  const unit = price.unit_amount ?? price.amount;
  const decimal = price.unit_amount_decimal ?? price.amount_decimal;
  let minor: number;
  if (typeof unit === 'number' && Number.isFinite(unit)) minor = unit;
  else if (typeof decimal === 'string' && /^\d+(\.\d+)?$/.test(decimal)) minor = Number(decimal);
  else return `${name}: no unit_amount or unit_amount_decimal (a tiered price)`;
  const quantity = typeof it.quantity === 'number' && it.quantity >= 0 ? it.quantity : 1;
  const currency = typeof price.currency === 'string' ? price.currency.toLowerCase() : fallbackCurrency;
  return (major(minor, currency) * quantity * (PER_MONTH[interval] as number)) / count;
}

/** Seconds since the epoch as ms, or null. */
const msOf = (s: unknown): number | null =>
  typeof s === 'number' && Number.isInteger(s) && s >= 0 && s < 253_402_300_800 ? s * 1000 : null;

/** The subscription of a customer.subscription.* event. */
export function subscriptionOf(kind: string, sub: Record<string, unknown>): SubscriptionChange | string {
  const id = idOf(sub.id);
  if (id === null) return 'event_invalid: data.object has no subscription id';
  const given = typeof sub.status === 'string' && /^[a-z_]{1,40}$/.test(sub.status) ? sub.status : null;
  if (given === null) return `event_invalid: subscription ${id} has no status`;
  const ended = kind === 'customer.subscription.deleted' || ENDED_STATUSES.includes(given);
  const currency = typeof sub.currency === 'string' ? sub.currency.toLowerCase() : 'usd';
  const items = isObject(sub.items) && Array.isArray(sub.items.data) ? sub.items.data : [];
  const leftOut: string[] = [];
  let monthly = 0;
  for (const item of items) {
    const amount = itemMonthly(item, currency);
    if (typeof amount === 'string') leftOut.push(`${amount}: left out of arr`);
    else monthly += amount;
  }
  const first = isObject(items[0]) ? items[0] : {};
  return {
    id,
    // A deleted subscription is over whatever its object says.
    status: ended && LIVE_STATUSES.includes(given) ? 'canceled' : given,
    monthly,
    periodEnd: msOf(sub.current_period_end) ?? msOf(first.current_period_end),
    ended,
    leftOut,
  };
}

/** The event in a delivery's body (parsed JSON): what Vitals reads of it, or why it cannot. */
export function readEvent(body: unknown, now: number): StripeEvent {
  const kind = kindOf(body);
  const e = isObject(body) ? body : {};
  const refuse = (reason: string) => refusedEvent(kind, reason, now);
  const id = idOf(e.id);
  const created = msOf(e.created);
  const object = isObject(e.data) && isObject(e.data.object) ? e.data.object : null;
  if (kind === 'unknown' || id === null || created === null || object === null) {
    return refuse('event_invalid: a Stripe event has an id, a type, a created time and data.object');
  }
  // A customer's own events carry the customer; the others name it in `customer`.
  const customer = object.object === 'customer' ? idOf(object.id) : idOf(object.customer);
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const named = CUSTOMER_EVENTS.includes(kind) ? (metadata.vitals_customer_id ?? null) : null;
  if (named !== null && !(typeof named === 'string' && isCustomerId(named))) {
    return refuse(
      'event_invalid: metadata.vitals_customer_id is no customer id (1-255 characters, no control characters)',
    );
  }
  const event: StripeEvent = {
    kind,
    id,
    created,
    customer,
    vitalsCustomerId: named,
    subscription: null,
    refused: null,
  };
  if (SUBSCRIPTION_EVENTS.includes(kind)) {
    const sub = subscriptionOf(kind, object);
    if (typeof sub === 'string') return { ...event, refused: sub };
    event.subscription = sub;
  }
  return event;
}

/** What a customer's subscriptions come to: only the live ones count. */
export interface SubscriptionSummary {
  /** How many are live. */
  live: number;
  /** Their amounts per month, in major units. */
  monthly: number;
  /** The soonest end of their current periods (null: none has one). */
  renewalAt: number | null;
}

export function summarize(
  subs: readonly { status: string; monthly: number; periodEnd: number | null }[],
): SubscriptionSummary {
  const live = subs.filter((s) => LIVE_STATUSES.includes(s.status));
  const ends = live.flatMap((s) => (s.periodEnd === null ? [] : [s.periodEnd]));
  return {
    live: live.length,
    monthly: live.reduce((sum, s) => sum + s.monthly, 0),
    renewalAt: ends.length === 0 ? null : Math.min(...ends),
  };
}
