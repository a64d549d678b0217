// The dispatchers' side of the outbox on PostgreSQL: many dispatchers, in many processes,
// claim from the same table; SKIP LOCKED keeps them off each other's rows.
import type { EventType } from '../../domain/events.ts';
import { type AttemptOutcome, type ClaimedDelivery, type ClaimOptions, freeSlots } from '../store.ts';
import type { Queryable } from './connection.ts';
import { fromText, toTextOrNull } from './text.ts';

interface DetailRow {
  id: string;
  account_id: string;
  webhook_id: string;
  event_id: string;
  attempts: number;
  type: EventType;
  data: string;
  url: string;
  secret: string;
}

/**
 * Rounds of candidates, oldest first. A webhook whose slots are full (or that the caller knows
 * is busy) is left out of the next round, so a long backlog behind a stuck receiver never hides
 * the deliveries of the others.
 */
const MAX_ROUNDS = 8;

/** Runs inside a transaction: the row locks hold until the leases are written and committed. */
export async function claimDeliveries(sql: Queryable, opts: ClaimOptions): Promise<ClaimedDelivery[]> {
  const taken = new Map<string, number>();
  const full = new Set<string>(opts.busy);
  const chosen: string[] = [];
  const batch = opts.limit * 4;
  // Choose by ids and webhooks only; the event payloads are read for the chosen alone.
  for (let round = 0; round < MAX_ROUNDS && chosen.length < opts.limit; round++) {
    // A row another dispatcher is claiming right now is skipped, not waited for; one whose lease
    // was committed a moment ago is re-checked against the lease condition once it is locked.
    const candidates = await sql<{ id: string; webhook_id: string }[]>`
      SELECT d.id, d.webhook_id FROM deliveries d
      JOIN webhooks w ON w.account_id = d.account_id AND w.id = d.webhook_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= ${opts.now}
        AND (d.lease_until IS NULL OR d.lease_until <= ${opts.now}) AND w.enabled
        AND d.webhook_id <> ALL(${[...full]}::text[])
        AND d.id <> ALL(${chosen}::text[])
      ORDER BY d.next_attempt_at LIMIT ${batch}
      FOR UPDATE OF d SKIP LOCKED`;
    for (const r of candidates) {
      if (chosen.length === opts.limit) break;
      const n = taken.get(r.webhook_id) ?? 0;
      if (n >= freeSlots(opts, r.webhook_id)) {
        full.add(r.webhook_id);
        continue;
      }
      taken.set(r.webhook_id, n + 1);
      chosen.push(r.id);
    }
    if (candidates.length < batch) break; // nothing more is due
  }
  if (chosen.length === 0) return [];
  await sql`
    UPDATE deliveries SET lease_owner = ${opts.owner}, lease_until = ${opts.leaseUntil}
    WHERE id = ANY(${chosen}::text[])`;
  const rows = await sql<DetailRow[]>`
    SELECT d.id, d.account_id, d.webhook_id, d.event_id, d.attempts, e.type, e.data::text AS data, w.url, w.secret
    FROM deliveries d
    JOIN webhooks w ON w.account_id = d.account_id AND w.id = d.webhook_id
    JOIN events e ON e.id = d.event_id
    WHERE d.id = ANY(${chosen}::text[])`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return chosen.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    return [
      {
        id,
        accountId: r.account_id,
        webhookId: r.webhook_id,
        eventId: r.event_id,
        eventType: r.type,
        data: r.data,
        url: fromText(r.url),
        secret: r.secret,
        attempt: r.attempts + 1,
      },
    ];
  });
}

/** Every outcome in two statements (attempts in, deliveries moved on), whatever their number. */
export async function recordAttempts(sql: Queryable, outcomes: AttemptOutcome[], now: number): Promise<void> {
  const col = <T>(f: (o: AttemptOutcome) => T) => outcomes.map(f);
  await sql`
    INSERT INTO delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
    SELECT * FROM unnest(${col((o) => o.deliveryId)}::text[], ${col((o) => o.attempt)}::int[],
      ${col((o) => o.startedAt)}::bigint[], ${col((o) => o.durationMs)}::int[], ${col((o) => o.statusCode)}::int[],
      ${col((o) => toTextOrNull(o.error))}::text[], ${col((o) => toTextOrNull(o.responseBody))}::text[])
    ON CONFLICT DO NOTHING`;
  // Only the lease holder moves the delivery on; a dispatcher whose lease was taken over does not.
  await sql`
    UPDATE deliveries d SET status = u.status, attempts = u.attempt, next_attempt_at = u.next_at,
      lease_owner = NULL, lease_until = NULL, updated_at = ${now}
    FROM unnest(${col((o) => o.deliveryId)}::text[], ${col((o) => o.owner)}::text[],
      ${col((o) => o.next.status)}::text[], ${col((o) => o.attempt)}::int[],
      ${col((o) => (o.next.status === 'pending' ? o.next.at : null))}::bigint[]) AS u(id, owner, status, attempt, next_at)
    WHERE d.id = u.id AND d.lease_owner = u.owner`;
  for (const o of outcomes.filter((x) => x.disableWebhook)) {
    await sql`
      UPDATE webhooks SET enabled = false, disabled_reason = 'The receiver answered 410 Gone.', updated_at = ${now}
      WHERE account_id = ${o.accountId} AND id = ${o.webhookId}`;
  }
}

export async function nextDueAt(sql: Queryable, after: number): Promise<number | null> {
  // An index seek on deliveries_due; leases that run out are found by the poll.
  const [row] = await sql<{ at: number | null }[]>`
    SELECT MIN(next_attempt_at) AS at FROM deliveries WHERE status = 'pending' AND next_attempt_at > ${after}`;
  return row?.at ?? null;
}
