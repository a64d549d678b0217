// How an import sends its rows, for the CLI (import.ts) and the dashboard (web/src/batches.ts)
// alike: batches of up to 1,000 rows and about 6 MiB (the server takes 8), a few in flight,
// rows of one customer in file order (a batch that holds a customer waits for any batch in
// flight that holds it too), rows of one customer and instant in the same batch, and a batch
// the server refuses whole halved until the row at fault is alone. Pure: no Node, no DOM; the
// caller gives the request.
import type { Kind } from './rows.ts';

export interface Row {
  /** The file's line, from 1. */
  line: number;
  item: Record<string, unknown>;
}

export interface ItemError {
  type?: string;
  code: string;
  message: string;
  param?: string | undefined;
}

/** One item's answer, as the batch routes give it (docs/api.md, "Batches"). */
export interface ItemResult {
  customer_id: string | null;
  status: number;
  error?: ItemError | undefined;
  /** A metric write's instant, as the server stored it. */
  at?: string | undefined;
}

export interface SenderOptions {
  /** Sends one batch's items; answers their results in order. */
  post(items: Record<string, unknown>[]): Promise<ItemResult[]>;
  /**
   * The status and error of a request the server refused whole (a 400 or a 413), or null for
   * any other failure, which stops the import.
   */
  refusedWhole(error: unknown): { status: number; error: ItemError } | null;
  /** Told each row's result once it is known. */
  onResult(row: Row, result: ItemResult): void;
  /** Told after each answered request. */
  onBatch?: () => void;
  inFlight?: number;
  maxItems?: number;
  maxBytes?: number;
  /**
   * Rows with the same key go in the same batch, where the server makes them one version
   * (docs/api.md, "One customer, one instant, one version"); `groupKey` gives it.
   */
  groupKey?: ((item: Record<string, unknown>) => string) | undefined;
  /**
   * How far ahead of a batch rows are held to find the rest of its groups: rows of one key
   * further apart than this in the file go in different batches. Default none.
   */
  lookahead?: { rows: number; bytes: number } | undefined;
}

/**
 * The rows of an import that the server merges when they share a request, and so must travel
 * together: a metric row's customer and instant (a row without `at` is stamped with the
 * request's time, as every other such row of its customer is); a score row's customer (a score
 * item has no instant of its own: each stands at the request's). Customers and outcomes: none.
 */
export function groupKeyOf(kind: Kind): SenderOptions['groupKey'] {
  if (kind === 'scores') return (item) => JSON.stringify([item.customer_id]);
  if (kind !== 'metrics') return undefined;
  return (item) => {
    const at = typeof item.at === 'string' ? Date.parse(item.at) : Number.NaN;
    // An `at` the server will refuse keeps its text: the row is refused alone either way.
    return JSON.stringify([item.customer_id, Number.isNaN(at) ? (item.at ?? null) : at]);
  };
}

const encoder = new TextEncoder();

interface Held {
  row: Row;
  bytes: number;
}

/** Rows of one key, in file order, held until their batch is cut. */
interface Group {
  rows: Held[];
  bytes: number;
}

export class Sender {
  readonly #opts: SenderOptions;
  readonly #inFlight = new Set<Promise<void>>();
  /** The batch in flight that holds each customer id. */
  readonly #holder = new Map<string, Promise<void>>();
  #failure: { error: unknown } | undefined;
  /** Rows not yet in a batch, by key, in the order each key first came. */
  readonly #held = new Map<string, Group>();
  #heldRows = 0;
  #heldBytes = 0;
  /** A key of its own for each row that has none. */
  #alone = 0;

  constructor(opts: SenderOptions) {
    this.#opts = opts;
  }

  get #maxItems(): number {
    return this.#opts.maxItems ?? 1000;
  }

  get #maxBytes(): number {
    return this.#opts.maxBytes ?? 6 * 1024 * 1024;
  }

  /** Adds a row; waits when a batch must go out and the requests in flight are all taken. */
  async add(row: Row): Promise<void> {
    const bytes = encoder.encode(JSON.stringify(row.item)).length + 1;
    const key = this.#opts.groupKey?.(row.item) ?? `\u0000${this.#alone++}`;
    let group = this.#held.get(key);
    if (!group) {
      group = { rows: [], bytes: 0 };
      this.#held.set(key, group);
    }
    group.rows.push({ row, bytes });
    group.bytes += bytes;
    this.#heldRows++;
    this.#heldBytes += bytes;
    const ahead = this.#opts.lookahead ?? { rows: 0, bytes: 0 };
    while (this.#heldRows > this.#maxItems + ahead.rows || this.#heldBytes > this.#maxBytes + ahead.bytes) {
      await this.#dispatch(this.#cut());
    }
  }

  /** Sends what is left and waits for every answer; throws what stopped the import, if anything. */
  async finish(): Promise<void> {
    try {
      while (this.#heldRows > 0 && !this.#failure) await this.#dispatch(this.#cut());
    } finally {
      await Promise.allSettled(this.#inFlight);
    }
    if (this.#failure) throw this.#failure.error;
  }

  /** The next batch: whole groups from the first held, as many as fit (a group too big alone is cut). */
  #cut(): Row[] {
    const batch: Row[] = [];
    let bytes = 0;
    for (const [key, group] of this.#held) {
      const fits =
        batch.length + group.rows.length <= this.#maxItems && bytes + group.bytes <= this.#maxBytes;
      if (!fits && batch.length > 0) break;
      let taken = group.rows.length;
      if (!fits) {
        // One group over a batch on its own: as many of its rows as fit, at least one.
        let b = 0;
        taken = 0;
        for (const held of group.rows) {
          if (taken > 0 && (taken >= this.#maxItems || b + held.bytes > this.#maxBytes)) break;
          b += held.bytes;
          taken++;
        }
      }
      for (const held of group.rows.splice(0, taken)) {
        batch.push(held.row);
        bytes += held.bytes;
        group.bytes -= held.bytes;
      }
      if (group.rows.length === 0) this.#held.delete(key);
      if (!fits) break;
    }
    this.#heldRows -= batch.length;
    this.#heldBytes -= bytes;
    return batch;
  }

  async #dispatch(batch: Row[]): Promise<void> {
    const ids = batch.map((r) => String(r.item.customer_id));
    await Promise.all(new Set(ids.flatMap((id) => this.#holder.get(id) ?? [])));
    while (this.#inFlight.size >= (this.#opts.inFlight ?? 4)) await Promise.race(this.#inFlight);
    if (this.#failure) throw this.#failure.error;
    const sent: Promise<void> = this.#send(batch)
      .catch((error: unknown) => {
        this.#failure ??= { error };
      })
      .finally(() => {
        this.#inFlight.delete(sent);
        for (const id of ids) if (this.#holder.get(id) === sent) this.#holder.delete(id);
      });
    this.#inFlight.add(sent);
    for (const id of ids) this.#holder.set(id, sent);
  }

  /** Where to halve a batch refused whole: the boundary between two groups nearest its middle. */
  #half(batch: Row[]): number {
    const middle = Math.ceil(batch.length / 2);
    const key = this.#opts.groupKey;
    if (!key) return middle;
    const keys = batch.map((r) => key(r.item));
    for (let d = 0; d < middle; d++) {
      for (const i of [middle - d, middle + d]) {
        if (i > 0 && i < batch.length && keys[i - 1] !== keys[i]) return i;
      }
    }
    return middle;
  }

  async #send(batch: Row[]): Promise<void> {
    let results: ItemResult[];
    try {
      results = await this.#opts.post(batch.map((r) => r.item));
    } catch (error) {
      const whole = this.#opts.refusedWhole(error);
      if (!whole) throw error;
      if (batch.length === 1) {
        const [only] = batch as [Row];
        const id = only.item.customer_id;
        this.#opts.onResult(only, { customer_id: typeof id === 'string' ? id : null, ...whole });
        this.#opts.onBatch?.();
        return;
      }
      const half = this.#half(batch);
      await this.#send(batch.slice(0, half));
      await this.#send(batch.slice(half));
      return;
    }
    for (const [i, result] of results.entries()) this.#opts.onResult(batch[i] as Row, result);
    this.#opts.onBatch?.();
  }
}
