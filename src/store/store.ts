// The Store: everything Vitals keeps. Every customer-facing query takes the account id;
// there is no "find by id" without it. Backends live in sqlite/ and postgres/ and are
// proven by one contract suite (test/store/contract.test.ts).
import type { DropRule, DropWatch } from '../domain/alerts.ts';
import type { Outcome } from '../domain/calibration.ts';
import type { EventRecord, EventType, SubscribableEventType } from '../domain/events.ts';
import type { Override, ScoreRecord } from '../domain/health.ts';
import type { UserRole } from '../domain/people.ts';
import type { DayDelta, Tally } from '../domain/portfolio.ts';
import type { DerivedInputs, FactorRule, MetricPoint, PointSummary } from '../domain/rules.ts';
import type { Factors, Status, Thresholds, Weights } from '../domain/scoring.ts';

export type { EventRecord, FactorRule, MetricPoint, ScoreRecord };

/** What happened to a customer at a renewal (docs/scoring.md, "Does the score predict churn?"). */
export interface OutcomeRecord {
  id: string;
  customerId: string;
  outcome: Outcome;
  at: number;
  note: string | null;
  createdAt: number;
}

/** An outcome with the computed score and factors it is judged by; null: no version then. */
export interface JudgedOutcome {
  id: string;
  outcome: Outcome;
  score: number | null;
  factors: Factors | null;
}

/** One point of one of a customer's metrics. */
/** A customer a change of rules may rescore (Reader.rederiveTargets). */
export interface RederiveTarget {
  customerId: string;
  /** Its current score; null: none yet. */
  score: ScoreRecord | null;
  /** Due for the rescore job at the time asked (false when none was). */
  due: boolean;
}

export interface MetricPointRecord extends MetricPoint {
  customerId: string;
  metric: string;
}

/** One of an account's metric names, with how many customers and points have it and its newest instant. */
export interface MetricName {
  name: string;
  customers: number;
  points: number;
  lastAt: number;
}

export interface Account {
  id: string;
  name: string;
  createdAt: number;
}

/** What a key may do (docs/api.md, "Authentication"): `read` answers GET only. */
export type KeyScope = 'read' | 'write';

export interface NewApiKey {
  id: string;
  accountId: string;
  hash: string;
  prefix: string;
  scope: KeyScope;
  createdAt: number;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  accountName: string;
  scope: KeyScope;
  /** The first characters of the key, enough for a person to recognise it. */
  prefix: string;
  createdAt: number;
  revokedAt: number | null;
}

export interface CustomerRecord {
  id: string;
  name: string;
  email: string;
  metadata: Record<string, unknown>;
  /** The stored JSON text of `metadata`, when the backend has it: answers can use it as is. */
  metadataJson?: string;
  createdAt: number;
  updatedAt: number;
}

export type ScoreReason =
  | 'factors_updated'
  | 'weights_changed'
  | 'thresholds_changed'
  | 'metrics_updated'
  | 'rules_changed'
  | 'time_passed'
  | 'override_set'
  | 'override_removed'
  | 'override_expired';

export interface HistoryRecord {
  version: number;
  score: number;
  status: Status;
  factors: Factors;
  reason: ScoreReason;
  createdAt: number;
}

/** A history version with what explains it (docs/scoring.md, "Why this score"); null for versions kept before it was. */
export interface ExplainedVersion extends HistoryRecord {
  /** The computed score, when an override pinned `score`. */
  computed: number | null;
  override: Override | null;
  /** The effective weights it was computed with. */
  weights: Weights | null;
  inputs: DerivedInputs | null;
}

export interface Settings {
  weights: Weights;
  weightsUpdatedAt: number | null;
  thresholds: Thresholds;
  thresholdsUpdatedAt: number | null;
  /** The drop alert rule; null: off (docs/scoring.md, "Drop alerts"). */
  drop: DropRule | null;
  alertsUpdatedAt: number | null;
}

/**
 * A segment: the customers whose metadata holds, for every key given, that value (a string
 * metadata value equal to it, or a number or boolean whose JSON text is it). docs/api.md, "Segments".
 */
export type Segment = readonly { key: string; value: string }[];

/** A current score on the portfolio's list, with its customer's name. */
export interface PortfolioEntry extends ScoreRecord {
  name: string;
}

/** The customers of one metadata value (`value` its JSON text; null: the key is absent). */
export interface GroupTally extends Tally {
  value: string | null;
}

/** A customer whose score moved over a window: where it stood when the window opened, and now. */
export interface Mover {
  customerId: string;
  name: string;
  score: number;
  status: Status;
  baseline: number;
}

/** Position in the portfolio order (band, then score ascending, then customer id). */
export interface ScoreCursor {
  status: Status;
  score: number;
  customerId: string;
}

export interface WebhookRecord {
  id: string;
  url: string;
  events: SubscribableEventType[];
  description: string | null;
  secret: string;
  /**
   * The secret a rotation with an overlap replaced: it signs beside `secret` until
   * `previousSecretExpiresAt` (docs/webhooks.md, "Rotating the secret"); both null when none.
   */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  enabled: boolean;
  /** Why Vitals switched it off (a 410 from the receiver); null when a person did, or it is on. */
  disabledReason: string | null;
  createdAt: number;
  updatedAt: number;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface AttemptRecord {
  attempt: number;
  startedAt: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  /** The first 1 KiB of the receiver's answer. */
  responseBody: string | null;
}

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: EventType;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
  attempts: AttemptRecord[];
}

/** A delivery a dispatcher has leased, with everything it needs to send it. */
export interface ClaimedDelivery {
  id: string;
  accountId: string;
  webhookId: string;
  eventId: string;
  eventType: EventType;
  /** The event's data as stored JSON text, so every attempt sends the same bytes. */
  data: string;
  url: string;
  secret: string;
  /** The replaced secret and when it stops signing (the sender compares with the send time). */
  previousSecret: string | null;
  previousSecretExpiresAt: number | null;
  /** The number of the attempt about to be made (1 for the first). */
  attempt: number;
}

export interface AttemptOutcome extends AttemptRecord {
  deliveryId: string;
  accountId: string;
  webhookId: string;
  /** Lease holder: a dispatcher whose lease was taken over records the attempt but leaves the state alone. */
  owner: string;
  /** Next state of the delivery: retry at `nextAttemptAt`, or a final status. */
  next: { status: 'pending'; at: number } | { status: 'succeeded' } | { status: 'failed' };
  /** A 410 Gone switches the webhook off. */
  disableWebhook: boolean;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/** A page as JSON text: `json` is the items, comma-separated (no brackets). */
export interface JsonPage {
  json: string;
  hasMore: boolean;
}

/** Reads that see only committed data (or, inside a transaction, the transaction's own writes). */
export interface Reader {
  getCustomer(accountId: string, id: string): Promise<CustomerRecord | null>;
  /**
   * Customers by id ascending, byte-wise; `startingAfter` is an exclusive lower bound; `search`
   * keeps those whose id, name or email contains it, ignoring case.
   */
  listCustomers(
    accountId: string,
    opts: { startingAfter?: string; search?: string; segment?: Segment; limit: number },
  ): Promise<Page<CustomerRecord>>;
  /** The customer as the API sends it (customer-json.ts), or null when there is none. */
  getCustomerJson(accountId: string, id: string): Promise<string | null>;
  /** listCustomers' page as the API sends each customer (customer-json.ts), ready to wrap. */
  listCustomersJson(
    accountId: string,
    opts: {
      startingAfter?: string | undefined;
      search?: string | undefined;
      segment?: Segment | undefined;
      limit: number;
    },
  ): Promise<JsonPage>;
  getScore(accountId: string, customerId: string): Promise<ScoreRecord | null>;
  /** Newest first; `before` is an exclusive upper bound on the version. */
  listHistory(
    accountId: string,
    customerId: string,
    opts: { before?: number; limit: number },
  ): Promise<Page<HistoryRecord>>;
  /** These versions of a customer's score as kept in its history, with what explains them; absent ones left out. */
  explainedVersions(
    accountId: string,
    customerId: string,
    versions: readonly number[],
  ): Promise<ExplainedVersion[]>;
  /** Current scores, lowest first (ties by customer id), optionally of one status band or segment. */
  listScores(
    accountId: string,
    opts: { status?: Status | undefined; after?: ScoreCursor | undefined; segment?: Segment; limit: number },
  ): Promise<Page<PortfolioEntry>>;
  /** Counts of current scores per status band. */
  countScoresByStatus(accountId: string): Promise<Record<Status, number>>;
  /** The current scores of the account (or of a segment), counted per band and added up. */
  tally(accountId: string, segment?: Segment): Promise<Tally>;
  /**
   * tally per bin of the score: `bins` equal bins of [0, 1], each [from, to) but the last, which
   * holds 1 too (docs/api.md, "Segments, trends and movers"); the lowest bin first.
   */
  distribution(accountId: string, bins: number, segment?: Segment): Promise<Tally[]>;
  /** tally per value of one metadata key, in no particular order. */
  tallyBy(accountId: string, key: string, segment?: Segment): Promise<GroupTally[]>;
  /**
   * The portfolio (or the segment) now, and what each UTC day from `fromDay` on changed in it
   * (in no particular order; days without a change are absent), read at one moment.
   */
  trendInputs(
    accountId: string,
    fromDay: number,
    segment?: Segment,
  ): Promise<{ now: Tally; days: DayDelta[] }>;
  /**
   * The customers whose score changed after `since`, each with the score it stood at then (or
   * its first score after, when it had none): the `limit` biggest drops (`down`) or rises (`up`)
   * by the change rounded to 6 places, ties by customer id. Unchanged customers are left out.
   */
  movers(
    accountId: string,
    opts: { since: number; direction: 'down' | 'up'; limit: number; segment?: Segment },
  ): Promise<Mover[]>;
  getSettings(accountId: string): Promise<Settings>;
  /** The account's factor rules, by factor name (byte order). */
  listFactorRules(accountId: string): Promise<FactorRule[]>;
  /**
   * A customer's metric points, newest first (then by metric name); `metric`: of that metric only;
   * `after`: the page goes on after this point.
   */
  /** One of a customer's outcomes; null when it has none of that id. */
  getOutcome(accountId: string, customerId: string, id: string): Promise<OutcomeRecord | null>;
  /** A customer's outcomes, the newest `at` first; `after`: the last id of the page before. */
  listOutcomes(
    accountId: string,
    customerId: string,
    opts: { after?: string | undefined; limit: number },
  ): Promise<Page<OutcomeRecord>>;
  /**
   * A page of the account's outcomes by id (after `after`; of a segment), each with the computed
   * score and factors of its customer's newest version at or before `at − horizonMs` (null: none).
   */
  judgedOutcomes(
    accountId: string,
    opts: { horizonMs: number; segment?: Segment | undefined; after: string | null; limit: number },
  ): Promise<JudgedOutcome[]>;
  /**
   * The account's metric names, by name (byte order), each with the customers that have a point
   * of it, its points and its newest point's instant. Read in slices of customers that let
   * other work run between them (docs/api.md, "Metrics").
   */
  metricNames(accountId: string): Promise<MetricName[]>;
  listMetricPoints(
    accountId: string,
    customerId: string,
    opts: { metric?: string | undefined; after?: { at: number; metric: string } | undefined; limit: number },
  ): Promise<Page<MetricPointRecord>>;
  /**
   * What the rules need to derive these customers' factors: per customer and metric, the points
   * dated after `since` and up to `until`, oldest first; where those hold no point of a metric,
   * the newest point at or before `since` if there is one (it says whether the metric has a point
   * at all, and how old its newest is). A customer or metric without points is not in the map.
   */
  /**
   * The customers a change of rules may rescore, in id order after `after`: those with a score,
   * and those with a point of any of these metrics; each with its score (unlocked) and, when
   * `dueAt` is given, whether the rescore job has it due then (its derived factors may be out of date).
   */
  rederiveTargets(
    accountId: string,
    metrics: readonly string[],
    after: string | null,
    limit: number,
    dueAt: number | null,
  ): Promise<RederiveTarget[]>;
  /**
   * The customers due for the rescore job at `now`, oldest due first, at most `limit`, across
   * accounts, except those of the accounts in `skip` (the ones whose pass failed: the others go on).
   */
  dueForRederive(
    now: number,
    limit: number,
    skip?: readonly string[],
  ): Promise<{ accountId: string; customerId: string }[]>;
  /**
   * Each rule's summary of each customer's points as of `now` (points up to `until` count as
   * dated ahead): summaries[i] is rules[i]'s, for every customer given, with points or not.
   */
  metricSummaries(
    accountId: string,
    customerIds: readonly string[],
    rules: readonly FactorRule[],
    now: number,
    until: number,
  ): Promise<Map<string, PointSummary[]>>;
  getEvent(accountId: string, id: string): Promise<EventRecord | null>;
  getWebhook(accountId: string, id: string): Promise<WebhookRecord | null>;
  /**
   * The webhook's deliveries not yet finished, counted up to `cap` (a backlog of a million costs what
   * `cap` rows do), and when the oldest of them was made (null: none).
   */
  webhookBacklog(
    accountId: string,
    id: string,
    cap: number,
  ): Promise<{ pending: number; oldestAt: number | null }>;
  /** Oldest first. */
  listWebhooks(accountId: string): Promise<WebhookRecord[]>;
  getDelivery(accountId: string, webhookId: string, id: string): Promise<DeliveryRecord | null>;
  /** Newest first; `startingAfter` is a delivery id. */
  listDeliveries(
    accountId: string,
    webhookId: string,
    opts: { status?: DeliveryStatus; startingAfter?: string; limit: number },
  ): Promise<Page<DeliveryRecord>>;
  /**
   * Newest first, in the feed's order. `startingAfter` (an event id): the events just older than
   * it; `endingBefore`: the `limit` events just newer than it (still newest first; `hasMore` when
   * still newer ones follow). The order never puts a later commit before an earlier one where a
   * reader could see it (docs/api.md, "Events"): a follower misses nothing.
   */
  listEvents(
    accountId: string,
    opts: { type?: EventType; startingAfter?: string; endingBefore?: string; limit: number },
  ): Promise<Page<EventRecord>>;
}

/** Writes happen only inside `Store.transaction`, so a change and its events commit together. */
export interface Tx extends Reader {
  /**
   * `forUpdate`: the caller is about to change the settings. Where writers run side by side
   * (PostgreSQL), other changes to the account's scores and settings then wait for this
   * transaction, so no score is computed with settings that are being replaced.
   */
  getSettings(accountId: string, opts?: { forUpdate?: boolean }): Promise<Settings>;
  /**
   * The current score of each of these customers that exists (null: no score yet); ids of
   * customers that do not exist are absent from the map. The customers are locked for this
   * transaction, as `getCustomer` locks one: it is how a batch of score updates reads.
   */
  scoresForUpdate(
    accountId: string,
    customerIds: readonly string[],
  ): Promise<Map<string, ScoreRecord | null>>;
  /**
   * The customers with these ids that exist, locked for this transaction as `getCustomer` locks
   * one: it is how a batch of customer upserts reads.
   */
  customersForUpdate(accountId: string, ids: readonly string[]): Promise<Map<string, CustomerRecord>>;
  /**
   * Inserts and updates many customers at once (a batch's final state of each). Returns the
   * ids of `inserts` that were taken meanwhile (another writer created them since the read):
   * those are not written, and the caller must not commit as if they were.
   */
  saveCustomers(
    accountId: string,
    inserts: readonly CustomerRecord[],
    updates: readonly CustomerRecord[],
  ): Promise<string[]>;
  /** Returns false (and writes nothing) when the id is taken in this account. */
  insertCustomer(accountId: string, customer: CustomerRecord): Promise<boolean>;
  updateCustomer(accountId: string, customer: CustomerRecord): Promise<void>;
  /**
   * Removes the customer with everything that belongs to it, its history's share of the trend
   * rollup too; false when there was none.
   */
  deleteCustomer(accountId: string, id: string): Promise<boolean>;
  /**
   * Sets the current scores and appends each to its customer's history (at most one score per
   * customer); the trend rollup follows in the same transaction.
   */
  writeScores(accountId: string, scores: ScoreRecord[], reason: ScoreReason): Promise<void>;
  /**
   * For a drop alert rule whose window opens at `since`: each of these customers' peak score
   * and last alert (alerts.ts). Customers without a score have a null peak.
   */
  dropWatch(
    accountId: string,
    customerIds: readonly string[],
    since: number,
  ): Promise<Map<string, DropWatch>>;
  /** Remembers that these customers were alerted at these times. */
  recordDropAlerts(accountId: string, alerts: readonly { customerId: string; at: number }[]): Promise<void>;
  putAlerts(accountId: string, drop: DropRule | null, now: number): Promise<void>;
  /**
   * Up to `limit` current scores of the account by customer id, byte-wise, after `after` (from
   * the first when null): a recomputation after a settings change walks them in pages.
   */
  scoresAfter(accountId: string, after: string | null, limit: number): Promise<ScoreRecord[]>;
  putWeights(accountId: string, weights: Weights, now: number): Promise<void>;
  /** Creates or replaces the rule of `rule.factor`. */
  putFactorRule(accountId: string, rule: FactorRule): Promise<void>;
  /** False when the factor had no rule. */
  deleteFactorRule(accountId: string, factor: string): Promise<boolean>;
  /**
   * Sets when each customer is next due for the rescore job (null: never). `earlierOnly`: a time
   * only replaces a later one (or none), and null changes nothing — what one rule's change knows.
   */
  setRederiveDue(
    accountId: string,
    due: readonly { customerId: string; at: number | null }[],
    opts?: { earlierOnly?: boolean },
  ): Promise<void>;
  /** Of these customers, the ones still due at `now`, locked for this transaction; rows other transactions hold are skipped. */
  claimRederiveDue(accountId: string, customerIds: readonly string[], now: number): Promise<string[]>;
  /** Stores the outcomes (their customers exist: the caller has checked). */
  insertOutcomes(accountId: string, outcomes: readonly OutcomeRecord[]): Promise<void>;
  /** Deletes one of a customer's outcomes; false when it has none of that id. */
  deleteOutcome(accountId: string, customerId: string, id: string): Promise<boolean>;
  /**
   * Stores the points; a point of a customer's metric at an instant it already has replaces it.
   * Sent when called: a read called after it, before it settles, sees the points (a metric write
   * reads its rules' windows in the same round trip on PostgreSQL).
   */
  insertMetricPoints(accountId: string, points: readonly MetricPointRecord[]): Promise<void>;
  putThresholds(accountId: string, thresholds: Thresholds, now: number): Promise<void>;
  /**
   * The outbox: events commit with the change that caused them, and so does one pending
   * delivery per enabled webhook subscribed to the event's type.
   */
  insertEvents(accountId: string, events: EventRecord[]): Promise<void>;
  /**
   * Writes `event` with one pending delivery to `webhookId` alone, whatever its subscriptions
   * (the test event); returns the delivery's id, or null when there is no such webhook.
   */
  insertDirectEvent(accountId: string, webhookId: string, event: EventRecord): Promise<string | null>;
  insertWebhook(accountId: string, webhook: WebhookRecord): Promise<void>;
  updateWebhook(accountId: string, webhook: WebhookRecord): Promise<void>;
  /** Removes the webhook and its deliveries; false when there was none. */
  deleteWebhook(accountId: string, id: string): Promise<boolean>;
  /**
   * Makes a delivery due now (one more attempt); false when there is no such delivery or an
   * attempt of it is in flight (its result would overwrite the retry).
   */
  retryDelivery(accountId: string, webhookId: string, id: string, now: number): Promise<boolean>;
  /** Audit entries recorded with the change they describe (the score writes, docs/people.md). */
  appendAudits(accountId: string, entries: readonly AuditEntry[]): Promise<void>;
  /**
   * Stores the answer to an Idempotency-Key with the writes it answers, so that no crash can
   * leave the writes committed and the key unanswered (docs/api.md, "Idempotency keys"). False,
   * writing nothing, when the claim made at `claimedAt` is no longer there: a retry took it
   * over as stale, and this transaction must not commit.
   */
  recordIdempotentAnswer(
    accountId: string,
    key: string,
    claimedAt: number,
    answer: { status: number; body: string },
  ): Promise<boolean>;
}

/** The outcome of presenting an Idempotency-Key (Stripe semantics). */
export type IdempotencyClaim =
  | { state: 'new' }
  | { state: 'replay'; status: number; body: string }
  | { state: 'mismatch' }
  | { state: 'in_progress' };

/**
 * Idempotency keys: claimed before the operation runs, answered inside its transaction
 * (Tx.recordIdempotentAnswer) when it writes, or afterwards here when it wrote nothing.
 */
export interface IdempotencyStore {
  /**
   * Claims `key` for a request with this fingerprint, unless a live claim exists. A claim older
   * than `expiresBefore` is forgotten; one still in progress since before `staleBefore`
   * (its process died) may be claimed again.
   */
  claimIdempotencyKey(
    accountId: string,
    key: string,
    fingerprint: string,
    now: number,
    opts: { expiresBefore: number; staleBefore: number },
  ): Promise<IdempotencyClaim>;
  completeIdempotencyKey(accountId: string, key: string, status: number, body: string): Promise<void>;
  /** Forgets a claim whose request failed on our side, so that a retry runs again. */
  releaseIdempotencyKey(accountId: string, key: string): Promise<void>;
  /** Removes claims created before `before`; returns how many. */
  pruneIdempotencyKeys(before: number): Promise<number>;
}

/** Housekeeping across accounts: what the retention job removes. */
export interface Retention {
  /**
   * Walks the oldest events in the order they were written, from just after position `after`
   * (0 at first), over at most `limit` of them, and stops at the first one created at or after
   * `before`. Of those, it removes the finished deliveries (with their attempts), then each
   * event left with no delivery: an event with a delivery still pending stays, and so does
   * everything newer. Score history is never touched. `next` is null once the walk has reached
   * an event too young to go (or the end), or when another process is pruning (PostgreSQL).
   */
  pruneEvents(before: number, opts: { after: number; limit: number }): Promise<PruneBatch>;
  /** Removes at most `limit` metric points dated before `before`, oldest first; answers how many. */
  pruneMetricPoints(before: number, limit: number): Promise<number>;
}

/** One batch of event retention (docs/operations.md, "Event retention"). */
export interface PruneBatch {
  events: number;
  deliveries: number;
  /** Where the next batch starts (give it as `after`); null when the walk is over. */
  next: number | null;
}

export interface ClaimOptions {
  owner: string;
  now: number;
  leaseUntil: number;
  /** The most deliveries this claim leases (the caller's free slots). */
  limit: number;
  /**
   * The most deliveries of one webhook in flight at once over every dispatcher: `byWebhook[id]`,
   * else `default`. Plain data: it may cross to the writer thread.
   */
  perWebhook: { default: number; byWebhook?: Record<string, number> };
  /** The most deliveries of one account in flight at once over every dispatcher. */
  perAccount: number;
  /** Round-robin goes on after this account, and within an account after its webhook served last. */
  after?: { account?: string; webhooks?: Record<string, string> };
}

/** Pending deliveries of one account (the /metrics backlog). */
export interface AccountBacklog {
  accountId: string;
  pending: number;
  /** created_at of its oldest pending delivery. */
  oldestAt: number;
}

/** What dispatchers need; these work across accounts, each row carrying its own. */
export interface DeliveryQueue {
  /**
   * Leases up to `limit` due deliveries of enabled webhooks to `owner` until `leaseUntil`, oldest
   * due first within a webhook, shared round-robin across accounts and then webhooks
   * (fair-share.ts) so that no account or webhook has more in flight than its limit over every
   * dispatcher (a lease not yet run out is in flight; one that has run out, its dispatcher gone,
   * can be taken over). Claims are atomic against each other, across processes too.
   */
  claimDeliveries(opts: ClaimOptions): Promise<ClaimedDelivery[]>;
  recordAttempt(outcome: AttemptOutcome): Promise<void>;
  /** Several attempts' outcomes in one transaction (the dispatcher's group commit); as recordAttempt each. */
  recordAttempts(outcomes: AttemptOutcome[]): Promise<void>;
  /**
   * The earliest time after `after` at which a pending delivery falls due, or null. (What is
   * due already waits for a free slot; a lease that runs out is found by the dispatchers' poll.)
   */
  nextDueAt(after: number): Promise<number | null>;
  /** Pending deliveries per account with any, and the oldest one's creation time. */
  backlogByAccount(): Promise<AccountBacklog[]>;
  /** Calls `listener` after a commit that made deliveries due; returns an unsubscribe function. */
  onDeliveriesDue(listener: () => void): () => void;
}

/** A person who signs in to the dashboard (docs/people.md). */
export interface UserRecord {
  id: string;
  accountId: string;
  accountName: string;
  email: string;
  role: UserRole;
  /** False until the person has used their one-time link. */
  hasPassword: boolean;
  createdAt: number;
}

/** A signed-in person's session: its data (the CSRF secret) and when it ends unless used. */
export interface SessionRecord {
  user: UserRecord;
  data: string;
  expiresAt: number;
}

/** One change in the audit log (docs/people.md, "Audit log"): ids and names, never a secret. */
export interface AuditEntry {
  id: string;
  actor: { type: 'key' | 'user'; id: string; label: string };
  action: string;
  objectId: string | null;
  at: number;
  requestId: string;
}

/** Users, their links, sessions and failed sign-ins. Sign-in goes by email, across accounts. */
export interface People {
  /** Adds the user with a one-time link; false (and nothing written) when the email is taken. */
  createUser(
    user: { id: string; accountId: string; email: string; role: UserRole; createdAt: number },
    link: { tokenHash: string; expiresAt: number },
  ): Promise<boolean>;
  /** Every account's users (the CLI), or one account's, by email. */
  listUsers(accountId?: string): Promise<UserRecord[]>;
  /** One user of the account, or null. */
  getUser(accountId: string, id: string): Promise<UserRecord | null>;
  /** The user with this role; null when the account has no such user. */
  setUserRole(accountId: string, id: string, role: UserRole): Promise<UserRecord | null>;
  /** Removes the account's user; their sessions and links go with them. */
  removeAccountUser(accountId: string, id: string): Promise<boolean>;
  /** With the stored password hash (null before the link is used), for signing in. */
  findUserByEmail(email: string): Promise<(UserRecord & { passwordHash: string | null }) | null>;
  /** Removes the user; their sessions and links go with them. */
  removeUser(email: string): Promise<boolean>;
  /** The user a live link is for (the link stays unused), or null when it is unknown, used or expired. */
  findSignInLink(tokenHash: string, now: number): Promise<UserRecord | null>;
  /** Uses a live link once: sets the password; the user, or null when the link is unknown, used or expired. */
  redeemSignInLink(tokenHash: string, passwordHash: string, now: number): Promise<UserRecord | null>;
  /**
   * Check-and-count in one atomic step (docs/people.md, "Signing in"): when this email has fewer than
   * `limit` failures after `since`, records one at `at` (the attempt counts as failed until
   * released) and answers claimed; otherwise records nothing and answers when the `limit`-th
   * newest failure was. Atomic across processes: of any burst, at most `limit` are claimed.
   */
  claimSignInAttempt(
    email: string,
    at: number,
    window: { since: number; limit: number },
  ): Promise<{ claimed: true } | { claimed: false; oldest: number }>;
  /** The attempt claimed at `at` had the right password: it was no failure. */
  releaseSignInAttempt(email: string, at: number): Promise<void>;
  /** Forgets every failure at or before `before` (the retention job); answers how many. */
  pruneSignInFailures(before: number): Promise<number>;
  putSession(idHash: string, userId: string, data: string, expiresAt: number): Promise<void>;
  /** A live session (expiring after `now`) with its user as the user is now. */
  getSession(idHash: string, now: number): Promise<SessionRecord | null>;
  deleteSession(idHash: string): Promise<void>;
  appendAudit(accountId: string, entry: AuditEntry): Promise<void>;
  /** Removes up to `limit` entries older than `before` (any account); answers how many. */
  pruneAudit(before: number, limit: number): Promise<number>;
  /** Newest first; `startingAfter` an entry id. */
  listAudit(
    accountId: string,
    opts: { startingAfter?: string | undefined; limit: number },
  ): Promise<Page<AuditEntry>>;
}

export interface Store extends Reader, DeliveryQueue, IdempotencyStore, Retention, People {
  readonly backend: 'sqlite' | 'postgres';
  /** Brings the schema to the latest version; safe when several processes start at once. */
  migrate(): Promise<number>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Runs `fn` atomically: all of its writes commit, or none do. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * A write of src/writes/ (a batch of score updates, a rescore), run whole where the writes run:
   * on SQLite, one message to the writer thread (./write.ts).
   */
  run<A extends unknown[], R>(write: Write<A, R>, ...args: A): Promise<R>;
  /**
   * Calls `listener` with the write's name and its item count each time the items of a batched
   * write are written together (the batch-size metrics); returns an unsubscribe function.
   */
  onWriteBatch(listener: (write: string, size: number) => void): () => void;

  // Accounts and keys: the administration surface of the CLI and the authentication lookup.
  ensureAccount(name: string, now: number): Promise<Account>;
  /**
   * Adds a key; false when it was not added: its hash exists already, or `onlyIfNone` was given
   * and an active key exists (checked and inserted atomically, so processes starting together
   * on an empty database create one bootstrap key between them).
   */
  insertApiKey(key: NewApiKey, opts?: { onlyIfNone?: boolean }): Promise<boolean>;
  /** The one lookup not scoped by account: it is how a request finds its account. */
  findApiKey(
    hash: string,
  ): Promise<{ keyId: string; accountId: string; scope: KeyScope; prefix: string } | null>;
  listApiKeys(): Promise<ApiKeyRecord[]>;
  countActiveApiKeys(): Promise<number>;
  revokeApiKey(id: string, now: number): Promise<boolean>;
}

/** A write of src/writes/, run whole where the writes run (./write.ts says how); known by its name. */
export interface Write<A extends unknown[], R> {
  (tx: Tx, ...args: A): Promise<R>;
  /** It reads and computes over many customers: PostgreSQL runs it off the main thread (./write.ts). */
  readonly heavy: boolean;
  /** Its items of one account may be gathered into one call (./write.ts, "batched"). */
  readonly batched: boolean;
}
