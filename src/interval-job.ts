// A background job's lifecycle, shared by the retention and rescore jobs: a pass soon after start,
// then one every interval, never two at once in a process; stop lets a running pass finish.
import type { FastifyBaseLogger } from 'fastify';
import type { Metrics } from './metrics.ts';
import { isDatabaseUnavailable, logJobFailure } from './store/unavailable.ts';

/** The `job` label of vitals_job_failures_total (docs/operations.md, "Background jobs"). */
export type JobName = 'rescore' | 'retention' | 'backfill' | 'mail';

export abstract class IntervalJob<T> {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<T> | undefined;
  #stopped = false;
  readonly #what: string;
  readonly #job: JobName;
  readonly #log: Pick<FastifyBaseLogger, 'error'>;
  readonly #metrics: Pick<Metrics, 'jobFailures'> | undefined;

  /** `what` names the job in a failure's log line; `job` in vitals_job_failures_total. */
  constructor(
    what: string,
    job: JobName,
    log: Pick<FastifyBaseLogger, 'error'>,
    metrics?: Pick<Metrics, 'jobFailures'>,
  ) {
    this.#what = what;
    this.#job = job;
    this.#log = log;
    this.#metrics = metrics;
  }

  /**
   * Runs one unit of a pass (one account's transaction, one kind of row's pruning): its failure is
   * logged with `context` (the account) and counted, and the pass goes on with the next unit, so
   * one account's bad data never stops the job for the others (docs/operations.md, "Background
   * jobs"). Answers whether it succeeded. A database that is not there fails every unit alike: that
   * one ends the pass, which is tried again next interval.
   */
  protected async isolated(context: Record<string, string>, unit: () => Promise<void>): Promise<boolean> {
    try {
      await unit();
      return true;
    } catch (err) {
      if (isDatabaseUnavailable(err)) throw err;
      this.#metrics?.jobFailures.inc({ job: this.#job });
      const where = Object.entries(context).map(([key, value]) => `${key} ${value}`);
      this.#log.error(
        { err, ...context },
        `${this.#what} failed for ${where.join(', ')}; the rest of the pass goes on`,
      );
      return false;
    }
  }

  /** One pass; it checks `stopped` between its transactions. */
  protected abstract pass(): Promise<T>;

  /** Time between passes, and before the first. */
  protected abstract get intervalMs(): number;
  protected get firstMs(): number {
    return this.intervalMs;
  }

  /** True once stop was called: a pass ends after its current transaction. */
  protected get stopped(): boolean {
    return this.#stopped;
  }

  start(): void {
    this.#schedule(this.firstMs);
  }

  /** Lets a running pass's current transaction finish, then stops. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running?.catch(() => {});
  }

  /** One pass now; a second call while one runs joins it. */
  runOnce(): Promise<T> {
    this.#running ??= this.pass().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.runOnce()
        .catch((err) => {
          this.#metrics?.jobFailures.inc({ job: this.#job });
          logJobFailure(this.#log, this.#what, err, 'trying again next interval');
        })
        .finally(() => this.#schedule(this.intervalMs));
    }, ms);
    this.#timer.unref();
  }
}
