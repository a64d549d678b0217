// The messages between the main thread and the SQLite writer thread (writer-thread.ts,
// sqlite-store.ts); errors and results cross as ../wire.ts says.
import type { WireError } from '../wire.ts';

export type Request =
  /**
   * A write, by its name, committed with the batch it joins and answered after the COMMIT: a
   * function of the Tx (`tx`: src/writes/index.ts, ../write.ts), of the driver (`db`:
   * ../shared-writes.ts) or of the connection (`op`: write-ops.ts, SQLite's own queue writes).
   */
  | { op: 'write'; id: number; kind: 'tx' | 'db' | 'op'; name: string; args: unknown[] }
  | { op: 'migrate' | 'synchronous' | 'checkpointerSynchronous' | 'close'; id: number };

export type Reply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError }
  /** Deliveries became due in a commit. */
  | { due: true }
  /** Calls of a batched write were written together (../write.ts). */
  | { batch: string; size: number };
