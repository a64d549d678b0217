// Prometheus metrics at GET /metrics. One registry per process (or per test app).
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { SqliteStore } from './store/sqlite/sqlite-store.ts';
import type { AccountBacklog, Store } from './store/store.ts';
import { applyFactorUpdates } from './writes/factor-updates.ts';
import { applyMetricWrites } from './writes/metrics.ts';

/** Events per second over the last minute, per label value, in one-second buckets. */
class LastMinute {
  readonly #buckets = new Map<string, { second: number[]; count: number[] }>();

  add(label: string, now = Date.now()): void {
    const s = Math.floor(now / 1000);
    let b = this.#buckets.get(label);
    if (!b) {
      b = { second: new Array(60).fill(-1), count: new Array(60).fill(0) };
      this.#buckets.set(label, b);
    }
    const i = s % 60;
    if (b.second[i] !== s) {
      b.second[i] = s;
      b.count[i] = 0;
    }
    b.count[i] = (b.count[i] ?? 0) + 1;
  }

  /** Each label's rate; a label quiet for a minute is forgotten. */
  rates(now = Date.now()): [string, number][] {
    const s = Math.floor(now / 1000);
    const out: [string, number][] = [];
    for (const [label, b] of this.#buckets) {
      let n = 0;
      for (let i = 0; i < 60; i++) if (s - (b.second[i] ?? -1) < 60) n += b.count[i] ?? 0;
      if (n === 0) this.#buckets.delete(label);
      else out.push([label, n / 60]);
    }
    return out;
  }
}

export class Metrics {
  readonly registry = new Registry();
  readonly deliveries: Counter<'outcome'>;
  readonly #finished: Counter<'account' | 'status'>;
  readonly #drained = new LastMinute();
  readonly attemptSeconds: Histogram<'result'>;
  readonly pruned: Counter<'kind'>;
  /** A background job's unit of work that failed: one account's rescore, one kind's retention. */
  readonly jobFailures: Counter<'job'>;
  readonly scoreBatchSize: Histogram;
  readonly metricBatchSize: Histogram;
  /** Calibration reports computed: identical requests in flight share one (docs/api.md). */
  readonly calibrations: Counter;

  constructor(store: Store, opts: { defaults?: boolean } = {}) {
    if (opts.defaults !== false) collectDefaultMetrics({ register: this.registry, prefix: 'vitals_' });
    this.deliveries = new Counter({
      name: 'vitals_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome: succeeded, retrying (failed, will retry) or failed (no retries left).',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.attemptSeconds = new Histogram({
      name: 'vitals_webhook_attempt_duration_seconds',
      help: 'Duration of webhook delivery attempts.',
      labelNames: ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    this.pruned = new Counter({
      name: 'vitals_retention_pruned_total',
      help: 'Rows removed by retention (VITALS_EVENT_RETENTION, VITALS_AUDIT_RETENTION, VITALS_METRIC_RETENTION), by kind: events, deliveries, source_activity (kept as long as events), audit or metric_points.',
      labelNames: ['kind'],
      registers: [this.registry],
    });
    this.jobFailures = new Counter({
      name: 'vitals_job_failures_total',
      help: "Failures of a background job's unit of work, by job: rescore (one account's transaction of a pass), retention (one kind of row's pruning in a pass) or mail (one person's digest claim). The others go on in the same pass.",
      labelNames: ['job'],
      registers: [this.registry],
    });
    this.scoreBatchSize = new Histogram({
      name: 'vitals_score_batch_size',
      help: 'Score updates written together in one transaction (group commit of POST/PATCH …/health-score).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [this.registry],
    });
    this.calibrations = new Counter({
      name: 'vitals_calibrations_computed_total',
      help: 'Calibration reports computed on the calibration threads; an identical request while one is in flight shares its report and counts none.',
      registers: [this.registry],
    });
    this.metricBatchSize = new Histogram({
      name: 'vitals_metric_batch_size',
      help: 'Single metric writes written together in one transaction (group commit of POST …/metrics).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [this.registry],
    });
    // Batched writes gathered by the backend (store/write.ts) report their sizes.
    const sizes: Record<string, Histogram> = {
      [applyFactorUpdates.name]: this.scoreBatchSize,
      [applyMetricWrites.name]: this.metricBatchSize,
    };
    store.onWriteBatch((write, size) => sizes[write]?.observe(size));
    // One read of the backlog serves the three gauges of a scrape: prom-client collects them
    // together, so they share the read in flight (docs/webhooks.md, "Backlog").
    let reading: Promise<AccountBacklog[]> | undefined;
    const backlog = () => {
      reading ??= store.backlogByAccount().finally(() => {
        reading = undefined;
      });
      return reading;
    };
    new Gauge({
      name: 'vitals_outbox_backlog',
      help: 'Webhook deliveries pending (due now or waiting for a retry), over every account and process.',
      registers: [this.registry],
      async collect() {
        this.set((await backlog()).reduce((n, b) => n + b.pending, 0));
      },
    });
    new Gauge({
      name: 'vitals_webhook_backlog',
      help: 'Webhook deliveries pending per account (due now or waiting for a retry), over every process.',
      labelNames: ['account'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const b of await backlog()) this.set({ account: b.accountId }, b.pending);
      },
    });
    new Gauge({
      name: 'vitals_webhook_backlog_oldest_seconds',
      help: "Age of each account's oldest pending webhook delivery, in seconds.",
      labelNames: ['account'],
      registers: [this.registry],
      async collect() {
        this.reset();
        const now = Date.now();
        for (const b of await backlog())
          this.set({ account: b.accountId }, Math.max(0, now - b.oldestAt) / 1000);
      },
    });
    this.#finished = new Counter({
      name: 'vitals_webhook_deliveries_finished_total',
      help: 'Webhook deliveries this process finished, per account and status (succeeded or failed): the drain of the backlog.',
      labelNames: ['account', 'status'],
      registers: [this.registry],
    });
    const drained = this.#drained;
    new Gauge({
      name: 'vitals_webhook_drain_rate',
      help: 'Webhook deliveries this process finished per second over the last minute, per account.',
      labelNames: ['account'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [account, rate] of drained.rates()) this.set({ account }, rate);
      },
    });
    if (store instanceof SqliteStore) {
      // Read from the process's own connections: the setting is per connection, so nothing
      // outside the process can see it (RELIABILITY.md, "Power loss").
      new Gauge({
        name: 'vitals_sqlite_synchronous',
        help: 'PRAGMA synchronous of each SQLite connection of this process: 0 off, 1 normal, 2 full, 3 extra. Below 2, a power loss can lose acknowledged writes.',
        labelNames: ['connection'],
        registers: [this.registry],
        async collect() {
          for (const { connection, level } of await store.synchronousLevels())
            this.set({ connection }, level);
        },
      });
    }
  }

  /** A delivery left the backlog: delivered, or out of retries (or its receiver answered 410). */
  finished(accountId: string, status: 'succeeded' | 'failed'): void {
    this.#finished.inc({ account: accountId, status });
    this.#drained.add(accountId);
  }
}
