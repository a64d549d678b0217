// Explanations and overrides (docs/api.md, "Explanations and overrides"; docs/scoring.md, "Why
// this score" and "Overrides"): the schemas.
import { Type } from 'typebox';
import { AGGREGATES } from '../domain/rules.ts';
import { STATUSES } from '../domain/scoring.ts';
import { oneOf, Timestamp } from './common.ts';
import { GateStatus } from './factor-rules.ts';
import { HistoryEntry } from './health-scores.ts';
import { MAX_REASON } from './limits.ts';

export const ExplanationQuery = Type.Object(
  {
    version: Type.Optional(
      // Any 32-bit integer: a backfill numbers the past 0, −1, … (docs/api.md, "Backfill").
      Type.Integer({
        minimum: -2_147_483_648,
        maximum: 2_147_483_647,
        description: 'A version of the history; the current one unless given.',
      }),
    ),
  },
  { additionalProperties: false },
);

const Contribution = Type.Number({ description: 'weight × score, 6 decimal places.' });

const ExplainedFactorSchema = Type.Object({
  factor: Type.String(),
  score: Type.Number(),
  weight: Type.Number({
    description:
      'The effective weight this version used: w/Σw over the weighted factors present, 1/n for a plain mean, 0 if left out.',
  }),
  contribution: Contribution,
  source: Type.Union([Type.Literal('posted'), Type.Literal('metric')]),
  metric: Type.Optional(
    Type.Object(
      {
        name: Type.String(),
        aggregate: Type.Enum(AGGREGATES),
        window_days: Type.Union([Type.Integer(), Type.Null()]),
        value: Type.Number({ description: 'The aggregate the scale turned into the score.' }),
        points: Type.Integer({
          description: 'Points the aggregate read (1 for `last`: the newest in its window).',
        }),
        newest_at: Type.Union([Timestamp, Type.Null()]),
      },
      { description: 'For a derived factor: what it was computed from, as of this version.' },
    ),
  ),
  gate: Type.Optional(
    Type.Object(
      {
        below: Type.Number(),
        status: GateStatus,
        applied: Type.Boolean({
          description:
            'Whether the factor is below it in this version, capping the status (never under an override).',
        }),
      },
      {
        description:
          'For a derived factor whose rule has a gate (docs/scoring.md, "Gates"): the rule\'s gate as it stands.',
      },
    ),
  ),
});

export const Explanation = Type.Object(
  {
    customer_id: Type.String(),
    version: Type.Integer(),
    health_score: Type.Number({ description: 'The score shown: the override while one stands.' }),
    computed_score: Type.Number({ description: 'What the factors give; the contributions sum to it.' }),
    status: oneOf(STATUSES),
    reason: HistoryEntry.properties.reason,
    updated_at: Timestamp,
    override: Type.Union([Type.Ref('Override'), Type.Null()]),
    factors: Type.Array(ExplainedFactorSchema, { description: 'By factor name.' }),
    change: Type.Union([
      Type.Object({
        from_version: Type.Integer(),
        previous_score: Type.Number(),
        previous_computed_score: Type.Number({
          description: 'What the factors gave then: the contributions moved from it to computed_score.',
        }),
        delta: Type.Number({ description: 'health_score − previous_score.' }),
        factors: Type.Array(
          Type.Object({
            factor: Type.String(),
            previous_contribution: Type.Number(),
            contribution: Type.Number(),
            delta: Type.Number(),
          }),
          { description: 'Every factor whose contribution moved, biggest |delta| first.' },
        ),
      }),
      Type.Null(),
    ]),
  },
  { $id: 'Explanation' },
);

export const OverrideBody = Type.Object(
  {
    health_score: Type.Number({ minimum: 0, maximum: 1, description: 'The score to show, in [0, 1].' }),
    reason: Type.String({
      minLength: 1,
      maxLength: MAX_REASON,
      description: `Why (1-${MAX_REASON} characters): what the team knows that the signals do not.`,
    }),
    expires_at: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'When it ends: ISO 8601, in the future, at most 365 days ahead; 30 days unless given.',
      }),
    ),
  },
  { additionalProperties: false },
);
