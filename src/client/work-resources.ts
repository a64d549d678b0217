// The client's methods for acting on scores: tasks and the inbox, notes, playbooks (src/http/tasks.ts
// and playbooks.ts; docs/api.md, "Tasks", "Notes", "Playbooks"; docs/playbooks.md).
import { paginate, path, type Transport } from './client.ts';
import type {
  Deleted,
  Note,
  NoteListParams,
  Page,
  Playbook,
  PlaybookCreate,
  PlaybookUpdate,
  Task,
  TaskCreate,
  TaskListParams,
  TaskUpdate,
  WriteOptions,
} from './types.ts';

export class Tasks {
  readonly #http: Transport;

  constructor(http: Transport) {
    this.#http = http;
  }

  /** Opens a task on a customer. */
  create(customerId: string, body: TaskCreate, opts?: WriteOptions): Promise<Task> {
    return this.#http.post(path`/customers/${customerId}/tasks`, body, opts);
  }

  retrieve(id: string): Promise<Task> {
    return this.#http.get(path`/tasks/${id}`);
  }

  /** Done (`status: 'done'`), reopened, snoozed (`snoozed_until`), reassigned, retitled, due. */
  update(id: string, body: TaskUpdate, opts?: WriteOptions): Promise<Task> {
    return this.#http.patch(path`/tasks/${id}`, body, opts);
  }

  delete(id: string, opts?: WriteOptions): Promise<Deleted> {
    return this.#http.delete(path`/tasks/${id}`, opts);
  }

  /** An inbox, in its order: open tasks soonest due first (`assignee: 'me'`, an email, 'none'), then done ones. */
  list(params: TaskListParams = {}): AsyncGenerator<Task, void, undefined> {
    type TaskPage = Page<Task> & { next_cursor: string | null };
    return paginate<Task, string>(async (cursor) => {
      const page = await this.#http.get<TaskPage>('/tasks', { ...params, cursor });
      return { items: page.data, next: page.next_cursor ?? undefined };
    });
  }
}

export class Notes {
  readonly #http: Transport;

  constructor(http: Transport) {
    this.#http = http;
  }

  create(customerId: string, body: string, opts?: WriteOptions): Promise<Note> {
    return this.#http.post(path`/customers/${customerId}/notes`, { body }, opts);
  }

  /** A customer's notes, newest first. */
  list(customerId: string, params: NoteListParams = {}): AsyncGenerator<Note, void, undefined> {
    return paginate<Note, string>(async (after) => {
      const page = await this.#http.get<Page<Note>>(path`/customers/${customerId}/notes`, {
        ...params,
        starting_after: after ?? params.starting_after,
      });
      return { items: page.data, next: page.has_more ? page.data.at(-1)?.id : undefined };
    });
  }

  /** Its author or an admin only (403 permission_denied for anyone else). */
  update(id: string, body: string, opts?: WriteOptions): Promise<Note> {
    return this.#http.patch(path`/notes/${id}`, { body }, opts);
  }

  delete(id: string, opts?: WriteOptions): Promise<Deleted> {
    return this.#http.delete(path`/notes/${id}`, opts);
  }
}

export class Playbooks {
  readonly #http: Transport;

  constructor(http: Transport) {
    this.#http = http;
  }

  create(body: PlaybookCreate, opts?: WriteOptions): Promise<Playbook> {
    return this.#http.post('/playbooks', body, opts);
  }

  retrieve(id: string): Promise<Playbook> {
    return this.#http.get(path`/playbooks/${id}`);
  }

  update(id: string, body: PlaybookUpdate, opts?: WriteOptions): Promise<Playbook> {
    return this.#http.patch(path`/playbooks/${id}`, body, opts);
  }

  delete(id: string, opts?: WriteOptions): Promise<Deleted> {
    return this.#http.delete(path`/playbooks/${id}`, opts);
  }

  /** The account's playbooks, oldest first. */
  async list(): Promise<Playbook[]> {
    return (await this.#http.get<{ data: Playbook[] }>('/playbooks')).data;
  }
}
