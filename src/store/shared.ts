// What the two backends do alike, written once: statements whose text both run (parameters as
// $1, $2, …: PostgreSQL's own syntax; SQLite's connection turns them into ?1, ?2), and the
// logic around rows that does not depend on the driver.
import type { EventRecord } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import { type DayDelta, emptyTally, type Tally } from '../domain/portfolio.ts';
import { round6 } from '../domain/scoring.ts';
import { statusOf } from './bands.ts';
import type { ApiKeyRecord, GroupTally, KeyScope, Mover, ScoreRecord } from './store.ts';

/** Every API key with its account's name, oldest first. No parameters. */
export const LIST_API_KEYS = `
  SELECT k.id, k.account_id, a.name AS account_name, k.prefix, k.scope, k.created_at, k.revoked_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id ORDER BY k.created_at, k.id`;

export interface ApiKeyRow {
  id: string;
  account_id: string;
  account_name: string;
  prefix: string;
  scope: KeyScope;
  created_at: number;
  revoked_at: number | null;
}

export const toApiKeyRecord = (r: ApiKeyRow): ApiKeyRecord => ({
  id: r.id,
  accountId: r.account_id,
  accountName: r.account_name,
  prefix: r.prefix,
  scope: r.scope,
  createdAt: r.created_at,
  revokedAt: r.revoked_at ?? null,
});

/**
 * Removing a webhook ($1 account, $2 webhook), in this order: its deliveries' attempts, its
 * deliveries, the webhook (its subscriptions go with it, ON DELETE CASCADE). The last one's
 * count says whether there was a webhook.
 */
export const DELETE_WEBHOOK = [
  `DELETE FROM delivery_attempts WHERE delivery_id IN
     (SELECT id FROM deliveries WHERE account_id = $1 AND webhook_id = $2)`,
  'DELETE FROM deliveries WHERE account_id = $1 AND webhook_id = $2',
  'DELETE FROM delivery_leases WHERE account_id = $1 AND webhook_id = $2',
  'DELETE FROM webhooks WHERE account_id = $1 AND id = $2',
] as const;

/** The enabled webhooks subscribed to each event type, from (event_type, webhook_id) rows. */
export function subscribersByType(rows: Iterable<Record<string, unknown>>): Map<string, string[]> {
  const subscribers = new Map<string, string[]>();
  for (const r of rows) {
    const list = subscribers.get(r.event_type as string);
    if (list) list.push(r.webhook_id as string);
    else subscribers.set(r.event_type as string, [r.webhook_id as string]);
  }
  return subscribers;
}

export interface NewDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  at: number;
}

/** One pending delivery per event and subscribed webhook (the outbox), in event order. */
export function deliveriesFor(
  events: readonly EventRecord[],
  subscribers: Map<string, string[]>,
): NewDelivery[] {
  const deliveries: NewDelivery[] = [];
  for (const e of events) {
    for (const webhookId of subscribers.get(e.type) ?? []) {
      deliveries.push({ id: newId.delivery(), webhookId, eventId: e.id, at: e.createdAt });
    }
  }
  return deliveries;
}

/** How a row of score_days takes more changes of its day: they are added to it. */
export const ADD_TO_DAY = `
  ON CONFLICT (account_id, day, slot) DO UPDATE SET
    critical = score_days.critical + excluded.critical,
    at_risk = score_days.at_risk + excluded.at_risk,
    healthy = score_days.healthy + excluded.healthy,
    score_micros = score_days.score_micros + excluded.score_micros`;

/** A score in millionths, as an integer (domain/portfolio.ts, `micros`), of table `t`. */
export const microsOf = (t: string) => `CAST(round(${t}.score * 1000000) AS bigint)`;
/** The scores of `s` added up in millionths. */
export const SCORE_MICROS = `SUM(${microsOf('s')})`;

/**
 * The per-day rollup of the portfolio (score_days, docs/operations.md, "The trend rollup"), from
 * score history: each entry moves its customer from the band and score of the entry before it
 * (none for the first) to its own, on the UTC day it was made. `sign` 1 adds the history's
 * changes, -1 takes them away (the customer is deleted); `where` picks the history. Each is SQL
 * text: a literal or a parameter. Both backends run this text.
 */
export function historyToDays(o: { where: string; sign: string; slot: string }): string {
  const band = (column: string, status: string) => `CASE WHEN ${column} = '${status}' THEN 1 ELSE 0 END`;
  const count = (status: string) =>
    `${o.sign} * SUM(${band('status', status)} - ${band('prev_status', status)})`;
  return `
  INSERT INTO score_days (account_id, day, slot, critical, at_risk, healthy, score_micros)
  SELECT account_id, day, ${o.slot}, ${count('critical')}, ${count('at_risk')}, ${count('healthy')},
    ${o.sign} * SUM(micros - COALESCE(prev_micros, 0))
  FROM (
    SELECT account_id, created_at / 86400000 AS day, status, ${microsOf('h')} AS micros,
      lag(status) OVER w AS prev_status, lag(${microsOf('h')}) OVER w AS prev_micros
    FROM score_history h WHERE ${o.where}
    WINDOW w AS (PARTITION BY account_id, customer_id ORDER BY version)
  ) h
  WHERE true
  GROUP BY account_id, day
  ${ADD_TO_DAY}`;
}

/** Adds day deltas ($1 account, $2 day, $3 slot, then critical, at_risk, healthy, micros). */
export const ADD_DAY = `
  INSERT INTO score_days (account_id, day, slot, critical, at_risk, healthy, score_micros)
  VALUES ($1, $2, $3, $4, $5, $6, $7)
  ${ADD_TO_DAY}`;

const bandSum = (band: number) => `COALESCE(SUM(CASE WHEN s.band = ${band} THEN 1 ELSE 0 END), 0)`;
const statusSum = (status: string) =>
  `SUM(CASE WHEN h.status = '${status}' THEN 1 ELSE 0 END - CASE WHEN p.status = '${status}' THEN 1 ELSE 0 END)`;

/**
 * The trend's inputs in one statement, so both are read at one moment: a row with a null day
 * for the portfolio now (current scores `s`, of customers `c` where a segment needs them), then
 * a row per day from `$2` on with what it changed (critical, at_risk, healthy, micros). `$1` is
 * the account; `segment` is the segment's conditions on `c`, whose parameters follow.
 *
 * Without a segment the days come from the rollup. A segment is not in the rollup: its history
 * in the window is read, each entry with the one before (`p`), as the rollup was made.
 */
export function trendInputsSql(segment: string | null): string {
  const now = `
    SELECT NULL AS day, ${bandSum(0)} AS critical, ${bandSum(1)} AS at_risk, ${bandSum(2)} AS healthy,
      COALESCE(${SCORE_MICROS}, 0) AS micros`;
  if (segment === null) {
    return `${now} FROM health_scores s WHERE s.account_id = $1
    UNION ALL
    SELECT day, SUM(critical), SUM(at_risk), SUM(healthy), SUM(score_micros)
    FROM score_days WHERE account_id = $1 AND day >= $2 GROUP BY day`;
  }
  return `${now}
    FROM customers c JOIN health_scores s ON s.account_id = c.account_id AND s.customer_id = c.id
    WHERE c.account_id = $1 ${segment}
    UNION ALL
    SELECT h.created_at / 86400000, ${statusSum('critical')}, ${statusSum('at_risk')}, ${statusSum('healthy')},
      SUM(${microsOf('h')} - COALESCE(${microsOf('p')}, 0))
    FROM customers c
    JOIN score_history h ON h.account_id = c.account_id AND h.customer_id = c.id
    LEFT JOIN score_history p ON p.account_id = h.account_id AND p.customer_id = h.customer_id
      AND p.version = h.version - 1
    WHERE c.account_id = $1 ${segment} AND h.created_at >= CAST($2 AS bigint) * 86400000
    GROUP BY h.created_at / 86400000`;
}

export interface TrendRow {
  day: number | null;
  critical: number;
  at_risk: number;
  healthy: number;
  micros: number;
}

/** A row of a tally query: customers of one band, and their scores added up in millionths. */
export interface TallyRow {
  band: number;
  n: number;
  micros: number;
}

/**
 * The bin of score `s` among `$bins` equal bins of [0, 1] (docs/api.md, "Segments, trends and movers"): its
 * millionths × bins ÷ 1,000,000 in integers on both backends, so a bin is [from, to) exactly as the
 * score is stored (6 places); a score of 1 comes out as bin `bins`, which binnedTallies counts in the last.
 */
export const binOf = (bins: string) => `(${microsOf('s')} * CAST(${bins} AS bigint)) / 1000000`;

/** Tally rows of (band, bin) as `bins` tallies, the lowest bin first. */
export function binnedTallies(rows: readonly (TallyRow & { bin: number })[], bins: number): Tally[] {
  const out = Array.from({ length: bins }, emptyTally);
  for (const r of rows) addTallyRows(out[Math.min(bins - 1, Number(r.bin))] as Tally, [r]);
  return out;
}

/** Adds tally rows to `t` (a driver may answer the sums as numeric text). */
export function addTallyRows(t: Tally, rows: readonly TallyRow[]): Tally {
  for (const r of rows) {
    t.counts[statusOf(r.band)] += Number(r.n);
    t.micros += Number(r.micros);
  }
  return t;
}

/**
 * Per-value tallies from (value, band, n, micros) rows, a value's JSON text as read ('null', a
 * stored JSON null, counts as no value).
 */
export function groupTallies(rows: readonly (TallyRow & { value: string | null })[]): GroupTally[] {
  const groups = new Map<string | null, GroupTally>();
  for (const r of rows) {
    const value = r.value === 'null' ? null : r.value;
    let g = groups.get(value);
    if (!g) {
      g = { value, ...emptyTally() };
      groups.set(value, g);
    }
    addTallyRows(g, [r]);
  }
  return [...groups.values()];
}

/** trendInputsSql's rows as the trend takes them. */
export function trendInputsFrom(rows: readonly TrendRow[]): { now: Tally; days: DayDelta[] } {
  const tally = (r: TrendRow): Tally => ({
    counts: { critical: Number(r.critical), at_risk: Number(r.at_risk), healthy: Number(r.healthy) },
    micros: Number(r.micros),
  });
  const now = rows.find((r) => r.day === null);
  return {
    now: now ? tally(now) : emptyTally(),
    days: rows.filter((r) => r.day !== null).map((r) => ({ day: Number(r.day), ...tally(r) })),
  };
}

/** Movers read beyond the limit, so that changes equal once rounded are ordered by id (moversFrom). */
export const MOVER_SLACK = 100;

/**
 * Movers as the API lists them, from rows a query ordered by the raw change and read with some
 * to spare: ordered by the change rounded to 6 places (as answered), ties by customer id.
 */
export function moversFrom(rows: Mover[], opts: { direction: 'down' | 'up'; limit: number }): Mover[] {
  const sign = opts.direction === 'down' ? 1 : -1;
  const change = (m: Mover) => round6(m.score - m.baseline);
  return rows
    .sort((a, b) => sign * (change(a) - change(b)) || (a.customerId < b.customerId ? -1 : 1))
    .slice(0, opts.limit);
}

/**
 * A score's columns beside its number (docs/scoring.md, "Why this score"), as both backends
 * store them: the computed score only while an override pins another, the JSON texts or null.
 */
export function explainedColumns(s: ScoreRecord, opts?: { inputs: boolean }) {
  return {
    computed: s.override ? (s.computed ?? s.score) : null,
    override: s.override ? JSON.stringify(s.override) : null,
    inputs: s.inputs && opts?.inputs !== false ? JSON.stringify(s.inputs) : null,
    weights: s.weights ? jsonOf(s.weights) : null,
  };
}

/** JSON of objects many records share (effectiveWeights gives one per factor set): written once each. */
const written = new WeakMap<object, string>();
function jsonOf(value: object): string {
  let json = written.get(value);
  if (json === undefined) {
    json = JSON.stringify(value);
    written.set(value, json);
  }
  return json;
}
