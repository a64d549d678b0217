// The webhook intake's write (docs/sources.md, "Webhooks"): one delivery's messages, as the
// source's mapping made them, in order, in one transaction with the log entry and the counters of
// each. A message's `customer` fields go through the customer writes' own rules (newCustomer,
// changedCustomer, the parent check, their events) with an audit entry naming the source; its
// `metrics` are points at its instant and its `counts` are added to the day's point, as Segment's
// `track` adds them (Tx.addMetricCounts); the customers whose new points a rule reads are rescored
// once, after every point is in (history reason metrics_updated, as a metric write).
import { customerObject } from '../api/customers.ts';
import { ApiError } from '../domain/errors.ts';
import { event } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import { dayOf } from '../domain/segment.ts';
import { SOURCE_LOG_KEEP, type SourceLogEntry, type SourceResult } from '../domain/sources.ts';
import type {
  AuditEntry,
  CustomerRecord,
  MetricPointRecord,
  SourceActivityRecord,
  SourceRecord,
  Tx,
} from '../store/store.ts';
import { write } from '../store/write.ts';
import { type CustomerInput, changedCustomer, checkParent, newCustomer, storedTree } from './customers.ts';
import { settleAll } from './pipeline.ts';
import { actOn, actOnPoints } from './playbooks.ts';
import { rederive } from './rules.ts';
import { describeChange, keepActivity, listed, valuesText } from './source-activity.ts';

/** A message's customer fields, as the API names them (docs/api.md, "Customers"). */
export type CustomerChange = Omit<CustomerInput, 'customerId'>;

/** One message as the mapping made it and the route checked it: plain data (it may cross to the writer thread). */
export interface WebhookMessage {
  customerId: string | null;
  /** Its instant (ms): the mapping's `at`, else when it was received. */
  at: number;
  metrics: Record<string, number>;
  counts: Record<string, number>;
  customer: CustomerChange | null;
  /** Decided before the write (a mapping that failed, a value the API refuses, nothing to apply). */
  decided: { result: Exclude<SourceResult, 'applied'>; reason: string } | null;
}

interface Outcome {
  result: SourceResult;
  reason: string | null;
  /** What an applied message changed, in words, for the customer's timeline (./source-activity.ts). */
  summary?: string;
}
const refused = (reason: string): Outcome => ({ result: 'refused', reason });

const CUSTOMER_FIELDS = ['name', 'email', 'owner', 'arrCents', 'renewalAt', 'lifecycle', 'parentId'] as const;
/** Whether a change leaves the customer as it was: a tool that sends the same fields each time records no change. */
const unchanged = (a: CustomerRecord, b: CustomerRecord): boolean =>
  CUSTOMER_FIELDS.every((f) => a[f] === b[f]) && JSON.stringify(a.metadata) === JSON.stringify(b.metadata);

/** What one delivery's messages share while they are applied in order. */
class Intake {
  readonly customers = new Map<string, CustomerRecord | null>();
  readonly points: MetricPointRecord[] = [];
  readonly counts: MetricPointRecord[] = [];
  readonly audits: AuditEntry[] = [];
  readonly tx: Tx;
  readonly accountId: string;
  readonly source: SourceRecord;
  readonly requestId: string;
  readonly now: number;

  constructor(tx: Tx, accountId: string, source: SourceRecord, requestId: string, now: number) {
    this.tx = tx;
    this.accountId = accountId;
    this.source = source;
    this.requestId = requestId;
    this.now = now;
  }

  async customer(id: string): Promise<CustomerRecord | null> {
    if (!this.customers.has(id)) this.customers.set(id, await this.tx.getCustomer(this.accountId, id));
    return this.customers.get(id) ?? null;
  }

  audit(action: string, customerId: string, at: number): void {
    this.audits.push({
      id: newId.audit(),
      actor: { type: 'source', id: this.source.id, label: this.source.name },
      action,
      objectId: customerId,
      at,
      requestId: this.requestId,
    });
  }

  async apply(m: WebhookMessage): Promise<Outcome> {
    const id = m.customerId as string;
    let current = await this.customer(id);
    const did: string[] = [];
    if (m.customer) {
      const changed = await this.change(id, current, m.customer);
      if (!('id' in changed)) return changed;
      if (changed !== current) did.push(describeChange(current, changed));
      current = changed;
    }
    if (!current) return refused(`customer_not_found: no customer '${id}'`);
    for (const [metric, value] of Object.entries(m.metrics)) {
      this.points.push({ customerId: id, metric, at: m.at, value });
    }
    for (const [metric, value] of Object.entries(m.counts)) {
      this.counts.push({ customerId: id, metric, at: dayOf(m.at), value });
    }
    if (Object.keys(m.metrics).length + Object.keys(m.counts).length > 0) {
      this.audit('metrics.recorded', id, this.now);
    }
    if (Object.keys(m.metrics).length > 0) did.push(`recorded ${valuesText(m.metrics)}`);
    if (Object.keys(m.counts).length > 0) did.push(`counted ${valuesText(m.counts)}`);
    return { result: 'applied', reason: null, summary: listed(did.filter((d) => d !== '')) };
  }

  /**
   * The customer with the message's fields merged as PATCH merges them, or created as POST
   * creates one when it does not exist and the fields carry an email (its name defaulting to its
   * id); refused in the API's words when a value is not allowed.
   */
  async change(
    id: string,
    current: CustomerRecord | null,
    change: CustomerChange,
  ): Promise<CustomerRecord | Outcome> {
    const input: CustomerInput = { customerId: id, ...change };
    try {
      if (!current) {
        if (change.email === undefined) {
          return refused(
            `customer_not_found: no customer '${id}', and the mapping's customer has no email to create it with`,
          );
        }
        const made = newCustomer({ ...input, name: change.name ?? id }, this.now);
        if (made.parentId !== null) await checkParent(storedTree(this.tx, this.accountId), id, made.parentId);
        if (!(await this.tx.insertCustomer(this.accountId, made))) {
          return refused(`customer_exists: customer '${id}' was created meanwhile; send the message again`);
        }
        const created = [event('customer.created', customerObject(made), this.now)];
        await this.tx.insertEvents(this.accountId, await actOn(this.tx, this.accountId, created, this.now));
        this.audit('customer.created', id, this.now);
        this.customers.set(id, made);
        return made;
      }
      const next = changedCustomer(current, input, this.now);
      if (unchanged(current, next)) return current;
      if (next.parentId !== null && next.parentId !== current.parentId) {
        await checkParent(storedTree(this.tx, this.accountId), id, next.parentId);
      }
      await this.tx.updateCustomer(this.accountId, next);
      const updated = [event('customer.updated', customerObject(next), next.updatedAt)];
      await this.tx.insertEvents(this.accountId, await actOn(this.tx, this.accountId, updated, this.now));
      this.audit('customer.updated', id, next.updatedAt);
      this.customers.set(id, next);
      return next;
    } catch (err) {
      // The API's own refusal (metadata too large, a parent that would make a cycle…), in its words.
      if (err instanceof ApiError) {
        return refused(`${err.code}: ${err.param ? `customer.${err.param}: ` : ''}${err.message}`);
      }
      throw err;
    }
  }

  /** The points and counts written, and the customers whose new points a rule reads rescored once. */
  async finish(): Promise<void> {
    const written = [...this.points, ...this.counts];
    if (written.length === 0) {
      if (this.audits.length > 0) await this.tx.appendAudits(this.accountId, this.audits);
      return;
    }
    const ids = [...new Set(written.map((p) => p.customerId))];
    // Locks the customers' scores at once, in one order, before the points are written (as a metric write does).
    const [known, settings, rules] = await Promise.all([
      this.tx.scoresForUpdate(this.accountId, ids),
      this.tx.getSettings(this.accountId),
      this.tx.listFactorRules(this.accountId),
    ]);
    const read = new Set(rules.map((r) => r.metric));
    const moved = [...new Set(written.filter((p) => read.has(p.metric)).map((p) => p.customerId))];
    const sent: Promise<unknown>[] = [this.tx.appendAudits(this.accountId, this.audits)];
    if (this.points.length > 0) sent.push(this.tx.insertMetricPoints(this.accountId, this.points));
    if (this.counts.length > 0) sent.push(this.tx.addMetricCounts(this.accountId, this.counts));
    await settleAll(sent);
    if (moved.length > 0) {
      await rederive(this.tx, this.accountId, moved, rules, settings, 'metrics_updated', this.now, known);
    }
    await actOnPoints(this.tx, this.accountId, written, this.now);
  }
}

/**
 * POST /ingest/webhook/{id}: the messages of one delivery applied in order, each logged with its
 * result; their log entries, or null when the source is gone, disabled or no longer a webhook
 * source (nothing recorded).
 */
export const webhookIntake = write(async function webhookIntake(
  tx: Tx,
  accountId: string,
  sourceId: string,
  messages: readonly WebhookMessage[],
  requestId: string,
  now: number,
): Promise<SourceLogEntry[] | null> {
  // A parent change takes the account's tree lock first, as PATCH /api/customers does.
  if (messages.some((m) => m.decided === null && typeof m.customer?.parent_id === 'string')) {
    tx.lockCustomerTree(accountId);
  }
  const source = await tx.getSourceForUpdate(accountId, sourceId);
  if (!source?.enabled || source.config.type !== 'webhook') return null;
  const intake = new Intake(tx, accountId, source, requestId, now);
  const entries: SourceLogEntry[] = [];
  const activity: SourceActivityRecord[] = [];
  for (const m of messages) {
    const { summary, ...outcome }: Outcome = m.decided ?? (await intake.apply(m));
    const entry = {
      id: newId.sourceMessage(),
      receivedAt: now,
      kind: 'webhook',
      customerId: m.customerId,
      ...outcome,
    };
    entries.push(entry);
    if (summary !== undefined && outcome.result === 'applied' && m.customerId !== null) {
      activity.push({ id: entry.id, customerId: m.customerId, at: now, kind: 'webhook', summary });
    }
  }
  await intake.finish();
  await settleAll([
    tx.logSourceMessages(accountId, sourceId, entries, SOURCE_LOG_KEEP),
    keepActivity(tx, accountId, source, activity),
  ]);
  return entries;
});
