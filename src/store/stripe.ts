// The Stripe intake's own storage (docs/sources.md, "Stripe"): which Vitals customers hold a
// Stripe customer id in their metadata, and each Stripe subscription of a customer as the last
// event applied to it left it. Written once for both backends; the intake's write
// (src/writes/stripe.ts) runs them in its transaction.
import { type Driver, hasNul } from './driver.ts';

/** A Stripe subscription of a customer, as the last event applied to it left it. */
export interface StripeSubscriptionRecord {
  id: string;
  customerId: string;
  /** The source whose event last changed it. */
  sourceId: string;
  /** Stripe's status: active, trialing, past_due (live), canceled, paused, unpaid, incomplete, … */
  status: string;
  /** Its items' amounts per month, in major units. */
  monthly: number;
  /** Its current period's end (epoch ms), or null when the event had none. */
  periodEnd: number | null;
  /** The `created` of the last event applied to it (epoch ms). */
  eventAt: number;
  updatedAt: number;
}

export interface StripeWrites {
  /**
   * The ids of the account's customers whose metadata.stripe_customer_id is this Stripe customer,
   * by id, at most `limit` of them (an id held twice is a mistake the intake names).
   */
  customersByStripeId(accountId: string, stripeCustomerId: string, limit: number): Promise<string[]>;
  /** The customer's Stripe subscriptions, by id. */
  stripeSubscriptions(accountId: string, customerId: string): Promise<StripeSubscriptionRecord[]>;
  /** Writes the subscription over the one stored with its id, if any. */
  putStripeSubscription(accountId: string, sub: StripeSubscriptionRecord): Promise<void>;
}

export async function customersByStripeId(
  db: Driver,
  accountId: string,
  stripeCustomerId: string,
  limit: number,
): Promise<string[]> {
  if (hasNul(stripeCustomerId)) return [];
  // customers_by_stripe_customer (migration 31) answers it: the account, the value, then the ids in order.
  const rows = await db.all<{ id: string }>(
    `SELECT id FROM customers WHERE account_id = $1 AND ${db.stripeCustomerId} = $2 ORDER BY id LIMIT $3`,
    [accountId, stripeCustomerId, limit],
  );
  return rows.map((r) => r.id);
}

export async function stripeSubscriptions(
  db: Driver,
  accountId: string,
  customerId: string,
): Promise<StripeSubscriptionRecord[]> {
  const rows = await db.all<Record<string, unknown>>(
    `SELECT subscription_id, source_id, status, monthly, period_end, event_at, updated_at
     FROM stripe_subscriptions WHERE account_id = $1 AND customer_id = $2 ORDER BY subscription_id`,
    [accountId, customerId],
  );
  return rows.map((r) => ({
    id: r.subscription_id as string,
    customerId,
    sourceId: r.source_id as string,
    status: r.status as string,
    monthly: Number(r.monthly),
    periodEnd: r.period_end === null ? null : Number(r.period_end),
    eventAt: Number(r.event_at),
    updatedAt: Number(r.updated_at),
  }));
}

export async function putStripeSubscription(
  db: Driver,
  accountId: string,
  s: StripeSubscriptionRecord,
): Promise<void> {
  await db.run(
    `INSERT INTO stripe_subscriptions (account_id, customer_id, subscription_id, source_id, status, monthly,
       period_end, event_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (account_id, customer_id, subscription_id) DO UPDATE SET source_id = excluded.source_id,
       status = excluded.status, monthly = excluded.monthly, period_end = excluded.period_end,
       event_at = excluded.event_at, updated_at = excluded.updated_at`,
    [accountId, s.customerId, s.id, s.sourceId, s.status, s.monthly, s.periodEnd, s.eventAt, s.updatedAt],
  );
}
