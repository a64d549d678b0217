// Event retention on PostgreSQL (docs/operations.md, "Retention"): as on SQLite, one short
// transaction per batch. With several processes on one database, one prunes at a time: a
// process that finds the lock taken ends its walk (the holder is doing the work).
import { oldestEvents } from '../prune.ts';
import type { PruneBatch } from '../store.ts';
import { LOCKS, type Sql } from './connection.ts';

export async function pruneEvents(
  pool: Sql,
  before: number,
  opts: { after: number; limit: number },
): Promise<PruneBatch> {
  return pool.begin(async (sql) => {
    const [lock] = await sql<{ got: boolean }[]>`SELECT pg_try_advisory_xact_lock(${LOCKS.retention}) AS got`;
    if (!lock?.got) return { events: 0, deliveries: 0, next: null };
    const rows = await sql<{ seq: string; id: string; created_at: number }[]>`
      SELECT seq, id, created_at FROM events WHERE seq > ${opts.after} ORDER BY seq LIMIT ${opts.limit}`;
    const old = oldestEvents(rows, before, opts);
    if (old.ids.length === 0) return { events: 0, deliveries: 0, next: null };
    // A delivery being retried right now is either seen as pending here (and kept), or waited
    // for and then skipped by the status check (READ COMMITTED re-checks a row it waited on).
    const deliveries = await sql`
      DELETE FROM deliveries WHERE event_id = ANY(${old.ids}::text[]) AND status <> 'pending'`;
    const events = await sql`
      DELETE FROM events e WHERE e.id = ANY(${old.ids}::text[])
      AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id)`;
    return { events: events.count, deliveries: deliveries.count, next: old.next };
  });
}
