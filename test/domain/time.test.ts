import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { iso, nextTimestamp } from '../../src/domain/time.ts';

test('iso formats exactly as Date#toISOString across the whole range', () => {
  fc.assert(
    fc.property(fc.integer({ min: -62198755200000, max: 253402300799999 }), (ms) => {
      assert.equal(iso(ms), new Date(ms).toISOString());
    }),
    { numRuns: 5000 },
  );
  for (const ms of [0, 1, 999, 1000, 86_399_999, 86_400_000, Date.UTC(2026, 10, 21, 23, 59, 59, 999)]) {
    assert.equal(iso(ms), new Date(ms).toISOString());
  }
});

test('nextTimestamp is strictly later than the previous value', () => {
  assert.equal(nextTimestamp(10, 5), 10);
  assert.equal(nextTimestamp(5, 5), 6);
  assert.equal(nextTimestamp(3, 5), 6);
});
