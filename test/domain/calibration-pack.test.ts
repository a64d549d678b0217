// The judged outcomes packed for a calibration thread (docs/operations.md, "The calibration
// threads"): unpacked, calibrate() answers exactly what it answers over the outcomes as read,
// whatever factors each outcome lacks, in whatever order they come, on whichever page they first appear.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { calibrate, type Judged } from '../../src/domain/calibration.ts';
import { JudgedPacker, type ReadOutcome, unpackJudged } from '../../src/domain/calibration-pack.ts';
import { DEFAULT_THRESHOLDS } from '../../src/domain/scoring.ts';

const NAMES = ['usage', 'support', 'nps', 'constructor', 'f1', 'f2', 'z'];
const outcome = fc.record({
  outcome: fc.constantFrom('churned' as const, 'retained' as const),
  score: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null, freq: 8 }),
  factors: fc.option(
    fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom(0, 0.25, 0.5, 1, 0.123456789, -0)), {
      selector: ([name]) => name,
    }),
    { nil: null, freq: 8 },
  ),
});

test('unpacked, the report is the one over the outcomes as read, bit for bit', () => {
  fc.assert(
    fc.property(
      fc.array(fc.array(outcome, { maxLength: 30 }), { maxLength: 5 }),
      fc.constantFrom({}, { usage: 0.5, support: 0.5 }, { constructor: 1 }),
      (pages, weights) => {
        const read: ReadOutcome[][] = pages.map((page) =>
          page.map((o) => ({ ...o, factors: o.factors && Object.fromEntries(o.factors) })),
        );
        const packer = new JudgedPacker();
        const judged: Judged[] = [];
        let unscored = 0;
        for (const page of read) {
          packer.add(page);
          for (const o of page) {
            if (o.score === null) unscored++;
            else judged.push({ churned: o.outcome === 'churned', score: o.score, factors: o.factors ?? {} });
          }
        }
        const settings = { weights, thresholds: DEFAULT_THRESHOLDS };
        // Through a structured clone, as the thread receives it.
        const unpacked = unpackJudged(structuredClone(packer.packed().judged));
        assert.equal(packer.unscored, unscored);
        assert.deepEqual(calibrate(unpacked, settings), calibrate(judged, settings));
      },
    ),
  );
});

test('a page widens for factors it first brings, and the earlier outcomes of it lack them', () => {
  const packer = new JudgedPacker();
  packer.add([
    { outcome: 'churned', score: 0.2, factors: { a: 0.1 } },
    { outcome: 'retained', score: 0.9, factors: { b: 0.8, a: 0.7 } },
  ]);
  packer.add([{ outcome: 'retained', score: 0.5, factors: { c: 0.5 } }]);
  const { judged, transfer } = packer.packed();
  assert.deepEqual(judged.names, ['a', 'b', 'c']);
  assert.equal(transfer.length, 6);
  assert.deepEqual(unpackJudged(judged), [
    { churned: true, score: 0.2, factors: { a: 0.1 } },
    { churned: false, score: 0.9, factors: { a: 0.7, b: 0.8 } },
    { churned: false, score: 0.5, factors: { c: 0.5 } },
  ]);
});
