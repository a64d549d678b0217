// Tasks and notes below HTTP (docs/api.md, "Tasks" and "Notes"). Each write holds its customer's
// lock (customersForUpdate) before it reads the customer's tasks, so a reopen's check for another
// open task of the same playbook and the reopen are one step, across processes too. A task's
// creation and change are events (task.created, task.updated) in the same transaction, and so is
// the mail to the person it is assigned to (./mail.ts).
import { noteJson, taskFields, taskJson } from '../api/tasks.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { event } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import type { Actor, NoteRecord, TaskRecord, TaskStatus } from '../domain/tasks.ts';
import type { Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { type Claim, recordAnswer } from './answers.ts';
import { queueAssignmentMails } from './mail.ts';

/** A new task as the request gives it, checked (instants as ms). */
export interface TaskInput {
  title: string;
  body?: string | undefined;
  assignee?: string | null | undefined;
  dueAt?: number | null | undefined;
}

/** A task's change: only the fields given. */
export interface TaskChange {
  title?: string | undefined;
  body?: string | undefined;
  status?: TaskStatus | undefined;
  assignee?: string | null | undefined;
  dueAt?: number | null | undefined;
  snoozedUntil?: number | null | undefined;
}

/** Who changes a note: only its author or an admin (a signed-in admin, or a write key) may. */
export interface Editor {
  actor: Actor;
  admin: boolean;
}

async function lockCustomer(tx: Tx, accountId: string, customerId: string): Promise<void> {
  const known = await tx.customersForUpdate(accountId, [customerId]);
  if (!known.has(customerId)) throw notFound.customer(customerId);
}

/** The task, read under its customer's lock; 404 task_not_found for an id not of this account. */
async function lockedTask(tx: Tx, accountId: string, id: string): Promise<TaskRecord> {
  const seen = await tx.getTask(accountId, id);
  if (!seen) throw notFound.task(id);
  await lockCustomer(tx, accountId, seen.customerId);
  // Read again under the lock: another writer may have changed or deleted it meanwhile.
  const task = await tx.getTask(accountId, id);
  if (!task) throw notFound.task(id);
  return task;
}

/** POST /api/customers/{id}/tasks: the new task's answer text (201), stored for the Idempotency-Key. */
export const createTask = write(async function createTask(
  tx: Tx,
  accountId: string,
  customerId: string,
  input: TaskInput,
  actor: Actor,
  claim: Claim,
  now: number,
): Promise<string> {
  await lockCustomer(tx, accountId, customerId);
  const task: TaskRecord = {
    id: newId.task(),
    customerId,
    title: input.title,
    body: input.body ?? '',
    status: 'open',
    assignee: input.assignee ?? null,
    dueAt: input.dueAt ?? null,
    snoozedUntil: null,
    playbookId: null,
    triggerKey: null,
    createdAt: now,
    updatedAt: now,
    doneAt: null,
    createdBy: actor,
    doneBy: null,
  };
  await tx.insertTask(accountId, task);
  await tx.insertEvents(accountId, [event('task.created', taskFields(task), now)]);
  await queueAssignmentMails(tx, accountId, [task], now);
  const body = taskJson(task);
  await recordAnswer(tx, accountId, claim, body, 201);
  return body;
});

/** The task with the change applied; 400 for a done task snoozed, 409 for a reopen beside another open one. */
async function applyChange(
  tx: Tx,
  accountId: string,
  task: TaskRecord,
  change: TaskChange,
  actor: Actor,
  now: number,
): Promise<TaskRecord> {
  const status = change.status ?? task.status;
  const snoozedUntil = change.snoozedUntil === undefined ? task.snoozedUntil : change.snoozedUntil;
  if (status === 'done' && change.snoozedUntil != null) {
    throw new ApiError(
      'parameter_invalid',
      'A done task cannot be snoozed: reopen it first (status: "open").',
      'snoozed_until',
    );
  }
  if (status === 'open' && task.status === 'done' && task.playbookId !== null) {
    const open = await tx.openTaskOf(accountId, task.playbookId, task.customerId, task.id);
    if (open !== null) {
      throw new ApiError(
        'task_open_exists',
        `Task '${open}' of the same playbook is open for this customer: close it before reopening this one.`,
        'status',
      );
    }
  }
  const done = status === 'done';
  return {
    ...task,
    title: change.title ?? task.title,
    body: change.body ?? task.body,
    status,
    assignee: change.assignee === undefined ? task.assignee : change.assignee,
    dueAt: change.dueAt === undefined ? task.dueAt : change.dueAt,
    snoozedUntil: done ? null : snoozedUntil,
    doneAt: done ? (task.status === 'done' ? task.doneAt : now) : null,
    // Who closed it, for its timeline (docs/api.md, "Timeline"): kept while it stays done.
    doneBy: done ? (task.status === 'done' ? task.doneBy : actor) : null,
    updatedAt: now,
  };
}

/** Whether a change hands an open task to someone new (who is then mailed). */
const reassigned = (before: TaskRecord, after: TaskRecord): boolean =>
  after.assignee !== null && after.assignee.toLowerCase() !== before.assignee?.toLowerCase();

/** PATCH /api/tasks/{id}: the task as changed; `actor` made the change. */
export const updateTask = write(async function updateTask(
  tx: Tx,
  accountId: string,
  id: string,
  change: TaskChange,
  actor: Actor,
  now: number,
): Promise<ReturnType<typeof taskFields>> {
  const task = await lockedTask(tx, accountId, id);
  const next = await applyChange(tx, accountId, task, change, actor, now);
  await tx.updateTask(accountId, next);
  const fields = taskFields(next);
  await tx.insertEvents(accountId, [event('task.updated', fields, now)]);
  if (reassigned(task, next)) await queueAssignmentMails(tx, accountId, [next], now, actor);
  return fields;
});

/** DELETE /api/tasks/{id}. */
export const deleteTask = write(async function deleteTask(
  tx: Tx,
  accountId: string,
  id: string,
): Promise<{ id: string; deleted: true }> {
  await lockedTask(tx, accountId, id);
  if (!(await tx.deleteTask(accountId, id))) throw notFound.task(id);
  return { id, deleted: true };
});

/** POST /api/customers/{id}/notes: the new note's answer text (201), stored for the Idempotency-Key. */
export const createNote = write(async function createNote(
  tx: Tx,
  accountId: string,
  customerId: string,
  text: string,
  author: Actor,
  claim: Claim,
  now: number,
): Promise<string> {
  await lockCustomer(tx, accountId, customerId);
  const note: NoteRecord = {
    id: newId.note(),
    customerId,
    body: text,
    author,
    createdAt: now,
    updatedAt: now,
  };
  await tx.insertNote(accountId, note);
  const body = noteJson(note);
  await recordAnswer(tx, accountId, claim, body, 201);
  return body;
});

/** The note, when `editor` may change it: 404 for another account's, 403 for someone else's. */
async function ownNote(tx: Tx, accountId: string, id: string, editor: Editor): Promise<NoteRecord> {
  const note = await tx.getNote(accountId, id);
  if (!note) throw notFound.note(id);
  const author = note.author.type === editor.actor.type && note.author.id === editor.actor.id;
  if (!author && !editor.admin) {
    throw new ApiError('permission_denied', 'Only the note’s author or an admin may change or delete it.');
  }
  return note;
}

/** PATCH /api/notes/{id}: its new text. */
export const updateNote = write(async function updateNote(
  tx: Tx,
  accountId: string,
  id: string,
  text: string,
  editor: Editor,
  now: number,
): Promise<NoteRecord> {
  const note = { ...(await ownNote(tx, accountId, id, editor)), body: text, updatedAt: now };
  await tx.updateNote(accountId, note);
  return note;
});

/** DELETE /api/notes/{id}. */
export const deleteNote = write(async function deleteNote(
  tx: Tx,
  accountId: string,
  id: string,
  editor: Editor,
): Promise<{ id: string; deleted: true }> {
  await ownNote(tx, accountId, id, editor);
  if (!(await tx.deleteNote(accountId, id))) throw notFound.note(id);
  return { id, deleted: true };
});
