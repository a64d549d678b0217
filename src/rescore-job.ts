// The rescore job (docs/scoring.md, "Factors from metrics"): as time passes, points leave their
// rules' windows and age past max_age_days, and the factors derived from them change with no new
// write. Every VITALS_RESCORE_INTERVAL it takes the customers due (each derivation records when its
// factors may next change) and derives them again, history reason time_passed. A customer another
// process is rescoring at that moment is skipped (PostgreSQL), so processes never do it twice.
import type { FastifyBaseLogger } from 'fastify';
import type { Store } from './store/store.ts';
import { logJobFailure } from './store/unavailable.ts';
import { rescoreDue } from './writes/rules.ts';

export interface RescoreJobOptions {
  store: Pick<Store, 'dueForRederive' | 'run'>;
  intervalMs: number;
  log: Pick<FastifyBaseLogger, 'info' | 'error'>;
  /** The clock (tests move it). */
  now?: () => number;
  /** Customers taken per transaction (default 500). */
  batch?: number;
}

export interface RescorePass {
  /** Customers that were due and derived again. */
  checked: number;
  /** Of those, the ones whose score got a new version. */
  rescored: number;
}

export class RescoreJob {
  readonly #o: Required<RescoreJobOptions>;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<RescorePass> | undefined;
  #stopped = false;

  constructor(opts: RescoreJobOptions) {
    this.#o = { now: Date.now, batch: 500, ...opts };
  }

  start(): void {
    this.#schedule();
  }

  /** Lets a running transaction finish, then stops. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running?.catch(() => {});
  }

  /** One pass over everyone due now; a second call while one runs joins it. */
  runOnce(): Promise<RescorePass> {
    this.#running ??= this.#pass().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.runOnce()
        .catch((err) => logJobFailure(this.#o.log, 'rescore', err, 'trying again next interval'))
        .finally(() => this.#schedule());
    }, this.#o.intervalMs);
    this.#timer.unref();
  }

  async #pass(): Promise<RescorePass> {
    const pass: RescorePass = { checked: 0, rescored: 0 };
    const now = this.#o.now();
    for (;;) {
      const due = await this.#o.store.dueForRederive(now, this.#o.batch);
      const byAccount = new Map<string, string[]>();
      for (const d of due) byAccount.set(d.accountId, [...(byAccount.get(d.accountId) ?? []), d.customerId]);
      let checked = 0;
      for (const [accountId, ids] of byAccount) {
        if (this.#stopped) return pass;
        const done = await this.#o.store.run(rescoreDue, accountId, ids, now);
        checked += done.checked;
        pass.rescored += done.rescored;
      }
      pass.checked += checked;
      // Fewer than a batch: everyone due was seen. None of a full batch taken: another process
      // holds them; the next pass takes what is left.
      if (due.length < this.#o.batch || checked === 0) break;
    }
    if (pass.rescored > 0) this.#o.log.info(pass, 'rescore: derived factors moved as time passed');
    return pass;
  }
}
