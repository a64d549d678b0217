import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { JOBS, type JobArgs, type JobName, type JobResult } from '../../writes/jobs.ts';
import { type ApiKeyRow, LIST_API_KEYS, toApiKeyRecord } from '../shared.ts';
import type {
  Account,
  ApiKeyRecord,
  AttemptOutcome,
  ClaimedDelivery,
  ClaimOptions,
  IdempotencyClaim,
  PruneBatch,
  Store,
  Tx,
} from '../store.ts';
import { Connection } from './connection.ts';
import { GroupCommit } from './group-commit.ts';
import * as queue from './queue.ts';
import { SqliteReader } from './reader.ts';
import { DirectWriter } from './write-connection.ts';
import { migrate, type OpArgs, type OpResult, WRITE_OPS, type WriteOpName } from './write-ops.ts';
import { ThreadWriter } from './writer-client.ts';

export interface SqliteOptions {
  /** A file path, or ':memory:' (tests of the store alone). */
  path: string;
  synchronous?: 'full' | 'normal';
}

export class SqliteStore extends SqliteReader implements Store {
  readonly backend = 'sqlite' as const;
  /**
   * Where writes run: a file's write connection lives on a thread of its own, with the group
   * commit (docs/operations.md, "The SQLite writer thread"); ':memory:' has one connection for
   * everything, here.
   */
  readonly #thread: ThreadWriter | undefined;
  readonly #here: { writer: DirectWriter; commits: GroupCommit } | undefined;
  readonly #wake: EventEmitter;
  #closing: Promise<void> | undefined;

  constructor(opts: SqliteOptions) {
    const synchronous = opts.synchronous ?? 'full';
    const wake = new EventEmitter();
    const due = () => wake.emit('due');
    if (opts.path === ':memory:') {
      const conn = new Connection(opts.path, synchronous, 16);
      super(conn);
      const writer = new DirectWriter(conn);
      this.#here = { writer, commits: new GroupCommit(writer, (d) => d && due()) };
    } else {
      mkdirSync(dirname(opts.path), { recursive: true });
      // Reads go through their own connection: under WAL it sees only committed data, never a
      // transaction that is half way through on the writer.
      super(new Connection(opts.path, synchronous, 8));
      this.#thread = new ThreadWriter(opts.path, synchronous, due);
    }
    this.#wake = wake;
  }

  async migrate(): Promise<number> {
    return this.#thread
      ? this.#thread.migrate()
      : migrate((this.#here as { writer: DirectWriter }).writer.conn);
  }

  async ping(): Promise<void> {
    this.conn.get('SELECT 1');
  }

  /**
   * PRAGMA synchronous of this store's own connections as SQLite has it: 0 OFF, 1 NORMAL, 2 FULL,
   * 3 EXTRA. It is per connection, so only these can tell; /metrics reports it as
   * vitals_sqlite_synchronous (RELIABILITY.md, "Power loss").
   */
  async synchronousLevels(): Promise<{ connection: 'writer' | 'reader'; level: number }[]> {
    if (!this.#thread) return [{ connection: 'writer', level: WRITE_OPS.synchronous(this.conn) }];
    return [
      { connection: 'writer', level: await this.#thread.synchronous() },
      { connection: 'reader', level: WRITE_OPS.synchronous(this.conn) },
    ];
  }

  /** Waits for the transactions already queued; closing again is a no-op. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#thread) await this.#thread.close();
      else await this.#here?.commits.idle();
      this.conn.db.close();
    })();
    return this.#closing;
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#thread
      ? this.#thread.transaction(fn)
      : (this.#here as { commits: GroupCommit }).commits.run(fn);
  }

  run<K extends JobName>(name: K, ...args: JobArgs<K>): Promise<JobResult<K>> {
    // On the thread, the whole transaction is one message: reads, computing and writes happen there.
    if (this.#thread) return this.#thread.job(name, ...args);
    const job = JOBS[name] as unknown as (tx: Tx, ...a: JobArgs<K>) => Promise<JobResult<K>>;
    return this.transaction((tx) => job(tx, ...args));
  }

  ensureAccount(name: string, now: number): Promise<Account> {
    return this.#op('ensureAccount', name, now);
  }

  insertApiKey(
    key: { id: string; accountId: string; hash: string; prefix: string; createdAt: number },
    opts: { onlyIfNone?: boolean } = {},
  ): Promise<boolean> {
    // One write transaction (BEGIN IMMEDIATE): another process's check-and-insert waits for it.
    return this.#op('insertApiKey', key, opts.onlyIfNone ?? false);
  }

  async findApiKey(hash: string): Promise<{ keyId: string; accountId: string } | null> {
    const row = this.conn.get(
      'SELECT id, account_id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL',
      hash,
    );
    return row ? { keyId: row.id as string, accountId: row.account_id as string } : null;
  }

  async listApiKeys(): Promise<ApiKeyRecord[]> {
    return this.conn.all(LIST_API_KEYS).map((r) => toApiKeyRecord(r as unknown as ApiKeyRow));
  }

  async countActiveApiKeys(): Promise<number> {
    return this.conn.get('SELECT COUNT(*) AS n FROM api_keys WHERE revoked_at IS NULL')?.n as number;
  }

  revokeApiKey(id: string, now: number): Promise<boolean> {
    return this.#op('revokeApiKey', id, now);
  }

  claimDeliveries(opts: ClaimOptions): Promise<ClaimedDelivery[]> {
    return this.#op('claimDeliveries', opts);
  }

  recordAttempt(outcome: AttemptOutcome): Promise<void> {
    return this.#op('recordAttempt', outcome);
  }

  async nextDueAt(after: number): Promise<number | null> {
    return queue.nextDueAt(this.conn, after);
  }

  async countPendingDeliveries(): Promise<number> {
    return this.conn.get("SELECT COUNT(*) AS n FROM deliveries WHERE status = 'pending'")?.n as number;
  }

  onDeliveriesDue(listener: () => void): () => void {
    this.#wake.on('due', listener);
    return () => this.#wake.off('due', listener);
  }

  claimIdempotencyKey(
    accountId: string,
    key: string,
    fingerprint: string,
    now: number,
    opts: { expiresBefore: number; staleBefore: number },
  ): Promise<IdempotencyClaim> {
    return this.#op('claimIdempotencyKey', accountId, key, fingerprint, now, opts);
  }

  completeIdempotencyKey(accountId: string, key: string, status: number, body: string): Promise<void> {
    return this.#op('completeIdempotencyKey', accountId, key, status, body);
  }

  releaseIdempotencyKey(accountId: string, key: string): Promise<void> {
    return this.#op('releaseIdempotencyKey', accountId, key);
  }

  pruneIdempotencyKeys(before: number): Promise<number> {
    return this.#op('pruneIdempotencyKeys', before);
  }

  pruneEvents(before: number, opts: { after: number; limit: number }): Promise<PruneBatch> {
    return this.#op('pruneEvents', before, opts);
  }

  /** A write of write-ops.ts as a transaction of its own, committed with the batch it joins. */
  #op<K extends WriteOpName>(name: K, ...args: OpArgs<K>): Promise<OpResult<K>> {
    if (this.#thread) return this.#thread.op(name, ...args);
    const { writer, commits } = this.#here as { writer: DirectWriter; commits: GroupCommit };
    return commits.run(() => writer.op(name, ...args));
  }
}
