import postgres from 'postgres';
import { isDatabaseUnavailable } from '../unavailable.ts';

/** The slice of the driver Vitals uses: tagged queries, on the pool or inside a transaction. */
export type Sql = postgres.Sql;
export type Queryable = postgres.ISql;

export interface ConnectOptions {
  url: string;
  /** Connections in the pool (one more is opened for LISTEN when a dispatcher runs). */
  poolSize: number;
}

/**
 * Seconds between attempts of the LISTEN connection to reconnect while the database is away
 * (it retries by itself, with nothing waiting on it): 0.1 s, doubling, at most 2 s.
 */
const listenBackoff = (retries: number) => Math.min(0.05 * 2 ** retries, 2);

/**
 * postgres.js (3.4.9) sends small writes from a setImmediate. When a socket closes with such a
 * write pending, the driver cancels it but keeps the cancelled timer as "scheduled"
 * (LanternOps/breeze#3225): the connection then never sends its next small write, and each of
 * its connection attempts hangs until connect_timeout. A write of 1 KiB or more is sent at once
 * and clears that state, so the startup message is padded to that size with a setting nobody
 * reads: a connection in that state sends its stale bytes with it, the server refuses them, and
 * the driver reconnects cleanly at once. The pool is replaced after a loss anyway (below); this
 * keeps the LISTEN connection, which is not, from hanging. (Over TLS the first write is the
 * 8-byte SSLRequest, which this does not help.)
 */
const STARTUP_PADDING = 'vitals.startup_padding';

/** A transaction callback that failed because its connection is gone waits this long for begin() to give up. */
const CLOSE_GRACE_MS = 10_000;

/** A replaced pool lets its queries finish for this long (seconds), then drops them (a 503). */
const RETIRE_TIMEOUT_S = 5;

/**
 * The pool Vitals queries, with what the driver does badly when the database goes away worked
 * around (docs/postgresql.md, "When the database restarts"; each found by experiment with a
 * PostgreSQL server stopped, crashed and cut off under load):
 *
 * - No reconnect backoff: the driver waits up to 20 s per connection before it tries again, and
 *   every request that needs that connection waits with it, so requests would take up to 30 s
 *   to fail while the database is away, and the first ones after it comes back up to 7 s to
 *   succeed. Here a request tries once and fails in milliseconds (a 503), and the first one after
 *   the restart gets through.
 * - A lost connection replaces the whole pool. The driver keeps state of a lost connection
 *   that it should have cleared, and reuses the connection: queries pipelined onto it just as it
 *   fails are never answered nor rejected (requests that hang for good, and then every query
 *   after them on that connection), its next query gets the old server's shutdown error, and a
 *   write pending when it closes leaves it unable to send (above). So once a connection of a pool
 *   that has worked closes, new queries go to a new pool and the old one is ended: what it still
 *   runs may finish (RETIRE_TIMEOUT_S), and what it stranded is rejected. While the database is
 *   away the new pool's attempts fail, and it is kept: one replacement per outage (and one per
 *   connection terminated on the server's side).
 * - Transactions: see guardedBegin.
 */
export function connect(opts: ConnectOptions): Sql {
  const common = {
    // A server that accepts no TCP connection at all (a host that is down): give up after 5 s.
    // A server that is stopped refuses at once, whatever this says.
    connect_timeout: 5,
    // Timestamps and counts are bigint; every one of them fits a JS number exactly, and the rest
    // of Vitals works in numbers (the driver's default would be strings).
    types: {
      int8: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (raw: string) => Number(raw) },
    },
    // "relation already exists, skipping" and the like are not worth a line on stdout.
    onnotice: () => {},
    connection: { application_name: 'vitals', [STARTUP_PADDING]: '.'.repeat(1024) },
  };
  let current: Sql;
  /** A connection of `current` has started up (the server sent its parameters). */
  let worked = false;
  let ended = false;
  const retiring = new Set<Promise<void>>();
  const open = (): Sql => {
    const pool: Sql = postgres(opts.url, {
      ...common,
      max: opts.poolSize,
      backoff: () => 0,
      // The driver would close each connection after 30 to 60 minutes, and any close replaces
      // the pool; a pool lives until it loses a connection instead.
      max_lifetime: null,
      onparameter: () => {
        if (pool === current) worked = true;
      },
      onclose: () => {
        if (pool !== current || !worked || ended) return;
        current = open();
        worked = false;
        const retired = pool.end({ timeout: RETIRE_TIMEOUT_S }).catch(() => {});
        retiring.add(retired);
        void retired.then(() => retiring.delete(retired));
      },
    }) as unknown as Sql;
    return pool;
  };
  current = open();
  // LISTEN runs on a connection of its own that re-subscribes by itself after it is lost; its
  // retries are paced (listenBackoff) instead of spinning while the database is away.
  const listener = postgres(opts.url, { ...common, max: 1, backoff: listenBackoff }) as unknown as Sql;
  const begin = (...args: unknown[]) => guardedBegin(current, args);
  const end = async (options?: { timeout?: number }) => {
    ended = true;
    await Promise.all([current.end(options), listener.end(options), ...retiring]);
  };
  const target = (() => {}) as unknown as Sql;
  return new Proxy(target, {
    apply: (_target, _this, args) => (current as unknown as (...a: unknown[]) => unknown)(...args),
    get: (_target, property) => {
      if (property === 'begin') return begin;
      if (property === 'end') return end;
      if (property === 'listen') return listener.listen;
      return (current as unknown as Record<PropertyKey, unknown>)[property];
    },
  });
}

/**
 * postgres.js (3.4.9) sends its own ROLLBACK when a transaction's callback throws, even when
 * the callback threw because the connection is gone; that write to the closed socket throws
 * from a timer and ends the process (porsager/postgres#1208; seen here on `pg_ctl stop -m fast`
 * with a write in flight). So a callback that failed because the database went away does not
 * settle: begin() rejects by itself when the connection closes, and nothing more is sent.
 * Should the connection somehow stay open, the callback throws after CLOSE_GRACE_MS and the
 * driver rolls back as usual. Savepoints (`ROLLBACK TO`) get the same treatment.
 */
function guardedBegin(pool: Sql, args: unknown[]): Promise<unknown> {
  const fn = args.pop() as Callback;
  let settled: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    settled = resolve;
  });
  const begin = pool.begin as unknown as (...a: unknown[]) => Promise<unknown>;
  const result = begin(...args, guarded(fn, done));
  result.then(settled, settled);
  return result;
}

type Callback = (sql: unknown) => unknown;

function guarded(fn: Callback, done: Promise<void>): Callback {
  return async (sql) => {
    const tx = sql as { savepoint: (...args: unknown[]) => unknown };
    const savepoint = tx.savepoint;
    tx.savepoint = (...args: unknown[]) => {
      const last = args.at(-1);
      if (typeof last !== 'function') return savepoint(...args);
      return savepoint(...args.slice(0, -1), guarded(last as Callback, done));
    };
    try {
      return await fn(sql);
    } catch (err) {
      if (isDatabaseUnavailable(err)) await closedOrGrace(done);
      throw err;
    }
  };
}

/** Never settles once `closed` has (begin() has rejected); resolves after the grace period otherwise. */
function closedOrGrace(closed: Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, CLOSE_GRACE_MS);
    timer.unref();
    void closed.then(() => clearTimeout(timer));
  });
}

/** Advisory lock keys (the two-int form, so they never collide with the migration lock's one-bigint form). */
export const LOCKS = {
  /** pg_advisory_xact_lock(bigint): one migrator at a time per database. */
  migrate: 5_649_544_100_001,
  /** pg_advisory_xact_lock(int, int): class of the per-account settings lock; the account's hash is the other half. */
  account: 0x56_49_54_41,
  /** pg_try_advisory_xact_lock(bigint): one process prunes old events at a time. */
  retention: 5_649_544_100_002,
  /** pg_advisory_xact_lock(bigint): one process at a time checks for a key and adds the first. */
  bootstrap: 5_649_544_100_003,
  /** pg_advisory_xact_lock(bigint): one dispatcher at a time claims deliveries (docs/webhooks.md). */
  claim: 5_649_544_100_004,
} as const;

/** The channel dispatchers LISTEN on; a commit that made deliveries due NOTIFYs it. */
export const CHANNEL = 'vitals_deliveries_due';
