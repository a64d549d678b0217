// The dispatchers' side of the outbox on SQLite: claim, record, and when to look next.
import type { EventType } from '../../domain/events.ts';
import {
  type InFlight,
  inServingOrder,
  quotas,
  type Ready,
  settleRound,
  shareSlots,
} from '../../webhooks/fair-share.ts';
import type { AttemptOutcome, ClaimedDelivery, ClaimOptions } from '../store.ts';
import type { Connection } from './connection.ts';

/** Rounds of sharing: a webhook with fewer due deliveries than its share leaves the rest to others. */
const MAX_ROUNDS = 4;

/**
 * Runs on the writer, so claims are serialized and the deliveries in flight that decide each
 * share are exact. Each statement is an index seek per webhook (named, so no plan depends on
 * statistics), whatever the backlog.
 */
export function claimDeliveries(conn: Connection, opts: ClaimOptions): ClaimedDelivery[] {
  const inFlight = conn.all(
    `SELECT account_id AS accountId, webhook_id AS webhookId, count(*) AS n FROM delivery_leases
     WHERE until > ? GROUP BY account_id, webhook_id`,
    opts.now,
  ) as unknown as InFlight[];
  const unleased = 'NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_id = d.id AND l.until > ?)';
  const due = conn.statement(
    `SELECT d.id FROM deliveries d INDEXED BY deliveries_due_by_webhook
     WHERE d.account_id = ? AND d.webhook_id = ? AND d.status = 'pending' AND d.next_attempt_at <= ? AND ${unleased}
     ORDER BY d.next_attempt_at LIMIT ?`,
  );
  let ready = conn.all(
    `SELECT w.account_id AS accountId, w.id AS webhookId FROM webhooks w
     WHERE w.enabled = 1 AND EXISTS (
       SELECT 1 FROM deliveries d INDEXED BY deliveries_due_by_webhook
       WHERE d.account_id = w.account_id AND d.webhook_id = w.id AND d.status = 'pending'
         AND d.next_attempt_at <= ? AND ${unleased})`,
    opts.now,
    opts.now,
  ) as unknown as Ready[];
  const served: Ready[] = [];
  const chosen: (Ready & { id: string })[] = [];
  for (let round = 0; round < MAX_ROUNDS && ready.length > 0 && chosen.length < opts.limit; round++) {
    const share = shareSlots(ready, inFlight, { ...opts, limit: opts.limit - chosen.length });
    if (share.length === 0) break;
    const wanted = quotas(share);
    served.push(...share);
    const taken: (Ready & { id: string })[] = [];
    for (const q of wanted) {
      for (const r of due.all(q.accountId, q.webhookId, opts.now, opts.now, q.quota)) {
        taken.push({ accountId: q.accountId, webhookId: q.webhookId, id: r.id as string });
      }
    }
    chosen.push(...taken);
    const full = settleRound(wanted, taken, inFlight);
    if (full.length === wanted.length) break; // every quota filled: nothing was left over
    ready = full;
  }
  if (chosen.length === 0) return [];
  const ids = JSON.stringify(chosen.map((c) => c.id));
  // A lease that ran out (its dispatcher gone) is taken over.
  conn.run(
    `INSERT INTO delivery_leases (delivery_id, account_id, webhook_id, owner, until)
     SELECT d.id, d.account_id, d.webhook_id, ?, ? FROM deliveries d WHERE d.id IN (SELECT value FROM json_each(?))
     ON CONFLICT (delivery_id) DO UPDATE SET owner = excluded.owner, until = excluded.until`,
    opts.owner,
    opts.leaseUntil,
    ids,
  );
  const rows = conn.all(
    `SELECT d.id, d.account_id, d.webhook_id, d.event_id, d.attempts, e.type, e.data, w.url, w.format, w.secret,
       w.previous_secret, w.previous_secret_expires_at
     FROM deliveries d
     JOIN webhooks w ON w.account_id = d.account_id AND w.id = d.webhook_id
     JOIN events e ON e.id = d.event_id
     WHERE d.id IN (SELECT value FROM json_each(?))`,
    ids,
  );
  const byId = new Map(rows.map((r) => [r.id as string, r]));
  return inServingOrder(served, chosen).flatMap(({ id }) => {
    const r = byId.get(id);
    if (!r) return [];
    return [
      {
        id,
        accountId: r.account_id as string,
        webhookId: r.webhook_id as string,
        eventId: r.event_id as string,
        eventType: r.type as EventType,
        data: r.data as string,
        url: r.url as string,
        format: r.format === 'slack' ? 'slack' : 'standard',
        secret: r.secret as string,
        previousSecret: (r.previous_secret as string | null) ?? null,
        previousSecretExpiresAt: (r.previous_secret_expires_at as number | null) ?? null,
        attempt: (r.attempts as number) + 1,
      },
    ];
  });
}

export function recordAttempt(conn: Connection, o: AttemptOutcome, now: number): void {
  conn.run(
    `INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
     VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    o.deliveryId,
    o.attempt,
    o.startedAt,
    o.durationMs,
    o.statusCode,
    o.error,
    o.responseBody,
  );
  // Only the lease holder moves the delivery on; a dispatcher whose lease was taken over does not.
  const held = conn.run(
    'DELETE FROM delivery_leases WHERE delivery_id = ? AND owner = ?',
    o.deliveryId,
    o.owner,
  );
  if (held === 1) {
    conn.run(
      'UPDATE deliveries SET status = ?, attempts = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?',
      o.next.status,
      o.attempt,
      o.next.status === 'pending' ? o.next.at : null,
      now,
      o.deliveryId,
    );
  }
  if (o.disableWebhook) {
    conn.run(
      `UPDATE webhooks SET enabled = 0, disabled_reason = 'The receiver answered 410 Gone.', updated_at = ?
       WHERE account_id = ? AND id = ?`,
      now,
      o.accountId,
      o.webhookId,
    );
  }
}

export function nextDueAt(conn: Connection, after: number): number | null {
  // One index seek per enabled webhook; leases that run out are found by the poll.
  const r = conn.get(
    `SELECT MIN((SELECT d.next_attempt_at FROM deliveries d INDEXED BY deliveries_due_by_webhook
       WHERE d.account_id = w.account_id AND d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at > ?
       ORDER BY d.next_attempt_at LIMIT 1)) AS at
     FROM webhooks w WHERE w.enabled = 1`,
    after,
  );
  return (r?.at as number | null) ?? null;
}
