// A background job's lifecycle, shared by the retention and rescore jobs: a pass soon after start,
// then one every interval, never two at once in a process; stop lets a running pass finish.
import type { FastifyBaseLogger } from 'fastify';
import { logJobFailure } from './store/unavailable.ts';

export abstract class IntervalJob<T> {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<T> | undefined;
  #stopped = false;
  readonly #what: string;
  readonly #log: Pick<FastifyBaseLogger, 'error'>;

  /** `what` names the job in a failure's log line. */
  constructor(what: string, log: Pick<FastifyBaseLogger, 'error'>) {
    this.#what = what;
    this.#log = log;
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
        .catch((err) => logJobFailure(this.#log, this.#what, err, 'trying again next interval'))
        .finally(() => this.#schedule(this.intervalMs));
    }, ms);
    this.#timer.unref();
  }
}
