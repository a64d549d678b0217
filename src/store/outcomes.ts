// Outcomes (docs/scoring.md, "Does the score predict churn?"): what happened to a customer at a
// renewal, and each outcome beside the score version it is judged by. Both backends run these.
import type { Outcome } from '../domain/calibration.ts';
import type { Factors } from '../domain/scoring.ts';
import type { Actor } from '../domain/tasks.ts';
import { isWhole, type Segment } from './customers.ts';
import { type Driver, hasNul, Params, parsed, type Row, segmentWhere } from './driver.ts';
import type { Page } from './rows.ts';

/** What happened to a customer at a renewal (docs/scoring.md, "Does the score predict churn?"). */
export interface OutcomeRecord {
  id: string;
  customerId: string;
  outcome: Outcome;
  at: number;
  note: string | null;
  createdAt: number;
  /** Who recorded it, as the audit log names them (null: not kept, before migration 33). */
  createdBy?: Actor | null;
}

/** An outcome with the computed score and factors it is judged by; null: no version then. */
export interface JudgedOutcome {
  id: string;
  outcome: Outcome;
  score: number | null;
  factors: Factors | null;
}

export interface OutcomeReads {
  /** One of a customer's outcomes; null when it has none of that id. */
  getOutcome(accountId: string, customerId: string, id: string): Promise<OutcomeRecord | null>;
  /** A customer's outcomes, the newest `at` first; `after`: the last id of the page before. */
  listOutcomes(
    accountId: string,
    customerId: string,
    opts: { after?: string | undefined; limit: number },
  ): Promise<Page<OutcomeRecord>>;
  /**
   * A page of the account's outcomes by id (after `after`; of a segment), each with the computed
   * score and factors of its customer's newest version at or before `at − horizonMs` (null: none).
   */
  judgedOutcomes(
    accountId: string,
    opts: { horizonMs: number; segment?: Segment | undefined; after: string | null; limit: number },
  ): Promise<JudgedOutcome[]>;
}

export interface OutcomeWrites {
  /** Stores the outcomes (their customers exist: the caller has checked). */
  insertOutcomes(accountId: string, outcomes: readonly OutcomeRecord[]): Promise<void>;
  /** Deletes one of a customer's outcomes; false when it has none of that id. */
  deleteOutcome(accountId: string, customerId: string, id: string): Promise<boolean>;
}

const toOutcome = (r: Row, d: Driver): OutcomeRecord => ({
  id: r.id as string,
  customerId: r.customer_id as string,
  outcome: r.outcome as Outcome,
  at: r.at as number,
  note: r.note == null ? null : d.fromText(r.note as string),
  createdAt: r.created_at as number,
});

export async function insertOutcomes(db: Driver, accountId: string, outcomes: readonly OutcomeRecord[]) {
  await db.runEach(
    `INSERT INTO outcomes (account_id, id, customer_id, outcome, at, note, created_at, created_by)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    outcomes.map((o) => [
      accountId,
      o.id,
      o.customerId,
      o.outcome,
      o.at,
      db.textOrNull(o.note),
      o.createdAt,
      o.createdBy ? db.text(JSON.stringify(o.createdBy)) : null,
    ]),
    ['text', 'text', 'text', 'text', 'int8', 'text', 'int8', 'text'],
  );
}

export async function deleteOutcome(db: Driver, accountId: string, customerId: string, id: string) {
  if (hasNul(customerId) || hasNul(id)) return false;
  return (
    (await db.run('DELETE FROM outcomes WHERE account_id = $1 AND customer_id = $2 AND id = $3', [
      accountId,
      customerId,
      id,
    ])) === 1
  );
}

export async function getOutcome(db: Driver, accountId: string, customerId: string, id: string) {
  if (hasNul(customerId) || hasNul(id)) return null;
  const row = await db.get(
    'SELECT id, customer_id, outcome, at, note, created_at FROM outcomes WHERE account_id = $1 AND customer_id = $2 AND id = $3',
    [accountId, customerId, id],
  );
  return row ? toOutcome(row, db) : null;
}

/** A customer's outcomes, the newest `at` first (ties: the later id first); `after`: the last id of the page before. */
export async function listOutcomes(
  db: Driver,
  accountId: string,
  customerId: string,
  opts: { after?: string | undefined; limit: number },
): Promise<Page<OutcomeRecord>> {
  if (hasNul(customerId) || (opts.after !== undefined && hasNul(opts.after)))
    return { data: [], hasMore: false };
  const p = new Params(accountId, customerId);
  let where = 'account_id = $1 AND customer_id = $2';
  if (opts.after !== undefined) {
    const after = p.add(opts.after);
    const at = `(SELECT at FROM outcomes WHERE account_id = $1 AND customer_id = $2 AND id = ${after})`;
    where += ` AND (at < ${at} OR (at = ${at} AND id < ${after}))`;
  }
  const rows = await db.all(
    `SELECT id, customer_id, outcome, at, note, created_at FROM outcomes WHERE ${where}
     ORDER BY at DESC, id DESC LIMIT ${p.add(opts.limit + 1)}`,
    p.list,
  );
  return { data: rows.slice(0, opts.limit).map((r) => toOutcome(r, db)), hasMore: rows.length > opts.limit };
}

/**
 * A page of the account's outcomes (by id, after `after`), each with the computed score and the
 * factors of the newest version of its customer's score at or before `at − horizonMs`; score
 * and factors null when there was none then.
 */
export async function judgedOutcomes(
  db: Driver,
  accountId: string,
  opts: { horizonMs: number; segment?: Segment | undefined; after: string | null; limit: number },
): Promise<JudgedOutcome[]> {
  const p = new Params(accountId, opts.after ?? '', opts.horizonMs);
  const segment = !isWhole(opts.segment)
    ? ` AND EXISTS (SELECT 1 FROM customers c WHERE c.account_id = o.account_id AND c.id = o.customer_id${segmentWhere(db, p, opts.segment)})`
    : '';
  // The version is found by its number (the newest at or before the instant), then read by the
  // history's key: versions grow with time, so this walks one customer's versions backwards.
  const rows = await db.all(
    `SELECT o.id, o.outcome, h.score, h.computed, h.factors
     FROM outcomes o
     LEFT JOIN score_history h ON h.account_id = o.account_id AND h.customer_id = o.customer_id
       AND h.version = (
         SELECT MAX(x.version) FROM score_history x
         WHERE x.account_id = o.account_id AND x.customer_id = o.customer_id AND x.created_at <= o.at - $3)
     WHERE o.account_id = $1 AND o.id > $2${segment}
     ORDER BY o.id LIMIT ${p.add(opts.limit)}`,
    p.list,
  );
  return rows.map((r) => ({
    id: r.id as string,
    outcome: r.outcome as Outcome,
    score: r.score == null ? null : ((r.computed as number | null) ?? (r.score as number)),
    factors: r.factors == null ? null : parsed<Factors>(r.factors),
  }));
}
