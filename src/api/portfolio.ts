// The portfolio over time and by segment (docs/api.md, "Segments, trends and movers"): the
// schemas of the summary, the distribution, the trend and the movers.
import { Type } from 'typebox';
import { STATUSES } from '../domain/scoring.ts';
import { bookParams, segmentParams } from './common.ts';
import { MAX_GROUPS } from './limits.ts';

const Counts = Type.Object({ healthy: Type.Integer(), at_risk: Type.Integer(), critical: Type.Integer() });
const Average = Type.Union([Type.Number(), Type.Null()], {
  description: 'The mean health score to 6 places; null when there is none.',
});

export const SummaryQuery = Type.Object(
  {
    group_by: Type.Optional(
      Type.String({
        pattern: '^(metadata\\.[^\\u0000]{1,64}|owner)$',
        description:
          'metadata.KEY: the figures per value of that metadata key too, worst average first; owner: per owner.',
      }),
    ),
    ...bookParams,
  },
  { additionalProperties: false, ...segmentParams },
);
/** ARR sums (docs/api.md, "Segments, trends and movers"): exact to the cent, a customer without ARR counting 0. */
const ArrSums = Type.Object({
  total: Type.Number(),
  healthy: Type.Number(),
  at_risk: Type.Number(),
  critical: Type.Number(),
});
const Group = Type.Object({
  value: Type.Union(
    [
      Type.String(),
      Type.Number(),
      Type.Boolean(),
      Type.Null(),
      // Open: the serializer drops properties a schema does not list, and a closed {} emptied every object.
      Type.Object({}, { additionalProperties: true }),
      Type.Array(Type.Unknown()),
    ],
    { description: 'The metadata value as stored (the owner); null for customers without the key (owner).' },
  ),
  total: Type.Integer(),
  counts: Counts,
  average: Type.Number(),
  arr: ArrSums,
});
export const SummaryAnswer = Type.Object({
  total: Type.Integer(),
  counts: Counts,
  average: Average,
  arr: ArrSums,
  arr_at_risk: Type.Number({ description: 'arr.at_risk + arr.critical.' }),
  groups: Type.Optional(Type.Array(Group)),
  groups_truncated: Type.Optional(
    Type.Boolean({
      description: `True when the key has more than ${MAX_GROUPS} values: the worst are listed.`,
    }),
  ),
});

export const DistributionQuery = Type.Object(
  {
    bins: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: 20,
        description: '1-100 equal bins of [0, 1]: 20 (the default) are 0.05 wide.',
      }),
    ),
    ...bookParams,
  },
  { additionalProperties: false, ...segmentParams },
);
export const DistributionAnswer = Type.Object({
  total: Type.Integer({
    description: 'Every current score of the account (or the segment): the bins add up to it.',
  }),
  bins: Type.Array(
    Type.Object({
      from: Type.Number({ description: 'The bin holds the scores from `from` (included)…' }),
      to: Type.Number({ description: '…up to `to` (excluded; the last bin holds 1 too).' }),
      total: Type.Integer(),
      counts: Counts,
      average: Average,
    }),
    { description: 'Lowest first, `bins` of them, empty bins included.' },
  ),
});

export const TrendQuery = Type.Object(
  {
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, default: 30, description: '1-365.' })),
    ...bookParams,
  },
  { additionalProperties: false, ...segmentParams },
);
export const TrendAnswer = Type.Object({
  data: Type.Array(
    Type.Object({
      date: Type.String({
        description: 'YYYY-MM-DD (UTC): the portfolio as it stood at the end of this day.',
      }),
      total: Type.Integer(),
      counts: Counts,
      average: Average,
    }),
  ),
});

export const MoversQuery = Type.Object(
  {
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 7, description: '1-90.' })),
    direction: Type.Optional(Type.Enum(['down', 'up'], { default: 'down' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: '1-100.' })),
    ...bookParams,
  },
  { additionalProperties: false, ...segmentParams },
);
export const MoversAnswer = Type.Object({
  data: Type.Array(
    Type.Object({
      customer_id: Type.String(),
      name: Type.String(),
      health_score: Type.Number(),
      status: Type.Enum(STATUSES),
      baseline_score: Type.Number({
        description: 'The score as it stood `days` ago (or its first score since).',
      }),
      change: Type.Number({
        description:
          "What the customer's own versions of the last `days` days moved its score by, to 6 places: versions of a settings change or a backfill move no one, so it need not be health_score − baseline_score.",
      }),
    }),
  ),
});
