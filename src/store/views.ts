// A person's saved views of the portfolio (docs/api.md, "Saved views"): a name and the portfolio's
// query string, private to the person who saved it, written once for both backends. The writes run
// in a write of src/writes/views.ts; a view goes with its person (the table's foreign key).
import { type Driver, hasNul } from './driver.ts';

export interface ViewRecord {
  id: string;
  name: string;
  /** The portfolio's URL query string, as the person's dashboard had it. */
  query: string;
  createdAt: number;
}

export interface ViewReads {
  /** The person's views, newest first; never another person's, nor another account's. */
  listViews(accountId: string, userId: string): Promise<ViewRecord[]>;
}

export interface ViewWrites {
  /**
   * Saves the view when the person has fewer than `limit`: checked and inserted as one step, so of
   * a burst in parallel (across processes too) none passes the limit. `full` when they have
   * `limit` already, `no_user` when the account has no such person (removed meanwhile); nothing
   * is written then.
   */
  insertView(
    accountId: string,
    userId: string,
    view: ViewRecord,
    limit: number,
  ): Promise<'inserted' | 'full' | 'no_user'>;
  /** False when the person has no view of this id (another person's is none of theirs). */
  deleteView(accountId: string, userId: string, id: string): Promise<boolean>;
}

const SQL = {
  list: `SELECT id, name, query, created_at FROM views WHERE account_id = $1 AND user_id = $2
    ORDER BY created_at DESC, id DESC`,
  /** The person's row, locked where writers run side by side: their views' count waits for it. */
  person: 'SELECT id FROM users WHERE account_id = $1 AND id = $2',
  count: 'SELECT count(*) AS n FROM views WHERE account_id = $1 AND user_id = $2',
  insert: `INSERT INTO views (account_id, user_id, id, name, query, created_at)
    VALUES ($1, $2, $3, $4, $5, $6)`,
  delete: 'DELETE FROM views WHERE account_id = $1 AND user_id = $2 AND id = $3',
} as const;

interface ViewRow {
  id: string;
  name: string;
  query: string;
  created_at: number | string;
}

export async function listViews(db: Driver, accountId: string, userId: string): Promise<ViewRecord[]> {
  const rows = await db.all<ViewRow>(SQL.list, [accountId, userId]);
  return rows.map((r) => ({
    id: r.id,
    name: db.fromText(r.name),
    query: db.fromText(r.query),
    createdAt: Number(r.created_at),
  }));
}

/**
 * The count is read after the person's row is locked (PostgreSQL's FOR UPDATE; SQLite has one
 * writer): a second insert for the same person waits for the first to commit, and under READ
 * COMMITTED its count, a statement of its own, then sees the first's view.
 */
export async function insertView(
  db: Driver,
  accountId: string,
  userId: string,
  view: ViewRecord,
  limit: number,
): Promise<'inserted' | 'full' | 'no_user'> {
  if (!(await db.get(`${SQL.person}${db.forUpdate}`, [accountId, userId]))) return 'no_user';
  const counted = await db.get<{ n: number | string }>(SQL.count, [accountId, userId]);
  if (Number(counted?.n ?? 0) >= limit) return 'full';
  await db.run(SQL.insert, [
    accountId,
    userId,
    view.id,
    db.text(view.name),
    db.text(view.query),
    view.createdAt,
  ]);
  return 'inserted';
}

export const deleteView = async (db: Driver, accountId: string, userId: string, id: string) =>
  !hasNul(id) && (await db.run(SQL.delete, [accountId, userId, id])) === 1;
