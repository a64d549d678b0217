// The SQLite store: reads on this thread's connection (and, for those that grow with the account,
// on the heavy-read thread), writes on the writer thread, each sent as one message by its name
// (WriterThread below; the thread's side is writer-thread.ts). docs/architecture.md, "A write".
import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ArrTally, Tally } from '../../domain/portfolio.ts';
import * as outbox from '../outbox.ts';
import { nameOf, type SharedWrite } from '../shared-writes.ts';
import { SqlStore } from '../sql-store.ts';
import type {
  AccountBacklog,
  AttemptOutcome,
  ClaimedDelivery,
  ClaimOptions,
  GroupBy,
  GroupTally,
  MigrationStatus,
  Mover,
  Reader,
  Segment,
  Store,
} from '../store.ts';
import { fromWire, resultFromWire } from '../wire.ts';
import type { Write } from '../write.ts';
import { Connection } from './connection.ts';
import { driverOf } from './driver.ts';
import { GroupCommit } from './group-commit.ts';
import { HeavyReads } from './heavy-reads.ts';
import { MIGRATIONS } from './migrations.ts';
import * as queue from './queue.ts';
import { sqliteReads } from './reader.ts';
import { DirectWriter } from './write-connection.ts';
import { type OpArgs, type OpResult, schemaVersion, WRITE_OPS, type WriteOpName } from './write-ops.ts';
import type { Reply, Request } from './writer-protocol.ts';

export interface SqliteOptions {
  /** A file path, or ':memory:' (tests of the store alone). */
  path: string;
  synchronous?: 'full' | 'normal';
  /** The writer's page cache in MB (default 128; docs/operations.md, "Memory"). */
  cacheMb?: number;
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
  readonly #writes: WriterThread | GroupCommit;
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
      : new WriterThread(opts.path, synchronous, opts.cacheMb ?? 128, on, opts.writeModules);
    this.#heavy = memory ? undefined : new HeavyReads({ path: opts.path });
  }

  override tally(accountId: string, segment?: Segment): Promise<ArrTally> {
    return this.#heavy ? this.#heavy.read('tally', accountId, segment) : super.tally(accountId, segment);
  }

  override distribution(accountId: string, bins: number, segment?: Segment): Promise<Tally[]> {
    return this.#heavy
      ? this.#heavy.read('distribution', accountId, bins, segment)
      : super.distribution(accountId, bins, segment);
  }

  override tallyBy(accountId: string, by: GroupBy, segment?: Segment): Promise<GroupTally[]> {
    return this.#heavy
      ? this.#heavy.read('tallyBy', accountId, by, segment)
      : super.tallyBy(accountId, by, segment);
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

  async migrationStatus(): Promise<MigrationStatus> {
    return { applied: schemaVersion(this.conn), latest: MIGRATIONS.length };
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
      if (this.#writes instanceof WriterThread) this.conn.db.close();
    })();
    return this.#closing;
  }

  run<A extends unknown[], R>(write: Write<A, R>, ...args: A): Promise<R> {
    // One message to the writer thread: its reads, computing and writes happen there, in the
    // group commit (group-commit.ts); a batched write is gathered there with its kind.
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

type On = { due: () => void; batch: (write: string, size: number) => void };
type Message = Request extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/**
 * The main thread's side of the SQLite writer thread (writer-thread.ts): a write goes over as one
 * message, by its name (../write.ts), and is answered once the COMMIT holding it has returned.
 * Calls made before the thread is up wait in its queue.
 */
class WriterThread {
  readonly #worker: Worker;
  readonly #waiting = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: unknown) => void }
  >();
  #next = 1;
  /** Writes waiting for the end of this turn of the event loop (#post). */
  #outbox: Request[] = [];
  /** Set when the thread has gone: every call fails with it. */
  #gone: Error | undefined;

  /**
   * `on.due`: deliveries became due in a commit; `on.batch`: calls of a batched write were written
   * together; `writeModules`: modules of writes beyond src/writes/ (a test's own; ../write.ts).
   */
  constructor(
    path: string,
    synchronous: string,
    cacheMb: number,
    on: On,
    writeModules: readonly string[] = [],
  ) {
    const worker = new Worker(new URL('./writer-thread.ts', import.meta.url), {
      workerData: { path, synchronous, cacheMb, writeModules },
    });
    this.#worker = worker;
    worker.unref(); // held only while a call is waiting (#send)
    worker.on('message', (m: Reply | Reply[]) => {
      if (Array.isArray(m)) for (const one of m) this.#receive(one, on);
      else this.#receive(m, on);
    });
    const gone = (error: Error) => {
      this.#gone ??= error;
      for (const waiting of this.#waiting.values()) waiting.reject(this.#gone);
      this.#waiting.clear();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`the SQLite writer thread exited (code ${code})`)));
  }

  #receive(m: Reply, on: On): void {
    if ('due' in m) {
      on.due();
      return;
    }
    if ('batch' in m) {
      on.batch(m.batch, m.size);
      return;
    }
    const waiting = this.#waiting.get(m.id);
    if (!waiting) return;
    this.#waiting.delete(m.id);
    if (this.#waiting.size === 0) this.#worker.unref();
    if (m.ok) waiting.resolve(m.value);
    else waiting.reject(fromWire(m.error));
  }

  #send<T>(message: Message): Promise<T> {
    if (this.#gone) return Promise.reject(this.#gone);
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      if (this.#waiting.size === 0) this.#worker.ref();
      this.#waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#post({ id, ...message } as Request);
    });
  }

  /**
   * Writes go over in one message per turn of the event loop: the requests answered in one turn
   * send theirs together (a message costs more than its contents). Anything else goes at once,
   * after the writes queued before it, so the thread sees every message in the order sent.
   */
  #post(message: Request): void {
    if (message.op === 'write') {
      if (this.#outbox.length === 0) setImmediate(() => this.#flush());
      this.#outbox.push(message);
      return;
    }
    this.#flush();
    this.#worker.postMessage(message);
  }

  #flush(): void {
    if (this.#outbox.length === 0) return;
    const messages = this.#outbox;
    this.#outbox = [];
    this.#worker.postMessage(messages.length === 1 ? messages[0] : messages);
  }

  /** A write, run whole on the thread, which finds it by its name in the registry (../write.ts). */
  async job<A extends unknown[], R>(write: Write<A, R>, ...args: A): Promise<R> {
    return resultFromWire(await this.#send({ op: 'write', kind: 'tx', name: write.name, args }));
  }

  /** A shared write (../shared-writes.ts), found on the thread the same way. */
  shared<A extends unknown[], R>(fn: SharedWrite<A, R>, ...args: A): Promise<R> {
    return this.#send({ op: 'write', kind: 'db', name: nameOf(fn), args });
  }

  /** A store write of write-ops.ts. */
  op<K extends WriteOpName>(name: K, ...args: OpArgs<K>): Promise<OpResult<K>> {
    return this.#send({ op: 'write', kind: 'op', name, args });
  }

  migrate = (): Promise<number> => this.#send({ op: 'migrate' });
  synchronous = (): Promise<number> => this.#send({ op: 'synchronous' });
  /** The checkpoint thread's connection's (checkpoints.ts); null when that thread is not running. */
  checkpointerSynchronous = (): Promise<number | null> => this.#send({ op: 'checkpointerSynchronous' });

  /** Waits for what is queued, closes the connection and ends the thread. */
  async close(): Promise<void> {
    if (!this.#gone) await this.#send({ op: 'close' });
    await this.#worker.terminate();
  }
}
