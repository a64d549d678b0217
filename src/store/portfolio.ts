// The portfolio (docs/api.md, "Segments, trends and movers"): tallies, the score distribution,
// per-value tallies and the trend's inputs, written once for both backends. Without a segment
// the portfolio index (account, band, score) holds all they read; with one, each customer's
// metadata is tested once, joined the way the dialect's planner walks best. The movers and the
// portfolio's list stay with each backend (*/portfolio.ts): their plans differ; they share the
// ordering of the movers (moversFrom) here.
import {
  type ArrTally,
  type DayDelta,
  emptyArrTally,
  emptyTally,
  type PortfolioSort,
  type Tally,
} from '../domain/portfolio.ts';

export type { PortfolioSort };

import type { Lifecycle } from '../domain/customers.ts';
import { round6, type Status } from '../domain/scoring.ts';
import { type BookKeys, type CustomerRecord, isWhole, type Segment } from './customers.ts';
import { beforeNul, type Driver, Params, type Row, segmentWhere } from './driver.ts';
import { bandOf, type Page, scoreColumns, statusOf, toScore } from './rows.ts';
import { microsOf, SCORE_MICROS, type ScoreRecord } from './scores.ts';

/** A current score on the portfolio's list, with its customer's name, book and metadata (as stored JSON text). */
export interface PortfolioEntry extends ScoreRecord, Pick<CustomerRecord, BookKeys> {
  name: string;
  metadataJson: string;
}

/** The customer's columns a portfolio entry carries beside the score's (customers `c`). */
export const ENTRY_CUSTOMER_COLUMNS =
  'c.name, c.owner, c.arr_cents, c.renewal_at, c.lifecycle, c.parent_id, CAST(c.metadata AS text) AS metadata';

/** A row of a score and ENTRY_CUSTOMER_COLUMNS as a portfolio entry. */
export const toEntry = (r: Row): PortfolioEntry => ({
  ...toScore(r),
  name: r.name as string,
  owner: (r.owner as string | null) ?? null,
  arrCents: r.arr_cents == null ? null : Number(r.arr_cents),
  renewalAt: r.renewal_at == null ? null : Number(r.renewal_at),
  lifecycle: r.lifecycle as Lifecycle,
  parentId: (r.parent_id as string | null) ?? null,
  metadataJson: r.metadata as string,
});

/** Position in a book order (`-arr`: ARR in cents; `renewal_at`: epoch ms; null: the customers without one, last). */
export interface BookCursor {
  value: number | null;
  customerId: string;
}

/** The customers of one metadata value or owner (`value` its JSON text; null: the key is absent, no owner). */
export interface GroupTally extends ArrTally {
  value: string | null;
}

/** What the summary groups by: a metadata key's values, or the owners (lower-cased: compared ignoring case). */
export type GroupBy = { metadata: string } | 'owner';

/**
 * A customer whose score moved over a window: where it stood when the window opened, now, and
 * what the customer's own versions in the window moved it by (docs/api.md, "Segments, trends and
 * movers"): `change` leaves out the versions of settings changes and backfills, so it need not be
 * `score − baseline`.
 */
export interface Mover {
  customerId: string;
  name: string;
  score: number;
  status: Status;
  baseline: number;
  change: number;
}

/** Position in the portfolio order (band, then score ascending, then customer id). */
export interface ScoreCursor {
  status: Status;
  score: number;
  customerId: string;
}

export interface ListScoresOptions {
  status?: Status | undefined;
  /** The order (`score` when absent); `after` is a ScoreCursor for `score`, a BookCursor for the others. */
  sort?: PortfolioSort | undefined;
  after?: ScoreCursor | BookCursor | undefined;
  segment?: Segment | undefined;
  limit: number;
}

export interface PortfolioReads {
  /** Current scores, lowest first (ties by customer id), optionally of one status band or segment. */
  listScores(accountId: string, opts: ListScoresOptions): Promise<Page<PortfolioEntry>>;
  /** The current scores of the account (or of a segment), counted per band and added up, with their ARR. */
  tally(accountId: string, segment?: Segment): Promise<ArrTally>;
  /**
   * tally per bin of the score: `bins` equal bins of [0, 1], each [from, to) but the last, which
   * holds 1 too (docs/api.md, "Segments, trends and movers"); the lowest bin first.
   */
  distribution(accountId: string, bins: number, segment?: Segment): Promise<Tally[]>;
  /** tally per value of one metadata key (or per owner), in no particular order. */
  tallyBy(accountId: string, by: GroupBy, segment?: Segment): Promise<GroupTally[]>;
  /**
   * The portfolio (or the segment) now, and what each UTC day from `fromDay` on changed in it
   * (in no particular order; days without a change are absent), read at one moment.
   */
  trendInputs(
    accountId: string,
    fromDay: number,
    segment?: Segment,
  ): Promise<{ now: Tally; days: DayDelta[] }>;
  /**
   * The customers whose own versions after `since` moved their score, each with the score it
   * stood at then (or its first score after, when it had none) and the sum of those versions'
   * moves (SETTINGS_REASONS' versions and a first version move nothing): the `limit` biggest
   * drops (`down`) or rises (`up`) by that sum to 6 places, ties by customer id. A customer whose
   * sum is 0 is left out.
   */
  movers(
    accountId: string,
    opts: { since: number; direction: 'down' | 'up'; limit: number; segment?: Segment },
  ): Promise<Mover[]>;
}

/** The account's scores `s`, with their customers `c` when a segment must be tested. */
function scoresOf(db: Driver, p: Params, segment: Segment | undefined) {
  if (isWhole(segment)) return 'health_scores s WHERE s.account_id = $1';
  return `${db.customersWithScores} WHERE c.account_id = $1${segmentWhere(db, p, segment)}`;
}

/** A band's ARR in cents, of customers `c` (null counting 0). */
const ARR_CENTS = 'COALESCE(SUM(c.arr_cents), 0) AS arr';

export async function tally(db: Driver, accountId: string, segment?: Segment): Promise<ArrTally> {
  const p = new Params(accountId);
  // The ARR is the customers': they are read even for the whole account.
  const rows = await db.all<TallyRow & { arr: number }>(
    `SELECT s.band, COUNT(*) AS n, ${SCORE_MICROS} AS micros, ${ARR_CENTS}
     FROM ${db.customersWithScores} WHERE c.account_id = $1${segmentWhere(db, p, segment)} GROUP BY s.band`,
    p.list,
  );
  return addArrRows(emptyArrTally(), rows);
}

/** Adds tally rows with their ARR to `t`. */
function addArrRows(t: ArrTally, rows: readonly (TallyRow & { arr: number })[]): ArrTally {
  addTallyRows(t, rows);
  for (const r of rows) t.arrCents[statusOf(r.band)] += Number(r.arr);
  return t;
}

/**
 * The segment as the portfolio's default reads it: "active customers" alone is every customer
 * while the account has no churned one (customers_churned finds one at once), and then the reads
 * that can take the whole account from the scores alone (the distribution, the trend's rollup) do.
 */
async function narrowest(
  db: Driver,
  accountId: string,
  segment: Segment | undefined,
): Promise<Segment | undefined> {
  if (segment?.lifecycle !== 'active' || !isWhole({ ...segment, lifecycle: undefined })) return segment;
  const churned = await db.get(
    "SELECT 1 AS found FROM customers WHERE account_id = $1 AND lifecycle <> 'active' LIMIT 1",
    [accountId],
  );
  return churned ? segment : undefined;
}

export async function distribution(
  db: Driver,
  accountId: string,
  bins: number,
  given?: Segment,
): Promise<Tally[]> {
  const segment = await narrowest(db, accountId, given);
  const p = new Params(accountId);
  // `bins` is an integer of 1–100 (checked by the route): written into the text as a literal.
  const rows = await db.all<TallyRow & { bin: number }>(
    `SELECT s.band, ${binOf(String(Math.trunc(bins)))} AS bin, COUNT(*) AS n, ${SCORE_MICROS} AS micros
     FROM ${scoresOf(db, p, segment)} GROUP BY 1, 2`,
    p.list,
  );
  return binnedTallies(rows, bins);
}

export async function tallyBy(
  db: Driver,
  accountId: string,
  by: GroupBy,
  segment?: Segment,
): Promise<GroupTally[]> {
  const p = new Params(accountId);
  // The value's JSON text: one parse of the metadata per customer ('null' only if stored so); an
  // owner lower-cased (owners are compared ignoring case), made JSON text below.
  const value = by === 'owner' ? 'lower(c.owner)' : db.metadataJson(p, by.metadata);
  const rows = await db.all<TallyRow & { value: string | null; arr: number }>(
    `SELECT ${value} AS value, s.band, COUNT(*) AS n, ${SCORE_MICROS} AS micros, ${ARR_CENTS}
     FROM ${db.customersWithScores} WHERE c.account_id = $1${segmentWhere(db, p, segment)} GROUP BY 1, s.band`,
    p.list,
  );
  if (by !== 'owner') return groupTallies(rows);
  return groupTallies(rows.map((r) => ({ ...r, value: r.value === null ? null : JSON.stringify(r.value) })));
}

export async function trendInputs(db: Driver, accountId: string, fromDay: number, given?: Segment) {
  const p = new Params(accountId, fromDay);
  const lifecycle = given?.lifecycle;
  const rest = given && { ...given, lifecycle: undefined };
  if (!isWhole(rest)) {
    const seg = segmentWhere(db, p, rest);
    const sql = lifecycle === undefined ? trendInputsSql(seg) : trendByLifecycleSql(seg, p.add(lifecycle));
    return trendInputsFrom(await db.all<TrendRow>(sql, p.list));
  }
  const whole = () => db.all<TrendRow>(trendInputsSql(null), p.list);
  if (lifecycle === undefined) return trendInputsFrom(await whole());
  // Only customers churned now or that ever changed lifecycle can have been churned on any day:
  // the churned trend reads their history alone, and the active one is the whole rollup without it.
  const churned = () =>
    db.all<TrendRow>(trendByLifecycleSql(EVER_CHURNED, '$3'), [accountId, fromDay, 'churned']);
  if (lifecycle === 'churned') return trendInputsFrom(await churned());
  if (await lifecycleIsWhole(db, accountId, fromDay)) return trendInputsFrom(await whole());
  const [all, out] = await Promise.all([whole(), churned()]);
  return without(trendInputsFrom(all), trendInputsFrom(out));
}

/** Customers `c` that are churned now or changed lifecycle at some time. */
const EVER_CHURNED = ` AND (c.lifecycle <> 'active' OR EXISTS (SELECT 1 FROM lifecycle_changes t
    WHERE t.account_id = c.account_id AND t.customer_id = c.id))`;

/** The trend's inputs of `a` less those of `b` (a part of it): now, and each day's change. */
function without(a: TrendInputs, b: TrendInputs): TrendInputs {
  const minus = (x: Tally, y: Tally): Tally => ({
    counts: {
      healthy: x.counts.healthy - y.counts.healthy,
      at_risk: x.counts.at_risk - y.counts.at_risk,
      critical: x.counts.critical - y.counts.critical,
    },
    micros: x.micros - y.micros,
  });
  const days = new Map(a.days.map((d) => [d.day, d]));
  for (const d of b.days) days.set(d.day, { day: d.day, ...minus(days.get(d.day) ?? emptyTally(), d) });
  return { now: minus(a.now, b.now), days: [...days.values()] };
}

type TrendInputs = ReturnType<typeof trendInputsFrom>;

/**
 * True when the trend of active customers is the whole account's from day `fromDay` on: no
 * customer is anything but active, and none changed its lifecycle since (customers_churned and
 * lifecycle_changes_by_time answer at once).
 */
async function lifecycleIsWhole(db: Driver, accountId: string, fromDay: number): Promise<boolean> {
  const found = await db.get(
    `SELECT 1 AS found FROM customers WHERE account_id = $1 AND lifecycle <> 'active'
     UNION ALL
     SELECT 1 FROM lifecycle_changes WHERE account_id = $1 AND at >= CAST($2 AS bigint) * 86400000`,
    [accountId, fromDay],
  );
  return !found;
}

const bandSum = (band: number) => `COALESCE(SUM(CASE WHEN s.band = ${band} THEN 1 ELSE 0 END), 0)`;
const statusSum = (status: string) =>
  `SUM(CASE WHEN h.status = '${status}' THEN 1 ELSE 0 END - CASE WHEN p.status = '${status}' THEN 1 ELSE 0 END)`;

/** The portfolio now: one row with a null day, of current scores `s` (and customers `c` where a segment needs them). */
const NOW = `
    SELECT NULL AS day, ${bandSum(0)} AS critical, ${bandSum(1)} AS at_risk, ${bandSum(2)} AS healthy,
      COALESCE(${SCORE_MICROS}, 0) AS micros`;

/**
 * The segment's customers (`segment`: its conditions on `c`), read once, as `seg`: the reads below
 * walk them and probe each one's history by its key. Joined to the history directly, the planner
 * walked the account's whole history and probed the customer of each entry (1.5 s for 1% of 20,000
 * customers, where their own history is 300 rows).
 */
const segmentCustomers = (segment: string) => `
  WITH seg AS MATERIALIZED (
    SELECT c.account_id, c.id, c.lifecycle FROM customers c WHERE c.account_id = $1 ${segment})`;

/** Each history entry `h` of the customers `c` of `seg` from day `$2` on, with the one before it (`p`). */
const HISTORY_IN_WINDOW = `
    FROM seg c
    JOIN score_history h ON h.account_id = c.account_id AND h.customer_id = c.id
    LEFT JOIN score_history p ON p.account_id = h.account_id AND p.customer_id = h.customer_id
      AND p.version = h.version - 1
    WHERE h.created_at >= CAST($2 AS bigint) * 86400000`;

/** What the entries `h` (each from the one before, `p`) changed, per day. */
const HISTORY_DELTAS = `SELECT h.created_at / 86400000 AS day, ${statusSum('critical')} AS critical,
      ${statusSum('at_risk')} AS at_risk, ${statusSum('healthy')} AS healthy,
      SUM(${microsOf('h')} - COALESCE(${microsOf('p')}, 0)) AS micros`;

/**
 * The trend's inputs in one statement, so both are read at one moment: a row with a null day
 * for the portfolio now, then a row per day from `$2` on with what it changed (critical, at_risk,
 * healthy, micros). `$1` is the account; `segment` is the segment's conditions on `c`, whose
 * parameters follow.
 *
 * Without a segment the days come from the rollup. A segment is not in the rollup: its history
 * in the window is read, each entry with the one before (`p`), as the rollup was made.
 */
export function trendInputsSql(segment: string | null): string {
  if (segment === null) {
    return `${NOW} FROM health_scores s WHERE s.account_id = $1
    UNION ALL
    SELECT day, SUM(critical), SUM(at_risk), SUM(healthy), SUM(score_micros)
    FROM score_days WHERE account_id = $1 AND day >= $2 GROUP BY day`;
  }
  return `${segmentCustomers(segment)}
    ${NOW} FROM seg c JOIN health_scores s ON s.account_id = c.account_id AND s.customer_id = c.id
    UNION ALL
    ${HISTORY_DELTAS} ${HISTORY_IN_WINDOW}
    GROUP BY h.created_at / 86400000`;
}

/**
 * The trend of the customers of one lifecycle (`lifecycle`, a placeholder), each counted on the
 * days it was in it (docs/api.md, "Segments, trends and movers"): the entries made while it was,
 * and on the day it came in (or left) the score that stood then, added (or taken away). A change
 * at the same instant as an entry comes after it. `segment` is the segment's other conditions.
 */
export function trendByLifecycleSql(segment: string, lifecycle: string): string {
  const changes = (order: string, cmp: string, column: string) =>
    `(SELECT k.${column} FROM lifecycle_changes k
      WHERE k.account_id = h.account_id AND k.customer_id = h.customer_id AND k.at ${cmp} h.created_at
      ORDER BY k.at ${order} LIMIT 1)`;
  // The lifecycle when `h` was made: the last change before it, else the first one after it
  // (whence it came), else the present one.
  const lifecycleThen = `COALESCE(${changes('DESC', '<', 'to_lifecycle')}, ${changes('ASC', '>=', 'from_lifecycle')}, c.lifecycle)`;
  const sign = `CASE WHEN k.to_lifecycle = ${lifecycle} THEN 1 ELSE -1 END`;
  const status = (name: string) => `SUM(${sign} * CASE WHEN v.status = '${name}' THEN 1 ELSE 0 END)`;
  return `${segmentCustomers(segment)}
    ${NOW} FROM seg c JOIN health_scores s ON s.account_id = c.account_id AND s.customer_id = c.id
    WHERE c.lifecycle = ${lifecycle}
    UNION ALL
    SELECT day, SUM(critical), SUM(at_risk), SUM(healthy), SUM(micros) FROM (
      ${HISTORY_DELTAS} ${HISTORY_IN_WINDOW} AND ${lifecycleThen} = ${lifecycle}
      GROUP BY h.created_at / 86400000
      UNION ALL
      SELECT k.at / 86400000 AS day, ${status('critical')} AS critical, ${status('at_risk')} AS at_risk,
        ${status('healthy')} AS healthy, SUM(${sign} * ${microsOf('v')}) AS micros
      FROM seg c
      JOIN lifecycle_changes k ON k.account_id = c.account_id AND k.customer_id = c.id
      JOIN score_history v ON v.account_id = k.account_id AND v.customer_id = k.customer_id
        AND v.version = (SELECT MAX(x.version) FROM score_history x
          WHERE x.account_id = k.account_id AND x.customer_id = k.customer_id AND x.created_at <= k.at)
      WHERE k.at >= CAST($2 AS bigint) * 86400000
        AND (k.to_lifecycle = ${lifecycle}) <> (k.from_lifecycle = ${lifecycle})
      GROUP BY k.at / 86400000
    ) d GROUP BY day`;
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
export function groupTallies(
  rows: readonly (TallyRow & { value: string | null; arr: number })[],
): GroupTally[] {
  const groups = new Map<string | null, GroupTally>();
  for (const r of rows) {
    const value = r.value === 'null' ? null : r.value;
    let g = groups.get(value);
    if (!g) {
      g = { value, ...emptyArrTally() };
      groups.set(value, g);
    }
    addArrRows(g, [r]);
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
 * Movers as the API lists them, from rows a query ordered by the change in millionths and read
 * with some to spare: ordered by the change rounded to 6 places (as answered), ties by customer id.
 */
export function moversFrom(rows: Mover[], opts: { direction: 'down' | 'up'; limit: number }): Mover[] {
  const sign = opts.direction === 'down' ? 1 : -1;
  const change = (m: Mover) => round6(m.change);
  return rows
    .sort((a, b) => sign * (change(a) - change(b)) || (a.customerId < b.customerId ? -1 : 1))
    .slice(0, opts.limit);
}

/**
 * A page of the portfolio in a book order (`-arr`: highest first; `renewal_at`: soonest first),
 * the customers without the field last, ties by customer id; one row more than `limit` (has_more).
 * Two index walks (migration 26): the customers with the field in its order, then those without by
 * id, each stopping after a page, so a deep page reads no more than a first one (EXPLAIN on both
 * backends at 100,000 customers: under 1 ms on PostgreSQL, every page).
 */
export async function listScoresByBook(
  db: Driver,
  accountId: string,
  sort: Exclude<PortfolioSort, 'score'>,
  opts: {
    status?: Status | undefined;
    after?: BookCursor | undefined;
    segment?: Segment | undefined;
    limit: number;
  },
): Promise<PortfolioEntry[]> {
  const p = new Params(accountId);
  const column = sort === '-arr' ? 'c.arr_cents' : 'c.renewal_at';
  const desc = sort === '-arr';
  let filters = opts.status ? ` AND s.band = ${p.add(bandOf(opts.status))}` : '';
  filters += segmentWhere(db, p, opts.segment);
  const limit = p.add(opts.limit + 1);
  const columns = `${scoreColumns('s')}, ${ENTRY_CUSTOMER_COLUMNS}, ${column} AS sort_value`;
  const after = opts.after;
  const parts: string[] = [];
  if (after === undefined || after.value !== null) {
    let keyset = '';
    if (after?.value != null) {
      const v = p.add(after.value);
      const id = p.add(beforeNul(after.customerId));
      // Written so the index range starts at the cursor's value; the rest is a filter on its ties.
      keyset = desc
        ? ` AND ${column} <= ${v} AND (${column} < ${v} OR c.id > ${id})`
        : ` AND ${column} >= ${v} AND (${column} > ${v} OR c.id > ${id})`;
    }
    parts.push(`SELECT * FROM (SELECT ${columns}, 0 AS part FROM ${db.customersWithScores}
      WHERE c.account_id = $1 AND ${column} IS NOT NULL${keyset}${filters}
      ORDER BY ${column}${desc ? ' DESC' : ''}, c.id LIMIT ${limit}) a`);
  }
  let nullAfter = '';
  if (after?.value === null) {
    // On the score's side too: PostgreSQL then starts a merge join of the two at the cursor.
    const id = p.add(beforeNul(after.customerId));
    nullAfter = ` AND c.id > ${id} AND s.customer_id > ${id}`;
  }
  parts.push(`SELECT * FROM (SELECT ${columns}, 1 AS part FROM ${db.customersWithScores}
    WHERE c.account_id = $1 AND ${column} IS NULL${nullAfter}${filters} ORDER BY c.id LIMIT ${limit}) b`);
  const rows = await db.all(
    `${parts.join(' UNION ALL ')} ORDER BY part, sort_value${desc ? ' DESC' : ''}, customer_id LIMIT ${limit}`,
    p.list,
  );
  return rows.map(toEntry);
}
