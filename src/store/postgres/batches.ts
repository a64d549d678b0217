// PostgreSQL's batching of batched writes (../write.ts): the calls of one account that arrive while
// a batch of theirs is in its transaction are gathered (../batcher.ts) and written as one call in
// the next (`gather`, as SQLite's group commit does), so ~9 statements per request become ~9 per
// batch. At most one batch per account and write is in flight (a batch waiting on an account's lock
// holds up no other account), and four in all. Nobody is answered before the commit holding their
// call. docs/postgresql.md, "Reads and writes under load".
import { Batcher } from '../batcher.ts';
import { isDatabaseUnavailable } from '../unavailable.ts';
import { type BatchedArgs, gather, type ItemResult, type Write } from '../write.ts';

type Batched = Write<BatchedArgs, ItemResult<unknown>[]>;
type Results = ItemResult<unknown>[];

export class BatchedWrites {
  readonly #run: (write: Batched, args: BatchedArgs) => Promise<Results>;
  readonly #onBatch: (write: string, size: number) => void;
  /** One per batched write, by its name. */
  readonly #batchers = new Map<string, Batcher<BatchedArgs, Results>>();

  /** `run`: the write in a transaction of its own; `onBatch`: told each batch's item count. */
  constructor(
    run: (write: Batched, args: BatchedArgs) => Promise<Results>,
    onBatch: (write: string, size: number) => void,
  ) {
    this.#run = run;
    this.#onBatch = onBatch;
  }

  /** The call, gathered with the account's others; one result per item, in order. */
  submit(write: Batched, args: BatchedArgs): Promise<Results> {
    let batcher = this.#batchers.get(write.name);
    if (!batcher) {
      batcher = new Batcher<BatchedArgs, Results>({
        inFlight: 4,
        // Enough to amortize the statements; small enough that no batch holds its locks for long.
        maxBatch: 256,
        run: (_account, calls) => this.#write(write, calls),
      });
      this.#batchers.set(write.name, batcher);
    }
    return batcher.submit(args[0], args);
  }

  async #write(write: Batched, calls: BatchedArgs[]): Promise<PromiseSettledResult<Results>[]> {
    const { args, split } = gather(calls);
    this.#onBatch(write.name, args[1].length);
    try {
      const parts = split(await this.#run(write, args)) as Results[];
      return parts.map((value) => ({ status: 'fulfilled', value }));
    } catch (error) {
      // Alone, or the database is away (each would fail the same way): the batch's error is theirs.
      if (calls.length === 1 || isDatabaseUnavailable(error)) {
        return calls.map(() => ({ status: 'rejected', reason: error }));
      }
      // The database refused the batch (a deadlock, a lost connection, one item it would not
      // take): nothing of it committed. Each call runs again alone, so one cannot fail the rest.
      return Promise.all(
        calls.map(async (call) => (await this.#write(write, [call]))[0] as PromiseSettledResult<Results>),
      );
    }
  }
}
