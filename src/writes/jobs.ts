// The transactions that run whole where the writes run, by name, with plain data in and out:
// Store.run(name, …args) runs one in a transaction of its own. On SQLite that is one message
// to the writer thread (docs/operations.md, "The SQLite writer thread"), so a batch of score
// updates or a rescore of every customer costs the main thread nothing; on PostgreSQL it is a
// transaction like any other. Every function here takes the Tx first.
import { customerBatch, scoreBatch } from './batches.ts';
import { applyFactorUpdates } from './factor-updates.ts';
import { applyThresholds, applyWeights, computePreview } from './rescore.ts';

export const JOBS = {
  factorUpdates: applyFactorUpdates,
  customerBatch,
  scoreBatch,
  applyWeights,
  applyThresholds,
  previewWeights: computePreview,
};

export type JobName = keyof typeof JOBS;
type Job<K extends JobName> = (typeof JOBS)[K];
/** The arguments after the Tx. */
export type JobArgs<K extends JobName> = Job<K> extends (tx: never, ...args: infer A) => unknown ? A : never;
export type JobResult<K extends JobName> = Awaited<ReturnType<Job<K>>>;
