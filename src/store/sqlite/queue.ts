// The dispatchers' side of the outbox on SQLite: claim, record, and when to look next.
import type { EventType } from '../../domain/events.ts';
import { type AttemptOutcome, type ClaimedDelivery, type ClaimOptions, freeSlots } from '../store.ts';
import type { Connection } from './connection.ts';

/**
 * Rounds of candidates, oldest first. A webhook whose slots are full is left out of the next
 * round, so a long backlog behind a stuck receiver never hides the deliveries of the others.
 */
const MAX_ROUNDS = 8;

export function claimDeliveries(conn: Connection, opts: ClaimOptions): ClaimedDelivery[] {
  const taken = new Map<string, number>();
  const full = new Set<string>(opts.busy);
  const chosen: string[] = [];
  const batch = opts.limit * 4;
  // Choose from the covering index first (ids and webhooks only); read the payloads of the chosen.
  for (let round = 0; round < MAX_ROUNDS && chosen.length < opts.limit; round++) {
    const candidates = conn.all(
      `SELECT d.id, d.webhook_id FROM deliveries d
       JOIN webhooks w ON w.account_id = d.account_id AND w.id = d.webhook_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
         AND w.enabled = 1 AND d.webhook_id NOT IN (SELECT value FROM json_each(?))
       ORDER BY d.next_attempt_at LIMIT ?`,
      opts.now,
      opts.now,
      JSON.stringify([...full]),
      batch,
    );
    for (const r of candidates) {
      if (chosen.length === opts.limit) break;
      const webhookId = r.webhook_id as string;
      const n = taken.get(webhookId) ?? 0;
      if (n >= freeSlots(opts, webhookId)) {
        full.add(webhookId);
        continue;
      }
      taken.set(webhookId, n + 1);
      chosen.push(r.id as string);
    }
    if (candidates.length < batch) break; // nothing more is due
  }
  const lease = conn.statement('UPDATE deliveries SET lease_owner = ?, lease_until = ? WHERE id = ?');
  const details = conn.statement(
    `SELECT d.id, d.account_id, d.webhook_id, d.event_id, d.attempts, e.type, e.data, w.url, w.secret
     FROM deliveries d
     JOIN webhooks w ON w.account_id = d.account_id AND w.id = d.webhook_id
     JOIN events e ON e.id = d.event_id
     WHERE d.id = ?`,
  );
  return chosen.map((id) => {
    lease.run(opts.owner, opts.leaseUntil, id);
    const r = details.get(id) as Record<string, unknown>;
    return {
      id,
      accountId: r.account_id as string,
      webhookId: r.webhook_id as string,
      eventId: r.event_id as string,
      eventType: r.type as EventType,
      data: r.data as string,
      url: r.url as string,
      secret: r.secret as string,
      attempt: (r.attempts as number) + 1,
    };
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
  conn.run(
    `UPDATE deliveries SET status = ?, attempts = ?, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL,
       updated_at = ? WHERE id = ? AND lease_owner = ?`,
    o.next.status,
    o.attempt,
    o.next.status === 'pending' ? o.next.at : null,
    now,
    o.deliveryId,
    o.owner,
  );
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
  // An index seek on deliveries_due; leases that run out are found by the poll.
  const r = conn.get(
    "SELECT MIN(next_attempt_at) AS at FROM deliveries WHERE status = 'pending' AND next_attempt_at > ?",
    after,
  );
  return (r?.at as number | null) ?? null;
}
