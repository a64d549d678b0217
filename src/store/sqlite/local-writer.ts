// The write connection with its group commit, run on the thread that holds it: the SQLite
// store's writes for ':memory:' (one connection for everything), and the whole of the writer
// thread for a file (writer-thread.ts). ThreadWriter (writer-client.ts) has the same methods,
// each a message to that thread, so the store uses either without asking which.
import { JOBS, type JobArgs, type JobName, type JobResult } from '../../writes/jobs.ts';
import type { Tx } from '../store.ts';
import type { Connection } from './connection.ts';
import { GroupCommit } from './group-commit.ts';
import { DirectWriter } from './write-connection.ts';
import { migrate, type OpArgs, type OpResult, WRITE_OPS, type WriteOpName } from './write-ops.ts';

export class LocalWriter {
  readonly writer: DirectWriter;
  readonly #commits: GroupCommit;

  /** `onDue`: deliveries became due in a commit. */
  constructor(conn: Connection, onDue: () => void) {
    this.writer = new DirectWriter(conn);
    this.#commits = new GroupCommit(this.writer, (due) => {
      if (due) onDue();
    });
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#commits.run(fn);
  }

  /** A transaction of writes/jobs.ts. */
  job<K extends JobName>(name: K, ...args: JobArgs<K>): Promise<JobResult<K>> {
    const job = JOBS[name] as unknown as (tx: Tx, ...a: JobArgs<K>) => Promise<JobResult<K>>;
    return this.#commits.run((tx) => job(tx, ...args));
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
