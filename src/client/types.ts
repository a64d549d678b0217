// The client's types, taken from the API's own schemas (../api) so that the two cannot drift.
// Type-only imports: at run time the client loads nothing of the server. A schema that names
// another by $ref is read with a context naming the client's type for each $id (`Static<S, {…}>`),
// since Static alone reads a $ref as `unknown`. Only what no schema says is written here by hand
// (docs/client.md, "Types").
import type { Static, TObject, TUnsafe } from 'typebox';
import type { Backfill as BackfillSchema, CreateBackfillBody } from '../api/backfill.ts';
import type {
  CustomerItem,
  CustomerResult,
  CustomersBatchAnswer,
  refusal,
  ScoreItem,
  ScoreMergeItem,
  ScoresBatchAnswer,
} from '../api/batch.ts';
import type { Deleted as DeletedSchema, ErrorSchema } from '../api/common.ts';
import type {
  CreateBody as CustomerCreateBody,
  ListQuery as CustomerListQuery,
  CustomerPage as CustomerPageSchema,
  Customer as CustomerSchema,
  UpdateBody as CustomerUpdateBody,
} from '../api/customers.ts';
import type { ListQuery as EventListQuery, EventSchema } from '../api/events.ts';
import type {
  ExplanationQuery,
  Explanation as ExplanationSchema,
  OverrideBody,
} from '../api/explanations.ts';
import type { RuleBody, RulePreviewAnswer, Rule as RuleSchema } from '../api/factor-rules.ts';
import type {
  FactorsPatch,
  FactorsSchema,
  HealthScore as HealthScoreSchema,
  HistoryEntry as HistoryEntrySchema,
  HistoryQuery,
  OverrideSchema,
  PortfolioEntry as PortfolioEntrySchema,
  PortfolioQuery,
} from '../api/health-scores.ts';
import type {
  MetricItem,
  MetricNameItem,
  MetricPointsPage,
  MetricsAnswer,
  MetricsBatchAnswer,
  MetricsBody,
  MetricsQuery,
} from '../api/metrics.ts';
import type {
  CalibrationQuery,
  CalibrationSchema,
  OutcomeBody,
  OutcomeItem,
  OutcomeSchema,
  OutcomesBatchAnswer,
  OutcomesQuery,
} from '../api/outcomes.ts';
import type {
  CreatePlaybookBody,
  Playbook as PlaybookSchema,
  TRIGGERS,
  UpdatePlaybookBody,
} from '../api/playbooks.ts';
import type {
  DistributionAnswer,
  DistributionQuery,
  MoversAnswer,
  MoversQuery,
  SummaryAnswer,
  SummaryQuery,
  TrendAnswer,
  TrendQuery,
} from '../api/portfolio.ts';
import type { Rollup as RollupSchema } from '../api/rollup.ts';
import type {
  AlertsAnswer,
  AlertsBody,
  PreviewAnswer,
  ThresholdsAnswer,
  ThresholdsBody,
  WeightsAnswer,
  WeightsSchema,
} from '../api/settings.ts';
import type {
  CreateSourceBody,
  SourceActivity as SourceActivitySchema,
  SourceCreated as SourceCreatedSchema,
  SourceLogPage,
  Source as SourceSchema,
  UpdateSourceBody,
} from '../api/sources.ts';
import type {
  CreateTaskBody,
  NoteListQuery,
  Note as NoteSchema,
  TaskListQuery,
  Task as TaskSchema,
  UpdateTaskBody,
} from '../api/tasks.ts';
import type { TimelineItem, TimelineQuery } from '../api/timeline.ts';
import type {
  DeliveriesQuery,
  Delivery as DeliverySchema,
  CreateBody as WebhookCreateBody,
  RotateBody as WebhookRotateBody,
  Webhook as WebhookSchema,
  UpdateBody as WebhookUpdateBody,
  WebhookWithBacklog as WebhookWithBacklogSchema,
  WebhookWithSecret as WebhookWithSecretSchema,
} from '../api/webhooks.ts';

export type ErrorEnvelope = Static<typeof ErrorSchema>;

// `metadata` and `data` are free-form objects, which Static reads as `object`: no key could be read.
type FreeForm = Record<string, unknown>;

export type Customer = Omit<Static<typeof CustomerSchema>, 'metadata'> & { metadata: FreeForm };
export type CustomerCreate = Static<typeof CustomerCreateBody>;
export type CustomerUpdate = Static<typeof CustomerUpdateBody>;
/**
 * A segment (docs/api.md, "Segments, trends and movers"): only customers whose metadata holds each
 * of these values (sent as `metadata[KEY]=VALUE`; a number or boolean matches by its JSON text). The
 * book's filters (owner, renewal_after, renewal_before, parent_id, lifecycle) are each query's own
 * parameters, from its schema.
 */
export type SegmentParams = { metadata?: Record<string, string | number | boolean> };

export type CustomerListParams = Static<typeof CustomerListQuery> & SegmentParams;
export type CustomerPage = Static<typeof CustomerPageSchema, { Customer: TUnsafe<Customer> }>;
export type CustomerBatchItem = Static<typeof CustomerItem>;
/** A customer's rollup over its descendants (docs/api.md, "Customers"): ARR, weighted score, band, counts. */
export type CustomerRollup = Static<typeof RollupSchema>;

export type Status = Static<typeof HealthScoreSchema>['status'];
export type Factors = Static<typeof FactorsSchema>;
export type FactorsChange = Static<typeof FactorsPatch>;
/** An override (docs/scoring.md, "Overrides"): the score pinned, why, until when and by whom. */
export type Override = Static<typeof OverrideSchema>;
export type HealthScore = Static<typeof HealthScoreSchema, { Override: TUnsafe<Override> }>;
export type HistoryEntry = Static<typeof HistoryEntrySchema>;
export type HistoryParams = Static<typeof HistoryQuery>;
export type PortfolioParams = Static<typeof PortfolioQuery> & SegmentParams;
/** An entry of the portfolio's list: a health score with its customer's name, book and metadata. */
export type PortfolioEntry = Omit<
  Static<typeof PortfolioEntrySchema, { Override: TUnsafe<Override> }>,
  'metadata'
> & {
  metadata: FreeForm;
};
/** Why a version of a score is what it is, and what moved it from the version before. */
export type Explanation = Static<typeof ExplanationSchema, { Override: TUnsafe<Override> }>;
/** One factor of an explanation: its score, effective weight, contribution and where it came from. */
export type ExplainedFactor = Explanation['factors'][number];
/** What moved the score from the version before, or the one standing at `since` (null when none came before). */
export type ScoreChange = NonNullable<Explanation['change']>;
export type ExplanationParams = Static<typeof ExplanationQuery>;
/** An override to set: the score to show, why, and when it ends (default in 30 days). */
export type OverrideParams = Static<typeof OverrideBody>;
export type ScoreBatchItem = Static<typeof ScoreItem> | Static<typeof ScoreMergeItem>;
export type SummaryParams = Static<typeof SummaryQuery> & SegmentParams;
export type Summary = Static<typeof SummaryAnswer>;
export type DistributionParams = Static<typeof DistributionQuery> & SegmentParams;
export type Distribution = Static<typeof DistributionAnswer>;
export type TrendParams = Static<typeof TrendQuery> & SegmentParams;
export type Trend = Static<typeof TrendAnswer>;
export type MoversParams = Static<typeof MoversQuery> & SegmentParams;
export type Movers = Static<typeof MoversAnswer>;
/**
 * A backfill (docs/api.md, "Backfill"): past scores computed from the metrics kept, `running` in
 * the background until `done` or `failed`, with its progress.
 */
export type Backfill = Static<typeof BackfillSchema>;
/** A backfill to start: from which UTC day (YYYY-MM-DD, at most 730 days back), for which customers (default all). */
export type BackfillCreate = Static<typeof CreateBackfillBody>;
export type AlertsChange = Static<typeof AlertsBody>;
export type AlertsSettings = Static<typeof AlertsAnswer>;

export type Weights = Static<typeof WeightsSchema>;
export type WeightsSettings = Static<typeof WeightsAnswer>;
export type WeightsPreview = Static<typeof PreviewAnswer>;
export type ThresholdsChange = Static<typeof ThresholdsBody>;
export type ThresholdsSettings = Static<typeof ThresholdsAnswer>;

/** A factor rule as the API answers it (docs/api.md, "Factor rules"). */
export type FactorRule = Static<typeof RuleSchema>;
/** A rule to put: everything but its factor (in the path) and its time. */
export type FactorRuleInput = Static<typeof RuleBody>;
export type FactorRulePreview = Static<typeof RulePreviewAnswer>;
/** Metric values to record for a customer, at `at` (default now). */
export type MetricsWrite = Static<typeof MetricsBody>;
/** The answer of a metric write: the values stored and the customer's score after it (null: none). */
export type MetricsRecorded = Static<typeof MetricsAnswer, { HealthScore: TUnsafe<HealthScore> }>;
export type MetricBatchItem = Static<typeof MetricItem>;
export type MetricsBatch = Static<typeof MetricsBatchAnswer, { HealthScore: TUnsafe<HealthScore> }>;
export type MetricsBatchResult = MetricsBatch['results'][number];
export type MetricPoint = Static<typeof MetricPointsPage>['data'][number];
export type MetricListParams = Static<typeof MetricsQuery>;
/** One of the account's metric names: customers with a point of it, its points, its newest point's instant. */
export type MetricName = Static<typeof MetricNameItem>;

/** An outcome as the API answers it (docs/api.md, "Outcomes and calibration"). */
export type Outcome = Static<typeof OutcomeSchema>;
/** What happened to a customer at a renewal: `churned` or `retained`. */
export type OutcomeKind = Outcome['outcome'];
/** An outcome to record: `at` (default now) may not be in the future; `note` up to 500 characters. */
export type OutcomeCreate = Static<typeof OutcomeBody>;
export type OutcomeBatchItem = Static<typeof OutcomeItem>;
export type OutcomeListParams = Static<typeof OutcomesQuery>;
export type OutcomesBatch = Static<typeof OutcomesBatchAnswer, { Outcome: TUnsafe<Outcome> }>;
export type OutcomesBatchResult = OutcomesBatch['results'][number];
export type CalibrationParams = Static<typeof CalibrationQuery> & SegmentParams;
/** The calibration report (docs/scoring.md, "Does the score predict churn?"). */
export type Calibration = Static<typeof CalibrationSchema>;
/** One band of the calibration report: the outcomes whose judged score falls in it, and how many churned. */
export type CalibrationBand = Calibration['bands'][number];

export type Event = Omit<Static<typeof EventSchema>, 'data'> & { data: FreeForm };
export type EventType = Event['type'];
export type EventListParams = Static<typeof EventListQuery>;

export type Webhook = Static<typeof WebhookSchema>;
export type WebhookWithSecret = Static<typeof WebhookWithSecretSchema>;
/** One webhook as retrieve answers it: with `pending` and `oldest_pending_at`. */
export type WebhookWithBacklog = Static<typeof WebhookWithBacklogSchema>;
export type WebhookCreate = Static<typeof WebhookCreateBody>;
export type WebhookUpdate = Static<typeof WebhookUpdateBody>;
/** rotateSecret's body: how long, in seconds, the replaced secret keeps signing (default 0). */
export type WebhookRotate = NonNullable<Static<typeof WebhookRotateBody>>;
export type Delivery = Static<typeof DeliverySchema>;
export type DeliveryListParams = Static<typeof DeliveriesQuery>;

/** A task (docs/api.md, "Tasks"): the work a customer needs, in its assignee's inbox. */
export type Task = Static<typeof TaskSchema>;
export type TaskCreate = Static<typeof CreateTaskBody>;
export type TaskUpdate = Static<typeof UpdateTaskBody>;
export type TaskListParams = Omit<Static<typeof TaskListQuery>, 'cursor'>;
/** A note on a customer (docs/api.md, "Notes"). */
export type Note = Static<typeof NoteSchema>;
export type NoteListParams = Static<typeof NoteListQuery>;
/**
 * One entry of a customer's timeline (docs/api.md, "Timeline"): what happened, when, who did it
 * (null: Vitals itself, or not kept), in one sentence, with its `data` by its `type`.
 */
export type TimelineEntry = Static<typeof TimelineItem>;
export type TimelineType = TimelineEntry['type'];
/** A timeline's page size and start; `types` keeps only those types. */
export type TimelineParams = Omit<Static<typeof TimelineQuery>, 'types'> & {
  types?: readonly TimelineType[];
};
/** A playbook (docs/playbooks.md): a trigger and the task it opens. */
export type Playbook = Static<typeof PlaybookSchema>;
/** One of the four triggers, each with its own fields. */
export type PlaybookTrigger = {
  [K in keyof typeof TRIGGERS]: Static<(typeof TRIGGERS)[K]>;
}[keyof typeof TRIGGERS];
export type PlaybookCreate = Omit<Static<typeof CreatePlaybookBody>, 'trigger'> & {
  trigger: PlaybookTrigger;
};
export type PlaybookUpdate = Omit<Static<typeof UpdatePlaybookBody>, 'trigger'> & {
  trigger?: PlaybookTrigger;
};

/** The answer of every DELETE. */
export type Deleted = Static<typeof DeletedSchema>;
/**
 * The lists answered as `{data, has_more}` (EventsPage, OutcomesPage, MetricPointsPage… each with
 * its own item): one generic for the client's pagination.
 */
export type Page<T> = { data: T[]; has_more: boolean };

/** One refused item of a batch: its own status (4xx) and error, the other items going on. */
export type BatchRefusal = Static<TObject<typeof refusal>>;
export type CustomersBatch = Static<typeof CustomersBatchAnswer, { Customer: TUnsafe<Customer> }>;
export type CustomerBatchResult = Static<typeof CustomerResult, { Customer: TUnsafe<Customer> }>;
export type ScoresBatch = Static<typeof ScoresBatchAnswer, { HealthScore: TUnsafe<HealthScore> }>;
export type ScoreBatchResult = ScoresBatch['results'][number];

/** The body of a webhook delivery: exactly `{type, data}` (docs/webhooks.md). */
export type WebhookEvent = Pick<Event, 'type' | 'data'>;

/** The last argument of every write. */
export interface WriteOptions {
  /** Sent as Idempotency-Key. Vitals honours it on POST (a POST gets a random one when none is given). */
  idempotencyKey?: string;
}

/** A source (docs/sources.md): a tool that sends data in its own format, with its counters. */
export type Source = Static<typeof SourceSchema>;
/** A source as its create (or change) answers it: its write key, token URL or generated secret, shown once. */
export type SourceCreated = Static<typeof SourceCreatedSchema>;
export type SourceCreate = Static<typeof CreateSourceBody>;
export type SourceUpdate = Static<typeof UpdateSourceBody>;
/** One message in a source's log: its kind, the customer it was about, its result and why. */
export type SourceLogEntry = Static<typeof SourceLogPage>['data'][number];
/** A customer's last messages in its sources' logs, and the last that changed it. */
export type SourceActivity = Static<typeof SourceActivitySchema>;
