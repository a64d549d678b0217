// The mail sender (docs/operations.md, "Mail"): every few seconds it claims the mails that are due
// from the outbox (src/store/mail.ts), sends them through nodemailer to VITALS_SMTP_URL, and
// records each attempt: sent, due again after a backoff (domain/mail.ts), or given up after the
// last retry or a day. A claim leases its mails, so two processes never send one at once, and a
// process that dies mid-send leaves them due again when the lease ends (a mail may then arrive
// twice; none is lost). With VITALS_SMTP_URL unset nothing is sent: what writes put in the outbox
// is given up, so turning mail on later sends no stale news.
import type { FastifyBaseLogger } from 'fastify';
import { createTransport, type Transporter } from 'nodemailer';
import type { Config } from '../config.ts';
import { randomBase62 } from '../domain/ids.ts';
import {
  type DigestData,
  digestMessage,
  type Message,
  nextMailAttempt,
  type TaskAssignedData,
  taskAssignedMessage,
} from '../domain/mail.ts';
import { IntervalJob } from '../interval-job.ts';
import type { Metrics } from '../metrics.ts';
import type { ClaimedMail, MailOutcome, Store } from '../store/store.ts';

/** Mails claimed at once, and sent side by side. */
const CLAIM_BATCH = 20;
const SEND_PARALLEL = 4;
/** One attempt's bounds; the lease outlasts them, so no other sender takes a mail being sent. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };
const LEASE_MS = 120_000;
/** Finished mails and digest claims are kept this long (what was sent, for an operator to look up). */
const KEEP_MS = 7 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;

export interface MailPass {
  sent: number;
  retrying: number;
  failed: number;
}

export interface MailSenderOptions {
  store: Pick<Store, 'claimMails' | 'recordMail' | 'pruneMails'>;
  mail: Config['mail'];
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;
  metrics?: Pick<Metrics, 'jobFailures'>;
  /** The clock (tests move it). */
  now?: () => number;
  /** Time between passes (default 5 s). */
  intervalMs?: number;
}

export class MailSender extends IntervalJob<MailPass> {
  readonly id = `mls_${randomBase62(12)}`;
  readonly #o: MailSenderOptions & { now: () => number; intervalMs: number };
  readonly #transport: Transporter | null;
  #prunedAt = 0;

  constructor(opts: MailSenderOptions) {
    super('mail', 'mail', opts.log, opts.metrics);
    this.#o = { now: Date.now, intervalMs: 5000, ...opts };
    const url = opts.mail.smtpUrl;
    this.#transport = url === undefined ? null : createTransport({ url, ...SMTP_TIMEOUTS });
  }

  protected override get intervalMs(): number {
    return this.#o.intervalMs;
  }

  override async stop(): Promise<void> {
    await super.stop();
    this.#transport?.close();
  }

  protected async pass(): Promise<MailPass> {
    const pass: MailPass = { sent: 0, retrying: 0, failed: 0 };
    for (;;) {
      if (this.stopped) break;
      const now = this.#o.now();
      const claimed = await this.#o.store.claimMails({
        owner: this.id,
        now,
        leaseUntil: now + LEASE_MS,
        limit: CLAIM_BATCH,
      });
      for (let i = 0; i < claimed.length; i += SEND_PARALLEL) {
        const outcomes = await Promise.all(claimed.slice(i, i + SEND_PARALLEL).map((m) => this.#attempt(m)));
        for (const o of outcomes) {
          await this.#o.store.recordMail(o);
          pass[o.next.status === 'pending' ? 'retrying' : o.next.status] += 1;
        }
      }
      if (claimed.length < CLAIM_BATCH) break;
    }
    await this.#prune();
    return pass;
  }

  /** One mail sent (or not); its outcome, to record. */
  async #attempt(m: ClaimedMail): Promise<MailOutcome> {
    const attempt = m.attempts + 1;
    const end = (next: MailOutcome['next'], error: string | null): MailOutcome => ({
      id: m.id,
      owner: this.id,
      attempt,
      next,
      error,
      at: this.#o.now(),
    });
    if (this.#transport === null) return end({ status: 'failed' }, 'mail is off: VITALS_SMTP_URL is not set');
    try {
      const message = render(m, this.#o.mail.publicUrl);
      await this.#transport.sendMail({
        from: this.#o.mail.from,
        to: m.recipient,
        ...message,
        headers: { 'X-Vitals-Mail-Id': m.id },
      });
      return end({ status: 'sent' }, null);
    } catch (err) {
      const error = describe(err);
      const at = nextMailAttempt(attempt, m.createdAt, this.#o.now());
      const fields = { mail: m.id, kind: m.kind, attempt, error };
      if (at === null) this.#o.log.error(fields, 'mail: giving up after its last attempt');
      else this.#o.log.warn({ ...fields, next: new Date(at).toISOString() }, 'mail: attempt failed');
      return end(at === null ? { status: 'failed' } : { status: 'pending', at }, error);
    }
  }

  async #prune(): Promise<void> {
    const now = this.#o.now();
    if (now - this.#prunedAt < PRUNE_EVERY_MS) return;
    this.#prunedAt = now;
    await this.#o.store.pruneMails(now - KEEP_MS);
  }
}

function render(m: ClaimedMail, publicUrl: string | undefined): Message {
  if (m.kind === 'digest') return digestMessage(m.data as DigestData, publicUrl);
  return taskAssignedMessage(m.data as TaskAssignedData, publicUrl);
}

function describe(err: unknown): string {
  const e = err as { code?: string; responseCode?: number; message?: string };
  const code = e.responseCode ?? e.code;
  const message = e.message ?? String(err);
  return (code === undefined ? message : `${code}: ${message}`).slice(0, 500);
}
