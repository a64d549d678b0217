// The Store: everything Vitals keeps. Every customer-facing query takes the account id;
// there is no "find by id" without it. Each area's records, roles and queries live in a file of
// its own (customers.ts, scores.ts, …); this file composes the roles the rest of Vitals sees.
// Backends live in sqlite/ and postgres/ and are proven by one contract suite
// (test/store/contract.test.ts).
import type { AuditLog, AuditWrites } from './audit.ts';
import type { BackfillReads, BackfillWrites } from './backfills.ts';
import type { CustomerReads, CustomerWrites } from './customers.ts';
import type { IdempotencyStore, IdempotencyWrites } from './idempotency.ts';
import type { Keys } from './keys.ts';
import type { MailQueue, MailWrites } from './mail.ts';
import type { MetricReads, MetricWrites } from './metrics.ts';
import type { DeliveryQueue, EventReads, EventWrites } from './outbox.ts';
import type { OutcomeReads, OutcomeWrites } from './outcomes.ts';
import type { People } from './people.ts';
import type { PlaybookReads, PlaybookWrites } from './playbooks.ts';
import type { PortfolioReads } from './portfolio.ts';
import type { RederiveReads, RederiveWrites } from './rederive.ts';
import type { Retention } from './retention.ts';
import type { ScoreReads, ScoreWrites } from './scores.ts';
import type { Settings, SettingsReads, SettingsWrites } from './settings.ts';
import type { SourceReads, SourceWrites } from './sources.ts';
import type { StripeWrites } from './stripe.ts';
import type { TaskReads, TaskWrites } from './tasks.ts';
import type { TimelineReads, TimelineWrites } from './timeline.ts';
import type { ViewReads, ViewWrites } from './views.ts';
import type { WebhookReads, WebhookWrites } from './webhooks.ts';

export type { AuditEntry, AuditLog, AuditWrites } from './audit.ts';
export type { BackfillReads, BackfillRecord, BackfillWrites, FirstVersion } from './backfills.ts';
export type {
  CustomerReads,
  CustomerRecord,
  CustomerWrite,
  CustomerWrites,
  JsonPage,
  Segment,
} from './customers.ts';
export type { IdempotencyClaim, IdempotencyStore, IdempotencyWrites } from './idempotency.ts';
export type { Account, ApiKeyRecord, KeyScope, Keys, NewApiKey } from './keys.ts';
export type { ClaimedMail, DigestContent, MailOutcome, MailQueue, MailWrites, NewMail } from './mail.ts';
export type { FactorRule, MetricName, MetricPoint, MetricPointRecord } from './metrics.ts';
export type {
  AccountBacklog,
  AttemptOutcome,
  ClaimedDelivery,
  ClaimOptions,
  DeliveryQueue,
  EventRecord,
} from './outbox.ts';
export type { JudgedOutcome, OutcomeRecord } from './outcomes.ts';
export type { Digest, People, SessionRecord, UserRecord } from './people.ts';
export type { PlaybookReads, PlaybookWrites } from './playbooks.ts';
export type {
  BookCursor,
  GroupBy,
  GroupTally,
  ListScoresOptions,
  Mover,
  PortfolioEntry,
  PortfolioSort,
  ScoreCursor,
} from './portfolio.ts';
export type { RederiveTarget } from './rederive.ts';
export type { PruneBatch, Retention } from './retention.ts';
export type { Page } from './rows.ts';
export type { ExplainedVersion, HistoryRecord, ScoreReason, ScoreRecord } from './scores.ts';
export type { Settings } from './settings.ts';
export type { SourceActivityEntry, SourceReads, SourceRecord, SourceWrites } from './sources.ts';
export type { StripeSubscriptionRecord, StripeWrites } from './stripe.ts';
export type { Actor, NoteRecord, TaskQuery, TaskReads, TaskRecord, TaskWrites } from './tasks.ts';
export type {
  SourceActivityRecord,
  TimelineEntry,
  TimelineQuery,
  TimelineReads,
  TimelineWrites,
} from './timeline.ts';
export type { ViewReads, ViewRecord, ViewWrites } from './views.ts';
export type { AttemptRecord, DeliveryRecord, DeliveryStatus, WebhookRecord } from './webhooks.ts';

/** Reads that see only committed data (or, inside a transaction, the transaction's own writes). */
export interface Reader
  extends CustomerReads,
    ScoreReads,
    PortfolioReads,
    SettingsReads,
    MetricReads,
    RederiveReads,
    OutcomeReads,
    EventReads,
    WebhookReads,
    ViewReads,
    BackfillReads,
    SourceReads,
    PlaybookReads,
    TaskReads,
    TimelineReads {}

/** Writes happen only inside a write (`Store.run`), so a change and its events commit together. */
export interface Tx
  extends Reader,
    CustomerWrites,
    ScoreWrites,
    SettingsWrites,
    MetricWrites,
    RederiveWrites,
    OutcomeWrites,
    EventWrites,
    WebhookWrites,
    ViewWrites,
    BackfillWrites,
    SourceWrites,
    TaskWrites,
    TimelineWrites,
    PlaybookWrites,
    StripeWrites,
    MailWrites,
    AuditWrites,
    IdempotencyWrites {
  /**
   * `forUpdate`: the caller is about to change the settings. Where writers run side by side
   * (PostgreSQL), other changes to the account's scores and settings then wait for this
   * transaction, so no score is computed with settings that are being replaced.
   */
  getSettings(accountId: string, opts?: { forUpdate?: boolean }): Promise<Settings>;
}

/** The newest migration the database has applied, and the newest this code has. */
export interface MigrationStatus {
  applied: number;
  latest: number;
}

export interface Store
  extends Reader,
    DeliveryQueue,
    MailQueue,
    IdempotencyStore,
    Retention,
    People,
    AuditLog,
    Keys {
  readonly backend: 'sqlite' | 'postgres';
  /**
   * Brings the schema to the latest version, each migration in a transaction of its own under a
   * lock: safe when several processes start at once. A migration that fails is rolled back and
   * named, a schema newer than this code refused (both a MigrationError, ./migration-errors.ts).
   */
  migrate(): Promise<number>;
  /** Where the schema is against this code's migrations, without changing anything. */
  migrationStatus(): Promise<MigrationStatus>;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * A write of src/writes/ (a batch of score updates, a rescore), run whole where the writes run,
   * atomically: all of its writes commit, or none do. On SQLite, one message to the writer thread
   * (./write.ts). The one way Vitals writes through a Tx.
   */
  run<A extends unknown[], R>(write: Write<A, R>, ...args: A): Promise<R>;
  /**
   * Calls `listener` with the write's name and its item count each time the items of a batched
   * write are written together (the batch-size metrics); returns an unsubscribe function.
   */
  onWriteBatch(listener: (write: string, size: number) => void): () => void;
}

/** A write of src/writes/, run whole where the writes run (./write.ts says how); known by its name. */
export interface Write<A extends unknown[], R> {
  (tx: Tx, ...args: A): Promise<R>;
  /** It reads and computes over many customers: PostgreSQL runs it off the main thread (./write.ts). */
  readonly heavy: boolean;
  /** Its items of one account may be gathered into one call (./write.ts, "batched"). */
  readonly batched: boolean;
}
