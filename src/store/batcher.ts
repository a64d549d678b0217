// Gathers work that arrives while earlier work is in flight and hands it over as one batch:
// on PostgreSQL the items of a batched write of one account become one call in one transaction
// (postgres/batches.ts), the point reads of one account one `id = ANY(…)` query
// (postgres/point-reads.ts); the dispatcher's attempts one write (webhooks/dispatcher.ts). A lone item goes at
// once; under load, items queue behind the batch in flight and leave together with the next.
// One batch per account at a time (the next batch of an account is larger for it, and a batch
// waiting on an account's lock holds up no other account), and at most `inFlight` in all.
// docs/postgresql.md, "Reads and writes under load".

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

export interface BatcherOptions<I, O> {
  /** Runs one batch of one account; answers one settled result per item, in order. */
  run: (accountId: string, items: I[]) => Promise<PromiseSettledResult<O>[]>;
  /** Batches of all accounts in flight at once. */
  inFlight: number;
  maxBatch: number;
  onBatch?: ((size: number) => void) | undefined;
}

export class Batcher<I, O> {
  readonly #o: BatcherOptions<I, O>;
  /** Per account, in arrival order; Map order is the order accounts first queued. */
  readonly #waiting = new Map<string, Waiting<I, O>[]>();
  readonly #busy = new Set<string>();

  constructor(opts: BatcherOptions<I, O>) {
    this.#o = opts;
  }

  submit(accountId: string, item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      const queue = this.#waiting.get(accountId);
      if (queue) queue.push({ item, resolve, reject });
      else this.#waiting.set(accountId, [{ item, resolve, reject }]);
      this.#next();
    });
  }

  #next(): void {
    for (const [accountId, queue] of this.#waiting) {
      if (this.#busy.size >= this.#o.inFlight) return;
      if (this.#busy.has(accountId)) continue;
      const batch = queue.splice(0, this.#o.maxBatch);
      if (queue.length === 0) this.#waiting.delete(accountId);
      this.#busy.add(accountId);
      void this.#run(accountId, batch).finally(() => {
        this.#busy.delete(accountId);
        this.#next();
      });
    }
  }

  async #run(accountId: string, batch: Waiting<I, O>[]): Promise<void> {
    this.#o.onBatch?.(batch.length);
    let results: PromiseSettledResult<O>[];
    try {
      results = await this.#o.run(
        accountId,
        batch.map((w) => w.item),
      );
    } catch (error) {
      for (const w of batch) w.reject(error);
      return;
    }
    batch.forEach((w, i) => {
      const result = results[i];
      if (result?.status === 'fulfilled') w.resolve(result.value);
      else w.reject(result ? result.reason : new Error('the batch gave no result for this item'));
    });
  }
}
