// config → store → listen → migrate → roles; graceful shutdown on SIGTERM/SIGINT.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import { buildApp } from './http/app.ts';
import { IDEMPOTENCY_TTL_MS } from './http/idempotency.ts';
import { bootstrapKeys } from './keys.ts';
import { DigestJob } from './mail/digest-job.ts';
import { MailSender } from './mail/sender-job.ts';
import { Metrics } from './metrics.ts';
import { RescoreJob } from './rescore-job.ts';
import { RetentionJob } from './retention.ts';
import { schemaNewer } from './store/migration-errors.ts';
import { openReachable } from './store/open.ts';
import type { MigrationStatus, Store } from './store/store.ts';
import { isDatabaseUnavailable, logJobFailure, unavailableCode } from './store/unavailable.ts';
import { VERSION } from './version.ts';
import { Dispatcher } from './webhooks/dispatcher.ts';

/**
 * Start-up (docs/operations.md, "Starting"): the database must be usable (a writable data
 * directory, or a PostgreSQL that answers) and its schema no newer than this code, else a
 * StartError or MigrationError before anything listens. Then the server listens, answering 503
 * (/healthz aside) while the migrations run; a migration that fails closes it again and throws,
 * naming the migration. Then the bootstrap key, then the jobs.
 */
export async function serve(config: Config): Promise<{ close: () => Promise<void>; port: number }> {
  const store = await openReachable(config);
  let status: MigrationStatus;
  try {
    status = await store.migrationStatus();
    if (status.applied > status.latest) throw schemaNewer(status.applied, status.latest);
  } catch (err) {
    await store.close();
    throw err;
  }
  let migrating = true;
  const metrics = new Metrics(store);
  const api = config.roles.includes('api');
  // A dispatcher-only process still answers /healthz, /readyz and /metrics, but not /api.
  const app = await buildApp({
    store,
    config,
    metrics,
    routes: api ? 'all' : 'operations',
    migrating: () => migrating,
  });
  // postgres.js (3.4.9) looks up the database's array types as each connection starts and
  // leaves that query's promise unhandled: a connection lost meanwhile (a database restart, a
  // terminated backend) would end the process. Such a rejection is logged; any other still ends
  // it, as Node does by default (docs/postgresql.md, "When the database restarts").
  process.on('unhandledRejection', (reason) => {
    if (!isDatabaseUnavailable(reason)) throw reason;
    app.log.warn({ code: unavailableCode(reason) }, 'database: a connection was lost as it started');
  });
  const dispatcher = config.roles.includes('dispatcher')
    ? new Dispatcher({
        store,
        config: config.webhook,
        log: app.log.child({ role: 'dispatcher' }),
        metrics,
        publicUrl: config.mail.publicUrl,
      })
    : undefined;

  const retention =
    config.eventRetentionMs === null && config.auditRetentionMs === null && config.metricRetentionMs === null
      ? undefined
      : new RetentionJob({
          store,
          keepMs: config.eventRetentionMs,
          auditKeepMs: config.auditRetentionMs,
          metricKeepMs: config.metricRetentionMs,
          log: app.log.child({ role: 'retention' }),
          metrics,
        });

  // Derived factors follow time; every API process may run it (PostgreSQL: none rescores a customer twice).
  const rescore = api
    ? new RescoreJob({
        store,
        intervalMs: config.rescoreIntervalMs,
        log: app.log.child({ role: 'rescore' }),
        metrics,
        parallel: store.backend === 'postgres' ? 2 : 1,
      })
    : undefined;

  // Mail to people (docs/operations.md, "Mail"): every API process sends what the outbox holds
  // (without VITALS_SMTP_URL it gives it up) and, with it, claims the day's digests.
  const mail = api
    ? new MailSender({ store, mail: config.mail, log: app.log.child({ role: 'mail' }), metrics })
    : undefined;
  const digests =
    api && config.mail.smtpUrl !== undefined
      ? new DigestJob({
          store,
          hour: config.mail.digestHour,
          log: app.log.child({ role: 'digest' }),
          metrics,
        })
      : undefined;

  let prune: NodeJS.Timeout | undefined;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      // Stop accepting, let in-flight requests and delivery attempts finish, then close the database.
      clearInterval(prune);
      await retention?.stop();
      await rescore?.stop();
      await digests?.stop();
      await mail?.stop();
      await app.close();
      await dispatcher?.stop();
      await store.close();
    })();
    return closing;
  };
  exitOnSignals(app.log, close, config.shutdownTimeoutMs);
  // Listen only once the signal handlers are in place: "Server listening" is the cue that
  // a SIGTERM from then on shuts down gracefully.
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  try {
    if (status.applied < status.latest) {
      app.log.info({ from: status.applied, to: status.latest }, 'migrating the database schema');
    }
    await store.migrate();
  } catch (err) {
    await close();
    throw err;
  }
  const generated = await bootstrapKeys(store, config.apiKey);
  if (generated) {
    process.stdout.write(
      `\nNo API key existed, so Vitals created one for the default account. It is shown only this once:\n\n  ${generated}\n\nUse it as: Authorization: Bearer ${generated}\n\n`,
    );
  }
  migrating = false;
  prune = pruneIdempotencyKeysHourly(store, app.log);
  dispatcher?.start();
  retention?.start();
  rescore?.start();
  mail?.start();
  digests?.start();
  if (api) app.backfills.start();
  app.log.info(
    { version: VERSION, roles: config.roles, database: store.backend, schema: status.latest },
    'vitals started',
  );
  return { close, port };
}

/** Idempotency keys are kept 24 hours; sweep the older ones out every hour. */
function pruneIdempotencyKeysHourly(store: Store, log: FastifyBaseLogger): NodeJS.Timeout {
  const prune = setInterval(() => {
    store
      .pruneIdempotencyKeys(Date.now() - IDEMPOTENCY_TTL_MS)
      .catch((err) => logJobFailure(log, 'idempotency-key prune', err, 'trying again next hour'));
  }, 3_600_000);
  prune.unref();
  return prune;
}

/** SIGTERM or SIGINT closes gracefully and exits 0; 1 when closing fails or outlasts timeoutMs. */
function exitOnSignals(log: FastifyBaseLogger, close: () => Promise<void>, timeoutMs: number): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      log.info({ signal }, 'shutting down');
      const timer = setTimeout(() => {
        log.error('shutdown timed out; exiting');
        process.exit(1);
      }, timeoutMs);
      timer.unref();
      close().then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}
