// The Segment intake's write (docs/sources.md, "Segment"): one request's messages, in order, in
// one transaction with the log entry and the counters of each. A group goes through the customer
// writes' own rules (newCustomer, changedCustomer, their events) with an audit entry naming the
// source; a track adds 1 to its metric's point of the day; the customers whose new points a rule
// reads are rescored once, after every point is in (as a metric write does).
import { customerObject } from '../api/customers.ts';
import { ApiError } from '../domain/errors.ts';
import { event } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import { dayOf, PROTECTED_METADATA, type SegmentMessage } from '../domain/segment.ts';
import {
  DEDUPE_MS,
  ignored,
  type MessageOutcome,
  metricOfEvent,
  refused,
  type SegmentConfig,
  SOURCE_LOG_KEEP,
  type SourceLogEntry,
} from '../domain/sources.ts';
import type {
  AuditEntry,
  CustomerRecord,
  MetricPointRecord,
  SourceActivityRecord,
  SourceRecord,
  Tx,
} from '../store/store.ts';
import { write } from '../store/write.ts';
import { type CustomerInput, changedCustomer, newCustomer } from './customers.ts';
import { addDayCounts } from './day-counts.ts';
import { settleAll } from './pipeline.ts';
import { actOn } from './playbooks.ts';
import { describeChange, keepActivity } from './source-activity.ts';

type Outcome = MessageOutcome;
const applied = (customerId: string | null, summary?: string): Outcome => ({
  result: 'applied',
  customerId,
  reason: null,
  ...(summary === undefined ? {} : { summary }),
});

/** What one request's messages share while they are applied in order. */
class Intake {
  /** Customers read (or made) by this request: null when there is none. */
  readonly customers = new Map<string, CustomerRecord | null>();
  /** Users linked to a group by this request, or read. */
  readonly users = new Map<string, string | null>();
  readonly links: { userId: string; groupId: string }[] = [];
  readonly counts: MetricPointRecord[] = [];
  readonly audits: AuditEntry[] = [];

  readonly tx: Tx;
  readonly accountId: string;
  readonly source: SourceRecord;
  readonly config: SegmentConfig;
  readonly requestId: string;
  readonly now: number;

  constructor(tx: Tx, accountId: string, source: SourceRecord, requestId: string, now: number) {
    this.tx = tx;
    this.accountId = accountId;
    this.source = source;
    this.config = source.config.type === 'segment' ? source.config.segment : { trusted: false, events: {} };
    this.requestId = requestId;
    this.now = now;
  }

  /**
   * Reads and locks every customer the messages name, at once and in one order (customersForUpdate),
   * so two requests naming the same customers in different orders wait rather than deadlock; a
   * track naming only its user finds the user's group first.
   */
  async lockCustomers(messages: readonly SegmentMessage[]): Promise<void> {
    const usersOnly = messages.flatMap((m) =>
      m.refused === null && m.kind === 'track' && m.groupId === null && m.userId !== null ? [m.userId] : [],
    );
    if (usersOnly.length > 0) {
      const found = await this.tx.sourceUserGroups(this.accountId, this.source.id, usersOnly);
      for (const user of usersOnly) this.users.set(user, found.get(user) ?? null);
    }
    const ids = new Set<string>();
    for (const m of messages) {
      if (m.refused !== null || (m.kind !== 'group' && m.kind !== 'track' && m.kind !== 'identify')) continue;
      const id = m.groupId ?? (m.userId === null ? null : (this.users.get(m.userId) ?? null));
      if (id !== null) ids.add(id);
    }
    if (ids.size === 0) return;
    const found = await this.tx.customersForUpdate(this.accountId, [...ids].sort());
    for (const id of ids) this.customers.set(id, found.get(id) ?? null);
  }

  async customer(id: string): Promise<CustomerRecord | null> {
    if (!this.customers.has(id)) this.customers.set(id, await this.tx.getCustomer(this.accountId, id));
    return this.customers.get(id) ?? null;
  }

  async groupOfUser(userId: string): Promise<string | null> {
    if (!this.users.has(userId)) {
      const found = await this.tx.sourceUserGroups(this.accountId, this.source.id, [userId]);
      this.users.set(userId, found.get(userId) ?? null);
    }
    return this.users.get(userId) ?? null;
  }

  link(userId: string, groupId: string): void {
    this.users.set(userId, groupId);
    this.links.push({ userId, groupId });
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

  async apply(m: SegmentMessage): Promise<Outcome> {
    if (m.refused !== null) return refused(m.groupId, m.refused);
    switch (m.kind) {
      case 'group':
        return this.group(m);
      case 'track':
        return this.track(m);
      case 'identify':
        if (m.groupId !== null && m.userId !== null) {
          this.link(m.userId, m.groupId);
          return applied(m.groupId);
        }
        return ignored(
          m.groupId,
          m.userId === null
            ? 'identify: without a userId there is no user to link to context.groupId'
            : 'identify: Vitals reads an identify only to link its user to context.groupId, which it lacks',
        );
      default:
        return ignored(null, `${m.kind}: Vitals does not use ${m.kind} messages`);
    }
  }

  async group(m: SegmentMessage): Promise<Outcome> {
    const id = m.groupId as string;
    const change = m.change ?? { fields: {}, metadata: {} };
    const given = Object.keys(change.fields);
    const current = await this.customer(id);
    if (!this.config.trusted) {
      const guarded = [
        ...given,
        ...PROTECTED_METADATA.filter((k) => change.metadata[k] !== undefined).map((k) => `metadata ${k}`),
      ];
      if (guarded.length > 0) {
        return refused(
          id,
          `not_trusted: this source is not trusted to set ${guarded.join(', ')} (only a trusted source's key may)`,
        );
      }
      if (!current) {
        return refused(
          id,
          `not_trusted: no customer '${id}', and this source is not trusted to create customers`,
        );
      }
    }
    const hasMetadata = Object.keys(change.metadata).length > 0;
    let said = '';
    const input: CustomerInput = {
      customerId: id,
      ...(change.fields as Omit<CustomerInput, 'customerId'>),
      ...(hasMetadata ? { metadata: change.metadata } : {}),
    };
    try {
      if (!current) {
        if (typeof change.fields.email !== 'string') {
          return refused(
            id,
            `customer_not_found: no customer '${id}', and the group has no traits.email to create it with`,
          );
        }
        const customer = newCustomer({ ...input, name: (change.fields.name as string) ?? id }, this.now);
        if (!(await this.tx.insertCustomer(this.accountId, customer))) {
          return refused(id, `customer_exists: customer '${id}' was created meanwhile; send the group again`);
        }
        const created = [event('customer.created', customerObject(customer), this.now)];
        await this.tx.insertEvents(this.accountId, await actOn(this.tx, this.accountId, created, this.now));
        this.customers.set(id, customer);
        this.audit('customer.created', id, this.now);
        said = describeChange(null, customer);
      } else if (given.length > 0 || hasMetadata) {
        const next = changedCustomer(current, input, this.now);
        await this.tx.updateCustomer(this.accountId, next);
        const updated = [event('customer.updated', customerObject(next), next.updatedAt)];
        await this.tx.insertEvents(this.accountId, await actOn(this.tx, this.accountId, updated, this.now));
        this.customers.set(id, next);
        this.audit('customer.updated', id, next.updatedAt);
        said = describeChange(current, next);
      }
    } catch (err) {
      // The API's own refusal (metadata too large, a renewal out of range…), in its words.
      if (err instanceof ApiError) return refused(id, `${err.code}: ${err.message}`);
      throw err;
    }
    if (m.userId !== null) this.link(m.userId, id);
    return applied(id, said);
  }

  async track(m: SegmentMessage): Promise<Outcome> {
    const name = m.event as string;
    const renamed = Object.hasOwn(this.config.events, name) ? this.config.events[name] : undefined;
    const groupId = m.groupId ?? (m.userId === null ? null : await this.groupOfUser(m.userId));
    if (groupId === null) {
      return refused(
        null,
        m.userId === null
          ? 'no_group: the track has no context.groupId and no userId'
          : `no_group: the track has no context.groupId, and user '${m.userId}' was never linked to a group (a group call with its userId links it)`,
      );
    }
    if (renamed === null) return ignored(groupId, `event_ignored: this source ignores '${name}'`);
    const metric = renamed ?? metricOfEvent(name);
    if (metric === null) {
      return refused(groupId, `event_name_invalid: '${name}' has no letter or digit to name a metric with`);
    }
    if (!(await this.customer(groupId)))
      return refused(groupId, `customer_not_found: no customer '${groupId}'`);
    this.counts.push({ customerId: groupId, metric, at: dayOf(m.at), value: 1 });
    return applied(groupId, `counted ${name} in ${metric}`);
  }

  /** The links and audit entries written, and the day counts added (./day-counts.ts), sent together. */
  async finish(): Promise<void> {
    const sent: Promise<unknown>[] = [];
    if (this.links.length > 0) sent.push(this.tx.linkSourceUsers(this.accountId, this.source.id, this.links));
    if (this.audits.length > 0) sent.push(this.tx.appendAudits(this.accountId, this.audits));
    sent.push(addDayCounts(this.tx, this.accountId, this.counts, this.now));
    await settleAll(sent);
  }
}

/**
 * POST /v1/*: the messages of one request applied in order, each logged with its result. false
 * when the source is gone, disabled or no longer a Segment source (401, nothing recorded).
 *
 * A source's requests run side by side (docs/sources.md, "Segment"): the source row is read, not
 * locked; each message id is claimed first, so a retried message in two requests at once is applied
 * by one and waited for by the other; the source's counters are added last, holding its row only
 * from there to the commit.
 */
export const segmentIntake = write(async function segmentIntake(
  tx: Tx,
  accountId: string,
  sourceId: string,
  messages: readonly SegmentMessage[],
  requestId: string,
  now: number,
): Promise<boolean> {
  const ids = messages.flatMap((m) => (m.messageId === null || m.refused !== null ? [] : [m.messageId]));
  /** Ids this request may apply: claimed, and not applied by an earlier message of it. */
  const [source, claimed] = await Promise.all([
    tx.getSource(accountId, sourceId),
    tx.claimMessages(accountId, sourceId, ids, now - DEDUPE_MS, now),
  ]);
  if (!source?.enabled || source.config.type !== 'segment') {
    await tx.releaseMessages(accountId, sourceId, [...claimed]);
    return false;
  }
  const intake = new Intake(tx, accountId, source, requestId, now);
  await intake.lockCustomers(messages);
  const entries: SourceLogEntry[] = [];
  const activity: SourceActivityRecord[] = [];
  for (const m of messages) {
    let outcome: Outcome;
    if (m.refused === null && m.messageId !== null && !claimed.has(m.messageId)) {
      outcome = ignored(m.groupId, `duplicate: message '${m.messageId}' was applied within the last 7 days`);
    } else {
      outcome = await intake.apply(m);
      if (outcome.result === 'applied' && m.messageId !== null) claimed.delete(m.messageId);
    }
    const { summary, ...logged } = outcome;
    const entry = { id: newId.sourceMessage(), receivedAt: now, kind: m.kind, ...logged };
    entries.push(entry);
    if (summary !== undefined && logged.result === 'applied' && logged.customerId !== null) {
      activity.push({ id: entry.id, customerId: logged.customerId, at: now, kind: m.kind, summary });
    }
  }
  await intake.finish();
  // What is still claimed was not applied (refused, ignored): released, so a retry may apply it.
  // The log goes last on the connection: it adds the source's counters (store/sources.ts).
  await settleAll([
    tx.releaseMessages(accountId, sourceId, [...claimed]),
    keepActivity(tx, accountId, source, activity),
    tx.logSourceMessages(accountId, sourceId, entries, SOURCE_LOG_KEEP),
  ]);
  return true;
});
