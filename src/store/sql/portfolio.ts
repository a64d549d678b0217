// The portfolio's aggregates both backends share (docs/api.md, "Segments, trends and movers"):
// tallies, the score distribution, per-value tallies and the trend's inputs. Without a segment
// the portfolio index (account, band, score) holds all they read; with one, each customer's
// metadata is tested once, joined the way the dialect's planner walks best. The movers and the
// portfolio's list stay with each backend (*/portfolio.ts): their plans differ.
import { emptyTally, type Tally } from '../../domain/portfolio.ts';
import {
  addTallyRows,
  binnedTallies,
  binOf,
  groupTallies,
  SCORE_MICROS,
  type TallyRow,
  type TrendRow,
  trendInputsFrom,
  trendInputsSql,
} from '../shared.ts';
import type { GroupTally, Segment } from '../store.ts';
import { type Driver, Params, segmentWhere } from './driver.ts';

/** The account's scores `s`, with their customers `c` when a segment must be tested. */
function scoresOf(db: Driver, p: Params, segment: Segment | undefined) {
  if (!segment?.length) return 'health_scores s WHERE s.account_id = $1';
  return `${db.customersWithScores} WHERE c.account_id = $1${segmentWhere(db, p, segment)}`;
}

export async function tally(db: Driver, accountId: string, segment?: Segment): Promise<Tally> {
  const p = new Params(accountId);
  const rows = await db.all<TallyRow>(
    `SELECT s.band, COUNT(*) AS n, ${SCORE_MICROS} AS micros FROM ${scoresOf(db, p, segment)} GROUP BY s.band`,
    p.list,
  );
  return addTallyRows(emptyTally(), rows);
}

export async function distribution(
  db: Driver,
  accountId: string,
  bins: number,
  segment?: Segment,
): Promise<Tally[]> {
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
  key: string,
  segment?: Segment,
): Promise<GroupTally[]> {
  const p = new Params(accountId);
  // The value's JSON text: one parse of the metadata per customer ('null' only if stored so).
  const value = db.metadataJson(p, key);
  const rows = await db.all<TallyRow & { value: string | null }>(
    `SELECT ${value} AS value, s.band, COUNT(*) AS n, ${SCORE_MICROS} AS micros
     FROM ${db.customersWithScores} WHERE c.account_id = $1${segmentWhere(db, p, segment)} GROUP BY 1, s.band`,
    p.list,
  );
  return groupTallies(rows);
}

export async function trendInputs(db: Driver, accountId: string, fromDay: number, segment?: Segment) {
  const p = new Params(accountId, fromDay);
  const seg = segment?.length ? segmentWhere(db, p, segment) : null;
  return trendInputsFrom(await db.all<TrendRow>(trendInputsSql(seg), p.list));
}
