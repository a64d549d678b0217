// SQLite's heavy portfolio reads, on a thread of their own (docs/operations.md, "The SQLite
// heavy-read thread"). node:sqlite answers synchronously, so a read whose cost grows with the
// account would hold the event loop for all of it: at 100,000 customers × 30 versions the movers
// take ~170–200 ms, the grouped summary ~100 ms, a segment's trend over 90 days ~1.2 s, and every
// other account's requests would wait. Here the main thread sends such a read by its name and
// arguments, heavy-read-thread.ts runs the very same reader (../sql-reader.ts over reader.ts) on a
// read connection of its own, and the main thread awaits the answer. The thread starts with the
// first heavy read and stays, holding the process only while a read waits on it; if it dies, the
// reads waiting on it fail and the next one starts another.
import type { Worker } from 'node:worker_threads';
import type { Reader } from '../store.ts';
import { ThreadClient } from '../thread-client.ts';
import { fromWire, type WireError } from '../wire.ts';

/**
 * The reads that run on the thread: those whose cost grows with the account's scores, customers
 * or history. The rest (a customer, a page of a list, a history page) are a few index lookups.
 */
export const HEAVY_READS = ['movers', 'tallyBy', 'trendInputs', 'distribution', 'tally'] as const;
export type HeavyReadName = (typeof HEAVY_READS)[number];

/** What heavy-read-thread.ts is started with. */
export interface HeavyReadData {
  path: string;
}

export type HeavyReadRequest =
  | { op: 'read'; id: number; name: HeavyReadName; args: unknown[] }
  /** Answer the reads before it, close the connection, answer. */
  | { op: 'close'; id: number };

export type HeavyReadReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError };

export class HeavyReads {
  readonly #thread: ThreadClient<HeavyReadRequest, HeavyReadReply>;

  constructor(data: HeavyReadData) {
    this.#thread = new ThreadClient(
      new URL('./heavy-read-thread.ts', import.meta.url),
      data,
      'the SQLite heavy-read thread',
    );
  }

  /** `name` of the Reader, run on the thread: its answer (a structured clone of it), or its error. */
  async read<K extends HeavyReadName>(
    name: K,
    ...args: Parameters<Reader[K]>
  ): Promise<Awaited<ReturnType<Reader[K]>>> {
    const reply = await this.#thread.request({ op: 'read', name, args });
    if (!reply.ok) throw fromWire(reply.error);
    return reply.value as Awaited<ReturnType<Reader[K]>>;
  }

  /** The thread running now, if any: a test ends it as a crash would. */
  get thread(): Worker | undefined {
    return this.#thread.worker;
  }

  /** Lets the reads under way finish, closes the thread's connection and ends it. */
  close(): Promise<void> {
    return this.#thread.close();
  }
}
