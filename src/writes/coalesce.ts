// Group commit, above the store: the writes of one account that arrive while its previous batch
// is being written are gathered (../store/batcher.ts) and written as one batch in one
// transaction — score updates (applyFactorUpdates: one read, one write of scores, history and
// events for all of them) and single metric writes (applyMetricWrites). On PostgreSQL that turns
// ~9 statements per request into ~9 per batch; on SQLite it saves the per-request statements.
// Nobody is answered before the commit holding their write returns. docs/postgresql.md, "Reads
// and writes under load".
import type { ApiError } from '../domain/errors.ts';
import type { ScoreRecord } from '../domain/health.ts';
import { Batcher } from '../store/batcher.ts';
import type { Store, Write } from '../store/store.ts';
import { isDatabaseUnavailable } from '../store/unavailable.ts';
import { applyFactorUpdates, type FactorUpdate } from './factor-updates.ts';
import { applyMetricWrites, type MetricWrite } from './metrics.ts';

/** One item's outcome in a batch: its result, or the refusal it would have got alone. */
export type ItemResult<O> = { ok: true; record: O } | { ok: false; error: ApiError };

export interface GroupWriterOptions {
  /** Told the size of every batch written (a batch-size metric). */
  onBatch?: ((size: number) => void) | undefined;
  /** The clock the writes are stamped with. */
  now?: () => number;
}

/** Items of one account written together by `write`, which answers one result per item in order. */
export class GroupWriter<I, O> {
  readonly #store: Store;
  readonly #write: Write<[string, I[], number], ItemResult<O>[]>;
  readonly #onBatch: ((size: number) => void) | undefined;
  readonly #now: () => number;
  readonly #batcher: Batcher<I, O>;

  constructor(
    store: Store,
    write: Write<[string, I[], number], ItemResult<O>[]>,
    opts: GroupWriterOptions = {},
  ) {
    this.#store = store;
    this.#write = write;
    this.#onBatch = opts.onBatch;
    this.#now = opts.now ?? Date.now;
    this.#batcher = new Batcher({
      inFlight: 4,
      // Enough to amortize the statements; small enough that no batch holds its locks for long.
      maxBatch: 256,
      onBatch: opts.onBatch,
      run: (accountId, items) => this.#run(accountId, items),
    });
  }

  apply(accountId: string, item: I): Promise<O> {
    return this.#batcher.submit(accountId, item);
  }

  async #run(accountId: string, items: I[]): Promise<PromiseSettledResult<O>[]> {
    try {
      const results = await this.#store.run(this.#write, accountId, items, this.#now());
      return results.map((r) =>
        r.ok ? { status: 'fulfilled', value: r.record } : { status: 'rejected', reason: r.error },
      );
    } catch (error) {
      // Alone, or the database is away (each would fail the same way): the batch's error is theirs.
      if (items.length === 1 || isDatabaseUnavailable(error)) {
        return items.map(() => ({ status: 'rejected', reason: error }));
      }
      // The database refused the batch (a deadlock, a lost connection, one item it would not
      // take): nothing of it committed. Each item runs again alone, so one cannot fail the rest.
      return Promise.all(
        items.map(async (item) => {
          this.#onBatch?.(1);
          return (await this.#run(accountId, [item]))[0] as PromiseSettledResult<O>;
        }),
      );
    }
  }
}

/** Score updates (POST and PATCH …/health-score), each answered with the score it made. */
export type ScoreWriter = GroupWriter<FactorUpdate, ScoreRecord>;
export const scoreWriter = (store: Store, opts: GroupWriterOptions = {}): ScoreWriter =>
  new GroupWriter(store, applyFactorUpdates, opts);

/** Single metric writes (POST …/metrics), each answered with its answer's JSON text. */
export type MetricWriter = GroupWriter<MetricWrite, string>;
export const metricWriter = (store: Store, opts: GroupWriterOptions = {}): MetricWriter =>
  new GroupWriter(store, applyMetricWrites, opts);
