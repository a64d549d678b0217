// Environment → one validated, typed Config. A bad value stops start-up with a message
// naming the variable, so misconfiguration never surfaces later as odd behaviour.
import { resolve } from 'node:path';
import { API_KEY_PATTERN } from './domain/ids.ts';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Parser<T> = (raw: string) => T;

const integer =
  (min: number, max: number): Parser<number> =>
  (raw) => {
    if (!/^\d+$/.test(raw)) throw new Error(`must be a whole number from ${min} to ${max}`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`must be a whole number from ${min} to ${max}`);
    return n;
  };

const boolean: Parser<boolean> = (raw) => {
  const v = raw.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new Error('must be true or false');
};

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "250ms", "10s", "2m", "1h"; a bare number is milliseconds. */
export const duration: Parser<number> = (raw) => {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(raw.trim());
  if (!m) throw new Error('must be a duration such as 500ms, 10s or 2m');
  const ms = Math.round(Number(m[1]) * (UNITS[m[2] ?? 'ms'] ?? 1));
  if (!Number.isFinite(ms) || ms > 86_400_000) throw new Error('must be at most 24h');
  return ms;
};

/** A duration of at least 1s. */
const atLeastASecond: Parser<number> = (raw) => {
  const ms = duration(raw);
  if (ms < 1000) throw new Error('must be at least 1s');
  return ms;
};

/** "30d", "12h", "90m", "45s" (up to 10 years), or "off": how long something is kept. */
const keepFor: Parser<number | null> = (raw) => {
  if (raw === 'off') return null;
  const m = /^(\d+)(d|h|m|s)$/.exec(raw.trim());
  const ms = Number(m?.[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 }[(m?.[2] ?? 'd') as 'd'];
  if (!m || !(ms >= 1000) || ms > 3650 * 86_400_000) {
    throw new Error('must be a period such as 30d, 12h or 90m (at most 3650d), or off');
  }
  return ms;
};

const oneOf =
  <T extends string>(...values: T[]): Parser<T> =>
  (raw) => {
    if ((values as string[]).includes(raw)) return raw as T;
    throw new Error(`must be one of ${values.join(', ')}`);
  };

const text: Parser<string> = (raw) => raw;

const durations: Parser<number[]> = (raw) => {
  const list = raw.split(',').map((part) => duration(part));
  if (list.length === 0 || list.length > 20)
    throw new Error('must list 1 to 20 durations, such as 1s,5s,25s');
  return list;
};

/** "1000/s", "6000/min", "100000/h", or "off". */
const rate: Parser<{ max: number; windowMs: number } | null> = (raw) => {
  if (raw === 'off') return null;
  const m = /^(\d+)\/(s|min|h)$/.exec(raw.trim());
  const max = Number(m?.[1]);
  if (!m || !(max >= 1)) throw new Error('must be a rate such as 1000/s, 6000/min or 100000/h, or off');
  return { max, windowMs: { s: 1000, min: 60_000, h: 3_600_000 }[m[2] as 's' | 'min' | 'h'] };
};

export const ROLES = ['api', 'dispatcher'] as const;
export type Role = (typeof ROLES)[number];

const roles: Parser<Role[]> = (raw) => {
  const list = [...new Set(raw.split(',').map((r) => r.trim()))];
  if (list.length === 0 || !list.every((r) => (ROLES as readonly string[]).includes(r))) {
    throw new Error('must be api, dispatcher or api,dispatcher');
  }
  return list as Role[];
};

const headerName: Parser<string> = (raw) => {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(raw)) throw new Error('must be an HTTP header name (letters, digits, -)');
  return raw;
};

/** postgres://user:password@host:port/database?options (several hosts allowed, as the driver takes them). */
const databaseUrl: Parser<string> = (raw) => {
  if (!/^postgres(ql)?:\/\/[^\s/?#]*(\/[^\s?#]*)?(\?\S*)?$/.test(raw)) {
    throw new Error('must be a URL such as postgres://user:password@host:5432/vitals');
  }
  return raw;
};

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Set: PostgreSQL at this URL; unset: SQLite under dataDir. */
  databaseUrl: string | undefined;
  /** Connections per process to PostgreSQL. */
  dbPoolSize: number;
  apiKey: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  sqliteSynchronous: 'full' | 'normal';
  keyCacheTtlMs: number;
  shutdownTimeoutMs: number;
  /** Requests per API key per window, counted in each process's memory; null when off. */
  rateLimit: { max: number; windowMs: number } | null;
  roles: Role[];
  /** Events (and their finished deliveries) older than this are removed; null keeps them all. */
  eventRetentionMs: number | null;
  /** How long audit log entries are kept (docs/people.md); null keeps them all. */
  auditRetentionMs: number | null;
  /** How long metric points are kept (docs/scoring.md); null keeps them all. */
  metricRetentionMs: number | null;
  /** How often derived factors are rescored as time passes (docs/scoring.md). */
  rescoreIntervalMs: number;
  webhook: {
    backoffMs: number[];
    maxRetries: number;
    timeoutMs: number;
    blockPrivate: boolean;
    signatureHeader: string;
    /** Deliveries in flight at once in this dispatcher process. */
    concurrency: number;
    /**
     * The most deliveries of one webhook in flight at once, over every dispatcher; a webhook starts
     * lower and earns slots by answering (docs/webhooks.md, "Throughput and fairness").
     */
    perWebhookConcurrency: number;
    /** The most deliveries of one account in flight at once, over every dispatcher. */
    perAccountConcurrency: number;
    /** How often a dispatcher looks for due work when nothing woke it. */
    pollMs: number;
  };
}

/** Values that may hold a secret are named in errors but never echoed (a typo'd key is still mostly a key). */
const SECRET = new Set(['VITALS_API_KEY', 'DATABASE_URL']);

function read<T>(env: NodeJS.ProcessEnv, name: string, parse: Parser<T>, fallback: string): T;
function read<T>(env: NodeJS.ProcessEnv, name: string, parse: Parser<T>): T | undefined;
function read<T>(env: NodeJS.ProcessEnv, name: string, parse: Parser<T>, fallback?: string): T | undefined {
  const raw = env[name];
  const value = raw === undefined || raw === '' ? fallback : raw;
  if (value === undefined) return undefined;
  try {
    return parse(value);
  } catch (err) {
    const shown = SECRET.has(name) ? name : `${name}=${JSON.stringify(raw)}`;
    throw new ConfigError(`${shown} is invalid: ${(err as Error).message}.`);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: read(env, 'PORT', integer(0, 65535), '3000'),
    host: read(env, 'HOST', text, '0.0.0.0'),
    dataDir: resolve(read(env, 'VITALS_DATA_DIR', text, './data')),
    databaseUrl: read(env, 'DATABASE_URL', databaseUrl),
    dbPoolSize: read(env, 'VITALS_DB_POOL_SIZE', integer(1, 1000), '10'),
    apiKey: read(env, 'VITALS_API_KEY', (raw) => {
      if (!API_KEY_PATTERN.test(raw)) throw new Error('must be vk_ followed by 32 letters or digits');
      return raw;
    }),
    logLevel: read(
      env,
      'VITALS_LOG_LEVEL',
      oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
      'info',
    ),
    sqliteSynchronous: read(env, 'VITALS_SQLITE_SYNCHRONOUS', oneOf('full', 'normal'), 'full'),
    keyCacheTtlMs: read(env, 'VITALS_KEY_CACHE_TTL', duration, '2s'),
    shutdownTimeoutMs: read(env, 'VITALS_SHUTDOWN_TIMEOUT', duration, '10s'),
    rateLimit: read(env, 'VITALS_RATE_LIMIT', rate, '1000/s'),
    roles: read(env, 'VITALS_ROLES', roles, 'api,dispatcher'),
    eventRetentionMs: read(env, 'VITALS_EVENT_RETENTION', keepFor, '30d'),
    auditRetentionMs: read(env, 'VITALS_AUDIT_RETENTION', keepFor, '365d'),
    metricRetentionMs: read(env, 'VITALS_METRIC_RETENTION', keepFor, '400d'),
    rescoreIntervalMs: read(env, 'VITALS_RESCORE_INTERVAL', atLeastASecond, '1h'),
    webhook: {
      backoffMs: read(env, 'VITALS_WEBHOOK_BACKOFF', durations, '1s,5s,25s'),
      maxRetries: read(env, 'VITALS_WEBHOOK_MAX_RETRIES', integer(0, 20), '3'),
      timeoutMs: read(env, 'VITALS_WEBHOOK_TIMEOUT', duration, '10s'),
      blockPrivate: read(env, 'VITALS_WEBHOOK_BLOCK_PRIVATE', boolean, 'false'),
      signatureHeader: read(env, 'VITALS_SIGNATURE_HEADER', headerName, 'X-Vitals-Signature'),
      concurrency: read(env, 'VITALS_WEBHOOK_CONCURRENCY', integer(1, 10_000), '256'),
      perWebhookConcurrency: read(env, 'VITALS_WEBHOOK_CONCURRENCY_PER_ENDPOINT', integer(1, 1000), '128'),
      perAccountConcurrency: read(env, 'VITALS_WEBHOOK_CONCURRENCY_PER_ACCOUNT', integer(1, 10_000), '128'),
      pollMs: read(env, 'VITALS_WEBHOOK_POLL', duration, '1s'),
    },
  };
}

export { boolean, integer, oneOf };
