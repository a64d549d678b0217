// Outcomes and calibration (docs/api.md, "Outcomes and calibration"): the schemas, and the outcome
// and the calibration report as the API writes them.
import { type Static, Type } from 'typebox';
import { type Calibration, OUTCOMES, type Outcome } from '../domain/calibration.ts';
import { STATUSES, type Weights } from '../domain/scoring.ts';
import { iso } from '../domain/time.ts';
import { batchItems, refusal } from './batch.ts';
import { bookParams, ItemCustomerId, Limit, oneOf, segmentParams, Timestamp } from './common.ts';
import { MAX_NOTE } from './limits.ts';

export const OutcomeParams = Type.Object({ customer_id: Type.String(), outcome_id: Type.String() });

const Kind = oneOf(OUTCOMES, { description: 'churned or retained.' });
const fields = {
  outcome: Kind,
  at: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'When it happened (the renewal date): ISO 8601 with a time zone, not in the future; now unless given.',
    }),
  ),
  note: Type.Optional(Type.String({ maxLength: MAX_NOTE, description: `Up to ${MAX_NOTE} characters.` })),
};
export const OutcomeBody = Type.Object(fields, { additionalProperties: false });
export const OutcomeItem = Type.Object(
  { customer_id: ItemCustomerId, ...fields },
  { additionalProperties: false },
);
export const OutcomesBatchBody = Type.Object(
  { outcomes: batchItems('1-1,000 outcomes, recorded in order.') },
  { additionalProperties: false },
);
export const OutcomeSchema = Type.Object(
  {
    id: Type.String(),
    customer_id: Type.String(),
    outcome: Kind,
    at: Timestamp,
    note: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
  },
  { $id: 'Outcome' },
);
const OutcomeRef = Type.Ref('Outcome');
export const OutcomesPage = Type.Object({ data: Type.Array(OutcomeRef), has_more: Type.Boolean() });
export const OutcomesBatchAnswer = Type.Object({
  results: Type.Array(
    Type.Union([
      Type.Object({ customer_id: Type.String(), status: Type.Literal(201), outcome: OutcomeRef }),
      Type.Object(refusal),
    ]),
  ),
});
export const OutcomesQuery = Type.Object(
  {
    limit: Type.Optional(Limit),
    starting_after: Type.Optional(
      Type.String({ maxLength: 255, description: 'The id of the last outcome of the previous page.' }),
    ),
  },
  { additionalProperties: false },
);
export const CalibrationQuery = Type.Object(
  {
    horizon_days: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 365,
        description: 'Judge each outcome by the score this many days before it (0-365; 0 unless given).',
      }),
    ),
    ...bookParams,
  },
  { additionalProperties: false, ...segmentParams },
);
const Auc = Type.Union([Type.Number(), Type.Null()], {
  description: 'P(a retained outcome scored above a churned one), ties ½; null without one of each.',
});
export const CalibrationSchema = Type.Object({
  horizon_days: Type.Integer(),
  outcomes: Type.Object({
    churned: Type.Integer({ description: 'Churned outcomes judged by a score.' }),
    retained: Type.Integer({ description: 'Retained outcomes judged by a score.' }),
    unscored: Type.Integer({ description: 'Outcomes whose customer had no score yet at that time.' }),
  }),
  auc: Auc,
  bands: Type.Array(
    Type.Object({
      status: oneOf(STATUSES),
      outcomes: Type.Integer(),
      churned: Type.Integer(),
      churn_rate: Type.Union([Type.Number(), Type.Null()]),
    }),
    { description: 'By the band the judged score has under today’s thresholds: healthy, at_risk, critical.' },
  ),
  factors: Type.Array(Type.Object({ factor: Type.String(), outcomes: Type.Integer(), auc: Auc }), {
    description: 'Each factor’s own AUC over the outcomes whose version had it, best first.',
  }),
  current_weights_auc: Type.Union([Type.Number(), Type.Null()], {
    description:
      'The AUC of today’s weights applied to the same outcomes’ factors: what the suggestion must beat.',
  }),
  suggested_weights: Type.Union([Type.Record(Type.String(), Type.Number()), Type.Null()], {
    description:
      'Weights fitted to the outcomes (never worse than today’s over them); null with fewer than 20 of either kind.',
  }),
  suggested_auc: Auc,
});

/** What the API writes of an outcome (the store's OutcomeRecord has it). */
export interface OutcomeFields {
  id: string;
  customerId: string;
  outcome: Outcome;
  at: number;
  note: string | null;
  createdAt: number;
}

/** The Outcome object. */
export const toOutcome = (o: OutcomeFields) => ({
  id: o.id,
  customer_id: o.customerId,
  outcome: o.outcome,
  at: iso(o.at),
  note: o.note,
  created_at: iso(o.createdAt),
});

/** The Outcome object as JSON text. */
export const outcomeJson = (o: OutcomeFields): string =>
  `{"id":"${o.id}","customer_id":${JSON.stringify(o.customerId)},"outcome":"${o.outcome}","at":"${iso(o.at)}","note":${JSON.stringify(o.note)},"created_at":"${iso(o.createdAt)}"}`;

/** The calibration report as the API answers it (docs/api.md, "Outcomes and calibration"). */
export function calibrationJson(report: Calibration, horizonDays: number, unscored: number) {
  return {
    horizon_days: horizonDays,
    outcomes: { churned: report.churned, retained: report.retained, unscored },
    auc: report.auc,
    bands: report.bands.map((b) => ({
      status: b.status,
      outcomes: b.outcomes,
      churned: b.churned,
      churn_rate: b.churnRate,
    })),
    factors: report.factors,
    current_weights_auc: report.currentWeightsAuc,
    suggested_weights: report.suggestedWeights as Weights | null,
    suggested_auc: report.suggestedAuc,
  };
}

/** An outcome as a request gives it. */
export type OutcomeRequest = Static<typeof OutcomeBody>;
