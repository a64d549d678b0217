// Settings (docs/api.md, "Settings"): the schemas of the weights, the thresholds, the drop alert
// rule and the previews of a change.
import { Type } from 'typebox';
import type { Weights } from '../domain/scoring.ts';
import { Timestamp } from './common.ts';
import { FACTOR_NAME_PATTERN, MAX_FACTORS } from './limits.ts';

export const WeightsSchema = Type.Unsafe<Weights>({
  type: 'object',
  minProperties: 1,
  maxProperties: MAX_FACTORS,
  propertyNames: { pattern: FACTOR_NAME_PATTERN, description: 'names as for factors' },
  additionalProperties: { type: 'number', minimum: 0, maximum: 1 },
  description: 'Factor name to weight in [0, 1]; the weights sum to 1.0 (within 1e-6).',
});
export const WeightsBody = Type.Object({ weights: WeightsSchema }, { additionalProperties: false });
export const WeightsAnswer = Type.Object({
  weights: Type.Record(Type.String(), Type.Number()),
  updated_at: Type.Union([Timestamp, Type.Null()]),
});

const Bound = Type.Number({ exclusiveMinimum: 0, maximum: 1 });
export const ThresholdsBody = Type.Object(
  { healthy: Type.Optional(Bound), at_risk: Type.Optional(Bound) },
  { additionalProperties: false, minProperties: 1 },
);
export const ThresholdsAnswer = Type.Object({
  healthy: Type.Number({ description: 'Scores at or above are healthy.' }),
  at_risk: Type.Number({
    description: 'Scores at or above (and below healthy) are at_risk; below are critical.',
  }),
  updated_at: Type.Union([Timestamp, Type.Null()]),
});

/** A preview's answer schema (weights, rules), each count described in the change's own words. */
export const previewSchema = (d: { customers: string; scores: string; bands: string; moves: string }) =>
  Type.Object({
    customers: Type.Integer({ description: d.customers }),
    scores_changed: Type.Integer({ description: d.scores }),
    band_changes: Type.Integer({ description: d.moves }),
    bands: Type.Object(
      { healthy: Type.Integer(), at_risk: Type.Integer(), critical: Type.Integer() },
      { description: d.bands },
    ),
  });

export const PreviewAnswer = previewSchema({
  customers: 'Customers with a health score.',
  scores: 'Scores these weights would change.',
  moves: 'Customers who would move to another status band.',
  bands: 'Customers per band under these weights.',
});

/** What the API writes of a preview (the writes' Preview has it). */
export interface PreviewFields {
  customers: number;
  scoresChanged: number;
  bandChanges: number;
  bands: { healthy: number; at_risk: number; critical: number };
}

/** A preview as the API answers it. */
export const previewAnswer = (p: PreviewFields) => ({
  customers: p.customers,
  scores_changed: p.scoresChanged,
  band_changes: p.bandChanges,
  bands: p.bands,
});

export const AlertsBody = Type.Object(
  {
    drop: Type.Union([
      Type.Object(
        {
          delta: Type.Number({
            exclusiveMinimum: 0,
            maximum: 1,
            description: 'How far below its peak a score must fall, in (0, 1].',
          }),
          days: Type.Integer({
            minimum: 1,
            maximum: 90,
            description: 'The window the peak is taken over, and the quiet time after an alert: 1-90 days.',
          }),
        },
        { additionalProperties: false },
      ),
      Type.Null({ description: 'No drop alerts.' }),
    ]),
  },
  { additionalProperties: false },
);
export const AlertsAnswer = Type.Object({
  drop: Type.Union([Type.Object({ delta: Type.Number(), days: Type.Integer() }), Type.Null()]),
  updated_at: Type.Union([Timestamp, Type.Null()]),
});
