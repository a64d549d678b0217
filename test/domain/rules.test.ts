import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  AGGREGATES,
  type Aggregate,
  aggregate,
  changesAt,
  DAY_MS,
  deriveFactor,
  deriveFactors,
  emptySummary,
  type FactorRule,
  MAX_STEPS,
  type MetricPoint,
  type Scale,
  scaleRefusal,
  scaleScore,
  summarize,
  windowOf,
} from '../../src/domain/rules.ts';

const NOW = Date.UTC(2025, 0, 31, 12);
const HOUR_MS = 3_600_000;
/** A point `days` days before NOW (negative: after NOW). */
const ago = (days: number, value: number): MetricPoint => ({ at: NOW - days * DAY_MS, value });
const IDENTITY: Scale = { type: 'linear', from: 0, to: 1 };

function rule(overrides: Partial<FactorRule> = {}): FactorRule {
  return {
    factor: 'usage',
    metric: 'logins',
    aggregate: 'sum',
    windowDays: 7,
    scale: IDENTITY,
    maxAgeDays: null,
    updatedAt: NOW - 100 * DAY_MS,
    ...overrides,
  };
}

// A 7-day window (NOW − 7 days, NOW]: 6 at NOW and 10, 4 inside; 100 on the excluded lower
// bound, 1000 far outside, 5000 dated in the future.
const MIXED: MetricPoint[] = [
  ago(20, 1000),
  ago(3, 4),
  ago(0, 6),
  ago(7, 100),
  { at: NOW + 1, value: 5000 },
  ago(1, 10),
];

describe('windowOf', () => {
  test('a given window is used as given, for every aggregate', () => {
    for (const agg of AGGREGATES) assert.equal(windowOf({ aggregate: agg, windowDays: 3 }), 3);
  });

  test('no window given: 30 days for every aggregate but last', () => {
    for (const agg of AGGREGATES.filter((a) => a !== 'last')) {
      assert.equal(windowOf({ aggregate: agg, windowDays: null }), 30);
    }
  });

  test('no window given: last has none (null)', () => {
    assert.equal(windowOf({ aggregate: 'last', windowDays: null }), null);
  });
});

describe('aggregate', () => {
  const expected: [Aggregate, number][] = [
    ['sum', 20],
    ['count', 3],
    ['avg', 20 / 3],
    ['min', 4],
    ['max', 10],
    ['last', 6],
  ];
  for (const [agg, value] of expected) {
    test(`${agg} reads only the points in (now − window, now]: the lower bound, older and future points are left out`, () => {
      assert.equal(aggregate(rule({ aggregate: agg }), MIXED, NOW), value);
    });
  }

  test('a point exactly on now − window is outside the window', () => {
    const points = [ago(7, 5)];
    assert.equal(aggregate(rule({ aggregate: 'count' }), points, NOW), 0);
    assert.equal(aggregate(rule({ aggregate: 'max' }), points, NOW), null);
  });

  test('a point 1 ms after now − window is inside the window', () => {
    const points = [{ at: NOW - 7 * DAY_MS + 1, value: 5 }];
    assert.equal(aggregate(rule({ aggregate: 'count' }), points, NOW), 1);
    assert.equal(aggregate(rule({ aggregate: 'max' }), points, NOW), 5);
  });

  test('a point exactly at now is inside the window', () => {
    const points = [ago(0, 5)];
    assert.equal(aggregate(rule({ aggregate: 'count' }), points, NOW), 1);
    assert.equal(aggregate(rule({ aggregate: 'last' }), points, NOW), 5);
  });

  test('the window defaults to 30 days when not given', () => {
    const points = [ago(29, 1), ago(30, 2), ago(31, 4)];
    assert.equal(aggregate(rule({ windowDays: null }), points, NOW), 1);
  });

  test('last without a window: the newest point as of now, however old', () => {
    const points = [ago(200, 1), ago(90, 2), ago(150, 3)];
    assert.equal(aggregate(rule({ aggregate: 'last', windowDays: null }), points, NOW), 2);
  });

  test('last with a window: only a point inside the window counts', () => {
    const points = [ago(10, 2), ago(3, 8)];
    assert.equal(aggregate(rule({ aggregate: 'last', windowDays: 7 }), points, NOW), 8);
    assert.equal(aggregate(rule({ aggregate: 'last', windowDays: 2 }), points, NOW), null);
  });

  test('last reads one point, the newest in its window: its summary is of that point alone', () => {
    const points = [ago(10, 2), ago(3, 8), ago(5, 4), ago(-1, 6)];
    assert.deepEqual(summarize(rule({ aggregate: 'last', windowDays: 7 }), points, NOW), {
      count: 1,
      sum: 8,
      min: 8,
      max: 8,
      last: 8,
      oldestAt: NOW - 3 * DAY_MS,
      newestAt: NOW - 3 * DAY_MS,
      nextAt: NOW + DAY_MS,
    });
    // None in the window: the summary of no point, with the newest as of now and the next ahead.
    assert.deepEqual(summarize(rule({ aggregate: 'last', windowDays: 2 }), points, NOW), {
      ...emptySummary(),
      newestAt: NOW - 3 * DAY_MS,
      nextAt: NOW + DAY_MS,
    });
  });

  test('last: on equal dates the later point in the array wins', () => {
    const points = [ago(1, 1), ago(1, 2), ago(2, 3)];
    assert.equal(aggregate(rule({ aggregate: 'last', windowDays: null }), points, NOW), 2);
  });

  test('an empty window: sum and count are 0 (there is a point, outside the window)', () => {
    const points = [ago(10, 3)];
    assert.equal(aggregate(rule({ aggregate: 'sum' }), points, NOW), 0);
    assert.equal(aggregate(rule({ aggregate: 'count' }), points, NOW), 0);
  });

  test('an empty window: avg, min, max and last are absent', () => {
    const points = [ago(10, 3)];
    for (const agg of ['avg', 'min', 'max', 'last'] as const) {
      assert.equal(aggregate(rule({ aggregate: agg }), points, NOW), null, agg);
    }
  });

  test('never a point of the metric: absent for every aggregate, with or without a window', () => {
    for (const agg of AGGREGATES) {
      assert.equal(aggregate(rule({ aggregate: agg }), [], NOW), null, agg);
      assert.equal(aggregate(rule({ aggregate: agg, windowDays: null }), [], NOW), null, agg);
    }
  });

  test('points dated in the future are ignored until their time', () => {
    const future = [{ at: NOW + 1, value: 7 }];
    for (const agg of AGGREGATES) assert.equal(aggregate(rule({ aggregate: agg }), future, NOW), null, agg);
    assert.equal(aggregate(rule({ aggregate: 'last', windowDays: null }), [ago(1, 2), ...future], NOW), 2);
    assert.equal(aggregate(rule({ aggregate: 'sum' }), [ago(1, 2), ...future], NOW), 2);
    // at its time it counts
    assert.equal(aggregate(rule({ aggregate: 'sum' }), [ago(1, 2), ...future], NOW + 1), 9);
  });

  test('max_age_days: the newest point exactly max_age_days old still counts', () => {
    const points = [ago(2, 5), ago(4, 1)];
    assert.equal(aggregate(rule({ aggregate: 'sum', maxAgeDays: 2 }), points, NOW), 6);
    assert.equal(aggregate(rule({ aggregate: 'last', windowDays: null, maxAgeDays: 2 }), points, NOW), 5);
  });

  test('max_age_days: 1 ms older than max_age_days the factor is absent, even for sum and count', () => {
    const points = [{ at: NOW - 2 * DAY_MS - 1, value: 5 }, ago(4, 1)];
    for (const agg of AGGREGATES) {
      assert.equal(aggregate(rule({ aggregate: agg, maxAgeDays: 2 }), points, NOW), null, agg);
    }
  });

  test('max_age_days looks at the newest point as of now, not a future one', () => {
    const points = [ago(3, 5), { at: NOW + HOUR_MS, value: 1 }];
    assert.equal(aggregate(rule({ aggregate: 'last', windowDays: null, maxAgeDays: 2 }), points, NOW), null);
  });
});

describe('scaleScore', () => {
  const up: Scale = { type: 'linear', from: 0, to: 10 };
  const down: Scale = { type: 'linear', from: 10, to: 0 };
  const steps: Scale = {
    type: 'steps',
    steps: [
      { min: 0, score: 0.2 },
      { min: 5, score: 0.6 },
      { min: 10, score: 1 },
    ],
  };

  test('linear, from < to: higher is better', () => {
    assert.equal(scaleScore(up, 5), 0.5);
    assert.equal(scaleScore(up, 2.5), 0.25);
    assert.equal(scaleScore(up, 0), 0);
    assert.equal(scaleScore(up, 10), 1);
  });

  test('linear, from > to: lower is better', () => {
    assert.equal(scaleScore(down, 2), 0.8);
    assert.equal(scaleScore(down, 10), 0);
    assert.equal(scaleScore(down, 0), 1);
  });

  test('linear clamps at both ends', () => {
    assert.equal(scaleScore(up, -3), 0);
    assert.equal(scaleScore(up, 12), 1);
    assert.equal(scaleScore(down, 12), 0);
    assert.equal(scaleScore(down, -1), 1);
  });

  test('linear over a span wider than a double holds', () => {
    const wide: Scale = { type: 'linear', from: -1e308, to: 1e308 };
    assert.equal(scaleScore(wide, 0), 0.5);
    assert.equal(scaleScore(wide, 1e308), 1);
  });

  test('steps: below the first step’s min is 0', () => {
    assert.equal(scaleScore(steps, -0.001), 0);
  });

  test('steps: a value equal to a step’s min gets that step’s score', () => {
    assert.equal(scaleScore(steps, 0), 0.2);
    assert.equal(scaleScore(steps, 5), 0.6);
    assert.equal(scaleScore(steps, 10), 1);
  });

  test('steps: a value between two steps gets the lower step’s score', () => {
    assert.equal(scaleScore(steps, 4.999), 0.2);
    assert.equal(scaleScore(steps, 7), 0.6);
  });

  test('steps: a value above the last step gets the last step’s score', () => {
    assert.equal(scaleScore(steps, 1e9), 1);
  });

  test('scores are rounded to 6 decimal places', () => {
    const thirds: Scale = { type: 'linear', from: 0, to: 3 };
    assert.equal(scaleScore(thirds, 1), 0.333333);
    assert.equal(scaleScore(thirds, 2), 0.666667);
    assert.equal(scaleScore({ type: 'steps', steps: [{ min: 0, score: 0.1234567 }] }, 1), 0.123457);
  });

  test('never -0', () => {
    // (0 − 0) / (−1 − 0) is −0
    assert.ok(Object.is(scaleScore({ type: 'linear', from: 0, to: -1 }, 0), 0));
    assert.ok(Object.is(scaleScore({ type: 'steps', steps: [{ min: 0, score: -0 }] }, 1), 0));
  });

  test('property: a linear scale always gives a score in [0, 1]', () => {
    const finite = fc.double({ noNaN: true, noDefaultInfinity: true });
    fc.assert(
      fc.property(finite, finite, finite, (from, to, value) => {
        fc.pre(from !== to);
        const score = scaleScore({ type: 'linear', from, to }, value);
        return score >= 0 && score <= 1 && !Object.is(score, -0);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('deriveFactor', () => {
  test('puts the aggregate on the rule’s scale', () => {
    const r = rule({ aggregate: 'count', scale: { type: 'linear', from: 0, to: 4 } });
    assert.equal(deriveFactor(r, MIXED, NOW), 0.75);
  });

  test('absent when the aggregate is absent', () => {
    assert.equal(deriveFactor(rule({ aggregate: 'avg' }), [ago(10, 3)], NOW), null);
  });

  test('an empty window for sum is 0 on the scale, not absent', () => {
    const r = rule({ aggregate: 'sum', scale: { type: 'linear', from: 10, to: 0 } });
    assert.equal(deriveFactor(r, [ago(10, 3)], NOW), 1);
  });

  test('property: sum equals the naive sum of the values inside (now − window, now]', () => {
    const offset = fc.oneof(
      fc.integer({ min: -45 * DAY_MS, max: 3 * DAY_MS }),
      fc.integer({ min: -45, max: 3 }).map((days) => days * DAY_MS), // whole days: window bounds
    );
    const point = fc.record({ offset, value: fc.double({ min: -1e6, max: 1e6, noNaN: true }) });
    fc.assert(
      fc.property(
        fc.array(point, { maxLength: 40 }),
        fc.option(fc.integer({ min: 1, max: 40 })),
        (raw, win) => {
          const points = raw.map((p) => ({ at: NOW + p.offset, value: p.value }));
          const windowDays = win ?? 30;
          let expected: number | null = null;
          if (points.some((p) => p.at <= NOW)) {
            expected = 0;
            for (const p of points) {
              if (p.at > NOW - windowDays * DAY_MS && p.at <= NOW) expected += p.value;
            }
          }
          assert.equal(aggregate(rule({ aggregate: 'sum', windowDays: win }), points, NOW), expected);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('deriveFactors', () => {
  const rules = [
    rule({
      factor: 'logins_week',
      metric: 'logins',
      aggregate: 'count',
      scale: { type: 'linear', from: 0, to: 4 },
    }),
    rule({
      factor: 'logins_peak',
      metric: 'logins',
      aggregate: 'max',
      scale: { type: 'linear', from: 0, to: 20 },
    }),
    rule({
      factor: 'tickets',
      metric: 'tickets',
      aggregate: 'avg',
      scale: { type: 'linear', from: 5, to: 0 },
    }),
    rule({ factor: 'nps', metric: 'nps', aggregate: 'last', windowDays: null }),
  ];

  test('each rule reads its own metric; two rules on one metric both derive', () => {
    const points = new Map([
      ['logins', MIXED],
      ['tickets', [ago(1, 1), ago(2, 3)]],
      ['nps', [ago(50, 0.3)]],
    ]);
    assert.deepEqual(deriveFactors(rules, points, NOW), {
      logins_week: 0.75,
      logins_peak: 0.5,
      tickets: 0.6,
      nps: 0.3,
    });
  });

  test('absent factors are left out: no points of the metric, or none in the window', () => {
    const points = new Map([
      ['logins', MIXED],
      ['tickets', [ago(10, 1)]],
    ]);
    assert.deepEqual(deriveFactors(rules, points, NOW), { logins_week: 0.75, logins_peak: 0.5 });
  });

  test('no rules, or no points at all: no factors', () => {
    assert.deepEqual(deriveFactors([], new Map([['logins', MIXED]]), NOW), {});
    assert.deepEqual(deriveFactors(rules, new Map(), NOW), {});
  });
});

describe('changesAt', () => {
  test('(a) a point inside the window leaves it at at + window (the earliest such point)', () => {
    const r = rule({ aggregate: 'count', windowDays: 7, scale: { type: 'linear', from: 0, to: 4 } });
    const points = [ago(1, 1), ago(3, 1), ago(10, 1)]; // 10 days ago: already outside
    const t = NOW - 3 * DAY_MS + 7 * DAY_MS;
    assert.equal(changesAt(r, points, NOW), t);
    assert.equal(deriveFactor(r, points, t - 1), 0.5);
    assert.equal(deriveFactor(r, points, t), 0.25);
  });

  test('(a) last with a window changes when its newest point leaves, not its oldest', () => {
    const r = rule({ aggregate: 'last', windowDays: 7 });
    const points = [ago(6, 0.2), ago(2, 0.7)];
    const t = NOW - 2 * DAY_MS + 7 * DAY_MS;
    assert.equal(changesAt(r, points, NOW), t);
    assert.equal(deriveFactor(r, points, t - 1), 0.7);
    assert.equal(deriveFactor(r, points, t), null);
  });

  test('(a) a point exactly at now leaves at now + window', () => {
    const r = rule({ aggregate: 'sum', windowDays: 2 });
    assert.equal(changesAt(r, [ago(0, 1)], NOW), NOW + 2 * DAY_MS);
  });

  test('(b) the newest point passes max_age_days at at + max_age_days + 1 ms', () => {
    const r = rule({ aggregate: 'last', windowDays: null, maxAgeDays: 2 });
    const points = [ago(1, 0.4), ago(5, 0.9)];
    const t = NOW - DAY_MS + 2 * DAY_MS + 1;
    assert.equal(changesAt(r, points, NOW), t);
    assert.equal(deriveFactor(r, points, t - 1), 0.4);
    assert.equal(deriveFactor(r, points, t), null);
  });

  test('(b) once the newest point is too old, max age no longer gives an instant', () => {
    const r = rule({ aggregate: 'last', windowDays: null, maxAgeDays: 2 });
    assert.equal(changesAt(r, [ago(3, 0.4)], NOW), null);
  });

  test('(c) a point dated in the future comes due at its at', () => {
    const r = rule({ aggregate: 'last', windowDays: null });
    const points = [
      ago(1, 0.4),
      { at: NOW + 5 * HOUR_MS, value: 0.9 },
      { at: NOW + 9 * HOUR_MS, value: 0.1 },
    ];
    assert.equal(changesAt(r, points, NOW), NOW + 5 * HOUR_MS);
    assert.equal(deriveFactor(r, points, NOW + 5 * HOUR_MS - 1), 0.4);
    assert.equal(deriveFactor(r, points, NOW + 5 * HOUR_MS), 0.9);
  });

  test('the smallest of (a), (b) and (c)', () => {
    const points = [ago(6, 1), { at: NOW + 2 * DAY_MS, value: 1 }];
    // (a) NOW + 1 day, (b) NOW − 6 days + 10 days + 1 ms, (c) NOW + 2 days
    assert.equal(changesAt(rule({ windowDays: 7, maxAgeDays: 10 }), points, NOW), NOW + DAY_MS);
    // (a) NOW + 4 days, (b) NOW − 6 days + 7 days + 1 ms, (c) NOW + 2 days
    assert.equal(changesAt(rule({ windowDays: 10, maxAgeDays: 7 }), points, NOW), NOW + DAY_MS + 1);
    // (a) NOW + 4 days, (b) NOW + 4 days + 1 ms, (c) NOW + 2 days
    assert.equal(changesAt(rule({ windowDays: 10, maxAgeDays: 10 }), points, NOW), NOW + 2 * DAY_MS);
  });

  test('null when nothing can change: last without window, without max age, no future points', () => {
    const r = rule({ aggregate: 'last', windowDays: null, maxAgeDays: null });
    assert.equal(changesAt(r, [ago(1, 0.4), ago(300, 0.9)], NOW), null);
    assert.equal(changesAt(r, [], NOW), null);
  });

  test('null when every point is already outside the window and there is no max age', () => {
    assert.equal(changesAt(rule({ aggregate: 'sum', windowDays: 7 }), [ago(8, 1), ago(7, 1)], NOW), null);
  });

  test('property: deriveFactor does not change between now and the instant changesAt names', () => {
    const offset = fc.oneof(
      fc.integer({ min: -20 * DAY_MS, max: 5 * DAY_MS }),
      fc.integer({ min: -20, max: 5 }).map((days) => days * DAY_MS),
    );
    const point = fc.record({ offset, value: fc.integer({ min: -100, max: 100 }) });
    const ruleArb = fc.record({
      aggregate: fc.constantFrom(...AGGREGATES),
      windowDays: fc.option(fc.integer({ min: 1, max: 10 })),
      maxAgeDays: fc.option(fc.integer({ min: 0, max: 10 })),
    });
    fc.assert(
      fc.property(
        ruleArb,
        fc.array(point, { maxLength: 12 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (r, raw, f) => {
          const points = raw.map((p) => ({ at: NOW + p.offset, value: p.value }));
          const full = rule({ ...r, scale: { type: 'linear', from: -100, to: 100 } });
          const at = changesAt(full, points, NOW);
          const before = deriveFactor(full, points, NOW);
          const horizon = at ?? NOW + 60 * DAY_MS;
          assert.ok(horizon > NOW);
          const probes = [horizon - 1, NOW + Math.floor((horizon - 1 - NOW) * f)];
          for (const probe of probes) assert.equal(deriveFactor(full, points, probe), before);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('scaleRefusal', () => {
  test('accepts a good linear scale and good steps', () => {
    assert.equal(scaleRefusal({ type: 'linear', from: 10, to: 0 }), null);
    assert.equal(
      scaleRefusal({
        type: 'steps',
        steps: [
          { min: -5, score: 0 },
          { min: 0, score: 1 },
        ],
      }),
      null,
    );
    const max = Array.from({ length: MAX_STEPS }, (_, i) => ({ min: i, score: i / MAX_STEPS }));
    assert.equal(scaleRefusal({ type: 'steps', steps: max }), null);
  });

  test('linear with from === to: scale.to', () => {
    const refusal = scaleRefusal({ type: 'linear', from: 3, to: 3 });
    assert.equal(refusal?.param, 'scale.to');
    assert.match(refusal?.message ?? '', /from and to must differ/);
  });

  test('linear with a non-finite from or to: that field', () => {
    assert.equal(scaleRefusal({ type: 'linear', from: Number.NaN, to: 1 })?.param, 'scale.from');
    assert.equal(scaleRefusal({ type: 'linear', from: 0, to: Number.POSITIVE_INFINITY })?.param, 'scale.to');
    assert.equal(
      scaleRefusal({ type: 'linear', from: Number.NEGATIVE_INFINITY, to: 1 })?.param,
      'scale.from',
    );
  });

  test('steps empty or more than MAX_STEPS: scale.steps', () => {
    assert.equal(scaleRefusal({ type: 'steps', steps: [] })?.param, 'scale.steps');
    const tooMany = Array.from({ length: MAX_STEPS + 1 }, (_, i) => ({ min: i, score: 0.5 }));
    assert.equal(scaleRefusal({ type: 'steps', steps: tooMany })?.param, 'scale.steps');
  });

  test('a step’s min not strictly greater than the one before: scale.steps.I.min', () => {
    const equal = [
      { min: 0, score: 0 },
      { min: 0, score: 1 },
    ];
    assert.equal(scaleRefusal({ type: 'steps', steps: equal })?.param, 'scale.steps.1.min');
    const down = [
      { min: 0, score: 0 },
      { min: 5, score: 0.5 },
      { min: 4, score: 1 },
    ];
    assert.equal(scaleRefusal({ type: 'steps', steps: down })?.param, 'scale.steps.2.min');
  });

  test('a step’s score outside [0, 1] or not finite: scale.steps.I.score', () => {
    assert.equal(
      scaleRefusal({ type: 'steps', steps: [{ min: 0, score: 1.5 }] })?.param,
      'scale.steps.0.score',
    );
    const negative = [
      { min: 0, score: 0 },
      { min: 1, score: -0.1 },
    ];
    assert.equal(scaleRefusal({ type: 'steps', steps: negative })?.param, 'scale.steps.1.score');
    assert.equal(
      scaleRefusal({ type: 'steps', steps: [{ min: 0, score: Number.NaN }] })?.param,
      'scale.steps.0.score',
    );
    assert.equal(
      scaleRefusal({ type: 'steps', steps: [{ min: 0, score: Number.POSITIVE_INFINITY }] })?.param,
      'scale.steps.0.score',
    );
  });

  test('a step’s non-finite min: scale.steps.I.min', () => {
    assert.equal(
      scaleRefusal({ type: 'steps', steps: [{ min: Number.NaN, score: 0 }] })?.param,
      'scale.steps.0.min',
    );
    const infinite = [
      { min: 0, score: 0 },
      { min: Number.POSITIVE_INFINITY, score: 1 },
    ];
    assert.equal(scaleRefusal({ type: 'steps', steps: infinite })?.param, 'scale.steps.1.min');
  });
});
