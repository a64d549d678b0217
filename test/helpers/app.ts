// buildTestApp: the real app on a fresh database of its own, with a key. SQLite (a file in a new
// temp directory) unless VITALS_TEST_BACKEND=postgres: then a new database on the server at
// VITALS_TEST_POSTGRES_URL, dropped when the app closes.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Config } from '../../src/config.ts';
import { type AppDeps, buildApp } from '../../src/http/app.ts';
import { createApiKey } from '../../src/keys.ts';
import { Metrics } from '../../src/metrics.ts';
import type { Store } from '../../src/store/store.ts';
import { Dispatcher } from '../../src/webhooks/dispatcher.ts';
import { checkAnswer } from './openapi-check.ts';
import { appBackend, createTestDatabase } from './stores.ts';

/** Webhook settings for tests: short backoff and timeout so retry paths run in milliseconds. */
export const TEST_WEBHOOK_CONFIG: Config['webhook'] = {
  backoffMs: [20, 40, 60],
  maxRetries: 3,
  timeoutMs: 1000,
  blockPrivate: false,
  signatureHeader: 'X-Vitals-Signature',
  concurrency: 16,
  perWebhookConcurrency: 4,
  perAccountConcurrency: 12,
  pollMs: 200,
};

export interface TestAppOptions {
  /** Run a dispatcher beside the API, with these webhook settings over TEST_WEBHOOK_CONFIG. */
  dispatcher?: Partial<Config['webhook']> | boolean;
  /** VITALS_WEBHOOK_BLOCK_PRIVATE for the API's URL checks. */
  blockPrivate?: boolean;
  /** VITALS_RATE_LIMIT (off unless given). */
  rateLimit?: { max: number; windowMs: number };
  /** VITALS_INGEST_RATE for /v1 (off unless given). */
  ingestRate?: { max: number; windowMs: number };
  /** VITALS_METRIC_RETENTION (no bound unless given). */
  metricRetentionMs?: number;
  /** VITALS_KEY_CACHE_TTL in ms (0 unless given). */
  keyCacheTtlMs?: number;
  /** Where the built dashboard is (default dist/web). */
  dashboardDir?: string;
  /** The app's clock (a TestClock to move it by hand); Date.now unless given. */
  now?: () => number;
  /** VITALS_PUBLIC_URL for the dispatcher (Slack-format bodies link customers' pages). */
  publicUrl?: string;
  /** The calibration threads' size and heap (the app's defaults unless given). */
  calibration?: AppDeps['calibration'];
}

/** A clock a test sets and moves: writes are stamped, trends and movers read, by it. */
export class TestClock {
  ms: number;
  constructor(iso: string) {
    this.ms = Date.parse(iso);
  }
  readonly now = (): number => this.ms;
  set(iso: string): void {
    this.ms = Date.parse(iso);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface Response<T = any> {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: T;
  raw: string;
}

export interface Client {
  key: string;
  request<T = any>(
    method: string,
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Response<T>>;
  get<T = any>(url: string): Promise<Response<T>>;
  post<T = any>(url: string, body?: unknown): Promise<Response<T>>;
  patch<T = any>(url: string, body?: unknown): Promise<Response<T>>;
  delete<T = any>(url: string): Promise<Response<T>>;
}

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  metrics: Metrics;
  dispatcher: Dispatcher | undefined;
  /** A temp directory of the app's own (the SQLite file lives here). */
  dir: string;
  /** PostgreSQL: the app's database, for a connection of the test's own. */
  databaseUrl: string | undefined;
  /** Another store on the app's database, as a second process would open it; closed with the app. */
  openStore(): Store;
  /** A client authenticated as the default account. */
  api: Client;
  /** Everything the app logged, as text. */
  logs(): string;
  /** A client for a new account with its own key. */
  newAccount(name: string): Promise<Client>;
  /** A client that sends the given Authorization header (or none). */
  as(authorization: string | undefined): Client;
  inject(opts: InjectOptions): Promise<Response>;
  /** Stops the app and the dispatcher, closes the store and removes the database. */
  close(): Promise<void>;
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'vitals-test-'));
}

export async function buildTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const db = await createTestDatabase(appBackend());
  const dir = db.dir;
  const store = db.open();
  await store.migrate();
  const { key } = await createApiKey(store, 'default');
  const stream = new PassThrough();
  let logged = '';
  stream.on('data', (chunk) => {
    logged += chunk.toString();
  });
  const metrics = new Metrics(store, { defaults: false });
  const blockPrivate = opts.blockPrivate ?? false;
  const app = await buildApp({
    store,
    config: {
      keyCacheTtlMs: opts.keyCacheTtlMs ?? 0,
      logLevel: 'info',
      webhook: { blockPrivate },
      rateLimit: opts.rateLimit ?? null,
      ingestRate: opts.ingestRate ?? null,
      metricRetentionMs: opts.metricRetentionMs ?? null,
    },
    logStream: stream,
    metrics,
    ...(opts.dashboardDir === undefined ? {} : { dashboardDir: opts.dashboardDir }),
    ...(opts.now === undefined ? {} : { now: opts.now }),
    ...(opts.calibration === undefined ? {} : { calibration: opts.calibration }),
  });
  await app.ready();
  const dispatcher = opts.dispatcher
    ? new Dispatcher({
        store,
        config: {
          ...TEST_WEBHOOK_CONFIG,
          blockPrivate,
          ...(opts.dispatcher === true ? {} : opts.dispatcher),
        },
        log: app.log,
        metrics,
        publicUrl: opts.publicUrl,
      })
    : undefined;
  dispatcher?.start();

  // Every answer is held against the app's own OpenAPI document (helpers/openapi-check.ts).
  const documentText = JSON.stringify(app.swagger());
  const inject = async (opts: InjectOptions): Promise<Response> => {
    const res = await app.inject(opts);
    let body: unknown;
    try {
      body = res.body === '' ? undefined : JSON.parse(res.body);
    } catch {
      body = res.body;
    }
    await checkAnswer(documentText, {
      method: String(opts.method ?? 'GET'),
      url: String(opts.url ?? opts.path ?? '/'),
      status: res.statusCode,
      headers: res.headers,
      raw: res.body,
    });
    return { status: res.statusCode, headers: res.headers, body, raw: res.body };
  };

  const client = (authorization: string | undefined, key = ''): Client => {
    const request = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
      const h: Record<string, string> = { ...headers };
      if (authorization !== undefined) h.authorization = authorization;
      const opts: InjectOptions = { method: method as InjectOptions['method'], url, headers: h };
      if (body !== undefined) {
        opts.payload = typeof body === 'string' ? body : JSON.stringify(body);
        h['content-type'] ??= 'application/json';
      }
      return inject(opts);
    };
    return {
      key,
      request,
      get: (url) => request('GET', url),
      post: (url, body) => request('POST', url, body),
      patch: (url, body) => request('PATCH', url, body),
      delete: (url) => request('DELETE', url),
    };
  };

  return {
    app,
    store,
    metrics,
    dispatcher,
    dir,
    databaseUrl: db.url,
    openStore: () => db.open(),
    api: client(`Bearer ${key}`, key),
    logs: () => logged,
    as: (authorization) => client(authorization),
    newAccount: async (name) => {
      const created = await createApiKey(store, name);
      return client(`Bearer ${created.key}`, created.key);
    },
    inject,
    close: async () => {
      await app.close();
      await dispatcher?.stop();
      await db.drop();
    },
  };
}

/**
 * A histogram of the app's /metrics registry so far: how many observations (`count`) and their
 * total (`sum`) — for a batch-size histogram, the batches written and the items in them.
 */
export async function histogramTotals(t: TestApp, name: string): Promise<{ count: number; sum: number }> {
  const text = await t.metrics.registry.getSingleMetricAsString(name);
  const value = (series: string) => Number(new RegExp(`^${series} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { count: value(`${name}_count`), sum: value(`${name}_sum`) };
}

export const customerBody = (id: string, extra: Record<string, unknown> = {}) => ({
  customer_id: id,
  name: `Customer ${id}`,
  email: `${id.replace(/[^a-z0-9]/gi, '') || 'x'}@example.com`,
  ...extra,
});
