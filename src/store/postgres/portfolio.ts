// The portfolio's reads PostgreSQL plans its own way: the list, the movers and what a drop alert
// needs to know (the tallies and the trend are shared, ../portfolio.ts); the same answers as
// ../sqlite/portfolio.ts, proven by the one contract suite. docs/api.md, "Segments, trends and movers".
import type postgres from 'postgres';
import type { DropWatch } from '../../domain/alerts.ts';
import { isWhole } from '../customers.ts';
import { beforeNul, type Row } from '../driver.ts';
import { type ListScoresOptions, MOVER_SLACK, moversFrom, toEntry } from '../portfolio.ts';
import { bandOf, statusOf } from '../rows.ts';
import { microsOf, PEAK_RESET_REASONS_SQL, SETTINGS_REASONS_SQL } from '../scores.ts';
import type { Mover, PortfolioEntry, Segment } from '../store.ts';
import type { Queryable } from './connection.ts';
import { pgArray } from './text.ts';

type Fragment = postgres.PendingQuery<postgres.Row[]>;

/**
 * The segment's conditions on customers `c`: a string value compared as text, a number or
 * boolean as its JSON text (json keeps the text as written), anything else never equal.
 */
export function segmentWhere(sql: Queryable, segment: Segment | undefined): Fragment {
  let where = sql``;
  for (const { key, value } of segment?.metadata ?? []) {
    where = sql`${where} AND (CASE json_typeof(c.metadata -> ${key})
      WHEN 'string' THEN c.metadata ->> ${key}
      WHEN 'number' THEN (c.metadata -> ${key})::text
      WHEN 'boolean' THEN (c.metadata -> ${key})::text END) = ${value}`;
  }
  // The book's conditions as ../driver.ts bookConditions writes them, in fragments.
  if (segment?.owner === null) where = sql`${where} AND c.owner IS NULL`;
  else if (segment?.owner !== undefined) where = sql`${where} AND lower(c.owner) = lower(${segment.owner})`;
  if (segment?.renewalAfter !== undefined) where = sql`${where} AND c.renewal_at >= ${segment.renewalAfter}`;
  if (segment?.renewalBefore !== undefined) where = sql`${where} AND c.renewal_at < ${segment.renewalBefore}`;
  if (segment?.parentId !== undefined) where = sql`${where} AND c.parent_id = ${segment.parentId}`;
  if (segment?.lifecycle !== undefined) where = sql`${where} AND c.lifecycle = ${segment.lifecycle}`;
  return where;
}

export async function movers(
  sql: Queryable,
  accountId: string,
  opts: { since: number; direction: 'down' | 'up'; limit: number; segment?: Segment },
): Promise<Mover[]> {
  const down = opts.direction === 'down';
  // Only a customer whose score was written after `since` can have moved. Its window opens on the
  // latest version up to `since`, else on its first version (b). Its change, in millionths (exact),
  // adds up the moves of its versions after b, each from the one before it (lag, in one walk of the
  // primary key from b), but those of SETTINGS_REASONS: versions are stamped in their order
  // (nextTimestamp), so those after b are those made after `since`, and a customer's first version
  // has none before it and moves nothing (docs/api.md, "Segments, trends and movers"). LATERAL
  // computes each once per candidate (as a subquery in the select list it would run again for the
  // filter and the order), and names are read for the listed few only.
  const segment = !isWhole(opts.segment)
    ? sql`AND EXISTS (SELECT 1 FROM customers c WHERE c.account_id = s.account_id AND c.id = s.customer_id
        ${segmentWhere(sql, opts.segment)})`
    : sql``;
  const micros = sql.unsafe(microsOf('h'));
  const rows = await sql<
    { customer_id: string; name: string; score: number; band: number; baseline: number; change: string }[]
  >`
    SELECT m.customer_id, c.name, m.score, m.band, m.baseline, m.change FROM (
      SELECT s.customer_id, s.score, s.band, b.score AS baseline, w.change
      FROM health_scores s CROSS JOIN LATERAL (
        (SELECT h.version, h.score FROM score_history h WHERE h.account_id = s.account_id
           AND h.customer_id = s.customer_id AND h.created_at <= ${opts.since} ORDER BY h.version DESC LIMIT 1)
        UNION ALL
        (SELECT h.version, h.score FROM score_history h WHERE h.account_id = s.account_id
           AND h.customer_id = s.customer_id ORDER BY h.version LIMIT 1)
        LIMIT 1) b
      CROSS JOIN LATERAL (
        SELECT COALESCE(SUM(x.move), 0) AS change FROM (
          SELECT h.version, h.reason, ${micros} - lag(${micros}) OVER (ORDER BY h.version) AS move
          FROM score_history h WHERE h.account_id = s.account_id AND h.customer_id = s.customer_id
            AND h.version >= b.version) x
        WHERE x.version > b.version AND x.reason NOT IN (${sql.unsafe(SETTINGS_REASONS_SQL)})) w
      WHERE s.account_id = ${accountId} AND s.updated_at > ${opts.since} ${segment}
        AND ${down ? sql`w.change < 0` : sql`w.change > 0`}
      ORDER BY w.change ${down ? sql`ASC` : sql`DESC`}, s.customer_id
      LIMIT ${opts.limit + MOVER_SLACK}
    ) m JOIN customers c ON c.account_id = ${accountId} AND c.id = m.customer_id`;
  return moversFrom(
    rows.map((r) => ({
      customerId: r.customer_id,
      name: r.name,
      score: r.score,
      status: statusOf(r.band),
      baseline: r.baseline,
      change: Number(r.change) / 1e6,
    })),
    opts,
  );
}

export async function listScores(
  sql: Queryable,
  accountId: string,
  opts: ListScoresOptions,
): Promise<PortfolioEntry[]> {
  const { status } = opts;
  const after = opts.after && 'status' in opts.after ? opts.after : undefined;
  // The customer as a LATERAL subquery that cannot be pulled up (OFFSET 0): the portfolio index
  // leads, so a page stops after its rows. PostgreSQL has no statistics for a metadata filter and
  // would otherwise guess it rare and sort the whole segment.
  const rows = await sql<Row[]>`
    SELECT s.customer_id, s.score, s.band, s.factors, s.version, s.updated_at, s.computed, s.override,
      c.name, c.owner, c.arr_cents, c.renewal_at, c.lifecycle, c.parent_id, c.metadata::text AS metadata
    FROM health_scores s CROSS JOIN LATERAL (
      SELECT name, owner, arr_cents, renewal_at, lifecycle, parent_id, metadata
      FROM customers c WHERE c.account_id = s.account_id AND c.id = s.customer_id OFFSET 0
    ) c
    WHERE s.account_id = ${accountId}
      ${status ? sql`AND s.band = ${bandOf(status)}` : sql``}
      ${
        after
          ? sql`AND (s.band, s.score, s.customer_id) > (${bandOf(after.status)}, ${after.score}, ${beforeNul(after.customerId)})`
          : sql``
      }
      ${segmentWhere(sql, opts.segment)}
    ORDER BY s.band, s.score, s.customer_id LIMIT ${opts.limit + 1}`;
  return rows.map(toEntry);
}

export async function dropWatch(
  sql: Queryable,
  accountId: string,
  ids: readonly string[],
  since: number,
): Promise<Map<string, DropWatch>> {
  const rows = await sql<{ id: string; peak: number | null; alerted_at: number | null }[]>`
    SELECT i.id,
      (SELECT MAX(h.score) FROM score_history h
       WHERE h.account_id = ${accountId} AND h.customer_id = i.id AND h.version >= COALESCE(
         (SELECT MAX(h2.version) FROM score_history h2
          WHERE h2.account_id = ${accountId} AND h2.customer_id = i.id
            AND (h2.created_at <= ${since} OR h2.reason IN (${sql.unsafe(PEAK_RESET_REASONS_SQL)}))),
         (SELECT MIN(h2.version) FROM score_history h2
          WHERE h2.account_id = ${accountId} AND h2.customer_id = i.id))) AS peak,
      (SELECT a.alerted_at FROM drop_alerts a WHERE a.account_id = ${accountId} AND a.customer_id = i.id)
        AS alerted_at
    FROM unnest(${pgArray(ids as string[])}::text[]) AS i(id)
    -- A churned customer has left the portfolio: no watch, so no drop alert (docs/api.md, "Drop alerts").
    WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.account_id = ${accountId} AND c.id = i.id
      AND c.lifecycle = 'churned')`;
  return new Map(rows.map((r) => [r.id, { peak: r.peak, alertedAt: r.alerted_at }]));
}
