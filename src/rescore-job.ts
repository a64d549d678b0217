// The rescore job (docs/scoring.md, "Factors from metrics"): as time passes, points leave their
// rules' windows and age past max_age_days, and the factors derived from them change with no new
// write. Every VITALS_RESCORE_INTERVAL it takes the customers due (each derivation records when its
// factors may next change) and derives them again, history reason time_passed. A customer another
// process is rescoring at that moment is skipped (PostgreSQL), so processes never do it twice.
// An account whose transaction fails is logged, counted and left for the next pass; the other
// accounts go on in this one (docs/operations.md, "Background jobs").
import type { FastifyBaseLogger } from 'fastify';
import { IntervalJob } from './interval-job.ts';
import type { Metrics } from './metrics.ts';
import type { Store } from './store/store.ts';
import { playbookPass, type Walks } from './writes/playbooks.ts';
import { rescoreDue } from './writes/rules.ts';

export interface RescoreJobOptions {
  store: Pick<Store, 'dueForRederive' | 'run' | 'playbookAccounts'>;
  intervalMs: number;
  log: Pick<FastifyBaseLogger, 'info' | 'error'>;
  /** Where a failed account is counted (vitals_job_failures_total{job="rescore"}). */
  metrics?: Pick<Metrics, 'jobFailures'>;
  /** The clock (tests move it). */
  now?: () => number;
  /** Customers taken per transaction (default 500). */
  batch?: number;
  /**
   * Transactions run side by side (default 1). PostgreSQL runs them on as many connections and
   * cores; SQLite's one writer would only queue them.
   */
  parallel?: number;
}

export interface RescorePass {
  /** Customers that were due and derived again. */
  checked: number;
  /** Of those, the ones whose score got a new version. */
  rescored: number;
  /** Tasks the playbooks opened as time passed (renewals within reach, metric triggers that started to hold). */
  opened: number;
}

export class RescoreJob extends IntervalJob<RescorePass> {
  readonly #o: Required<Omit<RescoreJobOptions, 'metrics'>>;
  /** Where each account's metric playbooks' walks through its customers stand, in this process. */
  readonly #walks = new Map<string, Walks>();

  constructor(opts: RescoreJobOptions) {
    super('rescore', 'rescore', opts.log, opts.metrics);
    this.#o = { now: Date.now, batch: 500, parallel: 1, ...opts };
  }

  protected override get intervalMs(): number {
    return this.#o.intervalMs;
  }

  protected async pass(): Promise<RescorePass> {
    const pass: RescorePass = { checked: 0, rescored: 0, opened: 0 };
    const now = this.#o.now();
    const { batch, parallel } = this.#o;
    /** Accounts whose transaction failed in this pass: their customers stay due, for the next pass. */
    const failed = new Set<string>();
    for (;;) {
      const due = await this.#o.store.dueForRederive(now, batch * parallel, [...failed]);
      // Per account, in transactions of `batch`, `parallel` of them at a time.
      const work: [string, string[]][] = [];
      const byAccount = new Map<string, string[]>();
      for (const d of due) {
        const ids = byAccount.get(d.accountId);
        if (ids) ids.push(d.customerId);
        else byAccount.set(d.accountId, [d.customerId]);
      }
      for (const [accountId, ids] of byAccount) {
        for (let i = 0; i < ids.length; i += batch) work.push([accountId, ids.slice(i, i + batch)]);
      }
      let checked = 0;
      const failures = failed.size;
      const next = async () => {
        for (let item = work.shift(); item; item = work.shift()) {
          if (this.stopped) return;
          const [accountId, ids] = item;
          if (failed.has(accountId)) continue;
          const ok = await this.isolated({ accountId }, async () => {
            const done = await this.#o.store.run(rescoreDue, accountId, ids, now);
            checked += done.checked;
            pass.rescored += done.rescored;
          });
          if (!ok) failed.add(accountId);
        }
      };
      await Promise.all(Array.from({ length: Math.min(parallel, work.length) }, next));
      if (this.stopped) return pass;
      pass.checked += checked;
      // Fewer than asked: everyone due was seen. None of them taken: another process holds them;
      // the next pass takes what is left. An account failed: the next page leaves it out.
      if (due.length < batch * parallel || (checked === 0 && failed.size === failures)) break;
    }
    // The playbooks that time alone triggers, after the scores they read have moved (docs/playbooks.md).
    if (!this.stopped) pass.opened = await this.#playbooks(now);
    if (pass.rescored > 0) this.#o.log.info(pass, 'rescore: derived factors moved as time passed');
    return pass;
  }

  /** One playbookPass per account with such playbooks; answers the tasks opened. */
  async #playbooks(now: number): Promise<number> {
    let opened = 0;
    for (const accountId of await this.#o.store.playbookAccounts()) {
      if (this.stopped) break;
      await this.isolated({ accountId }, async () => {
        const done = await this.#o.store.run(playbookPass, accountId, this.#walks.get(accountId) ?? {}, now);
        this.#walks.set(accountId, done.walks);
        opened += done.opened;
      });
    }
    return opened;
  }
}
