// Factor rules (docs/api.md, "Factor rules"; docs/scoring.md, "Factors from metrics"): the
// schemas, and a rule as the API writes it.
import { type Static, Type } from 'typebox';
import { AGGREGATES, type FactorRule, MAX_STEPS } from '../domain/rules.ts';
import { GATE_STATUSES, type Gate } from '../domain/scoring.ts';
import { iso } from '../domain/time.ts';
import { Timestamp } from './common.ts';
import { FactorName } from './limits.ts';
import { previewSchema } from './settings.ts';

const Days = Type.Integer({ minimum: 1, maximum: 365 });
const Finite = Type.Number({ minimum: -Number.MAX_VALUE, maximum: Number.MAX_VALUE });

export const ScaleSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('linear'), Type.Literal('steps')], {
      description: '`linear` (with from and to) or `steps` (with steps).',
    }),
    from: Type.Optional({ ...Finite, description: 'linear: the value that scores 0.' }),
    to: Type.Optional({ ...Finite, description: 'linear: the value that scores 1 (≠ from).' }),
    steps: Type.Optional(
      Type.Array(
        Type.Object(
          { min: Finite, score: Type.Number({ minimum: 0, maximum: 1 }) },
          { additionalProperties: false },
        ),
        {
          minItems: 1,
          maxItems: MAX_STEPS,
          description: `steps: 1-${MAX_STEPS} of {min, score}, min strictly ascending.`,
        },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * A gate: an object or null in one schema (not a union), so that a bad field is named as
 * `gate.below`, `gate.status` or `gate.NAME` rather than as the union's first branch.
 */
const GateBody = Type.Unsafe<Gate | null>({
  type: ['object', 'null'],
  properties: {
    below: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      description: 'While the factor scores below this (0-1), the status is at most `status`.',
    },
    status: { type: 'string', enum: [...GATE_STATUSES], description: 'at_risk or critical.' },
  },
  required: ['below', 'status'],
  additionalProperties: false,
  description:
    'Caps the customer\'s status while the factor is below `below`; its score is unchanged (docs/scoring.md, "Gates"). null or absent: none.',
});

/** A gate's band, spelled out (a union built from an array is `never` to Static, and so to the typed client). */
export const GateStatus = Type.Union([Type.Literal('at_risk'), Type.Literal('critical')]);

const GateAnswer = Type.Union([Type.Object({ below: Type.Number(), status: GateStatus }), Type.Null()], {
  description: 'The gate (docs/scoring.md, "Gates"); null: none.',
});

export const RuleBody = Type.Object(
  {
    metric: Type.String({ ...FactorName, description: 'The metric it reads; names as for factors.' }),
    aggregate: Type.Enum(AGGREGATES, {
      description: 'last, sum, count, avg, min or max of the points in the window.',
    }),
    window_days: Type.Optional({
      ...Days,
      description: '1-365; 30 unless given (last: no window unless given).',
    }),
    scale: ScaleSchema,
    max_age_days: Type.Optional({
      ...Days,
      description: '1-365: an older newest point makes the factor absent.',
    }),
    gate: Type.Optional(GateBody),
  },
  { additionalProperties: false },
);

export const Rule = Type.Object(
  {
    factor: Type.String(),
    metric: Type.String(),
    aggregate: Type.String(),
    window_days: Type.Union([Type.Integer(), Type.Null()]),
    scale: Type.Union([
      Type.Object({ type: Type.Literal('linear'), from: Type.Number(), to: Type.Number() }),
      Type.Object({
        type: Type.Literal('steps'),
        steps: Type.Array(Type.Object({ min: Type.Number(), score: Type.Number() })),
      }),
    ]),
    max_age_days: Type.Union([Type.Integer(), Type.Null()]),
    gate: GateAnswer,
    updated_at: Timestamp,
  },
  { $id: 'FactorRule' },
);
export const FactorParams = Type.Object({ factor: Type.String({ ...FactorName }) });

export const toRule = (r: FactorRule) => ({
  factor: r.factor,
  metric: r.metric,
  aggregate: r.aggregate,
  window_days: r.windowDays,
  scale: r.scale,
  max_age_days: r.maxAgeDays,
  gate: r.gate ? { below: r.gate.below, status: r.gate.status } : null,
  updated_at: iso(r.updatedAt),
});

export const RulePreviewAnswer = previewSchema({
  customers: 'Customers the rule may move: those with a score or a point of its metric.',
  scores: 'Scores this rule would change (or create).',
  moves: 'Customers with a score who would move to another status band.',
  bands: 'Customers per band with this rule.',
});
export const RulesList = Type.Object({ data: Type.Array(Type.Ref('FactorRule')) });
export const RuleDeleted = Type.Object({ factor: Type.String(), deleted: Type.Boolean() });

/** A rule as a request gives it, and its scale. */
export type RuleRequest = Static<typeof RuleBody>;
export type ScaleRequest = Static<typeof ScaleSchema>;
