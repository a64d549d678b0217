// Retention (docs/operations.md, "Event retention"): what the retention job removes across accounts,
// written once for both backends. Score history is never touched.
import { type Driver, Params } from './driver.ts';

/** Housekeeping across accounts: what the retention job removes. */
export interface Retention {
  /**
   * Walks the oldest events in the order they were written, from just after position `after`
   * (0 at first), over at most `limit` of them, and stops at the first one created at or after
   * `before`. Of those, it removes the finished deliveries (with their attempts), then each
   * event left with no delivery: an event with a delivery still pending stays, and so does
   * everything newer. Score history is never touched. `next` is null once the walk has reached
   * an event too young to go (or the end), or when another process is pruning (PostgreSQL).
   */
  pruneEvents(before: number, opts: { after: number; limit: number }): Promise<PruneBatch>;
  /** Removes at most `limit` metric points dated before `before`, oldest first; answers how many. */
  pruneMetricPoints(before: number, limit: number): Promise<number>;
  /**
   * Removes at most `limit` of the customers' source activity (the timeline's, migration 33) from
   * before `before`, oldest first: it is kept as long as events are. Answers how many.
   */
  pruneSourceActivity(before: number, limit: number): Promise<number>;
}

/** One batch of event retention (docs/operations.md, "Event retention"). */
export interface PruneBatch {
  events: number;
  deliveries: number;
  /** Where the next batch starts (give it as `after`); null when the walk is over. */
  next: number | null;
}

/**
 * Of up to `limit` events (rows of seq, id, created_at) read in the order they were written, from
 * just after position `after`: the ones to remove, those created before `before` up to the first
 * that was not (created_at follows the write order but for clock skew, which only delays an
 * event's turn); and `next`, where the following batch starts, or null once the walk has reached
 * an event too young to go, or the end.
 */
export function oldestEvents(
  rows: readonly Record<string, unknown>[],
  before: number,
  opts: { after: number; limit: number },
): { ids: string[]; next: number | null } {
  const ids: string[] = [];
  let last = opts.after;
  for (const r of rows) {
    if (Number(r.created_at) >= before) return { ids, next: null };
    ids.push(r.id as string);
    last = Number(r.seq);
  }
  return { ids, next: rows.length < opts.limit ? null : last };
}

/**
 * One batch of event retention: the events before `before` among the next `limit` after `after`,
 * with their finished deliveries (attempts go with them, ON DELETE CASCADE); an event with a
 * delivery still pending stays. With several processes on one database one prunes at a time: a
 * process that finds the dialect's lock taken ends its walk (the holder is doing the work).
 */
export async function pruneEvents(
  db: Driver,
  before: number,
  opts: { after: number; limit: number },
): Promise<PruneBatch> {
  if (db.tryRetentionLock && !(await db.get(db.tryRetentionLock, []))?.got) {
    return { events: 0, deliveries: 0, next: null };
  }
  const rows = await db.all<{ seq: number | string; id: string; created_at: number }>(
    'SELECT seq, id, created_at FROM events WHERE seq > $1 ORDER BY seq LIMIT $2',
    [opts.after, opts.limit],
  );
  const old = oldestEvents(rows, before, opts);
  if (old.ids.length === 0) return { events: 0, deliveries: 0, next: null };
  const p = new Params();
  const ids = db.inList(p, old.ids);
  // On PostgreSQL a delivery being retried right now is either seen as pending here (and kept),
  // or waited for and then skipped by the status check (READ COMMITTED re-checks a row it waited on).
  const deliveries = await db.run(
    `DELETE FROM deliveries WHERE event_id ${ids} AND status <> 'pending'`,
    p.list,
  );
  const events = await db.run(
    `DELETE FROM events WHERE id ${ids} AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id)`,
    p.list,
  );
  return { events, deliveries, next: old.next };
}

export const pruneMetricPoints = (db: Driver, before: number, limit: number): Promise<number> =>
  db.run(
    `DELETE FROM metric_points WHERE (account_id, customer_id, metric, at) IN (
       SELECT account_id, customer_id, metric, at FROM metric_points WHERE at < $1 ORDER BY at LIMIT $2)`,
    [before, limit],
  );

export const pruneSourceActivity = (db: Driver, before: number, limit: number): Promise<number> =>
  db.run(
    `DELETE FROM source_activity WHERE (account_id, customer_id, at, id) IN (
       SELECT account_id, customer_id, at, id FROM source_activity WHERE at < $1 ORDER BY at LIMIT $2)`,
    [before, limit],
  );
