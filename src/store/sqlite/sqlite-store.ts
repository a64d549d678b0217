import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Tally } from '../../domain/portfolio.ts';
import * as outbox from '../outbox.ts';
import type { SharedWrite } from '../shared-writes.ts';
import { SqlStore } from '../sql-store.ts';
import type {
  AccountBacklog,
  AttemptOutcome,
  ClaimedDelivery,
  ClaimOptions,
  GroupTally,
  Mover,
  Reader,
  Segment,
  Store,
  Tx,
} from '../store.ts';
import type { Write } from '../write.ts';
import { Connection } from './connection.ts';
import { driverOf } from './driver.ts';
import { GroupCommit } from './group-commit.ts';
import { HeavyReads } from './heavy-reads.ts';
import * as queue from './queue.ts';
import { sqliteReads } from './reader.ts';
import { DirectWriter } from './write-connection.ts';
import { type OpArgs, type OpResult, WRITE_OPS, type WriteOpName } from './write-ops.ts';
import { ThreadWriter } from './writer-client.ts';

export interface SqliteOptions {
  /** A file path, or ':memory:' (tests of the store alone). */
  path: string;
  synchronous?: 'full' | 'normal';
  /** Modules of writes beyond src/writes/ that the writer thread may run (a test's own; ../write.ts). */
  writeModules?: readonly string[];
}

export class SqliteStore extends SqlStore implements Store {
  readonly backend = 'sqlite' as const;
  /** The database file, or ':memory:'. */
  readonly path: string;
  /** The read connection (':memory:' has one connection for everything). */
  protected readonly conn: Connection;
  /**
   * Where writes run: a file's write connection lives on a thread of its own, with the group
   * commit (docs/operations.md, "The SQLite writer thread"); ':memory:' has one connection for
   * everything, here. Both have the same methods.
   */
  readonly #writes: ThreadWriter | GroupCommit;
  readonly #wake = new EventEmitter();
  /**
   * Where a file's reads that grow with the account run: a thread with a read connection of its
   * own (docs/operations.md, "The SQLite heavy-read thread"); ':memory:' reads here.
   */
  readonly #heavy: HeavyReads | undefined;
  #closing: Promise<void> | undefined;

  constructor(opts: SqliteOptions) {
    const synchronous = opts.synchronous ?? 'full';
    const memory = opts.path === ':memory:';
    if (!memory) mkdirSync(dirname(opts.path), { recursive: true });
    // Reads go through their own connection: under WAL it sees only committed data, never a
    // transaction that is half way through on the writer.
    const conn = new Connection(opts.path, synchronous, memory ? 16 : 8);
    super(driverOf(conn), sqliteReads(conn));
    this.conn = conn;
    this.path = opts.path;
    const on = {
      due: () => this.#wake.emit('due'),
      batch: (write: string, size: number) => this.#wake.emit('batch', write, size),
    };
    this.#writes = memory
      ? new GroupCommit(new DirectWriter(this.conn), (due) => due && on.due(), { onBatch: on.batch })
      : new ThreadWriter(opts.path, synchronous, on, opts.writeModules);
    this.#heavy = memory ? undefined : new HeavyReads({ path: opts.path });
  }

  override tally(accountId: string, segment?: Segment): Promise<Tally> {
    return this.#heavy ? this.#heavy.read('tally', accountId, segment) : super.tally(accountId, segment);
  }

  override distribution(accountId: string, bins: number, segment?: Segment): Promise<Tally[]> {
    return this.#heavy
      ? this.#heavy.read('distribution', accountId, bins, segment)
      : super.distribution(accountId, bins, segment);
  }

  override tallyBy(accountId: string, key: string, segment?: Segment): Promise<GroupTally[]> {
    return this.#heavy
      ? this.#heavy.read('tallyBy', accountId, key, segment)
      : super.tallyBy(accountId, key, segment);
  }

  override trendInputs(
    accountId: string,
    fromDay: number,
    segment?: Segment,
  ): ReturnType<Reader['trendInputs']> {
    return this.#heavy
      ? this.#heavy.read('trendInputs', accountId, fromDay, segment)
      : super.trendInputs(accountId, fromDay, segment);
  }

  override movers(accountId: string, opts: Parameters<Reader['movers']>[1]): Promise<Mover[]> {
    return this.#heavy ? this.#heavy.read('movers', accountId, opts) : super.movers(accountId, opts);
  }

  migrate(): Promise<number> {
    return this.#writes.migrate();
  }

  async ping(): Promise<void> {
    this.conn.get('SELECT 1');
  }

  /**
   * PRAGMA synchronous of this store's own connections (the writer, the reader and the checkpoint
   * thread's) as SQLite has it: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA. It is per connection, so only
   * these can tell; /metrics reports it as vitals_sqlite_synchronous (RELIABILITY.md, "Power loss").
   */
  async synchronousLevels(): Promise<{ connection: 'writer' | 'reader' | 'checkpointer'; level: number }[]> {
    const writer = { connection: 'writer' as const, level: await this.#writes.synchronous() };
    if (this.#writes instanceof GroupCommit) return [writer];
    const levels = [writer, { connection: 'reader' as const, level: WRITE_OPS.synchronous(this.conn) }];
    // The checkpoint thread's connection copies the WAL into the database file (checkpoints.ts).
    const checkpointer = await this.#writes.checkpointerSynchronous();
    return checkpointer === null ? levels : [...levels, { connection: 'checkpointer', level: checkpointer }];
  }

  /** Waits for the transactions already queued; closing again is a no-op. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.all([this.#writes.close(), this.#heavy?.close()]);
      // ':memory:' reads through the writer's own connection, closed with it.
      if (this.#writes instanceof ThreadWriter) this.conn.db.close();
    })();
    return this.#closing;
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#writes instanceof GroupCommit ? this.#writes.run(fn) : this.#writes.transaction(fn);
  }

  run<A extends unknown[], R>(write: Write<A, R>, ...args: A): Promise<R> {
    // On the thread, the whole transaction is one message: reads, computing and writes happen there.
    return this.#writes.job(write, ...args);
  }

  protected write<A extends unknown[], R>(fn: SharedWrite<A, R>, ...args: A): Promise<R> {
    // A transaction of its own on the writer thread, committed with the batch it joins.
    return this.#writes.shared(fn, ...args);
  }

  protected atomic<A extends unknown[], R>(fn: SharedWrite<A, R>, ...args: A): Promise<R> {
    return this.#writes.shared(fn, ...args);
  }

  claimDeliveries(opts: ClaimOptions): Promise<ClaimedDelivery[]> {
    return this.#op('claimDeliveries', opts);
  }

  recordAttempt(outcome: AttemptOutcome): Promise<void> {
    return this.recordAttempts([outcome]);
  }

  recordAttempts(outcomes: AttemptOutcome[]): Promise<void> {
    return this.#op('recordAttempts', outcomes);
  }

  async nextDueAt(after: number): Promise<number | null> {
    return queue.nextDueAt(this.conn, after);
  }

  backlogByAccount(): Promise<AccountBacklog[]> {
    return outbox.backlogByAccount(this.db);
  }

  onWriteBatch(listener: (write: string, size: number) => void): () => void {
    this.#wake.on('batch', listener);
    return () => this.#wake.off('batch', listener);
  }

  onDeliveriesDue(listener: () => void): () => void {
    this.#wake.on('due', listener);
    return () => this.#wake.off('due', listener);
  }

  /** A write of write-ops.ts as a transaction of its own, committed with the batch it joins. */
  #op<K extends WriteOpName>(name: K, ...args: OpArgs<K>): Promise<OpResult<K>> {
    return this.#writes.op(name, ...args);
  }
}
