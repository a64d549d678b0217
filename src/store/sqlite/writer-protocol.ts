// The messages between the main thread and the SQLite writer thread (writer-thread.ts,
// writer-client.ts); errors and results cross as ../wire.ts says.
import type { WireError } from '../wire.ts';

export type Request =
  /** A store write of write-ops.ts, committed with the batch it joins; answered after the COMMIT. */
  | { op: 'job'; id: number; name: string; args: unknown[] }
  /** A write of src/writes/, found by its name in the registry (../write.ts); committed and answered as a job. */
  | { op: 'write'; id: number; kind: 'tx'; name: string; args: unknown[] }
  /** A shared write of the driver found by its module and name (../shared-writes.ts); the same. */
  | { op: 'write'; id: number; kind: 'db'; module: string; name: string; args: unknown[] }
  /** A transaction driven from the main thread: answered 'opened', then after its COMMIT. */
  | { op: 'open'; id: number }
  /** A Tx method of the open transaction, answered at once. */
  | { op: 'tx'; id: number; name: string; args: unknown[] }
  /** The main thread's part of transaction `id` is done: keep it (`ok`) or undo it. */
  | { op: 'end'; id: number; ok: boolean }
  | { op: 'migrate' | 'synchronous' | 'checkpointerSynchronous' | 'close'; id: number };

export type Reply =
  | { id: number; opened: true }
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError }
  /** Deliveries became due in a commit. */
  | { due: true }
  /** Calls of a batched write were written together (../write.ts). */
  | { batch: string; size: number };
