// The settings page's factor rules in words and as a curve (web/src/rules.ts): the curve's corners
// lie on the server's own scale function, a linear scale is flat beyond its ends, steps are a
// staircase, and the value axis has round ticks inside the drawn range.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { scaleScore } from '../../src/domain/rules.ts';
import {
  aggregateWords,
  cappedWords,
  curve,
  curveDomain,
  gateWords,
  type Scale,
  scaleWords,
  undrawable,
  valueTicks,
} from '../../web/src/rules.ts';

test('a rule reads in words as the server applies it', () => {
  assert.equal(aggregateWords({ aggregate: 'sum', window_days: null }), 'sum over 30 days');
  assert.equal(aggregateWords({ aggregate: 'last', window_days: null }), 'last value');
  assert.equal(aggregateWords({ aggregate: 'avg', window_days: 1 }), 'average over 1 day');
  assert.equal(scaleWords({ type: 'linear', from: 0, to: 20 }), 'linear: 0 at 0, 1 at 20');
  assert.equal(scaleWords({ type: 'linear', from: 10, to: 0 }), 'linear: 0 at 10, 1 at 0 (lower is better)');
  assert.equal(
    scaleWords({
      type: 'steps',
      steps: [
        { min: 1, score: 0.5 },
        { min: 1500, score: 1 },
      ],
    }),
    'steps: 0 below 1, 0.5 from 1, 1 from 1500',
  );
});

test('a linear ramp is drawn flat at 0 and 1 beyond from and to', () => {
  const scale: Scale = { type: 'linear', from: 0, to: 20 };
  const [lo, hi] = curveDomain(scale);
  assert.deepEqual([lo, hi], [-5, 25]);
  assert.deepEqual(curve(scale, lo, hi), [
    [-5, 0],
    [0, 0],
    [20, 1],
    [25, 1],
  ]);
  assert.equal(undrawable({ type: 'linear', from: 3, to: 3 })?.includes('same value'), true);
  assert.equal(undrawable({ type: 'linear', from: 3, to: Number.NaN })?.includes('Enter'), true);
});

test('steps are drawn as a staircase', () => {
  const scale: Scale = {
    type: 'steps',
    steps: [
      { min: 1, score: 0.5 },
      { min: 10, score: 1 },
    ],
  };
  const [lo, hi] = curveDomain(scale);
  assert.deepEqual(curve(scale, lo, hi), [
    [lo, 0],
    [1, 0],
    [1, 0.5],
    [10, 0.5],
    [10, 1],
    [hi, 1],
  ]);
});

const finite = fc.double({ min: -1e6, max: 1e6, noNaN: true });
const scales: fc.Arbitrary<Scale> = fc.oneof(
  fc
    .tuple(finite, finite)
    .filter(([a, b]) => a !== b)
    .map(([from, to]) => ({ type: 'linear' as const, from, to })),
  fc.uniqueArray(finite, { minLength: 1, maxLength: 20 }).chain((mins) =>
    fc
      .array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: mins.length, maxLength: mins.length })
      .map((scores) => ({
        type: 'steps' as const,
        steps: mins.sort((a, b) => a - b).map((min, i) => ({ min, score: scores[i] ?? 0 })),
      })),
  ),
);

test("every corner of the curve is on the server's scale, left to right, and between corners the curve is the scale", () => {
  fc.assert(
    fc.property(scales, fc.double({ min: 0, max: 1, noNaN: true }), (scale, t) => {
      const [lo, hi] = curveDomain(scale);
      const corners = curve(scale, lo, hi);
      for (const [i, [x, y]] of corners.entries()) {
        const before = corners[i - 1];
        if (before) assert.ok(x >= before[0], 'ascending');
        // A step's rise is a vertical segment: its lower corner is the value just before the step.
        if (!(scale.type === 'steps' && corners[i + 1]?.[0] === x)) assert.equal(y, scaleScore(scale, x));
      }
      // Anywhere in the range, the polyline is the scale (linear between corners; flat on a step).
      const v = lo + t * (hi - lo);
      const right = corners.findIndex(([x]) => x > v);
      if (right > 0 && scale.type === 'linear') {
        const [x0, y0] = corners[right - 1] as [number, number];
        const [x1, y1] = corners[right] as [number, number];
        const drawn = y0 + ((v - x0) / (x1 - x0)) * (y1 - y0);
        assert.ok(Math.abs(drawn - scaleScore(scale, v)) < 1e-5, `${drawn} at ${v}`);
      }
    }),
  );
});

test('value ticks are round, ascending and inside the range', () => {
  assert.deepEqual(valueTicks(-5, 25, 6), [-5, 0, 5, 10, 15, 20, 25]);
  assert.deepEqual(valueTicks(0.05, 0.45, 4), [0.1, 0.2, 0.3, 0.4]);
  fc.assert(
    fc.property(finite, fc.double({ min: 1e-3, max: 1e6, noNaN: true }), (lo, span) => {
      const hi = lo + span;
      const ticks = valueTicks(lo, hi, 5);
      assert.ok(ticks.length >= 1 && ticks.length <= 12, `${ticks.length} ticks`);
      for (const [i, t] of ticks.entries()) {
        assert.ok(t >= lo - span * 1e-9 && t <= hi + span * 1e-9, `${t} in [${lo}, ${hi}]`);
        if (i > 0) assert.ok(t > (ticks[i - 1] as number));
      }
    }),
  );
});

test('a gate reads in words, in the rules table and where it caps a status (docs/scoring.md, "Gates")', () => {
  assert.equal(gateWords(null), 'none');
  assert.equal(gateWords({ below: 0.5, status: 'critical' }), 'below 0.5: at most critical');
  assert.equal(gateWords({ below: 0.25, status: 'at_risk' }), 'below 0.25: at most at risk');
  assert.equal(
    cappedWords('invoice_overdue', { below: 0.5, status: 'critical' }, 1 / 3),
    'Capped at critical by invoice_overdue (0.333, below its gate of 0.5)',
  );
});
