// The Reader over a Driver, for both backends: each read is one of an area's functions
// (customers.ts, scores.ts, …), written once. What stays per backend comes in as NativeReads: the
// events feed's order (commit order is a sequence on SQLite, a transaction-id horizon on
// PostgreSQL), the portfolio's list and movers (*/portfolio.ts), and SQLite's stored-JSON fast
// path for customers.

import { customerJson } from '../api/customers.ts';
import type { EventType } from '../domain/events.ts';
import type { ArrTally, Tally } from '../domain/portfolio.ts';
import type { FactorRule } from '../domain/rules.ts';
import type { Status } from '../domain/scoring.ts';
import * as backfills from './backfills.ts';
import * as customers from './customers.ts';
import type { Driver } from './driver.ts';
import * as metricSummaries from './metric-summaries.ts';
import * as metrics from './metrics.ts';
import * as outbox from './outbox.ts';
import * as outcomes from './outcomes.ts';
import * as playbooks from './playbooks.ts';
import type { GroupBy, ListScoresOptions, PortfolioEntry } from './portfolio.ts';
import * as portfolio from './portfolio.ts';
import * as rederive from './rederive.ts';
import { page } from './rows.ts';
import * as scores from './scores.ts';
import * as settings from './settings.ts';
import * as sources from './sources.ts';
import type {
  CustomerRecord,
  DeliveryRecord,
  DeliveryStatus,
  EventRecord,
  GroupTally,
  JsonPage,
  MetricPointRecord,
  Mover,
  Page,
  Reader,
  ScoreRecord,
  Segment,
  Settings,
  ViewRecord,
  WebhookRecord,
} from './store.ts';
import * as tasks from './tasks.ts';
import * as timeline from './timeline.ts';
import * as views from './views.ts';
import * as webhooks from './webhooks.ts';

export type { ListOptions } from './customers.ts';

/**
 * The reads each backend makes its own way, tuned to its planner: the portfolio's list and its
 * movers (sqlite/portfolio.ts, postgres/portfolio.ts) and the events feed's order (a sequence on SQLite, a transaction-id horizon on
 * PostgreSQL); and, where a backend has one, a faster customer list page.
 */
export type NativeReads = Pick<Reader, 'listScores' | 'movers' | 'listEvents'> & {
  /** The customer as the API sends it, when it is stored so (null: no such customer); undefined to build it here. */
  getCustomerJson?(accountId: string, id: string): string | null | undefined;
  /** The page as the API sends it, when every row has its JSON stored; null to build it here. */
  listCustomersJson?(accountId: string, opts: customers.ListOptions): JsonPage | null;
};

export class SqlReader implements Reader {
  protected readonly db: Driver;
  protected readonly native: NativeReads;

  constructor(db: Driver, native: NativeReads) {
    this.db = db;
    this.native = native;
  }

  getCustomer(accountId: string, id: string): Promise<CustomerRecord | null> {
    return customers.getCustomer(this.db, accountId, id);
  }

  async getCustomerJson(accountId: string, id: string): Promise<string | null> {
    const fast = this.native.getCustomerJson?.(accountId, id);
    if (fast !== undefined) return fast;
    const customer = await this.getCustomer(accountId, id);
    return customer ? customerJson(customer) : null;
  }

  listCustomers(accountId: string, opts: customers.ListOptions): Promise<Page<CustomerRecord>> {
    return customers.listCustomers(this.db, accountId, opts);
  }

  async listCustomersJson(accountId: string, opts: customers.ListOptions): Promise<JsonPage> {
    const fast = this.native.listCustomersJson?.(accountId, opts);
    if (fast) return fast;
    const records = await this.listCustomers(accountId, opts);
    return { json: records.data.map(customerJson).join(','), hasMore: records.hasMore };
  }

  customerSubtree(
    accountId: string,
    id: string,
    maxDepth: number,
  ): Promise<customers.SubtreeMember[] | null> {
    return customers.customerSubtree(this.db, accountId, id, maxDepth);
  }

  getScore(accountId: string, customerId: string): Promise<ScoreRecord | null> {
    return scores.getScore(this.db, accountId, customerId);
  }

  listHistory(accountId: string, customerId: string, opts: { before?: number; limit: number }) {
    return scores.listHistory(this.db, accountId, customerId, opts);
  }

  explainedVersions(accountId: string, customerId: string, versions: readonly number[]) {
    return scores.explainedVersions(this.db, accountId, customerId, versions);
  }

  versionAt(accountId: string, customerId: string, at: number): Promise<number | null> {
    return scores.versionAt(this.db, accountId, customerId, at);
  }

  countScoresByStatus(accountId: string): Promise<Record<Status, number>> {
    return scores.countScoresByStatus(this.db, accountId);
  }

  async listScores(accountId: string, opts: ListScoresOptions): Promise<Page<PortfolioEntry>> {
    const sort = opts.sort ?? 'score';
    if (sort === 'score') return this.native.listScores(accountId, opts);
    // The book orders are one statement for both backends (../portfolio.ts).
    const after = opts.after && !('status' in opts.after) ? opts.after : undefined;
    const rows = await portfolio.listScoresByBook(this.db, accountId, sort, { ...opts, after });
    return page(rows, opts.limit, (r) => r);
  }

  tally(accountId: string, segment?: Segment): Promise<ArrTally> {
    return portfolio.tally(this.db, accountId, segment);
  }

  distribution(accountId: string, bins: number, segment?: Segment): Promise<Tally[]> {
    return portfolio.distribution(this.db, accountId, bins, segment);
  }

  tallyBy(accountId: string, by: GroupBy, segment?: Segment): Promise<GroupTally[]> {
    return portfolio.tallyBy(this.db, accountId, by, segment);
  }

  trendInputs(accountId: string, fromDay: number, segment?: Segment) {
    return portfolio.trendInputs(this.db, accountId, fromDay, segment);
  }

  movers(
    accountId: string,
    opts: { since: number; direction: 'down' | 'up'; limit: number; segment?: Segment },
  ): Promise<Mover[]> {
    return this.native.movers(accountId, opts);
  }

  getSettings(accountId: string): Promise<Settings> {
    return settings.getSettings(this.db, accountId);
  }

  listFactorRules(accountId: string): Promise<FactorRule[]> {
    return metrics.listFactorRules(this.db, accountId);
  }

  metricNames(accountId: string): ReturnType<Reader['metricNames']> {
    return metrics.metricNames(this.db, accountId);
  }

  listMetricPoints(...args: Parameters<Reader['listMetricPoints']>): Promise<Page<MetricPointRecord>> {
    return metrics.listMetricPoints(this.db, ...args);
  }

  metricSummaries(...args: Parameters<Reader['metricSummaries']>): ReturnType<Reader['metricSummaries']> {
    return metricSummaries.metricSummaries(this.db, ...args);
  }

  rederiveTargets(...args: Parameters<Reader['rederiveTargets']>): ReturnType<Reader['rederiveTargets']> {
    return rederive.rederiveTargets(this.db, ...args);
  }

  dueForRederive(...args: Parameters<Reader['dueForRederive']>): ReturnType<Reader['dueForRederive']> {
    return rederive.dueForRederive(this.db, ...args);
  }

  getOutcome(...args: Parameters<Reader['getOutcome']>): ReturnType<Reader['getOutcome']> {
    return outcomes.getOutcome(this.db, ...args);
  }

  listOutcomes(...args: Parameters<Reader['listOutcomes']>): ReturnType<Reader['listOutcomes']> {
    return outcomes.listOutcomes(this.db, ...args);
  }

  judgedOutcomes(...args: Parameters<Reader['judgedOutcomes']>): ReturnType<Reader['judgedOutcomes']> {
    return outcomes.judgedOutcomes(this.db, ...args);
  }

  getEvent(accountId: string, id: string): Promise<EventRecord | null> {
    return outbox.getEvent(this.db, accountId, id);
  }

  listEvents(
    accountId: string,
    opts: { type?: EventType; startingAfter?: string; endingBefore?: string; limit: number },
  ): Promise<Page<EventRecord>> {
    return this.native.listEvents(accountId, opts);
  }

  getWebhook(accountId: string, id: string): Promise<WebhookRecord | null> {
    return webhooks.getWebhook(this.db, accountId, id);
  }

  webhookBacklog(accountId: string, id: string, cap: number) {
    return webhooks.webhookBacklog(this.db, accountId, id, cap);
  }

  listViews(accountId: string, userId: string): Promise<ViewRecord[]> {
    return views.listViews(this.db, accountId, userId);
  }

  listPlaybooks(accountId: string) {
    return playbooks.listPlaybooks(this.db, accountId);
  }

  playbookAccounts() {
    return playbooks.playbookAccounts(this.db);
  }

  getPlaybook(accountId: string, id: string) {
    return playbooks.getPlaybook(this.db, accountId, id);
  }

  getTask(accountId: string, id: string) {
    return tasks.getTask(this.db, accountId, id);
  }

  listTasks(accountId: string, query: tasks.TaskQuery) {
    return tasks.listTasks(this.db, accountId, query);
  }

  getNote(accountId: string, id: string) {
    return tasks.getNote(this.db, accountId, id);
  }

  listNotes(accountId: string, customerId: string, opts: { after?: string | undefined; limit: number }) {
    return tasks.listNotes(this.db, accountId, customerId, opts);
  }

  customerTimeline(accountId: string, customerId: string, q: timeline.TimelineQuery) {
    return timeline.customerTimeline(this.db, accountId, customerId, q);
  }

  getBackfill(accountId: string, id: string) {
    return backfills.getBackfill(this.db, accountId, id);
  }

  listBackfills(accountId: string, limit: number) {
    return backfills.listBackfills(this.db, accountId, limit);
  }

  staleBackfills(now: number, limit: number) {
    return backfills.staleBackfills(this.db, now, limit);
  }

  getSource(accountId: string, id: string) {
    return sources.getSource(this.db, accountId, id);
  }

  listSources(accountId: string) {
    return sources.listSources(this.db, accountId);
  }

  sourceLog(
    accountId: string,
    sourceId: string,
    opts: { startingAfter?: string | undefined; limit: number },
  ) {
    return sources.sourceLog(this.db, accountId, sourceId, opts);
  }

  customerSourceActivity(accountId: string, customerId: string, opts: { limit: number; applied?: boolean }) {
    return sources.customerSourceActivity(this.db, accountId, customerId, opts);
  }

  sourceByKey(keyHash: string) {
    return sources.sourceByKey(this.db, keyHash);
  }

  sourceById(id: string) {
    return sources.sourceById(this.db, id);
  }

  listWebhooks(accountId: string): Promise<WebhookRecord[]> {
    return webhooks.listWebhooks(this.db, accountId);
  }

  getDelivery(accountId: string, webhookId: string, id: string): Promise<DeliveryRecord | null> {
    return webhooks.getDelivery(this.db, accountId, webhookId, id);
  }

  listDeliveries(
    accountId: string,
    webhookId: string,
    opts: { status?: DeliveryStatus; startingAfter?: string; limit: number },
  ): Promise<Page<DeliveryRecord>> {
    return webhooks.listDeliveries(this.db, accountId, webhookId, opts);
  }
}
