// What PostgreSQL reads its own way (../sql-reader.ts, NativeReads): the events feed below a
// transaction-id horizon, the portfolio (portfolio.ts). Every id column is
// COLLATE "C", so comparisons and ORDER BY are byte-wise like SQLite's BINARY, whatever the
// database's locale. Free text goes through text.ts (a NUL would not fit in PostgreSQL text).
import { hasNul, type Row } from '../driver.ts';
import { page, toEvent } from '../rows.ts';
import type { NativeReads } from '../sql-reader.ts';
import type { Queryable } from './connection.ts';
import * as portfolio from './portfolio.ts';

export const pgReads = (sql: Queryable): NativeReads => ({
  listScores: async (accountId, opts) =>
    page(await portfolio.listScores(sql, accountId, opts), opts.limit, (e) => e),
  movers: (accountId, opts) => portfolio.movers(sql, accountId, opts),

  /**
   * The feed is ordered by (writing transaction's id, seq) and shows only events of transactions
   * below the horizon: the oldest transaction id still running in this database (or, with none
   * running, the next to be handed out). Every transaction below it has ended, so nothing can
   * later appear before an event already shown (docs/api.md, "Events"). The horizon is read in a
   * statement of its own, before the events: a transaction that ended in between is then visible.
   */
  async listEvents(accountId, opts) {
    // No event has such an id, and an unknown id starts an empty page.
    for (const id of [opts.startingAfter, opts.endingBefore]) {
      if (id !== undefined && hasNul(id)) return { data: [], hasMore: false };
    }
    // backend_xid is 32-bit: it takes the epoch of the 64-bit snapshot xmax r; running ids lie
    // within 2^31 of r (as every live id does), which settles an epoch boundary in between.
    const [h] = await sql<{ horizon: string }[]>`
      SELECT GREATEST(0, COALESCE(min(CASE WHEN x > r + 2147483648 THEN x - 4294967296
                               WHEN x < r - 2147483648 THEN x + 4294967296 ELSE x END), r))::text AS horizon
      FROM (SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS r) s
      LEFT JOIN LATERAL (
        SELECT ((r >> 32) << 32) | backend_xid::text::bigint AS x
        FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL
      ) running ON true
      GROUP BY r`;
    const horizon = h?.horizon as string;
    const position = (id: string) =>
      sql`(SELECT xid, seq FROM events WHERE account_id = ${accountId} AND id = ${id})`;
    const forward = opts.endingBefore !== undefined;
    const rows = await sql<Row[]>`
      SELECT id, type, data, created_at FROM events
      WHERE account_id = ${accountId} AND xid < ${horizon}::xid8
        ${opts.type ? sql`AND type = ${opts.type}` : sql``}
        ${opts.startingAfter === undefined ? sql`` : sql`AND (xid, seq) < ${position(opts.startingAfter)}`}
        ${forward ? sql`AND (xid, seq) > ${position(opts.endingBefore as string)}` : sql``}
      ORDER BY ${forward ? sql`xid ASC, seq ASC` : sql`xid DESC, seq DESC`}
      LIMIT ${opts.limit + 1}`;
    const result = page(rows, opts.limit, toEvent);
    if (forward) result.data.reverse();
    return result;
  },
});
