// Point reads by id, gathered (../batcher.ts): the lookups of one account that arrive while
// one of its queries is in flight go to the database together as one `id = ANY(…)` query.
// The per-statement cost on both sides of the connection is what limits GET on PostgreSQL;
// docs/postgresql.md, "Reads and writes under load".
import { Batcher } from '../batcher.ts';

export class PointReads<T> {
  readonly #batcher: Batcher<string, T | null>;

  /** `read`: the rows of these ids of one account; ids that do not exist are absent from the map. */
  constructor(read: (accountId: string, ids: string[]) => Promise<Map<string, T>>) {
    this.#batcher = new Batcher<string, T | null>({
      inFlight: 4,
      maxBatch: 256,
      run: async (accountId, ids) => {
        const found = await read(accountId, [...new Set(ids)]);
        return ids.map((id) => ({ status: 'fulfilled', value: found.get(id) ?? null }));
      },
    });
  }

  load(accountId: string, id: string): Promise<T | null> {
    return this.#batcher.submit(accountId, id);
  }
}
