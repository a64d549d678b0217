import { EventEmitter } from 'node:events';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { newId } from '../../domain/ids.ts';
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
import * as idempotency from './idempotency.ts';
import { MIGRATIONS } from './migrations.ts';
import * as queue from './queue.ts';
import { SqliteReader } from './reader.ts';
import * as retention from './retention.ts';
import { SqliteTx } from './tx.ts';

export interface SqliteOptions {
  /** A file path, or ':memory:' (tests of the store alone). */
  path: string;
  synchronous?: 'full' | 'normal';
}

export class SqliteStore extends SqliteReader implements Store {
  readonly backend = 'sqlite' as const;
  readonly #writer: Connection;
  readonly #tx: SqliteTx;
  readonly #wake = new EventEmitter();
  /** Transactions on the one write connection run one after another, committed in groups. */
  readonly #writes: GroupCommit<SqliteTx>;
  #closing: Promise<void> | undefined;

  constructor(opts: SqliteOptions) {
    if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
    const synchronous = opts.synchronous ?? 'full';
    const writer = new Connection(opts.path, synchronous, 16);
    // Reads go through their own connection: under WAL it sees only committed data, never a
    // transaction that is half way through on the writer.
    super(opts.path === ':memory:' ? writer : new Connection(opts.path, synchronous, 8));
    this.#writer = writer;
    this.#tx = new SqliteTx(writer);
    this.#writes = new GroupCommit(writer.db, this.#tx, {
      begin: (tx) => {
        tx.deliveriesDue = false;
      },
      committed: (tx) => {
        if (tx.deliveriesDue) this.#wake.emit('due');
      },
      save: (tx) => tx.deliveriesDue,
      restore: (tx, saved) => {
        tx.deliveriesDue = saved as boolean;
      },
    });
  }

  async migrate(): Promise<number> {
    const db = this.#writer.db;
    db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
    );
    db.exec('BEGIN IMMEDIATE');
    try {
      const row = db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as {
        v: number;
      };
      for (let v = row.v + 1; v <= MIGRATIONS.length; v++) {
        db.exec(MIGRATIONS[v - 1] as string);
        db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(v, Date.now());
      }
      db.exec('COMMIT');
    } catch (err) {
      db.exec('ROLLBACK');
      throw err;
    }
    return MIGRATIONS.length;
  }

  async ping(): Promise<void> {
    this.conn.get('SELECT 1');
  }

  /**
   * PRAGMA synchronous of this store's own connections as SQLite has it: 0 OFF, 1 NORMAL, 2 FULL,
   * 3 EXTRA. It is per connection, so only these can tell; /metrics reports it as
   * vitals_sqlite_synchronous (RELIABILITY.md, "Power loss").
   */
  synchronousLevels(): { connection: 'writer' | 'reader'; level: number }[] {
    const level = (c: Connection) => Number(c.get('PRAGMA synchronous')?.synchronous);
    const levels: { connection: 'writer' | 'reader'; level: number }[] = [
      { connection: 'writer', level: level(this.#writer) },
    ];
    if (this.conn !== this.#writer) levels.push({ connection: 'reader', level: level(this.conn) });
    return levels;
  }

  /** Waits for the transactions already queued; closing again is a no-op. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#writes.idle();
      if (this.conn !== this.#writer) this.conn.db.close();
      this.#writer.db.close();
    })();
    return this.#closing;
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#writes.run(fn);
  }

  async ensureAccount(name: string, now: number): Promise<Account> {
    return this.transaction(async () => {
      const found = this.#writer.get('SELECT * FROM accounts WHERE name = ?', name);
      if (found) return { id: found.id as string, name, createdAt: found.created_at as number };
      const account = { id: newId.account(), name, createdAt: now };
      this.#writer.run('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)', account.id, name, now);
      return account;
    });
  }

  insertApiKey(
    key: { id: string; accountId: string; hash: string; prefix: string; createdAt: number },
    opts: { onlyIfNone?: boolean } = {},
  ): Promise<boolean> {
    // One write transaction (BEGIN IMMEDIATE): another process's check-and-insert waits for it.
    return this.transaction(async () => {
      if (opts.onlyIfNone && this.#writer.get('SELECT 1 AS found FROM api_keys WHERE revoked_at IS NULL')) {
        return false;
      }
      return (
        this.#writer.run(
          'INSERT INTO api_keys (id, account_id, key_hash, prefix, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (key_hash) DO NOTHING',
          key.id,
          key.accountId,
          key.hash,
          key.prefix,
          key.createdAt,
        ) === 1
      );
    });
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

  async revokeApiKey(id: string, now: number): Promise<boolean> {
    return this.transaction(
      async () =>
        this.#writer.run(
          'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
          now,
          id,
        ) === 1,
    );
  }

  claimDeliveries(opts: ClaimOptions): Promise<ClaimedDelivery[]> {
    return this.transaction(async () => queue.claimDeliveries(this.#writer, opts));
  }

  recordAttempt(outcome: AttemptOutcome): Promise<void> {
    return this.transaction(async () => queue.recordAttempt(this.#writer, outcome, Date.now()));
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
    return this.transaction(async () =>
      idempotency.claimIdempotencyKey(this.#writer, accountId, key, fingerprint, now, opts),
    );
  }

  completeIdempotencyKey(accountId: string, key: string, status: number, body: string): Promise<void> {
    return this.transaction(async () => {
      this.#writer.run(
        'UPDATE idempotency_keys SET status = ?, body = ? WHERE account_id = ? AND key = ?',
        status,
        body,
        accountId,
        key,
      );
    });
  }

  releaseIdempotencyKey(accountId: string, key: string): Promise<void> {
    return this.transaction(async () => {
      this.#writer.run(
        'DELETE FROM idempotency_keys WHERE account_id = ? AND key = ? AND status IS NULL',
        accountId,
        key,
      );
    });
  }

  pruneIdempotencyKeys(before: number): Promise<number> {
    return this.transaction(async () =>
      this.#writer.run('DELETE FROM idempotency_keys WHERE created_at < ?', before),
    );
  }

  pruneEvents(before: number, opts: { after: number; limit: number }): Promise<PruneBatch> {
    return this.transaction(async () => retention.pruneEvents(this.#writer, before, opts));
  }
}
