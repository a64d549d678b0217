// PostgreSQL's batching of batched writes (../write.ts): the items of one account that arrive while
// a batch of theirs is in its transaction are gathered (../batcher.ts) and written as one call in
// the next, so ~9 statements per request become ~9 per batch. At most one batch per account and
// write is in flight (a batch waiting on an account's lock holds up no other account), and four in
// all. Nobody is answered before the commit holding their item. docs/postgresql.md, "Reads and
// writes under load".
import { Batcher } from '../batcher.ts';
import { isDatabaseUnavailable } from '../unavailable.ts';
import type { BatchedArgs, ItemResult, Write } from '../write.ts';

type Batched = Write<BatchedArgs, ItemResult<unknown>[]>;

interface Item {
  item: unknown;
  now: number;
}

export class BatchedWrites {
  readonly #run: (write: Batched, args: BatchedArgs) => Promise<ItemResult<unknown>[]>;
  readonly #onBatch: (write: string, size: number) => void;
  /** One per batched write, by its name. */
  readonly #batchers = new Map<string, Batcher<Item, ItemResult<unknown>>>();

  /** `run`: the write in a transaction of its own; `onBatch`: told each batch's size. */
  constructor(
    run: (write: Batched, args: BatchedArgs) => Promise<ItemResult<unknown>[]>,
    onBatch: (write: string, size: number) => void,
  ) {
    this.#run = run;
    this.#onBatch = onBatch;
  }

  /** The items, each gathered with the account's others; one result per item, in order. */
  submit(write: Batched, [accountId, items, now]: BatchedArgs): Promise<ItemResult<unknown>[]> {
    let batcher = this.#batchers.get(write.name);
    if (!batcher) {
      batcher = new Batcher<Item, ItemResult<unknown>>({
        inFlight: 4,
        // Enough to amortize the statements; small enough that no batch holds its locks for long.
        maxBatch: 256,
        run: (account, gathered) => this.#write(write, account, gathered),
      });
      this.#batchers.set(write.name, batcher);
    }
    const b = batcher;
    return Promise.all(items.map((item) => b.submit(accountId, { item, now })));
  }

  async #write(
    write: Batched,
    accountId: string,
    gathered: Item[],
  ): Promise<PromiseSettledResult<ItemResult<unknown>>[]> {
    this.#onBatch(write.name, gathered.length);
    const now = Math.max(...gathered.map((g) => g.now));
    try {
      const results = await this.#run(write, [accountId, gathered.map((g) => g.item), now]);
      return results.map((value) => ({ status: 'fulfilled', value }));
    } catch (error) {
      // Alone, or the database is away (each would fail the same way): the batch's error is theirs.
      if (gathered.length === 1 || isDatabaseUnavailable(error)) {
        return gathered.map(() => ({ status: 'rejected', reason: error }));
      }
      // The database refused the batch (a deadlock, a lost connection, one item it would not
      // take): nothing of it committed. Each item runs again alone, so one cannot fail the rest.
      return Promise.all(
        gathered.map(
          async (g) =>
            (await this.#write(write, accountId, [g]))[0] as PromiseSettledResult<ItemResult<unknown>>,
        ),
      );
    }
  }
}
