// The write connection with its group commit, run on the thread that holds it: the SQLite
// store's writes for ':memory:' (one connection for everything), and the whole of the writer
// thread for a file (writer-thread.ts). ThreadWriter (writer-client.ts) has the same methods,
// each a message to that thread, so the store uses either without asking which.
import type { SharedWrite } from '../shared-writes.ts';
import type { Tx } from '../store.ts';
import type { BatchedArgs, Write } from '../write.ts';
import type { Connection } from './connection.ts';
import { driverOf } from './driver.ts';
import { GroupCommit } from './group-commit.ts';
import { DirectWriter } from './write-connection.ts';
import { migrate, type OpArgs, type OpResult, WRITE_OPS, type WriteOpName } from './write-ops.ts';

export class LocalWriter {
  readonly writer: DirectWriter;
  readonly #commits: GroupCommit;

  /**
   * `onDue`: deliveries became due in a commit; `onCommit`: any commit; `between`: work between
   * two batches, after the first one's answers have gone; `onBatch`: a batched write's call.
   */
  constructor(
    conn: Connection,
    on: {
      due: () => void;
      commit?: () => void;
      between?: () => void;
      batch?: (write: string, size: number) => void;
    },
  ) {
    this.writer = new DirectWriter(conn);
    this.#commits = new GroupCommit(
      this.writer,
      (due) => {
        on.commit?.();
        if (due) on.due();
      },
      { between: on.between, onBatch: on.batch },
    );
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#commits.run(fn);
  }

  /** A write (../write.ts), committed with the batch it joins; a batched one gathered with its kind. */
  job<A extends unknown[], R>(write: Write<A, R>, ...args: A): Promise<R> {
    if (write.batched) {
      return this.#commits.runBatched(write as never, args as unknown as BatchedArgs) as Promise<R>;
    }
    return this.#commits.run((tx) => write(tx, ...args));
  }

  /** A shared write (../shared-writes.ts) on the write connection, committed with the batch it joins. */
  shared<A extends unknown[], R>(fn: SharedWrite<A, R>, ...args: A): Promise<R> {
    return this.#commits.run(() => fn(driverOf(this.writer.conn), ...args));
  }

  /** A store write of write-ops.ts, committed with the batch it joins. */
  op<K extends WriteOpName>(name: K, ...args: OpArgs<K>): Promise<OpResult<K>> {
    return this.#commits.run(() => this.writer.op(name, ...args));
  }

  async migrate(): Promise<number> {
    return migrate(this.writer.conn);
  }

  async synchronous(): Promise<number> {
    return WRITE_OPS.synchronous(this.writer.conn);
  }

  /** Waits for what is queued, then closes the connection. */
  async close(): Promise<void> {
    await this.#commits.idle();
    this.writer.conn.db.close();
  }
}
