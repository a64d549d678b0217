// A transaction over a Driver, for both backends: each write is one of an area's functions,
// written once. A backend's transaction class extends this with what it writes its own way:
// scores and customers in bulk (SQLite statement by statement on its one writer, PostgreSQL in one
// statement per chunk, with row locks) and events with their deliveries.
import type { DropRecord, DropRule } from '../domain/alerts.ts';
import type { PlaybookRecord } from '../domain/playbooks.ts';
import type { FactorRule } from '../domain/rules.ts';
import type { Thresholds, Weights } from '../domain/scoring.ts';
import type { SourceLogEntry } from '../domain/sources.ts';
import * as audit from './audit.ts';
import type { BackfillRecord, FirstVersion } from './backfills.ts';
import * as backfills from './backfills.ts';
import type { CustomerWrite } from './customers.ts';
import * as customers from './customers.ts';
import * as idempotency from './idempotency.ts';
import * as mail from './mail.ts';
import * as metrics from './metrics.ts';
import * as outbox from './outbox.ts';
import * as outcomes from './outcomes.ts';
import * as playbooks from './playbooks.ts';
import * as rederive from './rederive.ts';
import * as scores from './scores.ts';
import * as settings from './settings.ts';
import type { SourceRecord } from './sources.ts';
import * as sources from './sources.ts';
import { SqlReader } from './sql-reader.ts';
import type {
  AuditEntry,
  CustomerRecord,
  EventRecord,
  MetricPointRecord,
  OutcomeRecord,
  ScoreReason,
  ScoreRecord,
  Tx,
  ViewRecord,
  WebhookRecord,
} from './store.ts';
import type { StripeSubscriptionRecord } from './stripe.ts';
import * as stripe from './stripe.ts';
import * as tasks from './tasks.ts';
import * as timeline from './timeline.ts';
import * as views from './views.ts';
import * as webhooks from './webhooks.ts';

export abstract class SqlTx extends SqlReader implements Tx {
  /** Set when this transaction made deliveries due; the store wakes dispatchers at the commit. */
  deliveriesDue = false;

  /**
   * Before a read it will act on, or a change: the account's lock (docs/postgresql.md). SQLite has
   * one writer at a time, and nothing to lock. Sent, not waited for: a method sends its statements
   * when called, in the order of the calls (docs/postgresql.md, "Round trips of a write").
   */
  protected lockAccount(_accountId: string, _mode: 'shared' | 'exclusive'): void {}

  abstract scoresForUpdate(
    accountId: string,
    customerIds: readonly string[],
  ): Promise<Map<string, ScoreRecord | null>>;
  abstract customersForUpdate(
    accountId: string,
    ids: readonly string[],
  ): Promise<Map<string, CustomerRecord>>;
  abstract saveCustomers(
    accountId: string,
    inserts: readonly CustomerWrite[],
    updates: readonly CustomerWrite[],
  ): Promise<string[]>;
  lockCustomerTree(accountId: string): void {
    this.lockAccount(accountId, 'exclusive');
  }

  customerParents(accountId: string, ids: readonly string[]) {
    // Read to act on, as any customer: under the account's lock (exclusive when the tree changes).
    this.lockAccount(accountId, 'shared');
    return customers.customerParents(this.db, accountId, ids);
  }

  customerChildren(accountId: string, parentIds: readonly string[]) {
    this.lockAccount(accountId, 'shared');
    return customers.customerChildren(this.db, accountId, parentIds);
  }

  abstract insertCustomer(accountId: string, customer: CustomerWrite): Promise<boolean>;
  abstract updateCustomer(accountId: string, customer: CustomerWrite): Promise<void>;
  abstract deleteCustomer(accountId: string, id: string): Promise<boolean>;
  abstract writeScores(accountId: string, scores: ScoreRecord[], reason: ScoreReason): Promise<void>;
  abstract dropWatch(...args: Parameters<Tx['dropWatch']>): ReturnType<Tx['dropWatch']>;
  abstract insertEvents(accountId: string, events: EventRecord[]): Promise<void>;

  async recordDropAlerts(accountId: string, alerts: readonly DropRecord[]) {
    await scores.recordDropAlerts(this.db, accountId, alerts);
  }

  async putAlerts(accountId: string, drop: DropRule | null, now: number): Promise<void> {
    this.lockAccount(accountId, 'exclusive');
    await settings.putAlerts(this.db, accountId, drop, now);
  }

  async putWeights(accountId: string, weights: Weights, now: number): Promise<void> {
    this.lockAccount(accountId, 'exclusive');
    await settings.putWeights(this.db, accountId, weights, now);
  }

  async putThresholds(accountId: string, t: Thresholds, now: number): Promise<void> {
    this.lockAccount(accountId, 'exclusive');
    await settings.putThresholds(this.db, accountId, t, now);
  }

  async putFactorRule(accountId: string, rule: FactorRule): Promise<void> {
    // As a weights change: every score of the account is recomputed in this transaction.
    this.lockAccount(accountId, 'exclusive');
    await metrics.putFactorRule(this.db, accountId, rule);
  }

  async deleteFactorRule(accountId: string, factor: string): Promise<boolean> {
    this.lockAccount(accountId, 'exclusive');
    return metrics.deleteFactorRule(this.db, accountId, factor);
  }

  async setRederiveDue(
    accountId: string,
    due: readonly { customerId: string; at: number | null }[],
    opts?: { earlierOnly?: boolean },
  ) {
    await rederive.setRederiveDue(this.db, accountId, due, opts?.earlierOnly ?? false);
  }

  async claimRederiveDue(accountId: string, customerIds: readonly string[], now: number) {
    this.lockAccount(accountId, 'shared');
    return rederive.claimRederiveDue(this.db, accountId, customerIds, now);
  }

  async insertOutcomes(accountId: string, list: readonly OutcomeRecord[]): Promise<void> {
    this.lockAccount(accountId, 'shared');
    await outcomes.insertOutcomes(this.db, accountId, list);
  }

  async deleteOutcome(accountId: string, customerId: string, id: string): Promise<boolean> {
    this.lockAccount(accountId, 'shared');
    return outcomes.deleteOutcome(this.db, accountId, customerId, id);
  }

  async insertMetricPoints(accountId: string, points: readonly MetricPointRecord[]): Promise<void> {
    this.lockAccount(accountId, 'shared');
    await metrics.insertMetricPoints(this.db, accountId, points);
  }

  async scoresAfter(accountId: string, after: string | null, limit: number): Promise<ScoreRecord[]> {
    this.lockAccount(accountId, 'shared');
    return scores.scoresAfter(this.db, accountId, after, limit);
  }

  async insertDirectEvent(accountId: string, webhookId: string, e: EventRecord): Promise<string | null> {
    const id = await outbox.insertDirectEvent(this.db, accountId, webhookId, e);
    if (id !== null) this.deliveriesDue = true;
    return id;
  }

  async insertWebhook(accountId: string, w: WebhookRecord): Promise<void> {
    await webhooks.insertWebhook(this.db, accountId, w);
  }

  async updateWebhook(accountId: string, w: WebhookRecord): Promise<void> {
    await webhooks.updateWebhook(this.db, accountId, w);
    // Switching a webhook back on resumes the deliveries it had pending.
    if (w.enabled) this.deliveriesDue = true;
  }

  deleteWebhook(accountId: string, id: string): Promise<boolean> {
    return webhooks.deleteWebhook(this.db, accountId, id);
  }

  async retryDelivery(accountId: string, webhookId: string, id: string, now: number): Promise<boolean> {
    const retried = await webhooks.retryDelivery(this.db, accountId, webhookId, id, now);
    if (retried) this.deliveriesDue = true;
    return retried;
  }

  insertView(accountId: string, userId: string, view: ViewRecord, limit: number) {
    return views.insertView(this.db, accountId, userId, view, limit);
  }

  deleteView(accountId: string, userId: string, id: string): Promise<boolean> {
    return views.deleteView(this.db, accountId, userId, id);
  }

  insertPlaybook(accountId: string, p: PlaybookRecord, limit: number): Promise<boolean> {
    return playbooks.insertPlaybook(this.db, accountId, p, limit);
  }

  updatePlaybook(accountId: string, p: PlaybookRecord, triggerChanged: boolean): Promise<void> {
    return playbooks.updatePlaybook(this.db, accountId, p, triggerChanged);
  }

  deletePlaybook(accountId: string, id: string): Promise<boolean> {
    return playbooks.deletePlaybook(this.db, accountId, id);
  }

  enabledPlaybooks(accountId: string) {
    return playbooks.enabledPlaybooks(this.db, accountId);
  }

  playbookTargets(accountId: string, ids: readonly string[]) {
    return playbooks.playbookTargets(this.db, accountId, ids);
  }

  renewalsWithoutTask(...args: Parameters<Tx['renewalsWithoutTask']>) {
    return playbooks.renewalsWithoutTask(this.db, ...args);
  }

  activeCustomersAfter(accountId: string, after: string | null, limit: number) {
    return playbooks.activeCustomersAfter(this.db, accountId, after, limit);
  }

  heldBefore(accountId: string, playbookId: string, ids: readonly string[]) {
    return playbooks.heldBefore(this.db, accountId, playbookId, ids);
  }

  setHeld(accountId: string, playbookId: string, ids: readonly string[], holds: boolean) {
    return playbooks.setHeld(this.db, accountId, playbookId, ids, holds);
  }

  insertTask(accountId: string, task: tasks.TaskRecord): Promise<boolean> {
    return tasks.insertTask(this.db, accountId, task);
  }

  updateTask(accountId: string, task: tasks.TaskRecord): Promise<void> {
    return tasks.updateTask(this.db, accountId, task);
  }

  deleteTask(accountId: string, id: string): Promise<boolean> {
    return tasks.deleteTask(this.db, accountId, id);
  }

  openTaskOf(accountId: string, playbookId: string, customerId: string, except: string) {
    return tasks.openTaskOf(this.db, accountId, playbookId, customerId, except);
  }

  insertNote(accountId: string, note: tasks.NoteRecord): Promise<void> {
    return tasks.insertNote(this.db, accountId, note);
  }

  updateNote(accountId: string, note: tasks.NoteRecord): Promise<void> {
    return tasks.updateNote(this.db, accountId, note);
  }

  deleteNote(accountId: string, id: string): Promise<boolean> {
    return tasks.deleteNote(this.db, accountId, id);
  }

  recordVersionActor(accountId: string, customerId: string, version: number, actor: tasks.Actor) {
    return timeline.recordVersionActor(this.db, accountId, customerId, version, actor);
  }

  insertSourceActivity(
    accountId: string,
    source: { id: string; name: string; type: string },
    messages: readonly timeline.SourceActivityRecord[],
  ): Promise<void> {
    return timeline.insertSourceActivity(this.db, accountId, source, messages);
  }

  insertBackfill(accountId: string, b: BackfillRecord): Promise<boolean> {
    // Under the account's lock, as any write of its scores: one running per account is the index's.
    this.lockAccount(accountId, 'shared');
    return backfills.insertBackfill(this.db, accountId, b);
  }

  backfillForUpdate(accountId: string, id: string): Promise<BackfillRecord | null> {
    this.lockAccount(accountId, 'shared');
    return backfills.getBackfill(this.db, accountId, id, this.db.forUpdate);
  }

  updateBackfill(accountId: string, b: BackfillRecord): Promise<void> {
    return backfills.updateBackfill(this.db, accountId, b);
  }

  customerIdsAfter(accountId: string, after: string | null, limit: number): Promise<string[]> {
    return backfills.customerIdsAfter(this.db, accountId, after, limit);
  }

  countCustomers(accountId: string): Promise<number> {
    return backfills.countCustomers(this.db, accountId);
  }

  firstVersion(accountId: string, customerId: string): Promise<FirstVersion | null> {
    return backfills.firstVersion(this.db, accountId, customerId);
  }

  customerPoints(accountId: string, customerId: string, metrics: readonly string[], until: number) {
    return backfills.customerPoints(this.db, accountId, customerId, metrics, until);
  }

  getSourceForUpdate(accountId: string, id: string): Promise<SourceRecord | null> {
    return sources.getSource(this.db, accountId, id, this.db.forUpdate);
  }

  insertSource(accountId: string, source: SourceRecord, limit: number): Promise<boolean> {
    return sources.insertSource(this.db, accountId, source, limit);
  }

  updateSource(accountId: string, source: SourceRecord): Promise<void> {
    return sources.updateSource(this.db, accountId, source);
  }

  deleteSource(accountId: string, id: string): Promise<boolean> {
    return sources.deleteSource(this.db, accountId, id);
  }

  logSourceMessages(accountId: string, sourceId: string, entries: readonly SourceLogEntry[], keep: number) {
    return sources.logSourceMessages(this.db, accountId, sourceId, entries, keep);
  }

  claimMessages(accountId: string, sourceId: string, ids: readonly string[], since: number, at: number) {
    return sources.claimMessages(this.db, accountId, sourceId, ids, since, at);
  }

  releaseMessages(accountId: string, sourceId: string, ids: readonly string[]) {
    return sources.releaseMessages(this.db, accountId, sourceId, ids);
  }

  sourceUserGroups(accountId: string, sourceId: string, userIds: readonly string[]) {
    return sources.sourceUserGroups(this.db, accountId, sourceId, userIds);
  }

  linkSourceUsers(
    accountId: string,
    sourceId: string,
    links: readonly { userId: string; groupId: string }[],
  ) {
    return sources.linkSourceUsers(this.db, accountId, sourceId, links);
  }

  async addMetricCounts(accountId: string, counts: readonly MetricPointRecord[]): Promise<void> {
    this.lockAccount(accountId, 'shared');
    await sources.addMetricCounts(this.db, accountId, counts);
  }

  customersByStripeId(accountId: string, stripeCustomerId: string, limit: number) {
    // Read to act on, as any customer: under the account's lock.
    this.lockAccount(accountId, 'shared');
    return stripe.customersByStripeId(this.db, accountId, stripeCustomerId, limit);
  }

  stripeSubscriptions(accountId: string, customerId: string) {
    return stripe.stripeSubscriptions(this.db, accountId, customerId);
  }

  async putStripeSubscription(accountId: string, sub: StripeSubscriptionRecord): Promise<void> {
    this.lockAccount(accountId, 'shared');
    await stripe.putStripeSubscription(this.db, accountId, sub);
  }

  accountMembers(accountId: string, emails: readonly string[]) {
    return mail.accountMembers(this.db, accountId, emails);
  }

  customerNames(accountId: string, ids: readonly string[]) {
    return mail.customerNames(this.db, accountId, ids);
  }

  insertMails(accountId: string, mails: readonly mail.NewMail[]): Promise<void> {
    return mail.insertMails(this.db, accountId, mails);
  }

  digestUser(accountId: string, userId: string) {
    return mail.digestUser(this.db, accountId, userId);
  }

  claimDigest(accountId: string, userId: string, day: string, now: number): Promise<boolean> {
    return mail.claimDigest(this.db, accountId, userId, day, now);
  }

  digestContent(accountId: string, email: string, since: number, now: number) {
    return mail.digestContent(this.db, accountId, email, since, now);
  }

  abstract writeBackfill(
    accountId: string,
    customerId: string,
    records: ScoreRecord[],
    first: FirstVersion | null,
  ): Promise<void>;

  async appendAudits(accountId: string, entries: readonly AuditEntry[]): Promise<void> {
    await audit.appendAudits(this.db, accountId, entries);
  }

  recordIdempotentAnswer(
    accountId: string,
    key: string,
    claimedAt: number,
    answer: { status: number; body: string },
  ): Promise<boolean> {
    return idempotency.recordIdempotentAnswer(this.db, accountId, key, claimedAt, answer);
  }
}
