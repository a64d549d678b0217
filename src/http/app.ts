// buildApp wires plugins and routes by hand and never listens: main.ts listens, tests inject.

import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { Type } from 'typebox';
import { ErrorSchema } from '../api/common.ts';
import { Customer } from '../api/customers.ts';
import { EventSchema } from '../api/events.ts';
import { Explanation } from '../api/explanations.ts';
import { Rule as FactorRule } from '../api/factor-rules.ts';
import { HealthScore, OverrideSchema, PortfolioEntry } from '../api/health-scores.ts';
import { BODY_LIMIT } from '../api/limits.ts';
import { HealthAnswer, ReadyAnswer } from '../api/operations.ts';
import { OutcomeSchema } from '../api/outcomes.ts';
import { WebhookSchemas } from '../api/webhooks.ts';
import { BackfillRunner } from '../backfill-runner.ts';
import type { Config } from '../config.ts';
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { READS } from '../domain/people.ts';
import type { Metrics } from '../metrics.ts';
import type { Store } from '../store/store.ts';
import { VERSION } from '../version.ts';
import type { CalibrationThreadOptions } from '../work/calibration-threads.ts';
import { LEASE_MS } from '../writes/backfill.ts';
import { registerAudit } from './audit.ts';
import { auditRoutes } from './audit-log.ts';
import { KeyAuthenticator } from './auth.ts';
import { authRoutes } from './auth-routes.ts';
import { backfillRoutes } from './backfill.ts';
import { batchRoutes } from './batch.ts';
import { customersRoutes } from './customers.ts';
import { registerDashboard } from './dashboard.ts';
import {
  answerClientError,
  registerErrorHandling,
  sendMigrating,
  sendUnavailable,
  translate,
} from './errors.ts';
import { eventsRoutes } from './events.ts';
import { explanationRoutes } from './explanations.ts';
import { factorRulesRoutes } from './factor-rules.ts';
import { healthScoresRoutes } from './health-scores.ts';
import { registerIdempotency } from './idempotency.ts';
import { parseJsonBody } from './json-body.ts';
import { trackMethods } from './methods.ts';
import { metricsRoutes } from './metrics.ts';
import { SWAGGER_OPTIONS } from './openapi.ts';
import { outcomesRoutes } from './outcomes.ts';
import { playbooksRoutes } from './playbooks.ts';
import { portfolioRoutes } from './portfolio.ts';
import { rollupRoutes } from './rollup.ts';
import { segmentRoutes } from './segment.ts';
import { registerSessions } from './sessions.ts';
import { settingsRoutes } from './settings.ts';
import { sourcesRoutes } from './sources.ts';
import { stripeRoutes } from './stripe.ts';
import { tasksRoutes } from './tasks.ts';
import { bodyRefusal } from './text-rules.ts';
import { timelineRoutes } from './timeline.ts';
import { usersRoutes } from './users.ts';
import { validatorCompiler } from './validation.ts';
import { viewsRoutes } from './views.ts';
import { webhookDeliveriesRoutes } from './webhook-deliveries.ts';
import { webhookIntakeRoutes } from './webhook-intake.ts';
import { webhooksRoutes } from './webhooks.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** What runs this app's backfills (main.ts starts its pass of stale runs). */
    backfills: BackfillRunner;
  }
}

export interface AppDeps {
  store: Store;
  config: Pick<Config, 'keyCacheTtlMs' | 'logLevel'> &
    Partial<Pick<Config, 'backfillLeaseMs'>> & {
      webhook: Pick<Config['webhook'], 'blockPrivate'>;
      rateLimit?: Config['rateLimit'];
      /** VITALS_INGEST_RATE for /v1 (off unless given). */
      ingestRate?: Config['ingestRate'];
      /** VITALS_METRIC_RETENTION: how old a Segment message may be (no bound unless given). */
      metricRetentionMs?: Config['metricRetentionMs'];
    };
  /** Served at /metrics when given. */
  metrics?: Metrics;
  /** 'operations' serves only health, readiness, metrics and docs (a dispatcher-only process). */
  routes?: 'all' | 'operations';
  /** Where logs go (tests capture them); defaults to stdout. */
  logStream?: NodeJS.WritableStream;
  /** The built dashboard served at / (default dist/web). */
  dashboardDir?: string;
  /** The clock writes are stamped with and trends and movers read by (tests move it). */
  now?: () => number;
  /** The calibration threads' size and heap (defaults: min(2, cores), V8's). */
  calibration?: Pick<CalibrationThreadOptions, 'threads' | 'heapMb'>;
  /**
   * True while the process migrates the schema after it started listening (main.ts): every
   * request but /healthz then answers 503 with Retry-After (docs/operations.md, "Upgrades").
   */
  migrating?: () => boolean;
}

/** /readyz answers 503 when the database has not answered a ping by then. */
const READY_TIMEOUT_MS = 2000;
const ROUTER_OPTIONS = { ignoreTrailingSlash: true, maxParamLength: 1000 };
/** An absolute-form target: scheme and authority, then the path (or nothing: the root). */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([/?#].*)?$/i;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/**
 * An API key or webhook secret pasted into a URL by mistake must not reach the logs, nor a
 * webhook source's token, which its ingest URL carries by design (docs/sources.md, "Webhooks").
 */
const SECRET_IN_URL = /vk_[0-9A-Za-z]{32}|whsec_[0-9A-Za-z+/=%]+|(?<=^\/ingest\/webhook\/[^/?#]+\/)[^/?#]+/g;

/**
 * The app, registered in this order (hooks run in the order they are added): the server and
 * its parsing, logging, error handling, the docs, the health endpoints, then the API (auth,
 * rate limit, idempotency, routes) and the dashboard.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = createServer(deps);
  setUpParsing(app);
  setUpLogging(app);
  registerErrorHandling(app, trackMethods(app, ROUTER_OPTIONS));
  await registerDocs(app);
  registerOperations(app, deps);
  if (deps.routes === 'operations') return app;
  const now = deps.now ?? Date.now;
  const sessions = await registerSessions(app, deps.store, now);
  await app.register(authRoutes(deps.store, now, sessions));
  // It drives the backfills this app starts; main.ts starts its pass, which takes over the runs of
  // a process that stopped (docs/api.md, "Backfill"). Closing the app stops it between customers.
  const leaseMs = deps.config.backfillLeaseMs ?? LEASE_MS;
  const runner = new BackfillRunner({
    store: deps.store,
    log: app.log.child({ role: 'backfill' }),
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    now,
    leaseMs,
    intervalMs: Math.min(10_000, leaseMs / 10),
  });
  app.decorate('backfills', runner);
  app.addHook('onClose', () => runner.stop());
  await app.register(apiRoutes(deps, runner), { prefix: '/api' });
  // The Segment Spec intake at the root, where a library sends when its host is Vitals: a source's
  // write key, not an API key (docs/sources.md).
  await app.register(
    segmentRoutes({
      store: deps.store,
      now,
      rate: deps.config.ingestRate ?? null,
      retentionMs: deps.config.metricRetentionMs ?? null,
    }),
  );
  // The Stripe intake: a source's signing secret, not an API key, authenticates its deliveries.
  await app.register(stripeRoutes({ store: deps.store, now, rate: deps.config.ingestRate ?? null }));
  // Any tool's webhook, through a webhook source's mapping: its signature or URL token, not an
  // API key (docs/sources.md, "Webhooks").
  await app.register(
    webhookIntakeRoutes({
      store: deps.store,
      now,
      rate: deps.config.ingestRate ?? null,
      retentionMs: deps.config.metricRetentionMs ?? null,
    }),
  );
  await registerDashboard(app, deps.dashboardDir);
  return app;
}

function createServer(deps: AppDeps): FastifyInstance {
  const logger: FastifyServerOptions['logger'] = {
    level: deps.config.logLevel,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.secret', '*.apiKey'],
      censor: '[redacted]',
    },
    ...(deps.logStream ? { stream: deps.logStream } : {}),
  };
  return Fastify({
    logger,
    bodyLimit: BODY_LIMIT,
    // One log line per request, written by the onResponse hook of setUpLogging.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : newId.requestId();
    },
    routerOptions: ROUTER_OPTIONS,
    rewriteUrl: originForm,
    return503OnClosing: true,
    // Requests Node cannot parse as HTTP/1.1 answer the error envelope too (docs/errors.md).
    clientErrorHandler: answerClientError,
    frameworkErrors: (err, req, res) => {
      const reply = res as FastifyReply;
      reply.header('x-request-id', req.id);
      const api = translate(err) ?? new ApiError('parameter_invalid', 'The request is malformed.');
      reply.code(api.status).send(api.toBody());
    },
  });
}

/**
 * The request target as every part of the app reads it: an absolute-form target
 * (`GET http://host/api/…`, which HTTP/1.1 servers must accept) loses its scheme and host, and a
 * `#fragment` (never part of a target; the router would read it as a query) is dropped. So the
 * session cookie's path, the logs and the idempotency fingerprint see one spelling; permissions
 * are decided on the matched route in any case (docs/people.md, "Roles").
 */
function originForm(req: { url?: string }): string {
  let url = req.url ?? '/';
  const absolute = url.startsWith('/') ? null : ABSOLUTE_FORM.exec(url);
  if (absolute) url = `/${(absolute[1] ?? '').replace(/^\//, '')}`;
  const hash = url.indexOf('#');
  return hash === -1 ? url : url.slice(0, hash);
}

/**
 * Only JSON bodies, on every route whatever its bodyLimit (the batches' parser is this one):
 * json-body.ts refuses bodies nested too deep before parsing, and `__proto__` keys; text-rules.ts
 * refuses what parses but cannot be stored as sent.
 */
function setUpParsing(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: BODY_LIMIT },
    (_req, body, done) => {
      let parsed: unknown;
      try {
        parsed = parseJsonBody(body as string);
      } catch (err) {
        return done(err as ApiError, undefined);
      }
      const refusal = bodyRefusal(parsed);
      done(refusal, refusal ? undefined : parsed);
    },
  );
}

/** Every answer carries its request id; one log line per request, without secrets in its URL. */
function setUpLogging(app: FastifyInstance): void {
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      {
        method: req.method,
        url: req.url.replace(SECRET_IN_URL, '[redacted]'),
        statusCode: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });
}

/** The shared schemas the routes refer to, and the OpenAPI document (/openapi.json, /docs) built from the routes. */
async function registerDocs(app: FastifyInstance): Promise<void> {
  app.addSchema(ErrorSchema);
  for (const schema of [
    Customer,
    OverrideSchema,
    OutcomeSchema,
    HealthScore,
    PortfolioEntry,
    Explanation,
    EventSchema,
    FactorRule,
    ...WebhookSchemas,
  ])
    app.addSchema(schema);

  await app.register(swagger, SWAGGER_OPTIONS);
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
}

const HEALTH_SCHEMA = {
  tags: ['operations'],
  summary: 'The process is up (no database check), and the release it runs',
  response: { 200: HealthAnswer },
};
const READY_SCHEMA = {
  tags: ['operations'],
  summary: 'The process can serve: the database answered a ping (503 when it does not)',
  response: {
    200: ReadyAnswer,
    503: Type.Ref('Error'),
  },
};

/** Health, readiness, the OpenAPI document and metrics: without a key, in every process. */
function registerOperations(app: FastifyInstance, deps: AppDeps): void {
  const migrating = deps.migrating;
  if (migrating) {
    // Added before the sessions' hook, which reads the store: nothing reaches it until the schema is there.
    app.addHook('onRequest', async (req, reply) => {
      if (migrating() && req.url !== '/healthz') return sendMigrating(reply);
    });
  }
  app.get('/healthz', { schema: HEALTH_SCHEMA }, async () => ({ status: 'ok', version: VERSION }));
  // 503 with Retry-After when the database does not answer, within READY_TIMEOUT_MS at most
  // (a stopped server refuses at once; a host that is down would otherwise take the driver's
  // connect timeout). docs/postgresql.md, "When the database restarts".
  app.get('/readyz', { schema: READY_SCHEMA }, async (_req, reply) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        deps.store.ping(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('ping timed out')), READY_TIMEOUT_MS);
        }),
      ]);
      return { status: 'ok', database: deps.store.backend };
    } catch {
      return sendUnavailable(reply);
    } finally {
      clearTimeout(timer);
    }
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  const metrics = deps.metrics;
  if (metrics) {
    app.get('/metrics', { schema: { hide: true } }, async (_req, reply) =>
      reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
    );
  }
}

/** /api: every route behind the key, then the rate limit, then Idempotency-Key replays. */
function apiRoutes(deps: AppDeps, runner: BackfillRunner): FastifyPluginAsync {
  const auth = new KeyAuthenticator(deps.store, deps.config.keyCacheTtlMs);
  const now = deps.now ?? Date.now;
  return async (api) => {
    api.addHook('onRequest', async (req) => auth.authenticate(req));
    // A change made with the session cookie carries its CSRF token (a key's request has no cookie to ride on).
    api.addHook('onRequest', (req, reply, done) => {
      if (!req.user || READS.has(req.method)) return done();
      api.csrfProtection(req, reply, done);
    });
    const limit = deps.config.rateLimit;
    if (limit) await registerRateLimit(api, limit);
    registerIdempotency(api, deps.store, now);
    registerAudit(api, deps.store, now);
    await api.register(customersRoutes(deps.store, now));
    await api.register(rollupRoutes(deps.store));
    const metrics = deps.metrics;
    await api.register(healthScoresRoutes(deps.store, now));
    await api.register(explanationRoutes(deps.store, now));
    await api.register(
      outcomesRoutes(deps.store, now, {
        ...deps.calibration,
        ...(metrics ? { onComputed: () => metrics.calibrations.inc() } : {}),
      }),
    );
    await api.register(portfolioRoutes(deps.store, now));
    await api.register(batchRoutes(deps.store, now));
    await api.register(settingsRoutes(deps.store, now));
    await api.register(factorRulesRoutes(deps.store, now));
    await api.register(metricsRoutes(deps.store, now));
    await api.register(eventsRoutes(deps.store));
    await api.register(webhooksRoutes(deps.store, deps.config.webhook, now));
    await api.register(webhookDeliveriesRoutes(deps.store, deps.config.webhook, now));
    await api.register(usersRoutes(deps.store, now));
    await api.register(viewsRoutes(deps.store, now));
    await api.register(auditRoutes(deps.store));
    await api.register(sourcesRoutes(deps.store, now));
    await api.register(tasksRoutes(deps.store, now));
    await api.register(timelineRoutes(deps.store));
    await api.register(playbooksRoutes(deps.store, now));
    await api.register(backfillRoutes({ store: deps.store, now, runner, leaseMs: runner.leaseMs }));
  };
}

const WINDOW_NAMES: Record<number, string> = { 1000: 'second', 60000: 'minute', 3600000: 'hour' };

/** Counted per API key, after authentication, in this process's memory. */
async function registerRateLimit(
  api: FastifyInstance,
  limit: NonNullable<Config['rateLimit']>,
): Promise<void> {
  await api.register(rateLimit, {
    max: limit.max,
    timeWindow: limit.windowMs,
    hook: 'onRequest',
    keyGenerator: (req) => req.apiKeyId,
    addHeadersOnExceeding: {
      'x-ratelimit-limit': false,
      'x-ratelimit-remaining': false,
      'x-ratelimit-reset': false,
    },
    addHeaders: {
      'x-ratelimit-limit': false,
      'x-ratelimit-remaining': false,
      'x-ratelimit-reset': false,
      'retry-after': true,
    },
    // The configured rate, not the plugin's time to reset (which said "3 per 2 seconds" for 3/min).
    errorResponseBuilder: () =>
      new ApiError(
        'rate_limited',
        `Too many requests for this API key: at most ${limit.max} per ${WINDOW_NAMES[limit.windowMs] ?? `${limit.windowMs} ms`}. Retry after the Retry-After header's seconds.`,
      ),
  });
}
