// The daily digest (docs/operations.md, "Mail"): once VITALS_DIGEST_HOUR (UTC) has come, each
// person who chose it gets one mail for the day. Every API process runs this job; each digest is
// claimed by a row per (person, day) in the transaction that puts it in the outbox (queueDigest),
// so of processes racing for it, one claims it and the others find it taken. A process that
// starts after the hour still sends the day's digests that nobody sent.
import type { FastifyBaseLogger } from 'fastify';
import { dayOf, digestsDueAt } from '../domain/mail.ts';
import { IntervalJob } from '../interval-job.ts';
import type { Metrics } from '../metrics.ts';
import type { Store } from '../store/store.ts';
import { queueDigest } from '../writes/mail.ts';

/** People read per page. */
const PAGE = 100;

export interface DigestJobOptions {
  store: Pick<Store, 'digestsDue' | 'run'>;
  /** VITALS_DIGEST_HOUR. */
  hour: number;
  log: Pick<FastifyBaseLogger, 'info' | 'error'>;
  metrics?: Pick<Metrics, 'jobFailures'>;
  /** The clock (tests move it). */
  now?: () => number;
  /** Time between looks (default 1 minute). */
  intervalMs?: number;
}

export class DigestJob extends IntervalJob<number> {
  readonly #o: DigestJobOptions & { now: () => number; intervalMs: number };

  constructor(opts: DigestJobOptions) {
    super('digest', 'mail', opts.log, opts.metrics);
    this.#o = { now: Date.now, intervalMs: 60_000, ...opts };
  }

  protected override get intervalMs(): number {
    return this.#o.intervalMs;
  }

  /** Answers how many digests this pass claimed. */
  protected async pass(): Promise<number> {
    const now = this.#o.now();
    if (!digestsDueAt(now, this.#o.hour)) return 0;
    const day = dayOf(now);
    let claimed = 0;
    // A person whose claim failed stays due: seen once, they wait for the next pass.
    const seen = new Set<string>();
    for (;;) {
      if (this.stopped) break;
      const due = (await this.#o.store.digestsDue(day, PAGE + seen.size)).filter((d) => !seen.has(d.userId));
      for (const { accountId, userId } of due) {
        if (this.stopped) break;
        seen.add(userId);
        await this.isolated({ accountId, userId }, async () => {
          if (await this.#o.store.run(queueDigest, accountId, userId, now)) claimed += 1;
        });
      }
      if (due.length < PAGE) break;
    }
    if (claimed > 0) this.#o.log.info({ day, claimed }, 'digest: the day’s digests claimed');
    return claimed;
  }
}
