// Group commit for score updates, above the store: the updates of one account that arrive
// while its previous batch is being written are gathered (../store/batcher.ts) and written as
// one batch in one transaction (applyFactorUpdates: one read, one write of scores, history and
// events for all of them). On PostgreSQL that turns ~9 statements per request into ~9 per
// batch; on SQLite it saves the per-request statements. Nobody is answered before the commit
// holding their write returns. docs/postgresql.md, "Reads and writes under load".
import type { ScoreRecord } from '../domain/health.ts';
import { Batcher } from '../store/batcher.ts';
import type { Store } from '../store/store.ts';
import { isDatabaseUnavailable } from '../store/unavailable.ts';
import { applyFactorUpdates, type FactorUpdate } from './factor-updates.ts';

export class ScoreWriter {
  readonly #store: Store;
  readonly #onBatch: ((size: number) => void) | undefined;
  readonly #now: () => number;
  readonly #batcher: Batcher<FactorUpdate, ScoreRecord>;

  /**
   * `onBatch`: told the size of every batch written (the vitals_score_batch_size metric); `now`:
   * the clock the writes are stamped with.
   */
  constructor(
    store: Store,
    opts: { onBatch?: ((size: number) => void) | undefined; now?: () => number } = {},
  ) {
    this.#store = store;
    this.#onBatch = opts.onBatch;
    this.#now = opts.now ?? Date.now;
    this.#batcher = new Batcher({
      inFlight: 4,
      // Enough to amortize the statements; small enough that no batch holds its locks for long.
      maxBatch: 256,
      onBatch: opts.onBatch,
      run: (accountId, updates) => this.#write(accountId, updates),
    });
  }

  apply(accountId: string, update: FactorUpdate): Promise<ScoreRecord> {
    return this.#batcher.submit(accountId, update);
  }

  async #write(accountId: string, updates: FactorUpdate[]): Promise<PromiseSettledResult<ScoreRecord>[]> {
    try {
      const results = await this.#store.run(applyFactorUpdates, accountId, updates, this.#now());
      return results.map((r) =>
        r.ok ? { status: 'fulfilled', value: r.record } : { status: 'rejected', reason: r.error },
      );
    } catch (error) {
      // Alone, or the database is away (each would fail the same way): the batch's error is theirs.
      if (updates.length === 1 || isDatabaseUnavailable(error)) {
        return updates.map(() => ({ status: 'rejected', reason: error }));
      }
      // The database refused the batch (a deadlock, a lost connection, one item it would not
      // take): nothing of it committed. Each update runs again alone, so one cannot fail the rest.
      return Promise.all(
        updates.map(async (u) => {
          this.#onBatch?.(1);
          return (await this.#write(accountId, [u]))[0] as PromiseSettledResult<ScoreRecord>;
        }),
      );
    }
  }
}
