// Tasks and notes (docs/playbooks.md): the work a score opens and the account's story a person keeps.
// What a task is, the order an inbox shows, and the limits. Pure.

export const TASK_STATUSES = ['open', 'done'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TASK_TITLE_MAX = 200;
export const TASK_BODY_MAX = 10_000;
export const NOTE_BODY_MAX = 10_000;

/** Who wrote a task or a note: the audit log's actor shape (docs/people.md, "Audit log"), or the playbook that opened it. */
export interface Actor {
  type: 'key' | 'user' | 'source' | 'playbook';
  id: string;
  label: string;
}

export interface TaskRecord {
  id: string;
  customerId: string;
  title: string;
  body: string;
  status: TaskStatus;
  assignee: string | null;
  dueAt: number | null;
  snoozedUntil: number | null;
  playbookId: string | null;
  /** What a playbook opened it for, when one task per value is the rule (a renewal date). */
  triggerKey: string | null;
  createdAt: number;
  updatedAt: number;
  doneAt: number | null;
  createdBy: Actor;
  /** Who marked it done (null while open, and for tasks done before this was kept). */
  doneBy: Actor | null;
}

export interface NoteRecord {
  id: string;
  customerId: string;
  body: string;
  author: Actor;
  createdAt: number;
  updatedAt: number;
}

/**
 * An open task's place in an inbox: soonest due first, a task without a due date after every
 * dated one (the largest safe integer sorts last), then by id, which is time-ordered (creation).
 * A done task's place is the negated instant it was done: newest done first, by the same index.
 */
export const NO_DUE = Number.MAX_SAFE_INTEGER;
export const sortOf = (t: Pick<TaskRecord, 'status' | 'dueAt' | 'doneAt'>): number =>
  t.status === 'open' ? (t.dueAt ?? NO_DUE) : -(t.doneAt ?? 0);

/** Where a task list page ends: the next page starts after this task, of this status. */
export interface TaskCursor {
  status: TaskStatus;
  sort: number;
  id: string;
}

/** The cursor as opaque text (docs/api.md, "Tasks"). */
export const encodeTaskCursor = (c: TaskCursor): string =>
  Buffer.from(JSON.stringify([c.status, c.sort, c.id])).toString('base64url');

/** The cursor a list made, or null when the text is not one. */
export function decodeTaskCursor(text: string): TaskCursor | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString());
    if (!Array.isArray(value) || value.length !== 3) return null;
    const [status, sort, id] = value as unknown[];
    if (status !== 'open' && status !== 'done') return null;
    if (typeof sort !== 'number' || !Number.isSafeInteger(sort)) return null;
    if (typeof id !== 'string' || id.length > 64) return null;
    return { status, sort, id };
  } catch {
    return null;
  }
}
