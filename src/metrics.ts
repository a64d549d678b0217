// Prometheus metrics at GET /metrics. One registry per process (or per test app).
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { SqliteStore } from './store/sqlite/sqlite-store.ts';
import type { Store } from './store/store.ts';

export class Metrics {
  readonly registry = new Registry();
  readonly deliveries: Counter<'outcome'>;
  readonly attemptSeconds: Histogram<'result'>;
  readonly pruned: Counter<'kind'>;
  readonly scoreBatchSize: Histogram;

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
      help: 'Rows removed by retention (VITALS_EVENT_RETENTION, VITALS_AUDIT_RETENTION), by kind: events, deliveries or audit.',
      labelNames: ['kind'],
      registers: [this.registry],
    });
    this.scoreBatchSize = new Histogram({
      name: 'vitals_score_batch_size',
      help: 'Score updates written together in one transaction (group commit of POST/PATCH …/health-score).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [this.registry],
    });
    new Gauge({
      name: 'vitals_outbox_backlog',
      help: 'Webhook deliveries pending (due now or waiting for a retry).',
      registers: [this.registry],
      async collect() {
        this.set(await store.countPendingDeliveries());
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
}
