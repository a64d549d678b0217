// Writes a test sends through store.run to see where they ran (src/store/write.ts): the thread's
// id, from a heavy write and from a light one, and a heavy write that ends the thread it runs on.
import { threadId } from 'node:worker_threads';
import type { Tx } from '../../src/store/store.ts';
import { write } from '../../src/store/write.ts';

/** The id of the thread it ran on, after a read in its transaction. */
export const heavyThreadId = write(
  async function heavyThreadId(tx: Tx, accountId: string): Promise<number> {
    await tx.getSettings(accountId);
    return threadId;
  },
  { heavy: true },
);

/** The same, as a light write. */
export const lightThreadId = write(async function lightThreadId(tx: Tx, accountId: string) {
  await tx.getSettings(accountId);
  return threadId;
});

/** Ends the thread it runs on (process.exit in a worker ends that worker), as a crash would. */
export const endThread = write(
  async function endThread(): Promise<never> {
    process.exit(3);
  },
  { heavy: true },
);
