import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { newId } from '../../domain/ids.ts';
import type { Account, ApiKeyRecord, CustomerRecord, Page, Reader, Store, Tx } from '../store.ts';
import { MIGRATIONS } from './migrations.ts';

type Row = Record<string, SQLInputValue>;

export interface SqliteOptions {
  /** A file path, or ':memory:' (tests of the store alone). */
  path: string;
  synchronous?: 'full' | 'normal';
}

/** node:sqlite is synchronous: a statement cache per connection keeps prepare costs off the hot path. */
class Connection {
  readonly db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();

  constructor(path: string, synchronous: string) {
    this.db = new DatabaseSync(path, { enableForeignKeyConstraints: true, timeout: 5000 });
    this.db.exec(
      `PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous}; PRAGMA busy_timeout = 5000;`,
    );
  }

  statement(sql: string): StatementSync {
    let stmt = this.#statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }

  get(sql: string, ...params: SQLInputValue[]): Row | undefined {
    return this.statement(sql).get(...params) as Row | undefined;
  }

  all(sql: string, ...params: SQLInputValue[]): Row[] {
    return this.statement(sql).all(...params) as Row[];
  }

  run(sql: string, ...params: SQLInputValue[]): number {
    return Number(this.statement(sql).run(...params).changes);
  }
}

const toCustomer = (r: Row): CustomerRecord => ({
  id: r.id as string,
  name: r.name as string,
  email: r.email as string,
  metadata: JSON.parse(r.metadata as string),
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
});

/** Queries shared by the read connection and the write transaction. */
class SqliteReader implements Reader {
  protected readonly conn: Connection;

  constructor(conn: Connection) {
    this.conn = conn;
  }

  async getCustomer(accountId: string, id: string): Promise<CustomerRecord | null> {
    const row = this.conn.get('SELECT * FROM customers WHERE account_id = ? AND id = ?', accountId, id);
    return row ? toCustomer(row) : null;
  }

  async listCustomers(
    accountId: string,
    opts: { startingAfter?: string; limit: number },
  ): Promise<Page<CustomerRecord>> {
    const rows =
      opts.startingAfter === undefined
        ? this.conn.all(
            'SELECT * FROM customers WHERE account_id = ? ORDER BY id LIMIT ?',
            accountId,
            opts.limit + 1,
          )
        : this.conn.all(
            'SELECT * FROM customers WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?',
            accountId,
            opts.startingAfter,
            opts.limit + 1,
          );
    const hasMore = rows.length > opts.limit;
    return { data: rows.slice(0, opts.limit).map(toCustomer), hasMore };
  }
}

class SqliteTx extends SqliteReader implements Tx {
  async insertCustomer(accountId: string, c: CustomerRecord): Promise<boolean> {
    const changes = this.conn.run(
      `INSERT INTO customers (account_id, id, name, email, metadata, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      accountId,
      c.id,
      c.name,
      c.email,
      JSON.stringify(c.metadata),
      c.createdAt,
      c.updatedAt,
    );
    return changes === 1;
  }

  async updateCustomer(accountId: string, c: CustomerRecord): Promise<void> {
    this.conn.run(
      'UPDATE customers SET name = ?, email = ?, metadata = ?, updated_at = ? WHERE account_id = ? AND id = ?',
      c.name,
      c.email,
      JSON.stringify(c.metadata),
      c.updatedAt,
      accountId,
      c.id,
    );
  }

  async deleteCustomer(accountId: string, id: string): Promise<boolean> {
    return this.conn.run('DELETE FROM customers WHERE account_id = ? AND id = ?', accountId, id) === 1;
  }
}

export class SqliteStore extends SqliteReader implements Store {
  readonly backend = 'sqlite' as const;
  readonly #writer: Connection;
  readonly #tx: SqliteTx;
  /** Transactions on the one write connection run one after another. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(opts: SqliteOptions) {
    if (opts.path !== ':memory:') mkdirSync(dirname(opts.path), { recursive: true });
    const synchronous = opts.synchronous ?? 'full';
    const writer = new Connection(opts.path, synchronous);
    // Reads go through their own connection: under WAL it sees only committed data, never a
    // transaction that is half way through on the writer.
    super(opts.path === ':memory:' ? writer : new Connection(opts.path, synchronous));
    this.#writer = writer;
    this.#tx = new SqliteTx(writer);
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

  async close(): Promise<void> {
    await this.#queue.catch(() => {});
    if (this.conn !== this.#writer) this.conn.db.close();
    this.#writer.db.close();
  }

  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      const db = this.#writer.db;
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn(this.#tx);
        db.exec('COMMIT');
        return result;
      } catch (err) {
        if (db.isTransaction) db.exec('ROLLBACK');
        throw err;
      }
    };
    const result = this.#queue.then(run, run);
    this.#queue = result.catch(() => {});
    return result;
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

  async insertApiKey(key: {
    id: string;
    accountId: string;
    hash: string;
    prefix: string;
    createdAt: number;
  }) {
    await this.transaction(async () => {
      this.#writer.run(
        'INSERT INTO api_keys (id, account_id, key_hash, prefix, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (key_hash) DO NOTHING',
        key.id,
        key.accountId,
        key.hash,
        key.prefix,
        key.createdAt,
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
    return this.conn
      .all(
        `SELECT k.id, k.account_id, a.name AS account_name, k.prefix, k.created_at, k.revoked_at
         FROM api_keys k JOIN accounts a ON a.id = k.account_id ORDER BY k.created_at, k.id`,
      )
      .map((r) => ({
        id: r.id as string,
        accountId: r.account_id as string,
        accountName: r.account_name as string,
        prefix: r.prefix as string,
        createdAt: r.created_at as number,
        revokedAt: (r.revoked_at as number | null) ?? null,
      }));
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
}
