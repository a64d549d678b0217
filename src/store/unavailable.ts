// "The database is not there right now", told apart from every other failure: the API answers it
// with 503 and Retry-After instead of a 500, and background jobs wait for the database to come
// back (docs/postgresql.md, "When the database restarts"; docs/operations.md, "When a write
// cannot be committed"). Recognised by the error's `code`: the socket errors and connection
// codes of the driver, PostgreSQL's SQLSTATEs for a server that is shutting down, starting up
// or full, and SQLite's result codes for a disk that is full, failing or held by another process.

/**
 * Socket errors (Node) and postgres.js's own codes for a connection that was lost or never made.
 * Not CONNECTION_ENDED: the driver says that after our own `close()`, and a request that meets a
 * closed store is a bug (a 500), as on SQLite.
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/** admin_shutdown, crash_shutdown, cannot_connect_now (starting up, shutting down, in recovery), too_many_connections. */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** Class 08: connection exception. */
const CONNECTION_EXCEPTION = /^08[0-9A-Z]{3}$/;

/**
 * node:sqlite's primary result codes (errcode & 0xff) for "not now": SQLITE_BUSY (another
 * process held the lock past busy_timeout), SQLITE_NOMEM, SQLITE_IOERR, SQLITE_FULL (disk or
 * max_page_count), SQLITE_CANTOPEN. Constraint and logic errors are bugs or bad data: not here.
 */
const SQLITE_CODES = new Map([
  [5, 'SQLITE_BUSY'],
  [7, 'SQLITE_NOMEM'],
  [10, 'SQLITE_IOERR'],
  [13, 'SQLITE_FULL'],
  [14, 'SQLITE_CANTOPEN'],
]);

/** SQLite's name for a node:sqlite error's result code, when it is one of SQLITE_CODES. */
function sqliteCode(err: { code?: unknown; errcode?: unknown }): string | undefined {
  if (err.code !== 'ERR_SQLITE_ERROR' || typeof err.errcode !== 'number') return undefined;
  return SQLITE_CODES.get(err.errcode & 0xff);
}

export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 3) return false;
  const { code, errors, cause } = err as { code?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string') {
    if (CONNECTION_CODES.has(code) || SQLSTATES.has(code) || CONNECTION_EXCEPTION.test(code)) return true;
    // A SQLite batch rolled back as a whole (sqlite/group-commit.ts): nothing stored, retry.
    if (code === 'SQLITE_TRANSACTION_LOST' || sqliteCode(err) !== undefined) return true;
  }
  // Node's AggregateError (every address of a host refused) and errors that wrap another.
  if (Array.isArray(errors) && errors.some((e) => isDatabaseUnavailable(e, depth + 1))) return true;
  return cause !== undefined && isDatabaseUnavailable(cause, depth + 1);
}

/** The code to log for such an error (never its message or stack: one line says enough). */
export function unavailableCode(err: unknown): string {
  if (typeof err !== 'object' || err === null) return 'unknown';
  const { code, cause } = err as { code?: unknown; cause?: unknown };
  // A lost SQLite batch: what SQLite said (SQLITE_FULL, …) says more than that it was lost.
  if (code === 'SQLITE_TRANSACTION_LOST' && sqliteCode((cause ?? {}) as object) !== undefined) {
    return unavailableCode(cause);
  }
  return sqliteCode(err) ?? (typeof code === 'string' ? code : 'unknown');
}

/**
 * A background job's failed pass, in one line: only the code when the database is away (it
 * will be back; no stack for that), the error otherwise. `next` says when the job runs again.
 */
export function logJobFailure(
  log: { error(obj: object, msg: string): void },
  job: string,
  err: unknown,
  next: string,
): void {
  if (isDatabaseUnavailable(err)) {
    log.error({ code: unavailableCode(err) }, `${job}: the database is not reachable; ${next}`);
  } else {
    log.error({ err }, `${job} failed; ${next}`);
  }
}

interface Log {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * Logs an outage without a flood: a warning at the first failure, then at most one every
 * `everyMs` (with the failures since the last line), and one line when the database answers again.
 */
export class OutageLog {
  readonly #log: Log;
  readonly #what: string;
  readonly #everyMs: number;
  #since: number | undefined;
  #lastAt = 0;
  #failures = 0;

  constructor(log: Log, what: string, everyMs = 10_000) {
    this.#log = log;
    this.#what = what;
    this.#everyMs = everyMs;
  }

  get down(): boolean {
    return this.#since !== undefined;
  }

  failed(err: unknown): void {
    const now = Date.now();
    this.#failures++;
    this.#since ??= now;
    if (this.#lastAt !== 0 && now - this.#lastAt < this.#everyMs) return;
    this.#log.warn(
      { code: unavailableCode(err), failures: this.#failures, downMs: now - this.#since },
      `${this.#what}: the database is not reachable`,
    );
    this.#lastAt = now;
    this.#failures = 0;
  }

  recovered(): void {
    if (this.#since === undefined) return;
    this.#log.info({ downMs: Date.now() - this.#since }, `${this.#what}: the database is reachable again`);
    this.#since = undefined;
    this.#lastAt = 0;
    this.#failures = 0;
  }
}

/**
 * PostgreSQL rolled the transaction back to break a deadlock (40P01) or a serialization conflict
 * (40001): nothing of it committed, and the same work run again will most likely pass.
 */
export const isDeadlock = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
};
