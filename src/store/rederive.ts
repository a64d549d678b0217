// The rescore job's bookkeeping (docs/operations.md, "Background jobs"): which customers a change
// of rules may rescore, and when each customer is next due for the job, written once for both backends.
import type { ScoreRecord } from '../domain/health.ts';
import { type Driver, Params } from './driver.ts';
import { scoreColumns, toScore } from './rows.ts';

/** A customer a change of rules may rescore (Reader.rederiveTargets). */
export interface RederiveTarget {
  customerId: string;
  /** Its current score; null: none yet. */
  score: ScoreRecord | null;
  /** Due for the rescore job at the time asked (false when none was). */
  due: boolean;
}

export interface RederiveReads {
  /**
   * The customers a change of rules may rescore, in id order after `after`: those with a score,
   * and those with a point of any of these metrics; each with its score (unlocked) and, when
   * `dueAt` is given, whether the rescore job has it due then (its derived factors may be out of date).
   */
  rederiveTargets(
    accountId: string,
    metrics: readonly string[],
    after: string | null,
    limit: number,
    dueAt: number | null,
  ): Promise<RederiveTarget[]>;
  /**
   * The customers due for the rescore job at `now`, oldest due first, at most `limit`, across
   * accounts, except those of the accounts in `skip` (the ones whose pass failed: the others go on).
   */
  dueForRederive(
    now: number,
    limit: number,
    skip?: readonly string[],
  ): Promise<{ accountId: string; customerId: string }[]>;
}

export interface RederiveWrites {
  /**
   * Sets when each customer is next due for the rescore job (null: never). `earlierOnly`: a time
   * only replaces a later one (or none), and null changes nothing — what one rule's change knows.
   */
  setRederiveDue(
    accountId: string,
    due: readonly { customerId: string; at: number | null }[],
    opts?: { earlierOnly?: boolean },
  ): Promise<void>;
  /** Of these customers, the ones still due at `now`, locked for this transaction; rows other transactions hold are skipped. */
  claimRederiveDue(accountId: string, customerIds: readonly string[], now: number): Promise<string[]>;
}

export async function rederiveTargets(
  db: Driver,
  accountId: string,
  metrics: readonly string[],
  after: string | null,
  limit: number,
  dueAt: number | null,
): Promise<RederiveTarget[]> {
  const p = new Params(accountId, after ?? '');
  const points =
    metrics.length === 0
      ? ''
      : ` OR EXISTS (SELECT 1 FROM metric_points m WHERE m.account_id = c.account_id AND m.customer_id = c.id
           AND m.metric ${db.inList(p, metrics)})`;
  // The score by a join, not a second EXISTS: PostgreSQL answers an EXISTS beside an OR with a hash
  // of every score of the account, built again for each page (a rule change over 100,000
  // customers would spend 6 to 13 s there); the join probes the key of each customer the page walks. The
  // same join gives the score itself, and one to the due times whether each is due: a page of a
  // rule change is one statement, not three waiting on each other.
  const due =
    dueAt === null
      ? { column: '0', join: '' }
      : {
          column: `CASE WHEN d.due_at <= ${p.add(dueAt)} THEN 1 ELSE 0 END`,
          join: ' LEFT JOIN rederive_due d ON d.account_id = c.account_id AND d.customer_id = c.id',
        };
  const rows = await db.all(
    `SELECT c.id AS target, ${scoreColumns('h')}, ${due.column} AS due FROM customers c
       LEFT JOIN health_scores h ON h.account_id = c.account_id AND h.customer_id = c.id${due.join}
     WHERE c.account_id = $1 AND c.id > $2 AND (h.customer_id IS NOT NULL${points})
     ORDER BY c.id LIMIT ${p.add(limit)}`,
    p.list,
  );
  return rows.map((r) => ({
    customerId: r.target as string,
    score: r.customer_id == null ? null : toScore(r),
    due: Number(r.due) === 1,
  }));
}

/** Sets when each customer is next due for the rescore job; null: never (its row goes). See Tx. */
export async function setRederiveDue(
  db: Driver,
  accountId: string,
  due: readonly { customerId: string; at: number | null }[],
  earlierOnly: boolean,
): Promise<void> {
  const set = due.filter((d) => d.at !== null);
  const cleared = earlierOnly ? [] : due.filter((d) => d.at === null).map((d) => d.customerId);
  if (set.length > 0) {
    // A row whose time stays is not written again (on PostgreSQL an update with the same value is
    // still a new row version): most of a rule change's customers keep theirs.
    const when = earlierOnly
      ? 'excluded.due_at < rederive_due.due_at'
      : 'excluded.due_at <> rederive_due.due_at';
    await db.runEach(
      `INSERT INTO rederive_due (account_id, customer_id, due_at) VALUES ($1, $2, $3)
       ON CONFLICT (account_id, customer_id) DO UPDATE SET due_at = excluded.due_at WHERE ${when}`,
      set.map((d) => [accountId, d.customerId, d.at]),
      ['text', 'text', 'int8'],
    );
  }
  if (cleared.length > 0) {
    const p = new Params(accountId);
    await db.run(
      `DELETE FROM rederive_due WHERE account_id = $1 AND customer_id ${db.inList(p, cleared)}`,
      p.list,
    );
  }
}

/** The customers due at `now` (oldest due first), at most `limit`, across accounts but those in `skip`. */
export async function dueForRederive(
  db: Driver,
  now: number,
  limit: number,
  skip: readonly string[] = [],
): Promise<{ accountId: string; customerId: string }[]> {
  const p = new Params(now, limit);
  // An account whose pass failed keeps its customers due, oldest first: left out, or they would
  // fill every page of the pass ahead of the other accounts' (docs/operations.md, "Background jobs").
  const others = skip.length === 0 ? '' : ` AND NOT (account_id ${db.inList(p, skip)})`;
  const rows = await db.all(
    `SELECT account_id, customer_id FROM rederive_due WHERE due_at <= $1${others} ORDER BY due_at LIMIT $2`,
    p.list,
  );
  return rows.map((r) => ({ accountId: r.account_id as string, customerId: r.customer_id as string }));
}

/**
 * Of these customers, the ones due at `now`, by id; `claim`: locked for this transaction (rows
 * others hold skipped). One probe of the key per customer (perId). `due_at + 0`: the due time's
 * index must not be used here. Statistics taken while every due time lies ahead (the job's own
 * next times) tell PostgreSQL that none is due, and it would walk that index for each customer, past
 * every row due (841 ms a transaction of 500, against 2 ms; a 100,000-customer job 113 s).
 */
async function dueOf(
  db: Driver,
  accountId: string,
  customerIds: readonly string[],
  now: number,
  claim: boolean,
): Promise<string[]> {
  if (customerIds.length === 0) return [];
  const p = new Params(accountId, now);
  const rows = await db.all(
    `${db.perId(
      p,
      customerIds,
      (match) =>
        `SELECT customer_id FROM rederive_due WHERE account_id = $1 AND customer_id ${match} AND due_at + 0 <= $2${claim ? db.skipLocked : ''}`,
    )} ORDER BY customer_id`,
    p.list,
  );
  return rows.map((r) => r.customer_id as string);
}

/** Of these customers, the ones still due at `now`, locked for this transaction (others' locks skipped). */
export const claimRederiveDue = (
  db: Driver,
  accountId: string,
  customerIds: readonly string[],
  now: number,
) => dueOf(db, accountId, customerIds, now, true);
