// Tasks and notes (docs/playbooks.md), written once for both backends: a customer's work to do and the
// notes people keep on it. The writes run in a write of src/writes/tasks.ts, under the customer's
// lock (customersForUpdate), so a check of the open tasks and the change it allows are one step;
// both go with their customer (the tables' foreign keys, migration 30).
import {
  type Actor,
  type NoteRecord,
  sortOf,
  type TaskCursor,
  type TaskRecord,
  type TaskStatus,
} from '../domain/tasks.ts';
import { type Driver, hasNul, Params, type Row } from './driver.ts';
import type { Page } from './rows.ts';

export type { Actor, NoteRecord, TaskRecord } from '../domain/tasks.ts';

/** Which tasks a list reads (docs/api.md, "Tasks"). */
export interface TaskQuery {
  /** An assignee's email (compared ignoring case); null: tasks assigned to nobody; absent: anyone's. */
  assignee?: string | null | undefined;
  status: TaskStatus | 'all';
  customerId?: string | undefined;
  /** Open tasks due before this instant. */
  dueBefore?: number | undefined;
  /** Snoozed tasks (snoozed_until after `now`) are left out unless this is true. */
  includeSnoozed: boolean;
  /** Only the snoozed ones (the dashboard's Snoozed tab, docs/dashboard.md). */
  onlySnoozed?: boolean | undefined;
  now: number;
  after?: TaskCursor | undefined;
  limit: number;
}

export interface TaskReads {
  getTask(accountId: string, id: string): Promise<TaskRecord | null>;
  /** A page of tasks in inbox order: open ones soonest due first, then done ones newest first. */
  listTasks(accountId: string, query: TaskQuery): Promise<Page<TaskRecord>>;
  getNote(accountId: string, id: string): Promise<NoteRecord | null>;
  /** A customer's notes, newest first; `after`: the last id of the page before. */
  listNotes(
    accountId: string,
    customerId: string,
    opts: { after?: string | undefined; limit: number },
  ): Promise<Page<NoteRecord>>;
}

export interface TaskWrites {
  /**
   * Stores the task; false (nothing written) when it would be a second open task of its playbook
   * for the customer, or a second task of its playbook for the same trigger key (the unique
   * indexes of migration 30 decide, so two processes cannot both open one).
   */
  insertTask(accountId: string, task: TaskRecord): Promise<boolean>;
  /** Writes the task's fields as given (it exists: the caller read it). */
  updateTask(accountId: string, task: TaskRecord): Promise<void>;
  deleteTask(accountId: string, id: string): Promise<boolean>;
  /** The id of the open task of this playbook for this customer, other than `except`; null: none. */
  openTaskOf(
    accountId: string,
    playbookId: string,
    customerId: string,
    except: string,
  ): Promise<string | null>;
  insertNote(accountId: string, note: NoteRecord): Promise<void>;
  updateNote(accountId: string, note: NoteRecord): Promise<void>;
  deleteNote(accountId: string, id: string): Promise<boolean>;
}

export const TASK_COLUMNS = `id, customer_id, title, body, status, assignee, due_at, snoozed_until, playbook_id,
  trigger_key, created_at, updated_at, done_at, created_by, done_by`;
export const NOTE_COLUMNS = 'id, customer_id, body, author, created_at, updated_at';

const SQL = {
  insertTask: `INSERT INTO tasks (account_id, id, customer_id, title, body, status, assignee, assignee_key,
      due_at, snoozed_until, playbook_id, trigger_key, created_at, updated_at, done_at, created_by, sort, done_by)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
    ON CONFLICT DO NOTHING`,
  updateTask: `UPDATE tasks SET title = $3, body = $4, status = $5, assignee = $6, assignee_key = $7,
      due_at = $8, snoozed_until = $9, updated_at = $10, done_at = $11, sort = $12, done_by = $13
    WHERE account_id = $1 AND id = $2`,
  getTask: `SELECT ${TASK_COLUMNS} FROM tasks WHERE account_id = $1 AND id = $2`,
  deleteTask: 'DELETE FROM tasks WHERE account_id = $1 AND id = $2',
  openTaskOf: `SELECT id FROM tasks WHERE account_id = $1 AND playbook_id = $2 AND customer_id = $3
    AND status = 'open' AND id <> $4`,
  insertNote: `INSERT INTO notes (account_id, id, customer_id, body, author, author_id, created_at, updated_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  updateNote: 'UPDATE notes SET body = $3, updated_at = $4 WHERE account_id = $1 AND id = $2',
  getNote: `SELECT ${NOTE_COLUMNS} FROM notes WHERE account_id = $1 AND id = $2`,
  deleteNote: 'DELETE FROM notes WHERE account_id = $1 AND id = $2',
} as const;

const num = (v: unknown): number | null => (v == null ? null : Number(v));

export function toTask(r: Row, db: Driver): TaskRecord {
  return {
    id: r.id as string,
    customerId: r.customer_id as string,
    title: db.fromText(r.title as string),
    body: db.fromText(r.body as string),
    status: r.status as TaskStatus,
    assignee: r.assignee == null ? null : db.fromText(r.assignee as string),
    dueAt: num(r.due_at),
    snoozedUntil: num(r.snoozed_until),
    playbookId: (r.playbook_id as string | null) ?? null,
    triggerKey: r.trigger_key == null ? null : db.fromText(r.trigger_key as string),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    doneAt: num(r.done_at),
    createdBy: JSON.parse(db.fromText(r.created_by as string)) as Actor,
    doneBy: r.done_by == null ? null : (JSON.parse(db.fromText(r.done_by as string)) as Actor),
  };
}

export const toNote = (r: Row, db: Driver): NoteRecord => ({
  id: r.id as string,
  customerId: r.customer_id as string,
  body: db.fromText(r.body as string),
  author: JSON.parse(db.fromText(r.author as string)) as Actor,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

const assigneeKey = (assignee: string | null) => (assignee === null ? null : assignee.toLowerCase());

export async function insertTask(db: Driver, accountId: string, t: TaskRecord): Promise<boolean> {
  const changed = await db.run(SQL.insertTask, [
    accountId,
    t.id,
    t.customerId,
    db.text(t.title),
    db.text(t.body),
    t.status,
    db.textOrNull(t.assignee),
    db.textOrNull(assigneeKey(t.assignee)),
    t.dueAt,
    t.snoozedUntil,
    t.playbookId,
    db.textOrNull(t.triggerKey),
    t.createdAt,
    t.updatedAt,
    t.doneAt,
    db.text(JSON.stringify(t.createdBy)),
    sortOf(t),
    t.doneBy === null ? null : db.text(JSON.stringify(t.doneBy)),
  ]);
  return changed === 1;
}

export async function updateTask(db: Driver, accountId: string, t: TaskRecord): Promise<void> {
  await db.run(SQL.updateTask, [
    accountId,
    t.id,
    db.text(t.title),
    db.text(t.body),
    t.status,
    db.textOrNull(t.assignee),
    db.textOrNull(assigneeKey(t.assignee)),
    t.dueAt,
    t.snoozedUntil,
    t.updatedAt,
    t.doneAt,
    sortOf(t),
    t.doneBy === null ? null : db.text(JSON.stringify(t.doneBy)),
  ]);
}

export async function getTask(db: Driver, accountId: string, id: string): Promise<TaskRecord | null> {
  if (hasNul(id)) return null;
  const row = await db.get(SQL.getTask, [accountId, id]);
  return row ? toTask(row, db) : null;
}

export const deleteTask = async (db: Driver, accountId: string, id: string) =>
  !hasNul(id) && (await db.run(SQL.deleteTask, [accountId, id])) === 1;

export async function openTaskOf(
  db: Driver,
  accountId: string,
  playbookId: string,
  customerId: string,
  except: string,
): Promise<string | null> {
  const row = await db.get<{ id: string }>(SQL.openTaskOf, [accountId, playbookId, customerId, except]);
  return row?.id ?? null;
}

/** One status's part of a list, in its index's order (migration 30: by assignee, by customer, the team's). */
function statusPage(db: Driver, accountId: string, q: TaskQuery, status: TaskStatus, limit: number) {
  const p = new Params(accountId, status);
  let where = 'account_id = $1 AND status = $2';
  if (q.assignee === null) where += ' AND assignee_key IS NULL';
  else if (q.assignee !== undefined) where += ` AND assignee_key = ${p.add(q.assignee.toLowerCase())}`;
  if (q.customerId !== undefined) where += ` AND customer_id = ${p.add(q.customerId)}`;
  if (q.dueBefore !== undefined) where += ` AND due_at < ${p.add(q.dueBefore)}`;
  if (q.onlySnoozed) where += ` AND snoozed_until > ${p.add(q.now)}`;
  else if (!q.includeSnoozed) where += ` AND (snoozed_until IS NULL OR snoozed_until <= ${p.add(q.now)})`;
  if (q.after?.status === status) {
    where += ` AND (sort, id) > (${p.add(q.after.sort)}, ${p.add(q.after.id)})`;
  }
  const sql = `SELECT ${TASK_COLUMNS} FROM tasks WHERE ${where} ORDER BY sort, id LIMIT ${p.add(limit)}`;
  return db.all(sql, p.list);
}

export async function listTasks(db: Driver, accountId: string, q: TaskQuery): Promise<Page<TaskRecord>> {
  if ((q.customerId !== undefined && hasNul(q.customerId)) || (q.assignee && hasNul(q.assignee))) {
    return { data: [], hasMore: false };
  }
  const statuses: TaskStatus[] =
    q.status === 'all' ? (q.after?.status === 'done' ? ['done'] : ['open', 'done']) : [q.status];
  const rows: Row[] = [];
  for (const status of statuses) {
    if (rows.length > q.limit) break;
    rows.push(...(await statusPage(db, accountId, q, status, q.limit + 1 - rows.length)));
  }
  return { data: rows.slice(0, q.limit).map((r) => toTask(r, db)), hasMore: rows.length > q.limit };
}

export async function insertNote(db: Driver, accountId: string, n: NoteRecord): Promise<void> {
  await db.run(SQL.insertNote, [
    accountId,
    n.id,
    n.customerId,
    db.text(n.body),
    db.text(JSON.stringify(n.author)),
    n.author.id,
    n.createdAt,
    n.updatedAt,
  ]);
}

export async function updateNote(db: Driver, accountId: string, n: NoteRecord): Promise<void> {
  await db.run(SQL.updateNote, [accountId, n.id, db.text(n.body), n.updatedAt]);
}

export async function getNote(db: Driver, accountId: string, id: string): Promise<NoteRecord | null> {
  if (hasNul(id)) return null;
  const row = await db.get(SQL.getNote, [accountId, id]);
  return row ? toNote(row, db) : null;
}

export const deleteNote = async (db: Driver, accountId: string, id: string) =>
  !hasNul(id) && (await db.run(SQL.deleteNote, [accountId, id])) === 1;

export async function listNotes(
  db: Driver,
  accountId: string,
  customerId: string,
  opts: { after?: string | undefined; limit: number },
): Promise<Page<NoteRecord>> {
  if (hasNul(customerId) || (opts.after !== undefined && hasNul(opts.after)))
    return { data: [], hasMore: false };
  const p = new Params(accountId, customerId);
  const after = opts.after === undefined ? '' : ` AND id < ${p.add(opts.after)}`;
  const rows = await db.all(
    `SELECT ${NOTE_COLUMNS} FROM notes WHERE account_id = $1 AND customer_id = $2${after}
     ORDER BY id DESC LIMIT ${p.add(opts.limit + 1)}`,
    p.list,
  );
  return { data: rows.slice(0, opts.limit).map((r) => toNote(r, db)), hasMore: rows.length > opts.limit };
}
