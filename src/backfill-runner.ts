// Runs backfills (docs/api.md, "Backfill"; docs/operations.md, "Background jobs"): the process that
// starts one drives it at once, a customer per transaction (src/writes/backfill.ts), renewing its
// lease in the database with each; and every process looks, each interval, for running backfills
// whose lease has expired (their process was killed or lost the database) and takes them over, so
// none stays `running` for ever. A step that fails for another reason than the database ends the
// run `failed`, with the customers done so far kept.
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import { randomBase62 } from './domain/ids.ts';
import { IntervalJob } from './interval-job.ts';
import type { Metrics } from './metrics.ts';
import type { Store } from './store/store.ts';
import { isDatabaseUnavailable } from './store/unavailable.ts';
import { backfillNext, claimBackfill, failBackfill, LEASE_MS } from './writes/backfill.ts';

export interface BackfillRunnerOptions {
  store: Pick<Store, 'run' | 'staleBackfills'>;
  log: Pick<FastifyBaseLogger, 'info' | 'error' | 'warn'>;
  metrics?: Pick<Metrics, 'jobFailures'>;
  /** How often to look for runs to take over (default 10 s). */
  intervalMs?: number;
  /** How long a lease holds unless renewed (default 60 s). */
  leaseMs?: number;
  /** The clock (tests move it). */
  now?: () => number;
}

/** What a failed run says: the customers done are kept, and a new run continues from them. */
const FAILED =
  'An internal error stopped the backfill. The customers backfilled so far keep their history; start a new backfill to fill the rest.';

export class BackfillRunner extends IntervalJob<number> {
  /** This process, as a lease names it. */
  readonly owner = `${hostname()}:${process.pid}:${randomBase62(8)}`;
  readonly #o: Required<Omit<BackfillRunnerOptions, 'metrics'>>;
  readonly #driving = new Map<string, Promise<void>>();

  constructor(opts: BackfillRunnerOptions) {
    super('backfill', 'backfill', opts.log, opts.metrics);
    this.#o = { intervalMs: 10_000, leaseMs: LEASE_MS, now: Date.now, ...opts };
  }

  protected override get intervalMs(): number {
    return this.#o.intervalMs;
  }

  /** How long a lease holds unless renewed. */
  get leaseMs(): number {
    return this.#o.leaseMs;
  }

  /** Drives a run this process holds the lease of; answers when it stops (done, failed, lost or stopping). */
  drive(accountId: string, id: string): Promise<void> {
    let driving = this.#driving.get(id);
    if (!driving) {
      driving = this.#steps(accountId, id).finally(() => this.#driving.delete(id));
      this.#driving.set(id, driving);
    }
    return driving;
  }

  /** When this process's drive of the run stops (at once when it is not driving it). */
  settled(id: string): Promise<void> {
    return this.#driving.get(id) ?? Promise.resolve();
  }

  /** Takes over the runs whose lease expired; answers how many it took. */
  protected async pass(): Promise<number> {
    let taken = 0;
    for (const { accountId, id } of await this.#o.store.staleBackfills(this.#o.now(), 10)) {
      if (this.stopped) break;
      if (
        !(await this.#o.store.run(claimBackfill, accountId, id, this.owner, this.#o.now(), this.#o.leaseMs))
      )
        continue;
      this.#o.log.warn({ accountId, backfill: id }, 'backfill: taking over a run whose process stopped');
      taken++;
      void this.drive(accountId, id);
    }
    return taken;
  }

  override async stop(): Promise<void> {
    await super.stop();
    await Promise.all(this.#driving.values());
  }

  async #steps(accountId: string, id: string): Promise<void> {
    const { store, now, log } = this.#o;
    while (!this.stopped) {
      try {
        const step = await store.run(backfillNext, accountId, id, this.owner, now(), this.#o.leaseMs);
        if (step.lost || step.run.status !== 'running') return;
      } catch (err) {
        // Without the database the lease runs out, and a process takes the run over later.
        if (isDatabaseUnavailable(err)) {
          log.warn(
            { accountId, backfill: id },
            'backfill: the database is unavailable; the run waits for its lease to expire',
          );
          return;
        }
        log.error({ err, accountId, backfill: id }, 'backfill failed');
        await store.run(failBackfill, accountId, id, this.owner, FAILED, now()).catch(() => {});
        return;
      }
    }
  }
}
