// A write is referenced by value and found again by the SQLite writer thread from its module and
// name (src/store/write.ts): every write of src/writes/ must be found as itself, and nothing else
// a module exports may be run as one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findWrite } from '../../src/store/write.ts';
import { customerBatch, scoreBatch } from '../../src/writes/batches.ts';
import { applyFactorUpdates } from '../../src/writes/factor-updates.ts';
import { applyThresholds, applyWeights, computePreview } from '../../src/writes/rescore.ts';

test('every write is found by its module and name as the same function', async () => {
  for (const write of [
    applyFactorUpdates,
    customerBatch,
    scoreBatch,
    applyWeights,
    applyThresholds,
    computePreview,
  ]) {
    assert.equal(await findWrite(write.module, write.name), write, write.name);
  }
});

test('an export that is not a write, or no export at all, is refused', async () => {
  const module = applyWeights.module;
  await assert.rejects(findWrite(module, 'changeWeights'), /exports no write named 'changeWeights'/);
  await assert.rejects(findWrite(module, 'nothing'), /exports no write named 'nothing'/);
  // A write exported from one module is not found through another.
  await assert.rejects(findWrite(applyFactorUpdates.module, 'applyWeights'), /exports no write/);
});
