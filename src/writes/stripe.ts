// The Stripe intake's write (docs/sources.md, "Stripe"): one delivery's event applied once, in one
// transaction with its log entry and the source's counters. What it changes goes through the
// customer, outcome and metric writes' own rules (changedCustomer and its event, the outcome
// record, applyMetricUpdates and the day counts, which rescore where a rule reads the metric),
// with audit entries naming the source.
import { customerObject } from '../api/customers.ts';
import { ApiError } from '../domain/errors.ts';
import { event as eventRecord } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import { dayOf } from '../domain/segment.ts';
import { DEDUPE_MS, ignored, type MessageOutcome, refused, SOURCE_LOG_KEEP } from '../domain/sources.ts';
import {
  COUNTED_EVENTS,
  CUSTOMER_EVENTS,
  type StripeEvent,
  type SubscriptionChange,
  type SubscriptionSummary,
  summarize,
} from '../domain/stripe.ts';
import { iso } from '../domain/time.ts';
import type {
  AuditEntry,
  CustomerRecord,
  SourceRecord,
  StripeSubscriptionRecord,
  Tx,
} from '../store/store.ts';
import { write } from '../store/write.ts';
import { type CustomerInput, changedCustomer } from './customers.ts';
import { addDayCounts } from './day-counts.ts';
import { applyMetricUpdates } from './metrics.ts';
import { settleAll } from './pipeline.ts';
import { actOn } from './playbooks.ts';
import { describeChange, keepActivity } from './source-activity.ts';

type Outcome = MessageOutcome;
const applied = (customerId: string, summary: string, reasons: readonly string[] = []): Outcome => ({
  result: 'applied',
  customerId,
  reason: reasons.length === 0 ? null : reasons.join('; '),
  summary,
});

const isOutcome = (v: object): v is Outcome => 'result' in v;

/** Cents, as ARR and MRR are shown. */
const cents = (amount: number) => Math.round(amount * 100) / 100;

/**
 * The customer's book after its subscriptions (docs/sources.md, "Subscriptions"): arr from the live
 * ones, the soonest renewal (left as it was with none live), the event's status in metadata;
 * churned when the subscription that ended was its last live one, active again when a live one appears.
 */
function bookAfter(customer: CustomerRecord, sub: SubscriptionChange, sum: SubscriptionSummary) {
  const churns = sub.ended && sum.live === 0 && customer.lifecycle !== 'churned';
  const returns = sum.live > 0 && customer.lifecycle === 'churned';
  const input: CustomerInput = {
    customerId: customer.id,
    arr: cents(12 * sum.monthly),
    ...(sum.renewalAt === null ? {} : { renewal_at: iso(sum.renewalAt) }),
    ...(churns ? { lifecycle: 'churned' as const } : returns ? { lifecycle: 'active' as const } : {}),
    metadata: { stripe_subscription_status: sub.status },
  };
  return { input, churns, returns };
}

/** One delivery's event, applied in the intake's transaction. */
class Delivery {
  readonly audits: AuditEntry[] = [];
  readonly tx: Tx;
  readonly accountId: string;
  readonly source: SourceRecord;
  readonly event: StripeEvent;
  readonly requestId: string;
  readonly now: number;

  constructor(
    tx: Tx,
    accountId: string,
    source: SourceRecord,
    event: StripeEvent,
    requestId: string,
    now: number,
  ) {
    this.tx = tx;
    this.accountId = accountId;
    this.source = source;
    this.event = event;
    this.requestId = requestId;
    this.now = now;
  }

  apply(): Promise<Outcome> {
    const { kind, subscription } = this.event;
    if (subscription) return this.subscription(subscription);
    if (CUSTOMER_EVENTS.includes(kind)) return this.link();
    const metric = COUNTED_EVENTS[kind];
    if (metric !== undefined) return this.count(metric);
    return Promise.resolve(
      ignored(
        null,
        `not_used: Vitals reads no ${kind} events (docs/sources.md, "Stripe", lists those it reads)`,
      ),
    );
  }

  /** The Vitals customer of the event's Stripe customer, or the refusal that says why there is none. */
  async match(): Promise<CustomerRecord | Outcome> {
    const stripeId = this.event.customer;
    if (stripeId === null) {
      return refused(null, 'customer_missing: the event names no Stripe customer (data.object.customer)');
    }
    const ids = await this.tx.customersByStripeId(this.accountId, stripeId, 2);
    if (ids.length > 1) {
      return refused(
        null,
        `customer_ambiguous: customers '${ids[0]}' and '${ids[1]}' both have metadata.stripe_customer_id = ${stripeId}; keep it on one`,
      );
    }
    // Read for update: the customer is locked until the commit (PostgreSQL).
    const found = ids[0] === undefined ? null : await this.tx.getCustomer(this.accountId, ids[0]);
    return (
      found ?? refused(null, `customer_not_found: no customer has metadata.stripe_customer_id = ${stripeId}`)
    );
  }

  audit(action: string, objectId: string, at: number): void {
    this.audits.push({
      id: newId.audit(),
      actor: { type: 'source', id: this.source.id, label: this.source.name },
      action,
      objectId,
      at,
      requestId: this.requestId,
    });
  }

  /** The customer with `input` applied as PATCH applies it, or the refusal in the API's words. */
  changed(current: CustomerRecord, input: CustomerInput): CustomerRecord | Outcome {
    try {
      return changedCustomer(current, input, this.now);
    } catch (err) {
      if (err instanceof ApiError) return refused(current.id, `${err.code}: ${err.message}`);
      throw err;
    }
  }

  /** The changed customer written, with its customer.updated event and audit entry. */
  async save(next: CustomerRecord): Promise<void> {
    await this.tx.updateCustomer(this.accountId, next);
    // Through the playbooks: a renewal date or a return to active may bring one within reach.
    const updated = [eventRecord('customer.updated', customerObject(next), next.updatedAt)];
    await this.tx.insertEvents(this.accountId, await actOn(this.tx, this.accountId, updated, next.updatedAt));
    this.audit('customer.updated', next.id, next.updatedAt);
  }

  /** customer.created/updated: metadata.vitals_customer_id links the Stripe customer to that customer. */
  async link(): Promise<Outcome> {
    const { customer: stripeId, vitalsCustomerId: id, kind } = this.event;
    if (stripeId === null) return refused(null, 'event_invalid: data.object has no customer id');
    if (id === null) {
      const found = await this.match();
      if (isOutcome(found)) {
        const hint = ' (or set metadata.vitals_customer_id on the Stripe customer to link them)';
        return found.reason?.startsWith('customer_not_found') ? refused(null, found.reason + hint) : found;
      }
      return ignored(found.id, `${kind}: without metadata.vitals_customer_id, nothing Vitals reads changed`);
    }
    const target = await this.tx.getCustomer(this.accountId, id);
    if (!target) {
      return refused(
        id,
        `customer_not_found: no customer '${id}', which the Stripe customer's metadata.vitals_customer_id names`,
      );
    }
    if (target.metadata.stripe_customer_id === stripeId) {
      return ignored(id, `unchanged: customer '${id}' already has metadata.stripe_customer_id = ${stripeId}`);
    }
    const holder = (await this.tx.customersByStripeId(this.accountId, stripeId, 2)).find((c) => c !== id);
    if (holder !== undefined) {
      return refused(
        id,
        `stripe_customer_taken: customer '${holder}' already has metadata.stripe_customer_id = ${stripeId}; remove it there to link '${id}'`,
      );
    }
    const next = this.changed(target, { customerId: id, metadata: { stripe_customer_id: stripeId } });
    if (isOutcome(next)) return next;
    await this.save(next);
    return applied(id, `linked Stripe customer ${stripeId}`);
  }

  /**
   * customer.subscription.*: the subscription kept as the event shows it, unless a later event
   * already changed it; then the customer's arr, renewal_at, lifecycle and status from all of its
   * subscriptions, a churned outcome when the last live one ended, and a point of mrr.
   */
  async subscription(sub: SubscriptionChange): Promise<Outcome> {
    const found = await this.match();
    if (isOutcome(found)) return found;
    const customer = found;
    const created = this.event.created;
    const subs = await this.tx.stripeSubscriptions(this.accountId, customer.id);
    const stored = subs.find((s) => s.id === sub.id);
    if (stored && stored.eventAt > created) {
      return ignored(
        customer.id,
        `out_of_order: ${sub.id} was changed by an event created ${iso(stored.eventAt)}; this one was created ${iso(created)}, before it`,
      );
    }
    const record: StripeSubscriptionRecord = {
      id: sub.id,
      customerId: customer.id,
      sourceId: this.source.id,
      status: sub.status,
      monthly: sub.monthly,
      periodEnd: sub.periodEnd,
      eventAt: created,
      updatedAt: this.now,
    };
    const sum = summarize([...subs.filter((s) => s.id !== sub.id), record]);
    const { input, churns, returns } = bookAfter(customer, sub, sum);
    const next = this.changed(customer, input);
    if (isOutcome(next)) return next;
    // A customer the event leaves as it was is not written: no customer.updated for nothing.
    const moved =
      next.arrCents !== customer.arrCents ||
      next.renewalAt !== customer.renewalAt ||
      next.lifecycle !== customer.lifecycle ||
      next.metadata.stripe_subscription_status !== customer.metadata.stripe_subscription_status;
    if (moved) await this.save(next);
    await this.tx.putStripeSubscription(this.accountId, record);
    const notes = [...sub.leftOut];
    const did = moved ? [describeChange(customer, next)] : [];
    if (churns) {
      await this.churned(customer.id, sub.id);
      notes.push('churned: no live subscription is left');
      did.push('recorded a churned outcome');
    }
    if (returns) notes.push(`active again: ${sub.id} is ${sub.status}`);
    await applyMetricUpdates(
      this.tx,
      this.accountId,
      [{ customerId: customer.id, values: { mrr: cents(sum.monthly) }, at: created }],
      this.now,
    );
    did.push(`recorded mrr ${cents(sum.monthly)}`);
    return applied(customer.id, `subscription ${sub.id} ${sub.status}: ${did.join('; ')}`, notes);
  }

  /** The churned outcome at the event's `created`, its note naming the subscription that ended. */
  async churned(customerId: string, subscriptionId: string): Promise<void> {
    await this.tx.insertOutcomes(this.accountId, [
      {
        id: newId.outcome(),
        customerId,
        outcome: 'churned',
        at: this.event.created,
        note: `Stripe subscription ${subscriptionId} ended (${this.event.kind}); no live subscription is left`,
        createdAt: this.now,
        createdBy: { type: 'source', id: this.source.id, label: this.source.name },
      },
    ]);
    this.audit('outcome.recorded', customerId, this.now);
  }

  /** invoice.paid / invoice.payment_failed: 1 more in the metric's point of the event's UTC day. */
  async count(metric: string): Promise<Outcome> {
    const found = await this.match();
    if (isOutcome(found)) return found;
    await addDayCounts(
      this.tx,
      this.accountId,
      [{ customerId: found.id, metric, at: dayOf(this.event.created), value: 1 }],
      this.now,
    );
    return applied(found.id, `counted ${this.event.kind} in ${metric}`);
  }
}

/** What became of a delivery: recorded in the log, or its source gone or disabled meanwhile (nothing recorded). */
export type StripeIntakeResult = 'recorded' | 'gone' | 'disabled';

/**
 * POST /ingest/stripe/{id}: the delivery's event applied once (an event id the source applied
 * within DEDUPE_MS is a duplicate), or its refusal, logged either way with the source's counters.
 */
export const stripeIntake = write(async function stripeIntake(
  tx: Tx,
  accountId: string,
  sourceId: string,
  event: StripeEvent,
  requestId: string,
  now: number,
): Promise<StripeIntakeResult> {
  const source = await tx.getSourceForUpdate(accountId, sourceId);
  if (source?.config.type !== 'stripe') return 'gone';
  if (!source.enabled) return 'disabled';
  const delivery = new Delivery(tx, accountId, source, event, requestId, now);
  let outcome: Outcome;
  // The event's id is claimed for this delivery unless one was applied within DEDUPE_MS, and
  // released below when the delivery applies nothing.
  let claimed = false;
  if (event.refused !== null) outcome = refused(null, event.refused);
  else if (
    event.id !== null &&
    !(await tx.claimMessages(accountId, sourceId, [event.id], now - DEDUPE_MS, now)).has(event.id)
  ) {
    outcome = ignored(null, `duplicate: event ${event.id} was applied within the last 7 days`);
  } else {
    claimed = event.id !== null;
    outcome = await delivery.apply();
  }
  const { summary, ...logged } = outcome;
  const entry = { id: newId.sourceMessage(), receivedAt: now, kind: event.kind, ...logged };
  const sent: Promise<unknown>[] = [tx.logSourceMessages(accountId, sourceId, [entry], SOURCE_LOG_KEEP)];
  if (summary !== undefined && logged.result === 'applied' && logged.customerId !== null) {
    const activity = { id: entry.id, customerId: logged.customerId, at: now, kind: event.kind, summary };
    sent.push(keepActivity(tx, accountId, source, [activity]));
  }
  if (claimed && outcome.result !== 'applied') {
    sent.push(tx.releaseMessages(accountId, sourceId, [event.id as string]));
  }
  if (delivery.audits.length > 0) sent.push(tx.appendAudits(accountId, delivery.audits));
  await settleAll(sent);
  return 'recorded';
});
