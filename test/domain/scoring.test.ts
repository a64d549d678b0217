import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  computeScore,
  DEFAULT_THRESHOLDS,
  mergeFactors,
  round6,
  statusFor,
  thresholdsValid,
  weightsSumValid,
} from '../../src/domain/scoring.ts';

describe('computeScore', () => {
  test('plain mean when no weights are configured', () => {
    assert.equal(computeScore({ usage: 0.8, support: 0.6, billing: 1 }, {}), 0.8);
  });

  test('weighted mean when weights cover every factor', () => {
    assert.equal(
      computeScore({ usage: 0.8, support: 0.6, billing: 1 }, { usage: 0.5, support: 0.3, billing: 0.2 }),
      0.78,
    );
  });

  test('weights are renormalized over the factors present', () => {
    // only usage (0.5) and support (0.3) present: (0.5*0.8 + 0.3*0.6) / 0.8
    assert.equal(
      computeScore({ usage: 0.8, support: 0.6 }, { usage: 0.5, support: 0.3, billing: 0.2 }),
      0.725,
    );
  });

  test('factors without a weight are left out when some factor has one', () => {
    assert.equal(computeScore({ usage: 0.9, nps: 0.1 }, { usage: 0.6, billing: 0.4 }), 0.9);
  });

  test('a zero weight does not count as covering a factor', () => {
    assert.equal(computeScore({ usage: 0.2, support: 0.6 }, { usage: 0, support: 1 }), 0.6);
    // no positive weight covers any factor: plain mean
    assert.equal(computeScore({ usage: 0.2, nps: 0.6 }, { usage: 0, billing: 1 }), 0.4);
  });

  test('the only weighted factor counts whole, however small its weight (5e-324 does not underflow to 0)', () => {
    assert.equal(computeScore({ usage: 0.0000105 }, { usage: 5e-324, support: 1 }), 0.000011);
    assert.equal(computeScore({ usage: 0.4, support: 0.8 }, { usage: 5e-324, support: 5e-324 }), 0.6);
  });

  test('plain mean when no weight names a supplied factor', () => {
    assert.equal(computeScore({ a: 0.1, b: 0.2 }, { usage: 1 }), 0.15);
  });

  test('rounds to 6 decimal places', () => {
    assert.equal(computeScore({ a: 1, b: 0, c: 0 }, {}), 0.333333);
    assert.equal(computeScore({ a: 1, b: 1, c: 0 }, {}), 0.666667);
  });

  test('stays within [0, 1] at the edges', () => {
    assert.equal(computeScore({ a: 0 }, {}), 0);
    assert.equal(computeScore({ a: 1, b: 1, c: 1 }, { a: 0.1, b: 0.2, c: 0.7 }), 1);
    assert.ok(!Object.is(computeScore({ a: -0 }, {}), -0), 'never -0');
  });

  test('does not depend on the order factors were given in', () => {
    const w = { a: 0.1, b: 0.2, c: 0.3, d: 0.4 };
    assert.equal(
      computeScore({ a: 0.11, b: 0.37, c: 0.93, d: 0.21 }, w),
      computeScore({ d: 0.21, c: 0.93, b: 0.37, a: 0.11 }, w),
    );
  });

  test('refuses an empty factor set', () => {
    assert.throws(() => computeScore({}, {}), RangeError);
  });
});

describe('statusFor', () => {
  test('bands at the default thresholds, lower bounds inclusive', () => {
    assert.equal(statusFor(1, DEFAULT_THRESHOLDS), 'healthy');
    assert.equal(statusFor(0.7, DEFAULT_THRESHOLDS), 'healthy');
    assert.equal(statusFor(0.699999, DEFAULT_THRESHOLDS), 'at_risk');
    assert.equal(statusFor(0.4, DEFAULT_THRESHOLDS), 'at_risk');
    assert.equal(statusFor(0.399999, DEFAULT_THRESHOLDS), 'critical');
    assert.equal(statusFor(0, DEFAULT_THRESHOLDS), 'critical');
  });

  test('custom thresholds', () => {
    assert.equal(statusFor(0.85, { healthy: 0.9, at_risk: 0.8 }), 'at_risk');
    assert.equal(statusFor(1, { healthy: 1, at_risk: 0.5 }), 'healthy');
  });
});

describe('weights and thresholds rules', () => {
  test('weights must sum to 1 within 1e-6', () => {
    assert.equal(weightsSumValid({ a: 0.5, b: 0.5 }), true);
    assert.equal(weightsSumValid({ a: 0.1, b: 0.2, c: 0.7 }), true); // 0.1 + 0.2 is not exactly 0.3
    assert.equal(weightsSumValid({ a: 0.5, b: 0.5000009 }), true);
    assert.equal(weightsSumValid({ a: 0.5, b: 0.500002 }), false);
    assert.equal(weightsSumValid({ a: 0.9 }), false);
    assert.equal(weightsSumValid({}), false);
  });

  test('thresholds need 0 < at_risk < healthy <= 1', () => {
    assert.equal(thresholdsValid({ healthy: 0.7, at_risk: 0.4 }), true);
    assert.equal(thresholdsValid({ healthy: 1, at_risk: 0.99 }), true);
    assert.equal(thresholdsValid({ healthy: 0.5, at_risk: 0.5 }), false);
    assert.equal(thresholdsValid({ healthy: 0.4, at_risk: 0.7 }), false);
    assert.equal(thresholdsValid({ healthy: 0.7, at_risk: 0 }), false);
    assert.equal(thresholdsValid({ healthy: 1.1, at_risk: 0.4 }), false);
  });
});

describe('mergeFactors', () => {
  test('sets supplied factors, removes nulls, keeps the rest', () => {
    assert.deepEqual(mergeFactors({ usage: 0.5, support: 0.2 }, { support: null, billing: 1 }), {
      usage: 0.5,
      billing: 1,
    });
  });

  test('round6 is half-up on exact decimals', () => {
    assert.equal(round6(0.1234565), 0.123457);
    assert.equal(round6(0.5), 0.5);
  });
});
