// The dispatchers' side of the outbox on PostgreSQL: many dispatchers, in many processes,
// claim from the same table; SKIP LOCKED keeps them off each other's rows.
import type { EventType, WebhookFormat } from '../../domain/events.ts';
import {
  type InFlight,
  inServingOrder,
  quotas,
  type Ready,
  settleRound,
  shareSlots,
} from '../../webhooks/fair-share.ts';
import type { AttemptOutcome, ClaimedDelivery, ClaimOptions } from '../store.ts';
import { LOCKS, type Queryable } from './connection.ts';
import { fromText, pgArray, toTextOrNull } from './text.ts';

interface DetailRow {
  id: string;
  account_id: string;
  webhook_id: string;
  event_id: string;
  attempts: number;
  type: EventType;
  data: string;
  url: string;
  format: WebhookFormat;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
}

/** Rounds of sharing: a webhook with fewer due deliveries than its share leaves the rest to others. */
const MAX_ROUNDS = 4;

/**
 * Runs inside a transaction. Claims are serialized across every process by an advisory lock,
 * so the deliveries in flight that decide each share are exact (a check-then-act under one lock).
 * Every statement seeks per webhook (LATERAL … LIMIT, ARRAY(…) for the leases), so no plan turns
 * into a scan of the backlog, whatever the statistics a burst of inserts leaves behind; and the
 * first three go to the server together (pipelined), so a claim costs three round trips in all.
 */
export async function claimDeliveries(sql: Queryable, opts: ClaimOptions): Promise<ClaimedDelivery[]> {
  const [, inFlight, due] = await Promise.all([
    // The one place that does not wait for its commit to reach the disk (RELIABILITY.md, "Power
    // loss"): a claim writes only leases, which nobody was promised; one that a crash loses means
    // the delivery is claimed and sent again, which at least once allows. A recorded attempt
    // flushes the claim before it (the log is written in order), and stays synchronous itself.
    sql`SELECT pg_advisory_xact_lock(${LOCKS.claim}), set_config('synchronous_commit', 'off', true)`,
    // Read after the lock (the server runs them in order), so what is in flight is exact.
    sql<InFlight[]>`
      SELECT account_id AS "accountId", webhook_id AS "webhookId", count(*)::int AS n FROM delivery_leases
      WHERE until > ${opts.now} GROUP BY account_id, webhook_id`,
    // A seek per webhook, not EXISTS: a semi-join may be planned as a hash of every due delivery
    // (338 ms at 300,000 pending with a burst's statistics); a LATERAL … LIMIT 1 cannot.
    sql<Ready[]>`
      SELECT w.account_id AS "accountId", w.id AS "webhookId" FROM webhooks w
      CROSS JOIN LATERAL (
        SELECT 1 FROM deliveries d
        WHERE d.account_id = w.account_id AND d.webhook_id = w.id AND d.status = 'pending'
          AND d.next_attempt_at <= ${opts.now}
          AND NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_id = d.id AND l.until > ${opts.now})
        ORDER BY d.next_attempt_at LIMIT 1) due
      WHERE w.enabled`,
  ]);
  let ready: Ready[] = [...due];
  const served: Ready[] = [];
  const chosen: DetailRow[] = [];
  for (let round = 0; round < MAX_ROUNDS && ready.length > 0 && chosen.length < opts.limit; round++) {
    const share = shareSlots(ready, inFlight, { ...opts, limit: opts.limit - chosen.length });
    if (share.length === 0) break;
    const wanted = quotas(share);
    const col = <T>(f: (q: (typeof wanted)[number]) => T) => wanted.map(f);
    // Choose, lease (taking over a lease that ran out) and read the payloads in one statement.
    const rows = await sql<DetailRow[]>`
      WITH chosen AS (
        SELECT d.id, d.account_id, d.webhook_id, d.event_id, d.attempts
        FROM unnest(${pgArray(col((q) => q.accountId))}::text[], ${pgArray(col((q) => q.webhookId))}::text[],
          ${pgArray(col((q) => q.quota))}::int[]) AS p(account_id, webhook_id, quota)
        CROSS JOIN LATERAL (
          SELECT d.id, d.account_id, d.webhook_id, d.event_id, d.attempts FROM deliveries d
          WHERE d.account_id = p.account_id AND d.webhook_id = p.webhook_id AND d.status = 'pending'
            AND d.next_attempt_at <= ${opts.now}
            AND NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_id = d.id AND l.until > ${opts.now})
          ORDER BY d.next_attempt_at LIMIT p.quota) d),
      leased AS (
        INSERT INTO delivery_leases (delivery_id, account_id, webhook_id, owner, until)
        SELECT id, account_id, webhook_id, ${opts.owner}, ${opts.leaseUntil} FROM chosen
        ON CONFLICT (delivery_id) DO UPDATE SET owner = excluded.owner, until = excluded.until)
      SELECT c.id, c.account_id, c.webhook_id, c.event_id, c.attempts, e.type, e.data, w.url, w.format,
        w.secret, w.previous_secret, w.previous_secret_expires_at
      FROM chosen c
      CROSS JOIN LATERAL (
        SELECT e.type, e.data::text AS data FROM events e WHERE e.id = c.event_id LIMIT 1) e
      CROSS JOIN LATERAL (
        SELECT w.url, w.format, w.secret, w.previous_secret, w.previous_secret_expires_at FROM webhooks w WHERE w.account_id = c.account_id AND w.id = c.webhook_id LIMIT 1) w`;
    served.push(...share);
    chosen.push(...rows);
    const taken = rows.map((r) => ({ accountId: r.account_id, webhookId: r.webhook_id }));
    const full = settleRound(wanted, taken, inFlight);
    if (full.length === wanted.length) break; // every quota filled: nothing was left over
    ready = full;
  }
  const claimed = chosen.map((r) => ({ accountId: r.account_id, webhookId: r.webhook_id, row: r }));
  return inServingOrder(served, claimed).map(({ row: r }) => ({
    id: r.id,
    accountId: r.account_id,
    webhookId: r.webhook_id,
    eventId: r.event_id,
    eventType: r.type,
    data: r.data,
    url: fromText(r.url),
    format: r.format,
    secret: r.secret,
    previousSecret: r.previous_secret,
    previousSecretExpiresAt: r.previous_secret_expires_at,
    attempt: r.attempts + 1,
  }));
}

/**
 * Every outcome in three statements (attempts in, deliveries moved on, leases given back), whatever
 * their number, sent together (pipelined: the server runs them in order).
 */
export async function recordAttempts(sql: Queryable, outcomes: AttemptOutcome[], now: number): Promise<void> {
  const col = <T>(f: (o: AttemptOutcome) => T) => outcomes.map(f);
  const ids = col((o) => o.deliveryId);
  const owners = col((o) => o.owner);
  await Promise.all([
    sql`
      INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
      SELECT * FROM unnest(${pgArray(ids)}::text[], ${pgArray(col((o) => o.attempt))}::int[],
        ${pgArray(col((o) => o.startedAt))}::bigint[], ${pgArray(col((o) => o.durationMs))}::int[], ${pgArray(col((o) => o.statusCode))}::int[],
        ${pgArray(col((o) => toTextOrNull(o.error)))}::text[], ${pgArray(col((o) => toTextOrNull(o.responseBody)))}::text[])
      ON CONFLICT DO NOTHING`,
    // Only the lease holder moves the delivery on; a dispatcher whose lease was taken over does not.
    sql`
      UPDATE deliveries d SET status = u.status, attempts = u.attempt, next_attempt_at = u.next_at, updated_at = ${now}
      FROM unnest(${pgArray(ids)}::text[], ${pgArray(owners)}::text[],
        ${pgArray(col((o) => o.next.status))}::text[], ${pgArray(col((o) => o.attempt))}::int[],
        ${pgArray(col((o) => (o.next.status === 'pending' ? o.next.at : null)))}::bigint[]) AS u(id, owner, status, attempt, next_at)
      WHERE d.id = u.id
        AND EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_id = u.id AND l.owner = u.owner)`,
    sql`
      DELETE FROM delivery_leases l USING unnest(${pgArray(ids)}::text[], ${pgArray(owners)}::text[]) AS u(id, owner)
      WHERE l.delivery_id = u.id AND l.owner = u.owner`,
    ...outcomes
      .filter((x) => x.disableWebhook)
      .map(
        (o) => sql`
          UPDATE webhooks SET enabled = false, disabled_reason = 'The receiver answered 410 Gone.', updated_at = ${now}
          WHERE account_id = ${o.accountId} AND id = ${o.webhookId}`,
      ),
  ]);
}

export async function nextDueAt(sql: Queryable, after: number): Promise<number | null> {
  // One index seek per enabled webhook; leases that run out are found by the poll.
  const [row] = await sql<{ at: number | null }[]>`
    SELECT MIN(n.at) AS at FROM webhooks w
    CROSS JOIN LATERAL (
      SELECT d.next_attempt_at AS at FROM deliveries d
      WHERE d.account_id = w.account_id AND d.webhook_id = w.id AND d.status = 'pending'
        AND d.next_attempt_at > ${after}
      ORDER BY d.next_attempt_at LIMIT 1) n
    WHERE w.enabled`;
  return row?.at ?? null;
}
