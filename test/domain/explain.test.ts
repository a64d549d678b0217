// The arithmetic of explanations and overrides (docs/scoring.md, "Why this score", "Overrides"),
// against hand-computed cases, and a property: the contributions add up to the computed score.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { contributionChanges, effectiveWeights, explainFactors } from '../../src/domain/explain.ts';
import { overrideVersion, rescoreAll, scoreFactors, withoutOverride } from '../../src/domain/health.ts';
import { computeScore, DEFAULT_THRESHOLDS, round6 } from '../../src/domain/scoring.ts';

describe('effectiveWeights', () => {
  test('renormalised over the weighted factors present; 0 for a factor without weight', () => {
    const w = effectiveWeights(
      { usage: 0.9, support: 0.2, nps: 1 },
      { usage: 0.5, support: 0.3, billing: 0.2 },
    );
    assert.deepEqual(Object.fromEntries(Object.entries(w).map(([k, v]) => [k, round6(v)])), {
      nps: 0,
      support: 0.375,
      usage: 0.625,
    });
  });
  test('1/n for every factor when no weight covers any (the plain mean)', () => {
    assert.deepEqual(effectiveWeights({ a: 0.2, b: 0.4, c: 1 }, { usage: 1 }), {
      a: 1 / 3,
      b: 1 / 3,
      c: 1 / 3,
    });
    assert.deepEqual(effectiveWeights({ a: 0.2 }, {}), { a: 1 });
  });
  test('a weight of 0 is no weight', () => {
    assert.deepEqual(effectiveWeights({ a: 1, b: 0 }, { a: 0, b: 1 }), { a: 0, b: 1 });
  });
});

describe('explainFactors and contributionChanges', () => {
  test('contributions are weight × score, by factor name, inputs beside derived ones', () => {
    const input = {
      metric: 'logins',
      aggregate: 'sum' as const,
      windowDays: 30,
      value: 12,
      points: 3,
      newestAt: 1,
    };
    assert.deepEqual(
      explainFactors({ usage: 0.6, support: 0.9 }, { usage: 0.5, support: 0.5 }, { usage: input }),
      [
        { factor: 'support', score: 0.9, weight: 0.5, contribution: 0.45, input: null },
        { factor: 'usage', score: 0.6, weight: 0.5, contribution: 0.3, input },
      ],
    );
  });
  test('every moved factor, added from 0 and removed to 0, biggest move first, ties by name', () => {
    const before = explainFactors({ a: 1, b: 0.5, c: 0.2 }, { a: 0.5, b: 0.25, c: 0.25 }, null);
    const after = explainFactors({ a: 1, b: 0.1, d: 0.6 }, { a: 0.5, b: 0.25, d: 0.25 }, null);
    assert.deepEqual(contributionChanges(before, after), [
      { factor: 'd', previous: 0, contribution: 0.15, delta: 0.15 },
      { factor: 'b', previous: 0.125, contribution: 0.025, delta: -0.1 },
      { factor: 'c', previous: 0.05, contribution: 0, delta: -0.05 },
    ]);
    assert.deepEqual(contributionChanges(before, before), []);
  });
  test('the contributions add up to the computed score, within 1e-5, for any factors and weights', () => {
    const names = fc.constantFrom('usage', 'support', 'billing', 'nps', 'seats', 'tickets');
    const unit = fc.double({ min: 0, max: 1, noNaN: true });
    fc.assert(
      fc.property(
        fc.dictionary(names, unit, { minKeys: 1 }),
        fc.dictionary(names, unit),
        (factors, weights) => {
          const explained = explainFactors(factors, effectiveWeights(factors, weights), null);
          const sum = explained.reduce((a, f) => a + f.contribution, 0);
          assert.ok(Math.abs(sum - computeScore(factors, weights)) <= 1e-5, `${sum}`);
        },
      ),
    );
  });
});

describe('overrides in the score arithmetic', () => {
  const settings = { weights: {}, thresholds: DEFAULT_THRESHOLDS };
  const first = scoreFactors('c', null, { usage: 0.9 }, settings, 1000).record;
  const override = { score: 0.2, reason: 'champion left', expiresAt: 5000, setAt: 1000, setBy: 'k…' };
  const pinned = overrideVersion(first, override, settings, 1000);

  test('setting one pins the score and band shown; the computed score stays; events only for what shows', () => {
    assert.equal(pinned.record.score, 0.2);
    assert.equal(pinned.record.status, 'critical');
    assert.equal(pinned.record.computed, 0.9);
    assert.equal(pinned.record.version, 2);
    assert.deepEqual(
      pinned.events.map((e) => e.type),
      ['customer.health_score.updated', 'customer.status.changed'],
    );
  });
  test('new factors move the computed score underneath while it stands', () => {
    const next = scoreFactors('c', pinned.record, { usage: 0.5 }, settings, 2000).record;
    assert.equal(next.score, 0.2);
    assert.equal(next.computed, 0.5);
    assert.equal(next.override, override);
  });
  test('after its end, the next write shows the computed score and drops it', () => {
    const next = scoreFactors('c', pinned.record, { usage: 0.5 }, settings, 5000).record;
    assert.equal(next.score, 0.5);
    assert.equal(next.override, null);
    assert.equal(next.computed, null);
  });
  test('a weights change under an override is a version (computed moved) with no event for the unchanged pinned score', () => {
    const two = scoreFactors('c', null, { usage: 1, support: 0 }, settings, 1000).record;
    const held = overrideVersion(two, override, settings, 1000).record;
    const [update] = rescoreAll(
      [held],
      { weights: { usage: 0.2, support: 0.8 }, thresholds: DEFAULT_THRESHOLDS },
      2000,
    );
    assert.ok(update);
    assert.equal(update.record.score, 0.2);
    assert.equal(update.record.computed, 0.2);
    assert.deepEqual(update.events, []);
    assert.deepEqual(
      rescoreAll(
        [update.record],
        { weights: { usage: 0.2, support: 0.8 }, thresholds: DEFAULT_THRESHOLDS },
        3000,
      ),
      [],
    );
  });
  test('withoutOverride shows the computed score in its band', () => {
    const shown = withoutOverride(pinned.record, { thresholds: DEFAULT_THRESHOLDS });
    assert.equal(shown.score, 0.9);
    assert.equal(shown.status, 'healthy');
    assert.equal(shown.override, null);
  });
});
