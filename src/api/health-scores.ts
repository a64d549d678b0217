// Health scores (docs/api.md, "Health scores"; docs/scoring.md): the schemas, and the score as the
// API writes it. A score leaves as JSON text built here: the stored factor text goes out as it
// is, and the text is the same wherever it is made, on the main thread for the answer or where
// the write runs for the answer that an Idempotency-Key replays. test/http/score-json.test.ts
// proves it byte-equal to the schema serializer's output.
import { type Static, Type } from 'typebox';
import { computedOf, gatedByOf, type ScoreRecord } from '../domain/health.ts';
import { PORTFOLIO_SORTS } from '../domain/portfolio.ts';
import { type Factors, type Gates, STATUSES, type Status } from '../domain/scoring.ts';
import { iso } from '../domain/time.ts';
import { bookParams, Limit, oneOf, segmentParams, Timestamp } from './common.ts';
import { Customer, type CustomerFields } from './customers.ts';
import { FactorName, MAX_FACTORS } from './limits.ts';

export const FactorsSchema = Type.Unsafe<Factors>({
  type: 'object',
  minProperties: 1,
  maxProperties: MAX_FACTORS,
  propertyNames: FactorName,
  additionalProperties: { type: 'number', minimum: 0, maximum: 1 },
  description: 'Factor name to score in [0, 1]; 1-50 factors.',
});
export const FactorsPatch = Type.Unsafe<Record<string, number | null>>({
  type: 'object',
  minProperties: 1,
  maxProperties: MAX_FACTORS,
  propertyNames: FactorName,
  additionalProperties: { type: ['number', 'null'], minimum: 0, maximum: 1 },
  description: 'Factors to set (score in [0, 1]) or remove (null).',
});

export const OverrideSchema = Type.Object(
  {
    health_score: Type.Number({ minimum: 0, maximum: 1, description: 'The score shown while it stands.' }),
    computed_score: Type.Number({ description: 'What the factors give, moving underneath.' }),
    reason: Type.String(),
    expires_at: Timestamp,
    set_at: Timestamp,
    set_by: Type.String({ description: 'The key or person who set it, as the audit log names them.' }),
  },
  { $id: 'Override' },
);

export const HealthScore = Type.Object(
  {
    customer_id: Type.String(),
    health_score: Type.Number({ minimum: 0, maximum: 1 }),
    factors: Type.Record(Type.String(), Type.Number()),
    status: oneOf(STATUSES, {
      description:
        'The band of health_score, capped by the gates that apply (docs/scoring.md, "Gates"); an override sets it alone.',
    }),
    gated_by: Type.Array(Type.String(), {
      description:
        "The factors whose rule's gate applies (the factor is below the gate), by name; empty when none does or an override stands.",
    }),
    updated_at: Timestamp,
    override: Type.Union([Type.Ref('Override'), Type.Null()], {
      description:
        'The override pinning health_score while it stands (docs/scoring.md, "Overrides"); null: none.',
    }),
  },
  { $id: 'HealthScore' },
);

/**
 * A version number as a request names one: any integer a version can be. Versions are 32-bit
 * integers in storage (PostgreSQL integer): a larger one names no version. Backfilled versions are
 * numbered below a customer's first, counting down (0, −1, …), so 0 and below are versions too
 * (docs/api.md, "Health scores", History).
 */
export const VersionNumber = { minimum: -2_147_483_648, maximum: 2_147_483_647 } as const;

export const HistoryEntry = Type.Object({
  version: Type.Integer({
    description:
      'Grows by one with every change of this score, from 1; versions backfilled from before it are numbered below it, counting down.',
  }),
  health_score: Type.Number(),
  status: oneOf(STATUSES, {
    description: 'The status this version was written with, in the bands of a health score.',
  }),
  factors: Type.Record(Type.String(), Type.Number()),
  reason: Type.Union([
    Type.Literal('factors_updated'),
    Type.Literal('weights_changed'),
    Type.Literal('thresholds_changed'),
    Type.Literal('metrics_updated'),
    Type.Literal('rules_changed'),
    Type.Literal('time_passed'),
    Type.Literal('override_set'),
    Type.Literal('override_removed'),
    Type.Literal('override_expired'),
    Type.Literal('backfill'),
  ]),
  created_at: Timestamp,
});
export const HistoryPage = Type.Object({ data: Type.Array(HistoryEntry), has_more: Type.Boolean() });

export const ScoreBody = Type.Object({ factors: FactorsSchema }, { additionalProperties: false });
export const PatchBody = Type.Object({ factors: FactorsPatch }, { additionalProperties: false });
export const HistoryQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    starting_after: Type.Optional(
      Type.Integer({ ...VersionNumber, description: 'A version: the page starts just below it.' }),
    ),
  },
  { additionalProperties: false },
);
export const PortfolioQuery = Type.Object(
  {
    status: Type.Optional(Type.Enum(STATUSES)),
    limit: Type.Optional(Limit),
    cursor: Type.Optional(
      Type.String({ maxLength: 1024, description: 'next_cursor of the previous page (of the same sort).' }),
    ),
    sort: Type.Optional(
      oneOf(PORTFOLIO_SORTS, {
        description:
          "'score' (the default: by status band, then score, lowest first), '-arr' (highest ARR first) or 'renewal_at' (soonest first); customers without the field last, ties by customer id.",
      }),
    ),
    ...bookParams,
  },
  { additionalProperties: false, ...segmentParams },
);

/** A health score on the portfolio's list: with its customer's name, so a page needs one request. */
export const PortfolioEntry = Type.Object(
  {
    ...HealthScore.properties,
    name: Type.String({ description: "The customer's name." }),
    owner: Customer.properties.owner,
    arr: Customer.properties.arr,
    renewal_at: Customer.properties.renewal_at,
    lifecycle: Customer.properties.lifecycle,
    parent_id: Customer.properties.parent_id,
    metadata: Customer.properties.metadata,
  },
  { $id: 'PortfolioEntry' },
);
export const PortfolioPage = Type.Object({
  data: Type.Array(Type.Ref('PortfolioEntry')),
  has_more: Type.Boolean(),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const toOverride = (s: Pick<ScoreRecord, 'score' | 'computed' | 'override'>) =>
  s.override
    ? {
        health_score: s.override.score,
        computed_score: computedOf(s),
        reason: s.override.reason,
        expires_at: iso(s.override.expiresAt),
        set_at: iso(s.override.setAt),
        set_by: s.override.setBy,
      }
    : null;

export const toHealthScore = (s: ScoreRecord) => ({
  customer_id: s.customerId,
  health_score: s.score,
  factors: s.factors,
  status: s.status,
  gated_by: s.gatedBy ?? [],
  updated_at: iso(s.updatedAt),
  override: toOverride(s),
});

/** What the API writes of a version of the history (the store's HistoryRecord has it). */
export interface HistoryFields {
  version: number;
  score: number;
  status: Status;
  factors: Factors;
  reason: Static<typeof HistoryEntry>['reason'];
  createdAt: number;
}

export const toHistoryEntry = (h: HistoryFields) => ({
  version: h.version,
  health_score: h.score,
  status: h.status,
  factors: h.factors,
  reason: h.reason,
  created_at: iso(h.createdAt),
});

/** The HealthScore's `override` member: null, or the override with the computed score beneath it. */
function overrideJson(s: ScoreRecord): string {
  const o = s.override;
  if (!o) return 'null';
  return `{"health_score":${JSON.stringify(o.score)},"computed_score":${JSON.stringify(computedOf(s))},"reason":${JSON.stringify(o.reason)},"expires_at":"${iso(o.expiresAt)}","set_at":"${iso(o.setAt)}","set_by":${JSON.stringify(o.setBy)}}`;
}

/**
 * `gates`: the account's, for a score read from the store; a version just computed carries its
 * own `gatedBy` (health.ts), which stands without them.
 */
export function healthScoreJson(s: ScoreRecord, gates?: Gates): string {
  const factors = s.factorsJson ?? JSON.stringify(s.factors);
  const gatedBy = gates ? gatedByOf(s, gates) : (s.gatedBy ?? []);
  return `{"customer_id":${JSON.stringify(s.customerId)},"health_score":${JSON.stringify(s.score)},"factors":${factors},"status":"${s.status}","gated_by":${JSON.stringify(gatedBy)},"updated_at":"${iso(s.updatedAt)}","override":${overrideJson(s)}}`;
}

/**
 * A page of the portfolio's list as JSON text: each entry is the HealthScore's text with the
 * name after it; `cursor` the next page's (null: none).
 */
/** A score on the portfolio's list with its customer's name, book and metadata (as stored JSON text). */
export type PortfolioEntryFields = ScoreRecord &
  Pick<CustomerFields, 'name' | 'owner' | 'arrCents' | 'renewalAt' | 'lifecycle' | 'parentId'> & {
    metadataJson: string;
  };

export function portfolioPageJson(
  entries: readonly PortfolioEntryFields[],
  gates: Gates,
  hasMore: boolean,
  cursor: string | null,
): string {
  const data = entries.map((e) => {
    // cents / 100 is the double nearest the decimal, so its shortest text is the decimal itself.
    const arr = e.arrCents === null ? 'null' : String(e.arrCents / 100);
    const renewal = e.renewalAt === null ? 'null' : `"${iso(e.renewalAt)}"`;
    const owner = e.owner === null ? 'null' : JSON.stringify(e.owner);
    const parent = e.parentId === null ? 'null' : JSON.stringify(e.parentId);
    return `${healthScoreJson(e, gates).slice(0, -1)},"name":${JSON.stringify(e.name)},"owner":${owner},"arr":${arr},"renewal_at":${renewal},"lifecycle":"${e.lifecycle}","parent_id":${parent},"metadata":${e.metadataJson}}`;
  });
  return `{"data":[${data.join(',')}],"has_more":${hasMore},"next_cursor":${cursor === null ? 'null' : `"${cursor}"`}}`;
}
