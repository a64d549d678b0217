// Event retention on SQLite (docs/operations.md, "Retention"). One batch is one short write
// transaction on the writer; the caller walks batch by batch, yielding between them.
import { oldestEvents } from '../prune.ts';
import type { PruneBatch } from '../store.ts';
import type { Connection } from './connection.ts';

export function pruneEvents(
  conn: Connection,
  before: number,
  opts: { after: number; limit: number },
): PruneBatch {
  const rows = conn.all(
    'SELECT seq, id, created_at FROM events WHERE seq > ? ORDER BY seq LIMIT ?',
    opts.after,
    opts.limit,
  );
  const old = oldestEvents(rows, before, opts);
  if (old.ids.length === 0) return { events: 0, deliveries: 0, next: null };
  const ids = JSON.stringify(old.ids);
  // Attempts go with their deliveries (ON DELETE CASCADE).
  const deliveries = conn.run(
    `DELETE FROM deliveries WHERE event_id IN (SELECT value FROM json_each(?)) AND status <> 'pending'`,
    ids,
  );
  const events = conn.run(
    `DELETE FROM events WHERE id IN (SELECT value FROM json_each(?))
     AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id)`,
    ids,
  );
  return { events, deliveries, next: old.next };
}
