// PostgreSQL's heavy writes, on a thread of their own (docs/postgresql.md, "Heavy writes off the
// main thread"). A rescore of a whole account reads, computes and serializes 100,000 customers in
// this process: seconds of CPU and hundreds of megabytes of short-lived objects. On the main
// thread every request waited behind its pages and its garbage collections (reads p99 170-375 ms
// during a 100,000-customer rule change). Here the main thread sends the write by its name
// (../write.ts), as SQLite sends every write to its writer thread, and heavy-thread.ts runs
// it in a transaction on a pool of its own. The thread starts with the first heavy write and
// stays; if it dies, the writes waiting on it fail and the next one starts another.
import { ThreadClient } from '../thread-client.ts';
import { fromWire, resultFromWire, type WireError } from '../wire.ts';
import type { Write } from '../write.ts';

/** What heavy-thread.ts is started with. */
export interface HeavyThreadData {
  url: string;
  /** Connections of the thread's own pool: the heavy writes that may run at once. */
  poolSize: number;
  /** The NOTIFY payload of the store that started it: that store wakes its own listeners. */
  instance: string;
  /** Modules of writes beyond src/writes/ (a test's own; ../write.ts). */
  writeModules: readonly string[];
}

export type HeavyRequest =
  | { op: 'write'; id: number; name: string; args: unknown[] }
  /** Wait for the writes running, close the pool, answer. */
  | { op: 'close'; id: number };

export type HeavyReply =
  /** `due`: the commit made webhook deliveries due. */
  { id: number; ok: true; value: unknown; due: boolean } | { id: number; ok: false; error: WireError };

/** Connections of the heavy-write thread's pool: the rescore job's two batches at once (main.ts), or one of them beside a rule change. */
export const HEAVY_POOL_SIZE = 2;

export class HeavyWrites {
  readonly #thread: ThreadClient<HeavyRequest, HeavyReply>;
  readonly #onDue: () => void;

  /** `onDue`: a heavy write's commit made deliveries due. */
  constructor(data: HeavyThreadData, onDue: () => void) {
    this.#thread = new ThreadClient(
      new URL('./heavy-thread.ts', import.meta.url),
      data,
      'the PostgreSQL heavy-write thread',
    );
    this.#onDue = onDue;
  }

  /** `write`, run whole on the thread in a transaction of its own; its result, or its error. */
  async run<A extends unknown[], R>(write: Write<A, R>, args: A): Promise<R> {
    const reply = await this.#thread.request({ op: 'write', name: write.name, args });
    if (!reply.ok) throw fromWire(reply.error);
    if (reply.due) this.#onDue();
    return resultFromWire(reply.value);
  }

  /** Waits for the writes running on the thread, closes its pool and ends it. */
  close(): Promise<void> {
    return this.#thread.close();
  }
}
