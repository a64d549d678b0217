// The portfolio's reads SQLite plans its own way: the list, the movers and what a drop alert needs
// to know (the tallies and the trend are shared, ../portfolio.ts). docs/api.md, "Segments,
// trends and movers".
import type { DropWatch } from '../../domain/alerts.ts';
import { bookConditions } from '../driver.ts';
import {
  ENTRY_CUSTOMER_COLUMNS,
  type ListScoresOptions,
  MOVER_SLACK,
  moversFrom,
  toEntry,
} from '../portfolio.ts';
import { bandOf, statusOf } from '../rows.ts';
import { microsOf, PEAK_RESET_REASONS_SQL, SETTINGS_REASONS_SQL } from '../scores.ts';
import type { Mover, PortfolioEntry, Segment } from '../store.ts';
import type { Connection } from './connection.ts';

/** A metadata key as an SQLite JSON path: quoted, so any key (dots, quotes, brackets) is one label. */
const path = (key: string) => `$.${JSON.stringify(key)}`;

/**
 * The segment's conditions on customers `c`: a string value compared as text, a number or
 * boolean as its JSON text, anything else (an object, an array) never equal.
 */
export function segmentWhere(segment: Segment | undefined): { sql: string; params: (string | number)[] } {
  const sql: string[] = [];
  const params: (string | number)[] = [];
  for (const { key, value } of segment?.metadata ?? []) {
    sql.push(`(CASE json_type(c.metadata, ?) WHEN 'text' THEN c.metadata ->> ?
      WHEN 'integer' THEN c.metadata -> ? WHEN 'real' THEN c.metadata -> ?
      WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' END) = ?`);
    const p = path(key);
    params.push(p, p, p, p, value);
  }
  sql.push(
    ...bookConditions(segment, (v) => {
      params.push(v);
      return '?';
    }),
  );
  return { sql: sql.map((s) => ` AND ${s}`).join(''), params };
}

/** health_scores `s` with its customer `c`, walked in the order of `s` (CROSS JOIN keeps it outer). */
const SCORES_WITH_CUSTOMERS =
  'health_scores s CROSS JOIN customers c ON c.account_id = s.account_id AND c.id = s.customer_id';

/**
 * A mover's change in millionths, exact (docs/api.md, "Segments, trends and movers"): the moves of
 * the versions `h` of candidate `s` after its version `from`, each from the version before it
 * (`p`, in the history's index), but those of SETTINGS_REASONS. Versions are stamped in their
 * order (nextTimestamp: never before the one they follow), so the versions after the one standing
 * at `since` are those made after it; a customer's first version has no `p` and moves nothing.
 */
const moverChange = (from: string) => `
  SELECT COALESCE(SUM(${microsOf('h')} - ${microsOf('p')}), 0) FROM score_history h
  JOIN score_history p ON p.account_id = h.account_id AND p.customer_id = h.customer_id
    AND p.version = h.version - 1
  WHERE h.account_id = s.account_id AND h.customer_id = s.customer_id AND h.version > ${from}
    AND h.reason NOT IN (${SETTINGS_REASONS_SQL})`;

export function movers(
  conn: Connection,
  accountId: string,
  opts: { since: number; direction: 'down' | 'up'; limit: number; segment?: Segment },
): Mover[] {
  const seg = segmentWhere(opts.segment);
  const down = opts.direction === 'down';
  // Only a customer whose score was written after `since` can have moved. Its window opens on the
  // latest version up to `since`, else on its first version (`from`); its change adds up the moves
  // of its versions after that one (moverChange), walking the history's index from `from`. Each
  // is computed once per candidate: an OFFSET keeps SQLite from flattening a subquery into the one
  // around it, which would compute them again for the filter, the order and the answer. The
  // baseline's score and the names are read for the few that make the list, not for every candidate.
  const rows = conn.all(
    `SELECT m.customer_id, c.name, m.score, m.band, m.change, (SELECT h.score FROM score_history h
         WHERE h.account_id = c.account_id AND h.customer_id = m.customer_id AND h.version = m.from_version)
         AS baseline FROM (
       SELECT customer_id, score, band, from_version, change FROM (
         SELECT s.customer_id, s.score, s.band, s.from_version, (${moverChange('s.from_version')}) AS change
         FROM (
           SELECT s.account_id, s.customer_id, s.score, s.band, COALESCE(
             (SELECT h.version FROM score_history h WHERE h.account_id = s.account_id
                AND h.customer_id = s.customer_id AND h.created_at <= ? ORDER BY h.version DESC LIMIT 1),
             (SELECT MIN(h.version) FROM score_history h WHERE h.account_id = s.account_id
                AND h.customer_id = s.customer_id)) AS from_version
           FROM ${seg.sql ? SCORES_WITH_CUSTOMERS : 'health_scores s'}
           WHERE s.account_id = ? AND s.updated_at > ?${seg.sql} LIMIT -1 OFFSET 0) s LIMIT -1 OFFSET 0)
       WHERE ${down ? 'change < 0' : 'change > 0'}
       ORDER BY change ${down ? 'ASC' : 'DESC'}, customer_id LIMIT ?) m
     CROSS JOIN customers c ON c.account_id = ? AND c.id = m.customer_id`,
    opts.since,
    accountId,
    opts.since,
    ...seg.params,
    opts.limit + MOVER_SLACK,
    accountId,
  );
  return moversFrom(
    rows.map((r) => ({
      customerId: r.customer_id as string,
      name: r.name as string,
      score: r.score as number,
      status: statusOf(r.band as number),
      baseline: r.baseline as number,
      change: Number(r.change) / 1e6,
    })),
    opts,
  );
}

export function listScores(conn: Connection, accountId: string, opts: ListScoresOptions): PortfolioEntry[] {
  const where = ['s.account_id = ?'];
  const params: (string | number)[] = [accountId];
  if (opts.status) {
    where.push('s.band = ?');
    params.push(bandOf(opts.status));
  }
  const after = opts.after && 'status' in opts.after ? opts.after : undefined;
  if (after) {
    where.push('(s.band, s.score, s.customer_id) > (?, ?, ?)');
    params.push(bandOf(after.status), after.score, after.customerId);
  }
  const seg = segmentWhere(opts.segment);
  return conn
    .all(
      `SELECT s.*, ${ENTRY_CUSTOMER_COLUMNS} FROM ${SCORES_WITH_CUSTOMERS} WHERE ${where.join(' AND ')}${seg.sql}
       ORDER BY s.band, s.score, s.customer_id LIMIT ?`,
      ...params,
      ...seg.params,
      opts.limit + 1,
    )
    .map(toEntry);
}

/**
 * A customer's peak for dropWatch ($1 account, $2 customer, $3 where the window opens): the highest
 * score from the version standing at $3, or the latest of PEAK_RESET_REASONS if later, else from its
 * first version (backfilled ones are numbered below 1).
 */
const PEAK = `
  SELECT MAX(score) AS peak FROM score_history
  WHERE account_id = $1 AND customer_id = $2 AND version >= COALESCE(
    (SELECT MAX(version) FROM score_history WHERE account_id = $1 AND customer_id = $2
       AND (created_at <= $3 OR reason IN (${PEAK_RESET_REASONS_SQL}))),
    (SELECT MIN(version) FROM score_history WHERE account_id = $1 AND customer_id = $2))`;

export function dropWatch(
  conn: Connection,
  accountId: string,
  ids: readonly string[],
  since: number,
): Map<string, DropWatch> {
  const watches = new Map<string, DropWatch>();
  for (const id of ids) {
    // A churned customer has left the portfolio: no watch, so no drop alert (docs/api.md, "Drop alerts").
    const lifecycle = conn.get(
      'SELECT lifecycle FROM customers WHERE account_id = ? AND id = ?',
      accountId,
      id,
    );
    if (lifecycle?.lifecycle === 'churned') continue;
    const peak = conn.get(PEAK, accountId, id, since)?.peak as number | null | undefined;
    const alerted = conn.get(
      'SELECT alerted_at FROM drop_alerts WHERE account_id = ? AND customer_id = ?',
      accountId,
      id,
    );
    watches.set(id, { peak: peak ?? null, alertedAt: (alerted?.alerted_at as number | undefined) ?? null });
  }
  return watches;
}
