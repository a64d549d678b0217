import { EventEmitter } from 'node:events';
import { randomBase62 } from '../../domain/ids.ts';
import { hasNul, type Row } from '../driver.ts';
import { migrationFailed, schemaNewer } from '../migration-errors.ts';
import * as outbox from '../outbox.ts';
import { CUSTOMER_COLUMNS, SCORE_COLUMNS, toCustomer, toScore } from '../rows.ts';
import type { SharedWrite } from '../shared-writes.ts';
import { SqlStore } from '../sql-store.ts';
import type {
  AccountBacklog,
  AttemptOutcome,
  ClaimedDelivery,
  ClaimOptions,
  CustomerRecord,
  MigrationStatus,
  ScoreRecord,
  Store,
  Tx,
} from '../store.ts';
import { isDeadlock } from '../unavailable.ts';
import type { BatchedArgs, Write } from '../write.ts';
import { BatchedWrites } from './batches.ts';
import { CHANNEL, connect, LOCKS, type Queryable, type Sql } from './connection.ts';
import { pgDriver } from './driver.ts';
import { HEAVY_POOL_SIZE, HeavyWrites } from './heavy-writes.ts';
import { MIGRATIONS } from './migrations.ts';
import { PointReads } from './point-reads.ts';
import * as queue from './queue.ts';
import { pgReads } from './reader.ts';
import { fromText, pgArray } from './text.ts';
import { PgTx } from './tx.ts';

export interface PostgresOptions {
  /** postgres:// or postgresql:// */
  url: string;
  /** Connections in the pool; default 10. */
  poolSize?: number;
  /**
   * Where heavy writes (../write.ts) run: on a thread of their own, started with the first one
   * (`thread`, the default; heavy-writes.ts), or here (`here`: that thread's own store).
   */
  heavy?: 'thread' | 'here';
  /** The NOTIFY payload that marks this store's commits (default: a new random one). */
  instance?: string;
  /** Modules of writes beyond src/writes/ that the heavy-write thread may run (a test's own; ../write.ts). */
  writeModules?: readonly string[];
}

/** How long to wait before trying LISTEN again when the database could not be reached. */
const RELISTEN_MS = 2000;

/**
 * Events restored from another PostgreSQL cluster's dump carry that cluster's transaction ids, which
 * may lie ahead of this one's: the feed, which shows only events below the oldest running
 * transaction (reader.ts), would hide them until this cluster's ids caught up, and order new
 * events before them. An event whose id is ahead of the current transaction's can only have come
 * that way, so then every event takes id 0 and the feed orders them by seq, as written; the new
 * ones follow (docs/operations.md, "PostgreSQL: pg_dump"). Each account's newest id is read
 * through the feed's index, so a start with nothing restored costs a probe per account.
 */
async function rebaseRestoredEvents(sql: Queryable): Promise<void> {
  const [ahead] = await sql<{ found: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM accounts a
      CROSS JOIN LATERAL (
        SELECT xid FROM events e WHERE e.account_id = a.id ORDER BY xid DESC LIMIT 1) newest
      WHERE newest.xid > pg_current_xact_id()) AS found`;
  if (ahead?.found) await sql`UPDATE events SET xid = '0' WHERE xid <> '0'`;
}

export class PostgresStore extends SqlStore implements Store {
  readonly backend = 'postgres' as const;
  readonly #pool: Sql;
  readonly #wake = new EventEmitter();
  /** Sent with NOTIFY, so this store does not wake its own listeners twice (it wakes them at commit). */
  readonly #instance: string;
  /** Where heavy writes run; null: here. */
  readonly #heavy: HeavyWrites | null;
  #listening: Promise<void> | undefined;
  #relisten: NodeJS.Timeout | undefined;
  #closing: Promise<void> | undefined;
  readonly #customers: PointReads<CustomerRecord>;
  readonly #scores: PointReads<ScoreRecord>;
  /** Batched writes' items, gathered per account (batches.ts). */
  readonly #batches = new BatchedWrites(
    (write, args) => this.transaction((tx) => write(tx, ...args)),
    (write, size) => this.#wake.emit('batch', write, size),
  );

  constructor(opts: PostgresOptions) {
    const pool = connect({ url: opts.url, poolSize: opts.poolSize ?? 10 });
    super(pgDriver(pool), pgReads(pool));
    this.#pool = pool;
    this.#instance = opts.instance ?? randomBase62(16);
    this.#heavy =
      opts.heavy === 'here'
        ? null
        : new HeavyWrites(
            {
              url: opts.url,
              poolSize: HEAVY_POOL_SIZE,
              instance: this.#instance,
              writeModules: opts.writeModules ?? [],
            },
            () => this.#wake.emit('due'),
          );
    this.#customers = new PointReads(async (accountId, ids) => {
      const rows = await pool<Row[]>`
        SELECT ${pool.unsafe(CUSTOMER_COLUMNS)} FROM customers
        WHERE account_id = ${accountId} AND id = ANY(${pgArray(ids)}::text[])`;
      return new Map(rows.map((r) => [r.id as string, toCustomer(r, fromText)]));
    });
    this.#scores = new PointReads(async (accountId, ids) => {
      const rows = await pool<Row[]>`
        SELECT ${pool.unsafe(SCORE_COLUMNS)} FROM health_scores
        WHERE account_id = ${accountId} AND customer_id = ANY(${pgArray(ids)}::text[])`;
      return new Map(rows.map((r) => [r.customer_id as string, toScore(r)]));
    });
  }

  // Single-row reads outside a transaction are gathered (point-reads.ts); inside one, PgTx reads
  // (and locks) row by row.
  override async getCustomer(accountId: string, id: string): Promise<CustomerRecord | null> {
    return hasNul(id) ? null : this.#customers.load(accountId, id);
  }

  override async getScore(accountId: string, customerId: string): Promise<ScoreRecord | null> {
    return hasNul(customerId) ? null : this.#scores.load(accountId, customerId);
  }

  /**
   * One migration per transaction, each under the migration lock (an advisory transaction lock)
   * with the version read again under it: processes starting at once apply each migration once,
   * and one that fails is rolled back whole and named (../migration-errors.ts).
   */
  async migrate(): Promise<number> {
    const latest = MIGRATIONS.length;
    for (;;) {
      const done = await this.#pool.begin(async (sql) => {
        await sql`SELECT pg_advisory_xact_lock(${LOCKS.migrate})`;
        await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
          version integer PRIMARY KEY, applied_at bigint NOT NULL)`;
        const [row] = await sql<
          { v: number }[]
        >`SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations`;
        const applied = row?.v ?? 0;
        if (applied > latest) throw schemaNewer(applied, latest);
        if (applied === latest) {
          await rebaseRestoredEvents(sql);
          return latest;
        }
        const version = applied + 1;
        try {
          await sql.unsafe(MIGRATIONS[version - 1] as string);
          await sql`INSERT INTO schema_migrations (version, applied_at) VALUES (${version}, ${Date.now()})`;
        } catch (err) {
          throw migrationFailed(version, latest, err);
        }
        return null;
      });
      if (done !== null) return done;
    }
  }

  async migrationStatus(): Promise<MigrationStatus> {
    const latest = MIGRATIONS.length;
    const [table] = await this.#pool<
      { found: string | null }[]
    >`SELECT to_regclass('schema_migrations') AS found`;
    if (!table?.found) return { applied: 0, latest };
    const [row] = await this.#pool<
      { v: number }[]
    >`SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations`;
    return { applied: row?.v ?? 0, latest };
  }

  async ping(): Promise<void> {
    await this.#pool`SELECT 1`;
  }

  close(): Promise<void> {
    clearTimeout(this.#relisten);
    this.#closing ??= Promise.all([this.#heavy?.close(), this.#pool.end({ timeout: 5 })]).then(() => {});
    return this.#closing;
  }

  run<A extends unknown[], R>(write: Write<A, R>, ...args: A): Promise<R> {
    if (write.heavy && this.#heavy) return this.#heavy.run(write, args);
    if (write.batched) {
      return this.#batches.submit(write as never, args as unknown as BatchedArgs) as Promise<R>;
    }
    return this.transaction((tx) => write(tx, ...args));
  }

  onWriteBatch(listener: (write: string, size: number) => void): () => void {
    this.#wake.on('batch', listener);
    return () => this.#wake.off('batch', listener);
  }

  /** `write` in a transaction on this store's pool, and whether its commit made deliveries due (heavy-thread.ts). */
  runHere<A extends unknown[], R>(write: Write<A, R>, args: A): Promise<{ value: R; due: boolean }> {
    return this.#transact((tx) => write(tx, ...args));
  }

  async transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const { value, due } = await this.#transact(fn);
    if (due) this.#wake.emit('due');
    return value;
  }

  async #transact<T>(fn: (tx: Tx) => Promise<T>): Promise<{ value: T; due: boolean }> {
    // Writes lock in one order where they can (customers, then scores, each sorted), but a write
    // that must read before it knows what to lock may still meet another in a deadlock, which
    // PostgreSQL breaks by rolling one back: that one runs again, whole (a write is a function of
    // its transaction and arguments), at most three times.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#transactOnce(fn);
      } catch (err) {
        if (attempt >= 3 || !isDeadlock(err)) throw err;
      }
    }
  }

  async #transactOnce<T>(fn: (tx: Tx) => Promise<T>): Promise<{ value: T; due: boolean }> {
    let due = false;
    const result = await this.#pool.begin(async (sql) => {
      const tx = new PgTx(sql);
      const value = await fn(tx);
      await tx.held();
      // NOTIFY is transactional: listeners in other processes hear it only if this commits.
      if (tx.deliveriesDue) {
        await sql`SELECT pg_notify(${CHANNEL}, ${this.#instance})`;
        due = true;
      }
      return value;
    });
    return { value: result as T, due };
  }

  protected write<A extends unknown[], R>(fn: SharedWrite<A, R>, ...args: A): Promise<R> {
    return fn(this.db, ...args);
  }

  protected atomic<A extends unknown[], R>(fn: SharedWrite<A, R>, ...args: A): Promise<R> {
    return this.#pool.begin((sql) => fn(pgDriver(sql), ...args)) as Promise<R>;
  }

  claimDeliveries(opts: ClaimOptions): Promise<ClaimedDelivery[]> {
    return this.#pool.begin((sql) => queue.claimDeliveries(sql, opts)) as Promise<ClaimedDelivery[]>;
  }

  async recordAttempt(outcome: AttemptOutcome): Promise<void> {
    await this.recordAttempts([outcome]);
  }

  async recordAttempts(outcomes: AttemptOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    await this.#pool.begin((sql) => queue.recordAttempts(sql, outcomes, Date.now()));
  }

  nextDueAt(after: number): Promise<number | null> {
    return queue.nextDueAt(this.#pool, after);
  }

  backlogByAccount(): Promise<AccountBacklog[]> {
    return outbox.backlogByAccount(this.db);
  }

  /**
   * Listeners hear this store's own commits at once, and other processes' commits through
   * LISTEN on a connection of its own (opened with the first listener).
   */
  onDeliveriesDue(listener: () => void): () => void {
    this.#wake.on('due', listener);
    this.#listen();
    return () => this.#wake.off('due', listener);
  }

  /** Resolves once notifications from other processes reach this store's listeners. */
  listening(): Promise<void> {
    this.#listen();
    return this.#listening ?? Promise.reject(new Error('the store is closed'));
  }

  #listen(): void {
    if (this.#listening || this.#closing) return;
    const started = this.#pool.listen(CHANNEL, (payload) => {
      if (payload !== this.#instance) this.#wake.emit('due');
    });
    this.#listening = started.then(
      () => undefined,
      (err) => {
        // Dispatchers poll as well, so a lost LISTEN costs latency, not deliveries; try again.
        this.#listening = undefined;
        if (!this.#closing && this.#wake.listenerCount('due') > 0) {
          this.#relisten = setTimeout(() => this.#listen(), RELISTEN_MS);
          this.#relisten.unref();
        }
        throw err;
      },
    );
    this.#listening.catch(() => {});
  }
}
