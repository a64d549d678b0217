// Environment → one validated, typed Config. ConfigSchema below is the whole list: each variable with
// its name, the form its text must take, its default and what it means (docs/configuration.md
// tells the same to operators). It is checked once; a bad value stops start-up with a message naming
// the variable, so misconfiguration never surfaces later as odd behaviour.
import { resolve } from 'node:path';
import { type StaticDecode, Type } from 'typebox';
import Value from 'typebox/value';
import { API_KEY_PATTERN } from './domain/ids.ts';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** What every variable's schema carries besides its type; the kinds below add `rule`, its error text. */
type Variable = {
  env: string;
  default?: string;
  description: string;
  /** Named in errors but never echoed (a typo'd key is still mostly a key). */
  secret?: true;
};
type Check = [holds: (raw: string) => boolean, rule: string];

/** A variable's text: matched against `pattern` (described by `rule`), then each check, then decoded. */
function variable<T>(
  v: Variable,
  pattern: RegExp,
  rule: string,
  decode: (raw: string) => T,
  ...checks: Check[]
) {
  let schema = Type.String({ ...v, pattern, rule });
  for (const [holds, message] of checks) schema = Type.Refine(schema, holds, () => message);
  return Type.Decode(schema, decode);
}

const integer = (min: number, max: number, v: Variable) => {
  const rule = `must be a whole number from ${min} to ${max}`;
  return variable(v, /^\d+$/, rule, Number, [(raw) => Number(raw) >= min && Number(raw) <= max, rule]);
};

const oneOf = <T extends string>(values: T[], v: Variable) =>
  Type.Enum(values, { ...v, rule: `must be one of ${values.join(', ')}` });

const text = (v: Variable) => Type.String(v);
const path = (v: Variable) => Type.Decode(Type.String(v), (raw) => resolve(raw));
const matching = (pattern: RegExp, rule: string, v: Variable) => Type.String({ ...v, pattern, rule });

const BOOLEANS: Record<string, boolean> = { true: true, 1: true, yes: true, on: true };
const boolean = (v: Variable) =>
  variable(v, /^(true|1|yes|on|false|0|no|off)$/i, 'must be true or false', (raw) =>
    Boolean(BOOLEANS[raw.toLowerCase()]),
  );

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const ONE_DURATION = String.raw`\s*(\d+(?:\.\d+)?)(ms|s|m|h)?\s*`;
const DURATION = new RegExp(`^${ONE_DURATION}$`);

/** "250ms", "10s", "2m", "1h"; a bare number is milliseconds. */
function durationMs(raw: string): number {
  const m = DURATION.exec(raw);
  return m ? Math.round(Number(m[1]) * (UNITS[m[2] ?? 'ms'] ?? 1)) : Number.NaN;
}
const AT_MOST_A_DAY: Check = [(raw) => durationMs(raw) <= 86_400_000, 'must be at most 24h'];
const DURATION_RULE = 'must be a duration such as 500ms, 10s or 2m';

const duration = (v: Variable, ...checks: Check[]) =>
  variable(v, DURATION, DURATION_RULE, durationMs, AT_MOST_A_DAY, ...checks);

/** Comma-separated durations, 1 to 20 of them. */
const durations = (v: Variable) =>
  variable(
    v,
    new RegExp(`^${ONE_DURATION}(,${ONE_DURATION})*$`),
    DURATION_RULE,
    (raw) => raw.split(',').map(durationMs),
    [(raw) => raw.split(',').every((part) => durationMs(part) <= 86_400_000), 'must be at most 24h'],
    [(raw) => raw.split(',').length <= 20, 'must list 1 to 20 durations, such as 1s,5s,25s'],
  );

const PERIOD_UNITS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };
const PERIOD = /^off$|^\s*(\d+)(d|h|m|s)\s*$/;
const periodMs = (raw: string) => {
  const m = PERIOD.exec(raw);
  return m?.[2] ? Number(m[1]) * (PERIOD_UNITS[m[2]] ?? 0) : null;
};

/** "30d", "12h", "90m", "45s" (1s up to 10 years), or "off" (null): how long something is kept. */
const keepFor = (v: Variable) => {
  const rule = 'must be a period such as 30d, 12h or 90m (at most 3650d), or off';
  const inRange = (raw: string) => {
    const ms = periodMs(raw);
    return ms === null || (ms >= 1000 && ms <= 3650 * 86_400_000);
  };
  return variable(v, PERIOD, rule, periodMs, [inRange, rule]);
};

/** "1000/s", "6000/min", "100000/h", or "off" (null). */
const RATE = /^off$|^\s*(\d+)\/(s|min|h)\s*$/;
const rate = (v: Variable) => {
  const rule = 'must be a rate such as 1000/s, 6000/min or 100000/h, or off';
  const WINDOWS: Record<string, number> = { s: 1000, min: 60_000, h: 3_600_000 };
  return variable(
    v,
    RATE,
    rule,
    (raw) => {
      const m = RATE.exec(raw);
      return m?.[2] ? { max: Number(m[1]), windowMs: WINDOWS[m[2]] ?? 1000 } : null;
    },
    [(raw) => raw === 'off' || Number(RATE.exec(raw)?.[1]) >= 1, rule],
  );
};

export const ROLES = ['api', 'dispatcher'] as const;
export type Role = (typeof ROLES)[number];
const roles = (v: Variable) =>
  variable(
    v,
    /^\s*(api|dispatcher)\s*(,\s*(api|dispatcher)\s*)*$/,
    'must be api, dispatcher or api,dispatcher',
    (raw) => [...new Set(raw.split(',').map((r) => r.trim() as Role))],
  );

export const ConfigSchema = Type.Object({
  port: integer(0, 65535, { env: 'PORT', default: '3000', description: 'HTTP port; 0 picks a free one' }),
  host: text({ env: 'HOST', default: '0.0.0.0', description: 'address to listen on' }),
  dataDir: path({
    env: 'VITALS_DATA_DIR',
    default: './data',
    description: 'directory of the SQLite database',
  }),
  // postgres://user:password@host:port/database?options (several hosts allowed, as the driver takes them).
  databaseUrl: Type.Optional(
    matching(
      /^postgres(ql)?:\/\/[^\s/?#]*(\/[^\s?#]*)?(\?\S*)?$/,
      'must be a URL such as postgres://user:password@host:5432/vitals',
      {
        env: 'DATABASE_URL',
        secret: true,
        description: 'set: PostgreSQL at this URL; unset: SQLite under dataDir',
      },
    ),
  ),
  dbPoolSize: integer(1, 1000, {
    env: 'VITALS_DB_POOL_SIZE',
    default: '10',
    description: 'connections per process to PostgreSQL',
  }),
  apiKey: Type.Optional(
    matching(API_KEY_PATTERN, 'must be vk_ followed by 32 letters or digits', {
      env: 'VITALS_API_KEY',
      secret: true,
      description: 'a key that must exist for the default account',
    }),
  ),
  logLevel: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    env: 'VITALS_LOG_LEVEL',
    default: 'info',
    description: 'the least severe log lines written',
  }),
  sqliteSynchronous: oneOf(['full', 'normal'], {
    env: 'VITALS_SQLITE_SYNCHRONOUS',
    default: 'full',
    description: "SQLite's synchronous pragma",
  }),
  sqliteCacheMb: integer(2, 65_536, {
    env: 'VITALS_SQLITE_CACHE_MB',
    default: '128',
    description: "the SQLite writer's page cache in MB, filled as it is used",
  }),
  keyCacheTtlMs: duration({
    env: 'VITALS_KEY_CACHE_TTL',
    default: '2s',
    description: 'how long a process caches a valid API key',
  }),
  shutdownTimeoutMs: duration({
    env: 'VITALS_SHUTDOWN_TIMEOUT',
    default: '10s',
    description: 'time allowed to finish work in flight on SIGTERM/SIGINT',
  }),
  rateLimit: rate({
    env: 'VITALS_RATE_LIMIT',
    default: '1000/s',
    description: "requests per API key per window, counted in each process's memory; null when off",
  }),
  ingestRate: rate({
    env: 'VITALS_INGEST_RATE',
    default: '2000/s',
    description:
      "messages per source per window at /v1 and /ingest/webhook (docs/sources.md), counted in each process's memory; null when off",
  }),
  roles: roles({ env: 'VITALS_ROLES', default: 'api,dispatcher', description: 'what this process runs' }),
  eventRetentionMs: keepFor({
    env: 'VITALS_EVENT_RETENTION',
    default: '30d',
    description:
      "events (with their finished deliveries, and customers' source activity) older than this are removed; null keeps them all",
  }),
  auditRetentionMs: keepFor({
    env: 'VITALS_AUDIT_RETENTION',
    default: '365d',
    description: 'how long audit log entries are kept (docs/people.md); null keeps them all',
  }),
  metricRetentionMs: keepFor({
    env: 'VITALS_METRIC_RETENTION',
    default: '400d',
    description: 'how long metric points are kept (docs/scoring.md); null keeps them all',
  }),
  rescoreIntervalMs: duration(
    {
      env: 'VITALS_RESCORE_INTERVAL',
      default: '1h',
      description: 'how often derived factors are rescored as time passes (docs/scoring.md)',
    },
    [(raw) => durationMs(raw) >= 1000, 'must be at least 1s'],
  ),
  backfillLeaseMs: duration(
    {
      env: 'VITALS_BACKFILL_LEASE',
      default: '60s',
      description: 'how long a backfill stays with a process that stopped renewing it (docs/api.md)',
    },
    [(raw) => durationMs(raw) >= 1000, 'must be at least 1s'],
  ),
  // Mail to people (docs/operations.md, "Mail"): off while VITALS_SMTP_URL is unset.
  mail: Type.Object({
    smtpUrl: Type.Optional(
      matching(/^smtps?:\/\/\S+$/, 'must be a URL such as smtp://user:password@mail.example.com:587', {
        env: 'VITALS_SMTP_URL',
        secret: true,
        description: 'set: mail goes out through this SMTP server (nodemailer); unset: no mail is sent',
      }),
    ),
    from: matching(/^[^\r\n@]*@[^\r\n]+$/, 'must be an address such as "Vitals <vitals@example.com>"', {
      env: 'VITALS_MAIL_FROM',
      default: 'Vitals <vitals@localhost>',
      description: 'the From of every mail',
    }),
    publicUrl: Type.Optional(
      Type.Decode(
        matching(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, 'must be a URL such as https://vitals.example.com', {
          env: 'VITALS_PUBLIC_URL',
          description:
            "the dashboard's address as people reach it, for links in mail and Slack; none when unset",
        }),
        (raw) => raw.replace(/\/+$/, ''),
      ),
    ),
    digestHour: integer(0, 23, {
      env: 'VITALS_DIGEST_HOUR',
      default: '8',
      description: 'the hour (UTC) at which the daily digests go out',
    }),
  }),
  webhook: Type.Object({
    backoffMs: durations({
      env: 'VITALS_WEBHOOK_BACKOFF',
      default: '1s,5s,25s',
      description: 'delays before retry 1, 2, 3…; the last repeats',
    }),
    maxRetries: integer(0, 20, {
      env: 'VITALS_WEBHOOK_MAX_RETRIES',
      default: '3',
      description: 'retries after the first failed attempt',
    }),
    timeoutMs: duration({
      env: 'VITALS_WEBHOOK_TIMEOUT',
      default: '10s',
      description: 'time limit of one delivery attempt',
    }),
    blockPrivate: boolean({
      env: 'VITALS_WEBHOOK_BLOCK_PRIVATE',
      default: 'false',
      description: 'also refuse loopback and private addresses',
    }),
    signatureHeader: matching(/^[A-Za-z0-9-]{1,64}$/, 'must be an HTTP header name (letters, digits, -)', {
      env: 'VITALS_SIGNATURE_HEADER',
      default: 'X-Vitals-Signature',
      description: 'name of the hex HMAC signature header',
    }),
    concurrency: integer(1, 10_000, {
      env: 'VITALS_WEBHOOK_CONCURRENCY',
      default: '256',
      description: 'deliveries in flight at once in this dispatcher process',
    }),
    perWebhookConcurrency: integer(1, 1000, {
      env: 'VITALS_WEBHOOK_CONCURRENCY_PER_ENDPOINT',
      default: '128',
      description:
        'the most deliveries of one webhook in flight at once, over every dispatcher; a webhook starts ' +
        'lower and earns slots by answering (docs/webhooks.md, "Throughput and fairness")',
    }),
    perAccountConcurrency: integer(1, 10_000, {
      env: 'VITALS_WEBHOOK_CONCURRENCY_PER_ACCOUNT',
      default: '128',
      description: 'the most deliveries of one account in flight at once, over every dispatcher',
    }),
    pollMs: duration({
      env: 'VITALS_WEBHOOK_POLL',
      default: '1s',
      description: 'how often a dispatcher looks for due work when nothing woke it',
    }),
  }),
});

export type Config = StaticDecode<typeof ConfigSchema>;

/** A schema as loadConfig walks it: an object of variables, or one variable. */
type Node = Variable & { rule?: string; properties?: Record<string, Node> };

/** Every variable of ConfigSchema, in its order. */
export function configVariables(node = ConfigSchema as unknown as Node): Variable[] {
  return node.env ? [node] : Object.values(node.properties ?? {}).flatMap((n) => configVariables(n));
}

/** The schema's shape filled with each variable's text; an empty variable counts as unset. */
function gather(node: Node, env: NodeJS.ProcessEnv): unknown {
  if (node.env) return env[node.env] || undefined;
  const entries = Object.entries(node.properties ?? {}).map(([key, n]) => [key, gather(n, env)]);
  return Object.fromEntries(entries.filter(([, value]) => value !== undefined));
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const root = ConfigSchema as unknown as Node;
  const input = Value.Default(ConfigSchema, gather(root, env));
  for (const error of Value.Errors(ConfigSchema, input)) {
    const keys = error.instancePath.split('/').slice(1);
    const { env: name, secret, rule } = keys.reduce((node, key) => node.properties?.[key] ?? node, root);
    const shown = secret ? name : `${name}=${JSON.stringify(env[name])}`;
    throw new ConfigError(`${shown} is invalid: ${error.keyword === '~refine' ? error.message : rule}.`);
  }
  return Value.Decode(ConfigSchema, input);
}
