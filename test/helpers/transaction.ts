// A transaction a test drives statement by statement, to set rows up and to try a Tx method
// alone (the store contract suite). Vitals itself never writes this way: every write of src/ is a
// named write sent whole with store.run (docs/architecture.md, "A write"), so the stores have no
// such method on their public face. PostgreSQL's store runs its writes in exactly this kind of
// transaction (PostgresStore.transaction). A SQLite file's writes run on its writer thread, which
// takes only named writes, so here the test opens a write connection of its own on the same
// file: SQLite's file lock serializes it with the writer thread (it waits its busy_timeout for a
// batch to commit), and the store's readers see what it commits, as they see the thread's.
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { Connection } from '../../src/store/sqlite/connection.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { DirectWriter } from '../../src/store/sqlite/write-connection.ts';
import type { Store, Tx } from '../../src/store/store.ts';

/** One write connection per database file, opened on first use and kept for the test process,
 *  with the transaction last queued on it: a connection holds one transaction at a time. */
const writers = new Map<string, { writer: DirectWriter; last: Promise<unknown> }>();

/** `fn` in one transaction on `store`'s database: committed when it resolves, undone when it throws. */
export function transaction<T>(store: Store, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (store instanceof PostgresStore) return store.transaction(fn);
  if (!(store instanceof SqliteStore)) throw new Error('transaction: a SqliteStore or a PostgresStore');
  if (store.path === ':memory:')
    throw new Error("a ':memory:' store has no second connection: use store.run");
  let file = writers.get(store.path);
  if (!file) {
    file = { writer: new DirectWriter(new Connection(store.path, 'normal')), last: Promise.resolve() };
    writers.set(store.path, file);
  }
  const { writer } = file;
  const run = file.last.then(async () => {
    writer.begin();
    let value: T;
    try {
      value = await fn(writer.tx);
    } catch (error) {
      writer.rollback();
      throw error;
    }
    writer.commit();
    return value;
  });
  file.last = run.catch(() => {});
  return run;
}
