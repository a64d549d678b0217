// The retention job (docs/operations.md, "Event retention"): removes events older than
// VITALS_EVENT_RETENTION with their finished deliveries and the customers' source activity of the
// same age (their timelines' source events, docs/api.md, "Timeline"), audit log entries older than
// VITALS_AUDIT_RETENTION (docs/people.md), metric points older than VITALS_METRIC_RETENTION
// (docs/scoring.md) and failed sign-ins past the lock's window, in small
// batches, each its own short transaction, with a pause between them so requests interleave and
// none waits more than one batch. Runs soon after start, then on an interval; on PostgreSQL one process at a time does.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { LOCK_WINDOW_MS } from './domain/people.ts';
import { IntervalJob } from './interval-job.ts';
import type { Metrics } from './metrics.ts';
import type { Store } from './store/store.ts';

export interface RetentionOptions {
  store: Pick<
    Store,
    'pruneEvents' | 'pruneAudit' | 'pruneSignInFailures' | 'pruneMetricPoints' | 'pruneSourceActivity'
  >;
  /** Events older than this are removed; null keeps them. */
  keepMs: number | null;
  /** Audit log entries older than this are removed; null (the default here) keeps them. */
  auditKeepMs?: number | null;
  /** Metric points older than this are removed; null (the default here) keeps them. */
  metricKeepMs?: number | null;
  log: Pick<FastifyBaseLogger, 'info' | 'error'>;
  metrics?: Metrics;
  /** The clock (tests move it). */
  now?: () => number;
  /** Events looked at per batch (default 500). */
  batch?: number;
  /** Pause between batches (default 5 ms). */
  pauseMs?: number;
  /** Time between passes (default 10 minutes); the first pass starts after `firstMs` (default 30 s). */
  intervalMs?: number;
  firstMs?: number;
}

export interface PassResult {
  events: number;
  deliveries: number;
  batches: number;
  audit: number;
  metricPoints: number;
  sourceActivity: number;
}

export class RetentionJob extends IntervalJob<PassResult> {
  readonly #o: Required<Omit<RetentionOptions, 'metrics'>> & Pick<RetentionOptions, 'metrics'>;

  constructor(opts: RetentionOptions) {
    super('retention', 'retention', opts.log, opts.metrics);
    this.#o = {
      now: Date.now,
      batch: 500,
      pauseMs: 5,
      intervalMs: 600_000,
      firstMs: 30_000,
      auditKeepMs: null,
      metricKeepMs: null,
      ...opts,
    };
  }

  protected override get intervalMs(): number {
    return this.#o.intervalMs;
  }

  protected override get firstMs(): number {
    return this.#o.firstMs;
  }

  protected async pass(): Promise<PassResult> {
    const total: PassResult = {
      events: 0,
      deliveries: 0,
      batches: 0,
      audit: 0,
      metricPoints: 0,
      sourceActivity: 0,
    };
    const { keepMs, auditKeepMs, metricKeepMs } = this.#o;
    // Each kind on its own: one that fails (logged, counted) leaves the others to be pruned.
    if (keepMs !== null) {
      await this.isolated({ kind: 'events' }, () => this.#events(this.#o.now() - keepMs, total));
      await this.isolated({ kind: 'source_activity' }, () =>
        this.#sourceActivity(this.#o.now() - keepMs, total),
      );
    }
    if (auditKeepMs !== null) {
      await this.isolated({ kind: 'audit' }, () => this.#audit(this.#o.now() - auditKeepMs, total));
    }
    if (metricKeepMs !== null) {
      await this.isolated({ kind: 'metric_points' }, () =>
        this.#metricPoints(this.#o.now() - metricKeepMs, total),
      );
    }
    // Failures outside the window lock nothing; sign-in forgets only its own email's.
    await this.isolated({ kind: 'sign_in_failures' }, async () => {
      await this.#o.store.pruneSignInFailures(this.#o.now() - LOCK_WINDOW_MS);
    });
    return total;
  }

  async #audit(before: number, total: PassResult): Promise<void> {
    for (;;) {
      const removed = await this.#o.store.pruneAudit(before, this.#o.batch);
      total.audit += removed;
      this.#o.metrics?.pruned.inc({ kind: 'audit' }, removed);
      if (removed < this.#o.batch || this.stopped) break;
      await sleep(this.#o.pauseMs);
    }
    if (total.audit > 0) this.#o.log.info({ audit: total.audit }, 'retention removed old audit log entries');
  }

  async #metricPoints(before: number, total: PassResult): Promise<void> {
    for (;;) {
      const removed = await this.#o.store.pruneMetricPoints(before, this.#o.batch);
      total.metricPoints += removed;
      this.#o.metrics?.pruned.inc({ kind: 'metric_points' }, removed);
      if (removed < this.#o.batch || this.stopped) break;
      await sleep(this.#o.pauseMs);
    }
    if (total.metricPoints > 0) {
      this.#o.log.info({ metricPoints: total.metricPoints }, 'retention removed old metric points');
    }
  }

  async #sourceActivity(before: number, total: PassResult): Promise<void> {
    for (;;) {
      const removed = await this.#o.store.pruneSourceActivity(before, this.#o.batch);
      total.sourceActivity += removed;
      this.#o.metrics?.pruned.inc({ kind: 'source_activity' }, removed);
      if (removed < this.#o.batch || this.stopped) break;
      await sleep(this.#o.pauseMs);
    }
    if (total.sourceActivity > 0) {
      this.#o.log.info({ sourceActivity: total.sourceActivity }, 'retention removed old source activity');
    }
  }

  async #events(before: number, total: PassResult): Promise<void> {
    let after = 0;
    for (;;) {
      const batch = await this.#o.store.pruneEvents(before, { after, limit: this.#o.batch });
      total.events += batch.events;
      total.deliveries += batch.deliveries;
      total.batches++;
      this.#o.metrics?.pruned.inc({ kind: 'events' }, batch.events);
      this.#o.metrics?.pruned.inc({ kind: 'deliveries' }, batch.deliveries);
      if (batch.next === null || this.stopped) break;
      after = batch.next;
      await sleep(this.#o.pauseMs);
    }
    if (total.events + total.deliveries > 0) {
      this.#o.log.info(
        { events: total.events, deliveries: total.deliveries, batches: total.batches },
        'event retention removed old events',
      );
    }
  }
}
