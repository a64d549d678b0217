import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SqlReader } from '../sql/reader.ts';
import type {
  Account,
  AccountBacklog,
  AttemptOutcome,
  AuditEntry,
  ClaimedDelivery,
  ClaimOptions,
  IdempotencyClaim,
  NewApiKey,
  PruneBatch,
  Store,
  Tx,
  UserRecord,
} from '../store.ts';
import type { Write } from '../write.ts';
import { Connection } from './connection.ts';
import { driverOf } from './driver.ts';
import { LocalWriter } from './local-writer.ts';
import * as queue from './queue.ts';
import { sqliteReads } from './reader.ts';
import { type OpArgs, type OpResult, WRITE_OPS, type WriteOpName } from './write-ops.ts';
import { ThreadWriter } from './writer-client.ts';

export interface SqliteOptions {
  /** A file path, or ':memory:' (tests of the store alone). */
  path: string;
  synchronous?: 'full' | 'normal';
}

export class SqliteStore extends SqlReader implements Store {
  readonly backend = 'sqlite' as const;
  /** The read connection (':memory:' has one connection for everything). */
  protected readonly conn: Connection;
  /**
   * Where writes run: a file's write connection lives on a thread of its own, with the group
   * commit (docs/operations.md, "The SQLite writer thread"); ':memory:' has one connection for
   * everything, here. Both have the same methods.
   */
  readonly #writes: ThreadWriter | LocalWriter;
  readonly #wake = new EventEmitter();
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
    const due = () => this.#wake.emit('due');
    this.#writes = memory ? new LocalWriter(this.conn, due) : new ThreadWriter(opts.path, synchronous, due);
  }

  migrate(): Promise<number> {
    return this.#writes.migrate();
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
    const writer = { connection: 'writer' as const, level: await this.#writes.synchronous() };
    if (this.#writes instanceof LocalWriter) return [writer];
    return [writer, { connection: 'reader', level: WRITE_OPS.synchronous(this.conn) }];
  }

  /** Waits for the transactions already queued; closing again is a no-op. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#writes.close();
      // ':memory:' reads through the writer's own connection, closed with it.
      if (this.#writes instanceof ThreadWriter) this.conn.db.close();
    })();
    return this.#closing;
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#writes.transaction(fn);
  }

  run<A extends unknown[], R>(write: Write<A, R>, ...args: A): Promise<R> {
    // On the thread, the whole transaction is one message: reads, computing and writes happen there.
    return this.#writes.job(write, ...args);
  }

  ensureAccount(name: string, now: number): Promise<Account> {
    return this.#op('ensureAccount', name, now);
  }

  insertApiKey(key: NewApiKey, opts: { onlyIfNone?: boolean } = {}): Promise<boolean> {
    // One write transaction (BEGIN IMMEDIATE): another process's check-and-insert waits for it.
    return this.#op('insertApiKey', key, opts.onlyIfNone ?? false);
  }

  createUser(...args: Parameters<Store['createUser']>): Promise<boolean> {
    return this.#op('createUser', ...args);
  }

  setUserRole(accountId: string, id: string, role: UserRecord['role']): Promise<UserRecord | null> {
    return this.#op('setUserRole', accountId, id, role);
  }

  removeAccountUser(accountId: string, id: string): Promise<boolean> {
    return this.#op('removeAccountUser', accountId, id);
  }

  removeUser(email: string): Promise<boolean> {
    return this.#op('removeUser', email);
  }

  redeemSignInLink(tokenHash: string, passwordHash: string, now: number): Promise<UserRecord | null> {
    return this.#op('redeemSignInLink', tokenHash, passwordHash, now);
  }

  claimSignInAttempt(email: string, at: number, window: { since: number; limit: number }) {
    return this.#op('claimSignInAttempt', email, at, window);
  }

  async releaseSignInAttempt(email: string, at: number): Promise<void> {
    await this.#op('releaseSignInAttempt', email, at);
  }

  pruneSignInFailures(before: number): Promise<number> {
    return this.#op('pruneSignInFailures', before);
  }

  async putSession(idHash: string, userId: string, data: string, expiresAt: number): Promise<void> {
    await this.#op('putSession', idHash, userId, data, expiresAt);
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.#op('deleteSession', idHash);
  }

  pruneAudit(before: number, limit: number): Promise<number> {
    return this.#op('pruneAudit', before, limit);
  }

  async appendAudit(accountId: string, entry: AuditEntry): Promise<void> {
    await this.#op('appendAudit', accountId, entry);
  }

  revokeApiKey(id: string, now: number): Promise<boolean> {
    return this.#op('revokeApiKey', id, now);
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

  async backlogByAccount(): Promise<AccountBacklog[]> {
    return queue.backlogByAccount(this.conn);
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
    return this.#writes.op(name, ...args);
  }
}
