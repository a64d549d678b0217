// A customer's rollup over its account hierarchy (docs/api.md, "Customers", "Rollup"): the schema
// and the answer as the API writes it, from ../domain/rollup.ts.
import { Type } from 'typebox';
import type { Rollup as RollupFields } from '../domain/rollup.ts';
import { STATUSES } from '../domain/scoring.ts';
import { oneOf } from './common.ts';

const count = (status: string) =>
  Type.Integer({ minimum: 0, description: `How many of the scored ones are stored as ${status}.` });

export const Rollup = Type.Object(
  {
    customer_id: Type.String(),
    descendants: Type.Integer({
      minimum: 0,
      description: 'How many customers are below this one, at every level (itself not counted).',
    }),
    arr: Type.Number({
      description: 'The ARR of the customer and its descendants summed (a null ARR counts 0), to the cent.',
    }),
    health_score: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
      description:
        'The ARR-weighted mean of the current scores of the customer and its descendants; the plain mean when none of the scored ones has ARR above 0; null when none is scored. 6 decimal places.',
    }),
    status: Type.Union([oneOf(STATUSES), Type.Null()], {
      description:
        "The band of health_score under the account's thresholds (gates and overrides do not enter it); null when health_score is.",
    }),
    counts: Type.Object(
      { healthy: count('healthy'), at_risk: count('at_risk'), critical: count('critical') },
      { description: 'The scored ones by their stored status (as capped by gates or set by overrides).' },
    ),
  },
  { additionalProperties: false },
);

export const rollupObject = (customerId: string, r: RollupFields) => ({
  customer_id: customerId,
  descendants: r.descendants,
  // Integer cents divided once: the double nearest the decimal, as a customer's arr is.
  arr: r.arrCents / 100,
  health_score: r.healthScore,
  status: r.status,
  counts: { healthy: r.counts.healthy, at_risk: r.counts.at_risk, critical: r.counts.critical },
});
