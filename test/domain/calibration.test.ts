// The calibration arithmetic (docs/scoring.md, "Does the score predict churn?") against
// hand-computed cases: ties, one class only, a perfectly separating factor, fewer than 20
// outcomes, and the suggested weights never worse than today's over the same outcomes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { auc, aucWith, calibrate, fitWeights, type Judged } from '../../src/domain/calibration.ts';
import { DEFAULT_THRESHOLDS } from '../../src/domain/scoring.ts';

const C = true; // churned
const R = false; // retained

describe('auc', () => {
  test('every retained above every churned: 1; the reverse: 0', () => {
    assert.equal(auc([0.1, 0.2, 0.8, 0.9], [C, C, R, R]), 1);
    assert.equal(auc([0.8, 0.9, 0.1, 0.2], [C, C, R, R]), 0);
  });
  test('ties count one half', () => {
    // Pairs (retained, churned): (0.5, 0.5) ½, (0.5, 0.2) 1, (0.9, 0.5) 1, (0.9, 0.2) 1 → 3.5 / 4.
    assert.equal(auc([0.5, 0.2, 0.5, 0.9], [C, C, R, R]), 0.875);
    assert.equal(auc([0.5, 0.5, 0.5], [C, R, R]), 0.5);
  });
  test('by hand: 2 churned, 3 retained', () => {
    // churned 0.3, 0.6; retained 0.2, 0.6, 0.9 → pairs: 0.2 beats none (0), 0.6 beats 0.3 and ties 0.6 (1.5),
    // 0.9 beats both (2) → 3.5 / 6.
    assert.equal(auc([0.3, 0.6, 0.2, 0.6, 0.9], [C, C, R, R, R]), 0.583333);
  });
  test('one class only: null', () => {
    assert.equal(auc([0.1, 0.2], [C, C]), null);
    assert.equal(auc([0.1, 0.2], [R, R]), null);
    assert.equal(auc([], []), null);
  });
  test('equals the count over all pairs, for any scores', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(0, 0.25, 0.5, 0.75, 1), fc.boolean()), { maxLength: 60 }),
        (rows) => {
          const churned = rows.filter(([, c]) => c).map(([s]) => s);
          const retained = rows.filter(([, c]) => !c).map(([s]) => s);
          let pairs = 0;
          for (const r of retained) for (const c of churned) pairs += r > c ? 1 : r === c ? 0.5 : 0;
          const expected =
            churned.length && retained.length
              ? Math.round((pairs / (churned.length * retained.length)) * 1e6) / 1e6
              : null;
          assert.equal(
            auc(
              rows.map(([s]) => s),
              rows.map(([, c]) => c),
            ),
            expected,
          );
        },
      ),
    );
  });
});

/** n churned and n retained outcomes whose `signal` factor separates them and `noise` does not. */
function separable(n: number): Judged[] {
  const out: Judged[] = [];
  for (let i = 0; i < n; i++) {
    const noise = ((i * 37) % 100) / 100;
    out.push({ churned: true, score: 0.5, factors: { signal: 0.1 + (i % 3) / 10, noise } });
    out.push({ churned: false, score: 0.5, factors: { signal: 0.7 + (i % 3) / 10, noise: 1 - noise } });
  }
  return out;
}

describe('calibrate', () => {
  const settings = { weights: { signal: 0.2, noise: 0.8 }, thresholds: DEFAULT_THRESHOLDS };

  test('bands by today’s thresholds, churn rate per band, null for an empty band', () => {
    const judged: Judged[] = [
      { churned: true, score: 0.2, factors: { a: 0.2 } },
      { churned: true, score: 0.3, factors: { a: 0.3 } },
      { churned: false, score: 0.35, factors: { a: 0.35 } },
      { churned: false, score: 0.9, factors: { a: 0.9 } },
    ];
    const report = calibrate(judged, { weights: {}, thresholds: DEFAULT_THRESHOLDS });
    assert.deepEqual(report.bands, [
      { status: 'healthy', outcomes: 1, churned: 0, churnRate: 0 },
      { status: 'at_risk', outcomes: 0, churned: 0, churnRate: null },
      { status: 'critical', outcomes: 3, churned: 2, churnRate: 0.666667 },
    ]);
    assert.equal(report.auc, 1);
    assert.equal(report.churned, 2);
    assert.equal(report.retained, 2);
  });

  test('fewer than 20 outcomes of either kind: no suggestion', () => {
    const report = calibrate(separable(19), settings);
    assert.equal(report.suggestedWeights, null);
    assert.equal(report.suggestedAuc, null);
  });

  test('a perfectly separating factor: AUC 1, ranked first, and the suggestion leans on it', () => {
    const judged = separable(40);
    const report = calibrate(judged, settings);
    assert.deepEqual(report.factors[0], { factor: 'signal', outcomes: 80, auc: 1 });
    assert.equal(report.factors[1]?.factor, 'noise');
    assert.ok(report.suggestedWeights);
    const sum = Object.values(report.suggestedWeights).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 1e-9, `${sum}`);
    assert.ok((report.suggestedWeights.signal ?? 0) > (report.suggestedWeights.noise ?? 0));
    assert.equal(report.suggestedAuc, 1);
    assert.ok((aucWith(judged, settings.weights) ?? 0) < 1, 'today’s weights do worse');
  });

  test('never worse than today’s weights over the same outcomes', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            churned: fc.boolean(),
            a: fc.double({ min: 0, max: 1, noNaN: true }),
            b: fc.double({ min: 0, max: 1, noNaN: true }),
          }),
          { minLength: 50, maxLength: 120 },
        ),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (rows, wa) => {
          const judged = rows.map((r) => ({ churned: r.churned, score: 0.5, factors: { a: r.a, b: r.b } }));
          const weights = { a: wa, b: 1 - wa };
          const report = calibrate(judged, { weights, thresholds: DEFAULT_THRESHOLDS });
          if (report.suggestedWeights === null) return;
          assert.ok((report.suggestedAuc ?? 0) >= (aucWith(judged, weights) ?? 0));
        },
      ),
      { numRuns: 30 },
    );
  });

  test('fitWeights: non-negative, summing to 1; null when no factor carries signal toward retention', () => {
    const w = fitWeights(separable(30), ['noise', 'signal']);
    assert.ok(w);
    for (const v of Object.values(w)) assert.ok(v >= 0);
    assert.ok(Math.abs(Object.values(w).reduce((a, b) => a + b, 0) - 1) < 1e-9);
    // A factor that is higher for the churned: its coefficient stays at 0, and nothing else is there.
    const backwards = separable(30).map((j) => ({
      ...j,
      factors: { signal: 1 - (j.factors.signal as number) },
    }));
    assert.equal(fitWeights(backwards, ['signal']), null);
  });
});
