// Rows as either driver hands them back, into the store's records. Integers arrive as numbers on
// both (postgres/connection.ts reads bigint as a number); JSON as text from SQLite and parsed from
// PostgreSQL (`parsed` takes either); booleans as 0/1 or true/false; free text through the
// dialect's `fromText`.
import type { Lifecycle } from '../domain/customers.ts';
import type { EventType } from '../domain/events.ts';
import type { Override } from '../domain/health.ts';
import type { DerivedInputs } from '../domain/rules.ts';
import { DEFAULT_THRESHOLDS, type Status, type Weights } from '../domain/scoring.ts';
import type { CustomerRecord } from './customers.ts';
import { parsed, type Row } from './driver.ts';
import type { EventRecord } from './outbox.ts';
import type { ExplainedVersion, HistoryRecord, ScoreReason, ScoreRecord } from './scores.ts';
import type { Settings } from './settings.ts';
import type { AttemptRecord, WebhookRecord } from './webhooks.ts';

// Stored as a number in score order (critical < at_risk < healthy), so that one index on
// (band, score) serves the portfolio with and without a status filter.
const BANDS: readonly Status[] = ['critical', 'at_risk', 'healthy'];

export const bandOf = (status: Status): number => BANDS.indexOf(status);
export const statusOf = (band: number): Status => BANDS[band] as Status;

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/** Rows fetched with LIMIT limit + 1: the extra row only says that more follow. */
export function page<R, T>(rows: readonly R[], limit: number, map: (r: R) => T): Page<T> {
  return { data: rows.slice(0, limit).map(map), hasMore: rows.length > limit };
}

type Text = (s: string) => string;
const same: Text = (s) => s;
const textOrNull = (s: unknown, text: Text): string | null => (s == null ? null : text(s as string));

/** Selected as customers' columns; `metadata` as its stored JSON text. */
export const CUSTOMER_COLUMNS =
  'id, name, email, owner, arr_cents, renewal_at, lifecycle, parent_id, CAST(metadata AS text) AS metadata, created_at, updated_at';

/** Metadata is parsed only if someone reads it; answers pass the stored JSON text through. */
class StoredCustomer implements CustomerRecord {
  readonly id: string;
  readonly name: string;
  readonly email: string;
  readonly owner: string | null;
  readonly arrCents: number | null;
  readonly renewalAt: number | null;
  readonly lifecycle: Lifecycle;
  readonly parentId: string | null;
  readonly metadataJson: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  #metadata: Record<string, unknown> | undefined;

  constructor(r: Row, text: Text) {
    this.id = r.id as string;
    this.name = text(r.name as string);
    this.email = text(r.email as string);
    this.owner = textOrNull(r.owner, text);
    this.arrCents = (r.arr_cents as number | null) ?? null;
    this.renewalAt = (r.renewal_at as number | null) ?? null;
    this.lifecycle = r.lifecycle as Lifecycle;
    this.parentId = (r.parent_id as string | null) ?? null;
    this.metadataJson = r.metadata as string;
    this.createdAt = r.created_at as number;
    this.updatedAt = r.updated_at as number;
  }

  get metadata(): Record<string, unknown> {
    this.#metadata ??= JSON.parse(this.metadataJson) as Record<string, unknown>;
    return this.#metadata;
  }
}

export const toCustomer = (r: Row, text: Text = same): CustomerRecord => new StoredCustomer(r, text);

/**
 * factors as text on both backends (PostgreSQL's driver would parse json): an answer passes the
 * stored text through, and a recomputation carries it (factorsJson), so the store keeps the stored
 * factors instead of being sent them again. The cast costs SQLite nothing measurable (2.5-4.6 µs
 * per point read with it and without, alternating).
 */
export const scoreColumns = (table?: string): string => {
  const t = table ? `${table}.` : '';
  return `${t}customer_id, ${t}score, ${t}band, CAST(${t}factors AS text) AS factors, ${t}version, ${t}updated_at, ${t}computed, ${t}override, ${t}inputs`;
};
export const SCORE_COLUMNS = scoreColumns();

/** A JSON column that may be null, parsed (either driver's form). */
const parsedOrNull = <T>(v: unknown): T | null => (v == null ? null : (parsed(v) as T));

export const toScore = (r: Row): ScoreRecord => {
  const factors = r.factors;
  return {
    customerId: r.customer_id as string,
    score: r.score as number,
    status: statusOf(r.band as number),
    factors: parsed(factors),
    // The stored text, when the driver gave text: an answer passes it through unparsed.
    ...(typeof factors === 'string' ? { factorsJson: factors } : {}),
    version: r.version as number,
    updatedAt: r.updated_at as number,
    computed: (r.computed as number | null | undefined) ?? null,
    override: parsedOrNull<Override>(r.override),
    inputs: parsedOrNull<DerivedInputs>(r.inputs),
  };
};

export const toHistory = (r: Row): HistoryRecord => ({
  version: r.version as number,
  score: r.score as number,
  status: r.status as Status,
  factors: parsed(r.factors),
  reason: r.reason as ScoreReason,
  createdAt: r.created_at as number,
});

/** The columns toExplained reads. */
export const EXPLAINED_COLUMNS = `version, score, status, factors, reason, created_at, computed, override, weights, inputs`;

export const toExplained = (r: Row): ExplainedVersion => ({
  ...toHistory(r),
  computed: (r.computed as number | null) ?? null,
  override: parsedOrNull<Override>(r.override),
  weights: parsedOrNull<Weights>(r.weights),
  inputs: parsedOrNull<DerivedInputs>(r.inputs),
});

export const toEvent = (r: Row): EventRecord => ({
  id: r.id as string,
  type: r.type as EventType,
  data: parsed(r.data),
  createdAt: r.created_at as number,
});

export const toWebhook = (r: Row, text: Text = same): WebhookRecord => ({
  id: r.id as string,
  url: text(r.url as string),
  events: parsed(r.events),
  description: textOrNull(r.description, text),
  format: r.format === 'slack' ? 'slack' : 'standard',
  secret: r.secret as string,
  previousSecret: (r.previous_secret as string | null) ?? null,
  previousSecretExpiresAt: r.previous_secret_expires_at == null ? null : Number(r.previous_secret_expires_at),
  enabled: r.enabled === true || r.enabled === 1,
  disabledReason: textOrNull(r.disabled_reason, text),
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
});

export const toAttempt = (r: Row, text: Text = same): AttemptRecord => ({
  attempt: r.attempt as number,
  startedAt: r.started_at as number,
  durationMs: r.duration_ms as number,
  statusCode: (r.status_code as number | null) ?? null,
  error: textOrNull(r.error, text),
  responseBody: textOrNull(r.response_body, text),
});

/** The columns toSettings reads. */
export const SETTINGS_COLUMNS =
  'weights, weights_updated_at, healthy, at_risk, thresholds_updated_at, drop_delta, drop_days, alerts_updated_at';

/** An account's settings; an account that never changed them has the defaults. */
export const toSettings = (r: Row | undefined): Settings =>
  r
    ? {
        weights: parsed(r.weights),
        weightsUpdatedAt: (r.weights_updated_at as number | null) ?? null,
        thresholds: { healthy: r.healthy as number, at_risk: r.at_risk as number },
        thresholdsUpdatedAt: (r.thresholds_updated_at as number | null) ?? null,
        drop: r.drop_delta == null ? null : { delta: r.drop_delta as number, days: r.drop_days as number },
        alertsUpdatedAt: (r.alerts_updated_at as number | null) ?? null,
      }
    : {
        weights: {},
        weightsUpdatedAt: null,
        thresholds: { ...DEFAULT_THRESHOLDS },
        thresholdsUpdatedAt: null,
        drop: null,
        alertsUpdatedAt: null,
      };
