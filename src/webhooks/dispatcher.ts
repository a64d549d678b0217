// The dispatcher: a peer of the HTTP API. It claims due deliveries from the outbox, sends
// them, records every attempt and schedules retries. It wakes right after a commit that
// made deliveries due, and polls as a fallback (other processes, retries, expired leases).
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { Agent } from 'undici';
import type { Config } from '../config.ts';
import { randomBase62 } from '../domain/ids.ts';
import type { Metrics } from '../metrics.ts';
import { Batcher } from '../store/batcher.ts';
import type { AttemptOutcome, ClaimedDelivery, Store } from '../store/store.ts';
import { isDatabaseUnavailable, OutageLog } from '../store/unavailable.ts';
import { nextAttemptAt, parseRetryAfter } from './backoff.ts';
import { attempt, createAgent } from './sender.ts';
import { customerIdOf, type SlackContext } from './slack.ts';

/** A lease outlives the attempt's timeout by this much before another dispatcher may take over. */
const LEASE_MARGIN_MS = 5000;
/** Attempts recorded in one transaction at most. */
const RECORD_BATCH = 256;
/** Slots a webhook starts with (VITALS_WEBHOOK_CONCURRENCY_PER_ENDPOINT is where it can grow to). */
const FIRST_SLOTS = 4;

export class Dispatcher {
  readonly id = `dsp_${randomBase62(12)}`;
  readonly #store: Store;
  readonly #config: Config['webhook'];
  readonly #log: Logger;
  readonly #metrics: Metrics | undefined;
  readonly #agent: Agent;
  /** VITALS_PUBLIC_URL: a Slack-format body links the customer's page. */
  readonly #publicUrl: string | undefined;
  /** The clock claims, leases, send times and retries go by: Date.now, or a test's clock. */
  readonly #now: () => number;
  readonly #inFlight = new Map<string, Promise<void>>();
  /**
   * Each webhook's slots, earned and lost as its attempts end (docs/webhooks.md, "Throughput and
   * fairness"): one more for each success, up to VITALS_WEBHOOK_CONCURRENCY_PER_ENDPOINT; half
   * as many (at least one) for each attempt that timed out or could not connect, or was answered
   * 429 or 503. A fast receiver
   * soon has many deliveries in flight; a hanging one soon has one, and its retries wait their turn.
   */
  readonly #slots = new Map<string, number>();
  /** Where round-robin stopped: the account served last, and each account's webhook served last. */
  readonly #after: { account?: string; webhooks: Record<string, string> } = { webhooks: {} };
  #unsubscribe: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #pumping: Promise<void> | undefined;
  #again = false;
  #stopped = true;
  #stopping: Promise<void> | undefined;
  /** When the last claim looked: what was due by then and is still unclaimed waits for a free slot. */
  #lookedAt = 0;
  /**
   * While the database is away the loop keeps polling (every VITALS_WEBHOOK_POLL) and logs the
   * outage once every 10 s; it carries on by itself when the database is back. An attempt that
   * could not be recorded is sent again once its lease runs out (docs/postgresql.md).
   */
  readonly #outage: OutageLog;
  /**
   * Attempts that finish while others are being recorded are recorded together, in one
   * transaction (group commit): after bulk work, one commit per attempt would be the drain's limit.
   */
  readonly #records: Batcher<AttemptOutcome, void>;

  constructor(deps: {
    store: Store;
    config: Config['webhook'];
    log: Logger;
    metrics?: Metrics;
    now?: () => number;
    publicUrl?: string | undefined;
  }) {
    this.#store = deps.store;
    this.#publicUrl = deps.publicUrl;
    this.#now = deps.now ?? Date.now;
    this.#config = deps.config;
    this.#log = deps.log;
    this.#metrics = deps.metrics;
    this.#agent = createAgent(deps.config);
    this.#outage = new OutageLog(deps.log, 'dispatcher');
    this.#records = new Batcher<AttemptOutcome, void>({
      run: async (_all, outcomes) => {
        await this.#store.recordAttempts(outcomes);
        return outcomes.map(() => ({ status: 'fulfilled', value: undefined }));
      },
      inFlight: 1,
      maxBatch: RECORD_BATCH,
    });
  }

  #failed(err: unknown, msg: string, fields: object = {}): void {
    if (isDatabaseUnavailable(err)) this.#outage.failed(err);
    else this.#log.error({ err, ...fields }, msg);
  }

  start(): void {
    this.#stopped = false;
    this.#unsubscribe = this.#store.onDeliveriesDue(() => this.wake());
    this.wake();
  }

  /** Finishes the attempts in flight (each bounded by the timeout), then stops; again is a no-op. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.#stopped = true;
      this.#unsubscribe?.();
      clearTimeout(this.#timer);
      await this.#pumping;
      await Promise.allSettled(this.#inFlight.values());
      await this.#agent.close();
    })();
    return this.#stopping;
  }

  wake(): void {
    if (this.#stopped) return;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = this.#pump()
      .catch((err) => this.#failed(err, 'dispatcher: claiming deliveries failed'))
      .finally(() => {
        this.#pumping = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        } else {
          void this.#schedule();
        }
      });
  }

  async #pump(): Promise<void> {
    for (;;) {
      this.#again = false;
      const now = this.#now();
      this.#lookedAt = now;
      const free = this.#config.concurrency - this.#inFlight.size;
      if (free <= 0 || this.#stopped) return;
      const claimed = await this.#store.claimDeliveries({
        owner: this.id,
        now,
        leaseUntil: now + this.#config.timeoutMs + LEASE_MARGIN_MS,
        limit: free,
        perWebhook: { default: this.#firstSlots, byWebhook: Object.fromEntries(this.#slots) },
        perAccount: this.#config.perAccountConcurrency,
        after: this.#after,
      });
      this.#outage.recovered();
      for (const d of claimed) {
        this.#after.account = d.accountId;
        this.#after.webhooks[d.accountId] = d.webhookId;
        this.#launch(d);
      }
      if (claimed.length < free && !this.#again) return;
    }
  }

  /**
   * Sleep until the next delivery falls due, or the poll interval, whichever is sooner. A
   * delivery that was already due when the last claim looked is held back by a full slot; the
   * attempt that frees the slot wakes us, so looking again at once would only spin.
   */
  async #schedule(): Promise<void> {
    if (this.#stopped) return;
    let delay = this.#config.pollMs;
    try {
      const at = await this.#store.nextDueAt(this.#lookedAt);
      if (at !== null) delay = Math.min(delay, Math.max(0, at - this.#now()));
    } catch (err) {
      this.#failed(err, 'dispatcher: reading the next due time failed');
    }
    if (this.#stopped || this.#pumping) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.wake(), delay);
    this.#timer.unref();
  }

  get #firstSlots(): number {
    return Math.min(FIRST_SLOTS, this.#config.perWebhookConcurrency);
  }

  /**
   * A success earns its webhook a slot; an attempt that timed out or could not connect, or an
   * answer that asks us to slow down (429, 503), halves them.
   */
  #adjustSlots(webhookId: string, statusCode: number | null): void {
    const now = this.#slots.get(webhookId) ?? this.#firstSlots;
    let next = now;
    if (statusCode === null || statusCode === 429 || statusCode === 503)
      next = Math.max(1, Math.floor(now / 2));
    else if (statusCode >= 200 && statusCode < 300)
      next = Math.min(this.#config.perWebhookConcurrency, now + 1);
    if (next === this.#firstSlots) this.#slots.delete(webhookId);
    else this.#slots.set(webhookId, next);
  }

  #launch(d: ClaimedDelivery): void {
    const run = this.#deliver(d)
      .catch((err) => this.#failed(err, 'dispatcher: recording an attempt failed', { delivery: d.id }))
      .finally(() => {
        this.#inFlight.delete(d.id);
        this.wake(); // a slot is free: more may be waiting for it
      });
    this.#inFlight.set(d.id, run);
  }

  /** For a Slack-format delivery: the customer's name as it is now (events carry only its id). */
  async #slack(d: ClaimedDelivery): Promise<SlackContext | undefined> {
    if (d.format !== 'slack') return undefined;
    const id = customerIdOf(d.eventType, JSON.parse(d.data) as Record<string, unknown>);
    const customer = id === null ? null : await this.#store.getCustomer(d.accountId, id);
    return { customerName: customer?.name ?? null, publicUrl: this.#publicUrl };
  }

  async #deliver(d: ClaimedDelivery): Promise<void> {
    const slack = await this.#slack(d);
    const startedAt = this.#now();
    const result = await attempt(d, {
      slack,
      now: startedAt,
      agent: this.#agent,
      timeoutMs: this.#config.timeoutMs,
      signatureHeader: this.#config.signatureHeader,
      blockPrivate: this.#config.blockPrivate,
    });
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    this.#adjustSlots(d.webhookId, result.statusCode);
    const gone = result.statusCode === 410;
    const now = this.#now();
    let next: AttemptOutcome['next'] = { status: 'succeeded' };
    if (gone) next = { status: 'failed' };
    else if (!ok) {
      const honoured = result.statusCode === 429 || result.statusCode === 503;
      const retryAfter = honoured ? parseRetryAfter(result.retryAfter, now) : null;
      const at = nextAttemptAt(this.#config, d.attempt, now, Math.random(), retryAfter);
      next = at === null ? { status: 'failed' } : { status: 'pending', at };
    }
    const outcome = next.status === 'pending' ? 'retrying' : next.status;
    this.#metrics?.deliveries.inc({ outcome });
    if (outcome !== 'retrying') this.#metrics?.finished(d.accountId, outcome);
    this.#metrics?.attemptSeconds.observe({ result: ok ? 'ok' : 'error' }, result.durationMs / 1000);
    if (!ok) {
      this.#log.warn(
        {
          delivery: d.id,
          webhook: d.webhookId,
          attempt: d.attempt,
          status: result.statusCode,
          error: result.error,
          next: outcome,
        },
        'webhook delivery attempt failed',
      );
    }
    await this.#records.submit('attempts', {
      deliveryId: d.id,
      accountId: d.accountId,
      webhookId: d.webhookId,
      owner: this.id,
      attempt: d.attempt,
      startedAt,
      durationMs: result.durationMs,
      statusCode: result.statusCode,
      error: result.error,
      responseBody: result.responseBody,
      next,
      disableWebhook: gone,
    });
  }
}
