// The dispatchers' side of the outbox on PostgreSQL: many dispatchers, in many processes,
// claim from the same table; SKIP LOCKED keeps them off each other's rows.
import type { EventType } from '../../domain/events.ts';
import { type InFlight, inServingOrder, quotas, type Ready, shareSlots } from '../fair-share.ts';
import type { AccountBacklog, AttemptOutcome, ClaimedDelivery, ClaimOptions } from '../store.ts';
import { LOCKS, type Queryable } from './connection.ts';
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

/** Rounds of sharing: a webhook with fewer due deliveries than its share leaves the rest to others. */
const MAX_ROUNDS = 4;

/**
 * Runs inside a transaction. Claims are serialized across every process by an advisory lock,
 * so the deliveries in flight that decide each share are exact (a check-then-act under one lock);
 * each statement is an index seek per webhook, whatever the backlog and whatever the statistics.
 */
export async function claimDeliveries(sql: Queryable, opts: ClaimOptions): Promise<ClaimedDelivery[]> {
  await sql`SELECT pg_advisory_xact_lock(${LOCKS.claim})`;
  const inFlight = await sql<InFlight[]>`
    SELECT account_id AS "accountId", webhook_id AS "webhookId", count(*)::int AS n FROM deliveries
    WHERE status = 'pending' AND lease_until > ${opts.now}
    GROUP BY account_id, webhook_id`;
  let ready: Ready[] = await sql<Ready[]>`
    SELECT w.account_id AS "accountId", w.id AS "webhookId" FROM webhooks w
    WHERE w.enabled AND EXISTS (
      SELECT 1 FROM deliveries d
      WHERE d.account_id = w.account_id AND d.webhook_id = w.id AND d.status = 'pending'
        AND d.next_attempt_at <= ${opts.now} AND (d.lease_until IS NULL OR d.lease_until <= ${opts.now}))`;
  const served: Ready[] = [];
  const chosen: (Ready & { id: string })[] = [];
  for (let round = 0; round < MAX_ROUNDS && ready.length > 0 && chosen.length < opts.limit; round++) {
    const share = shareSlots(ready, inFlight, { ...opts, limit: opts.limit - chosen.length });
    if (share.length === 0) break;
    const wanted = quotas(share);
    const col = <T>(f: (q: (typeof wanted)[number]) => T) => wanted.map(f);
    const rows = await sql<(Ready & { id: string })[]>`
      SELECT p.account_id AS "accountId", p.webhook_id AS "webhookId", d.id
      FROM unnest(${col((q) => q.accountId)}::text[], ${col((q) => q.webhookId)}::text[],
        ${col((q) => q.quota)}::int[]) AS p(account_id, webhook_id, quota)
      CROSS JOIN LATERAL (
        SELECT d.id FROM deliveries d
        WHERE d.account_id = p.account_id AND d.webhook_id = p.webhook_id AND d.status = 'pending'
          AND d.next_attempt_at <= ${opts.now} AND (d.lease_until IS NULL OR d.lease_until <= ${opts.now})
        ORDER BY d.next_attempt_at LIMIT p.quota
        FOR UPDATE OF d SKIP LOCKED) d`;
    served.push(...share);
    chosen.push(...rows);
    const got = new Map<string, number>();
    for (const r of rows) got.set(r.webhookId, (got.get(r.webhookId) ?? 0) + 1);
    for (const q of wanted) {
      const n = got.get(q.webhookId) ?? 0;
      if (n > 0) inFlight.push({ accountId: q.accountId, webhookId: q.webhookId, n });
    }
    // Those that had fewer due than their share have nothing more; the others may take what they left.
    ready = wanted.filter((q) => (got.get(q.webhookId) ?? 0) === q.quota);
    if (rows.length === share.length) break;
  }
  if (chosen.length === 0) return [];
  const rows = await sql<DetailRow[]>`
    WITH leased AS (
      UPDATE deliveries SET lease_owner = ${opts.owner}, lease_until = ${opts.leaseUntil}
      WHERE id = ANY(${chosen.map((c) => c.id)}::text[])
      RETURNING id, account_id, webhook_id, event_id, attempts)
    SELECT l.id, l.account_id, l.webhook_id, l.event_id, l.attempts, e.type, e.data::text AS data, w.url, w.secret
    FROM leased l
    JOIN webhooks w ON w.account_id = l.account_id AND w.id = l.webhook_id
    JOIN events e ON e.id = l.event_id`;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return inServingOrder(served, chosen).flatMap(({ id }) => {
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

/** Counted over the partial index of pending deliveries. */
export async function backlogByAccount(sql: Queryable): Promise<AccountBacklog[]> {
  return sql<AccountBacklog[]>`
    SELECT account_id AS "accountId", count(*)::int AS pending, MIN(created_at) AS "oldestAt"
    FROM deliveries WHERE status = 'pending' GROUP BY account_id`;
}
