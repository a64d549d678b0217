// How an import sends its rows, for the CLI (import.ts) and the dashboard (web/src/batches.ts)
// alike: batches of up to 1,000 rows and about 6 MiB (the server takes 8), a few in flight,
// rows of one customer in file order (a batch that holds a customer waits for any batch in
// flight that holds it too), and a batch the server refuses whole halved until the row at
// fault is alone. Pure: no Node, no DOM; the caller gives the request.

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
}

const encoder = new TextEncoder();

export class Sender {
  readonly #opts: SenderOptions;
  readonly #inFlight = new Set<Promise<void>>();
  /** The batch in flight that holds each customer id. */
  readonly #holder = new Map<string, Promise<void>>();
  #failure: { error: unknown } | undefined;
  #batch: Row[] = [];
  #bytes = 0;

  constructor(opts: SenderOptions) {
    this.#opts = opts;
  }

  /** Adds a row; waits when a batch must go out and the requests in flight are all taken. */
  async add(row: Row): Promise<void> {
    const size = encoder.encode(JSON.stringify(row.item)).length + 1;
    const full =
      this.#batch.length >= (this.#opts.maxItems ?? 1000) ||
      this.#bytes + size > (this.#opts.maxBytes ?? 6 * 1024 * 1024);
    if (this.#batch.length > 0 && full) await this.#dispatch();
    this.#batch.push(row);
    this.#bytes += size;
  }

  /** Sends what is left and waits for every answer; throws what stopped the import, if anything. */
  async finish(): Promise<void> {
    try {
      if (this.#batch.length > 0 && !this.#failure) await this.#dispatch();
    } finally {
      await Promise.allSettled(this.#inFlight);
    }
    if (this.#failure) throw this.#failure.error;
  }

  async #dispatch(): Promise<void> {
    const batch = this.#batch;
    this.#batch = [];
    this.#bytes = 0;
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
      const half = Math.ceil(batch.length / 2);
      await this.#send(batch.slice(0, half));
      await this.#send(batch.slice(half));
      return;
    }
    for (const [i, result] of results.entries()) this.#opts.onResult(batch[i] as Row, result);
    this.#opts.onBatch?.();
  }
}
