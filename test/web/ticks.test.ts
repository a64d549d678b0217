// The dashboard histogram's count axis (web/src/ticks.ts, docs/dashboard.md): ticks start at 0,
// rise by one "nice" whole step (1, 2 or 5 times a power of ten), end at the first multiple of
// the step that covers the maximum, and are as many as the step allows: at most n intervals,
// with the smallest nice step that keeps to that. Their labels are compact (web/src/format.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { axisCount } from '../../web/src/format.ts';
import { ticks } from '../../web/src/ticks.ts';

/** 1, 2 or 5 times a power of ten (10^0 and up). */
function isNice(step: number): boolean {
  if (!Number.isInteger(step) || step < 1) return false;
  let m = step;
  while (m % 10 === 0) m /= 10;
  return m === 1 || m === 2 || m === 5;
}

/** The nice number just below a nice step (none below 1). */
function niceBelow(step: number): number | undefined {
  if (step === 1) return undefined;
  let m = step;
  let pow = 1;
  while (m % 10 === 0) {
    m /= 10;
    pow *= 10;
  }
  return m === 1 ? 5 * (pow / 10) : m === 2 ? pow : 2 * pow;
}

function assertTicks(max: number, n: number): void {
  const out = ticks(max, n);
  const where = `ticks(${max}, ${n}) = [${out.join(', ')}]`;
  assert.equal(out[0], 0, where);
  assert.ok(out.length >= 2, `${where}: an axis has a top above 0`);
  const step = out[1] as number;
  assert.ok(isNice(step), `${where}: step ${step} is not nice`);
  assert.deepEqual(
    out,
    out.map((_, i) => i * step),
    `${where}: distinct, ascending, evenly stepped`,
  );
  const top = out.at(-1) as number;
  assert.ok(top >= max, `${where}: covers the maximum`);
  if (max > 0) assert.ok((out.at(-2) as number) < max, `${where}: ends at the first tick that covers it`);
  assert.ok(out.length - 1 <= n, `${where}: at most ${n} intervals`);
  const smaller = niceBelow(step);
  if (smaller !== undefined) {
    assert.ok(Math.ceil(max / smaller) > n, `${where}: ${smaller} would do with at most ${n} intervals`);
  }
}

test('small maxima give distinct whole ticks (no [0, 1, 1] for 1)', () => {
  assert.deepEqual(ticks(0), [0, 1]);
  assert.deepEqual(ticks(1), [0, 1]);
  assert.deepEqual(ticks(2), [0, 1, 2]);
  assert.deepEqual(ticks(3), [0, 1, 2, 3]);
  assert.deepEqual(ticks(4), [0, 1, 2, 3, 4]);
  assert.deepEqual(ticks(5), [0, 2, 4, 6]);
  assert.deepEqual(ticks(7), [0, 2, 4, 6, 8]);
  assert.deepEqual(ticks(9), [0, 5, 10]);
});

test('larger maxima step by 1, 2 or 5 times a power of ten', () => {
  assert.deepEqual(ticks(10), [0, 5, 10]);
  assert.deepEqual(ticks(37), [0, 10, 20, 30, 40]);
  assert.deepEqual(ticks(100), [0, 50, 100]);
  assert.deepEqual(ticks(101), [0, 50, 100, 150]);
  assert.deepEqual(ticks(1234), [0, 500, 1000, 1500]);
  assert.deepEqual(ticks(1_000_000), [0, 500_000, 1_000_000]);
  assert.deepEqual(
    ticks(1_000_000, 10),
    [0, 100_000, 200_000, 300_000, 400_000, 500_000, 600_000, 700_000, 800_000, 900_000, 1_000_000],
  );
  assert.deepEqual(ticks(1, 1), [0, 1]);
  assert.deepEqual(ticks(99, 1), [0, 100]);
  assert.deepEqual(ticks(2.5), [0, 1, 2, 3]);
});

test('for any maximum in [0, 1e6] and n in 1..12: distinct, ascending, from 0, covering, nice, tight', () => {
  const n = fc.integer({ min: 1, max: 12 });
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 1_000_000 }), n, (max, count) => assertTicks(max, count)),
    { numRuns: 5000 },
  );
  fc.assert(
    fc.property(fc.double({ min: 0, max: 1_000_000, noNaN: true }), n, (max, count) =>
      assertTicks(max, count),
    ),
    { numRuns: 5000 },
  );
  // Around every power of ten and its nice multiples, where Math.log10 rounds.
  for (let pow = 1; pow <= 1_000_000; pow *= 10) {
    for (const m of [1, 2, 5]) {
      for (const max of [m * pow - 1, m * pow, m * pow + 1, m * pow * (1 - 1e-15), m * pow * (1 + 1e-15)]) {
        for (let count = 1; count <= 12; count++) assertTicks(Math.max(0, max), count);
      }
    }
  }
});

test('axis labels are compact: every tick up to ten million fits in 5 characters (100K, not 100,000)', () => {
  assert.equal(axisCount(100_000), '100K');
  assert.equal(axisCount(950), '950');
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 10_000_000 }), (max) => {
      for (const t of ticks(max)) assert.ok(axisCount(t).length <= 5, `${t} → ${axisCount(t)}`);
    }),
  );
});
