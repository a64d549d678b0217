// Tasks and notes (docs/api.md, "Tasks" and "Notes"): a customer's work to do, the inbox of a
// person or the team, and the notes people keep. Editors and admins write them, everyone reads
// (the `customers` area); a note is changed only by its author or an admin.

import type { FastifyRequest } from 'fastify';
import { Deleted, errorResponses, CustomerParams as IdParams } from '../api/common.ts';
import {
  CreateTaskBody,
  Note,
  NoteInput,
  NoteListQuery,
  NotePage,
  NoteParams,
  noteFields,
  Task,
  TaskListQuery,
  TaskPage,
  TaskParams,
  taskFields,
  UpdateTaskBody,
} from '../api/tasks.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { type Actor, decodeTaskCursor, encodeTaskCursor, sortOf } from '../domain/tasks.ts';
import type { Store } from '../store/store.ts';
import {
  createNote,
  createTask,
  deleteNote,
  deleteTask,
  type Editor,
  type TaskChange,
  updateNote,
  updateTask,
} from '../writes/tasks.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { instantOf } from './instants.ts';
import { type App, type Routes, sendJson } from './reply.ts';

interface Deps {
  store: Store;
  now: () => number;
}

const actorOf = (req: FastifyRequest): Actor => ({ ...req.actor });
/** A signed-in admin, or an API key (a read key never gets this far: it may not write). */
const editorOf = (req: FastifyRequest): Editor => ({
  actor: actorOf(req),
  admin: req.user === undefined || req.user.role === 'admin',
});
const instantOrNull = (text: string | null | undefined, param: string) =>
  text == null ? text : instantOf(text, param);

/** `assignee=`: an email, `none` (null) or `me` (the signed-in person's email). */
function assigneeOf(req: FastifyRequest, assignee: string | undefined): string | null | undefined {
  if (assignee === undefined) return undefined;
  if (assignee === 'none') return null;
  if (assignee !== 'me') return assignee;
  if (!req.user) {
    throw new ApiError(
      'parameter_invalid',
      "'assignee=me' names the signed-in person: with an API key there is none; give an email.",
      'assignee',
    );
  }
  return req.user.email;
}

function postTask(app: App, { store, now }: Deps): void {
  app.post(
    '/customers/:customer_id/tasks',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['tasks'],
        summary: 'Open a task on a customer',
        params: IdParams,
        body: CreateTaskBody,
        response: { 201: Task, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      const input = {
        title: req.body.title,
        body: req.body.body,
        assignee: req.body.assignee,
        dueAt: instantOrNull(req.body.due_at, 'due_at'),
      };
      const body = await store.run(
        createTask,
        req.accountId,
        req.params.customer_id,
        input,
        actorOf(req),
        claimToAnswer(req),
        now(),
      );
      answeredWithWrite(req);
      return sendJson(reply.code(201), body);
    },
  );
}

function listTasks(app: App, { store, now }: Deps): void {
  app.get(
    '/tasks',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['tasks'],
        summary: "An inbox: open tasks soonest due first, a person's, a customer's or the team's",
        querystring: TaskListQuery,
        response: { 200: TaskPage, ...errorResponses(400, 401) },
      },
    },
    async (req) => {
      const q = req.query;
      const after = q.cursor === undefined ? undefined : decodeTaskCursor(q.cursor);
      if (after === null) {
        throw new ApiError(
          'parameter_invalid',
          "'cursor' must be a next_cursor returned by this endpoint.",
          'cursor',
        );
      }
      const limit = q.limit ?? 10;
      const page = await store.listTasks(req.accountId, {
        assignee: assigneeOf(req, q.assignee),
        status: q.status ?? 'open',
        customerId: q.customer_id,
        dueBefore: q.due_before === undefined ? undefined : instantOf(q.due_before, 'due_before'),
        includeSnoozed: q.include_snoozed === 'true' || q.include_snoozed === 'only',
        onlySnoozed: q.include_snoozed === 'only',
        now: now(),
        after,
        limit,
      });
      const last = page.data.at(-1);
      const cursor =
        page.hasMore && last
          ? encodeTaskCursor({ status: last.status, sort: sortOf(last), id: last.id })
          : null;
      return { data: page.data.map(taskFields), has_more: page.hasMore, next_cursor: cursor };
    },
  );
}

function getTask(app: App, { store }: Deps): void {
  app.get(
    '/tasks/:task_id',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['tasks'],
        summary: 'A task',
        params: TaskParams,
        response: { 200: Task, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const task = await store.getTask(req.accountId, req.params.task_id);
      if (!task) throw notFound.task(req.params.task_id);
      return taskFields(task);
    },
  );
}

function patchTask(app: App, { store, now }: Deps): void {
  app.patch(
    '/tasks/:task_id',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['tasks'],
        summary: 'Change a task: done, reopened, snoozed, reassigned, retitled, due',
        params: TaskParams,
        body: UpdateTaskBody,
        response: { 200: Task, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
      },
    },
    async (req) => {
      const b = req.body;
      const change: TaskChange = {
        title: b.title,
        body: b.body,
        status: b.status,
        assignee: b.assignee,
        dueAt: instantOrNull(b.due_at, 'due_at'),
        snoozedUntil: instantOrNull(b.snoozed_until, 'snoozed_until'),
      };
      return store.run(updateTask, req.accountId, req.params.task_id, change, actorOf(req), now());
    },
  );
}

function removeTask(app: App, { store }: Deps): void {
  app.delete(
    '/tasks/:task_id',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['tasks'],
        summary: 'Delete a task',
        params: TaskParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => store.run(deleteTask, req.accountId, req.params.task_id),
  );
}

function postNote(app: App, { store, now }: Deps): void {
  app.post(
    '/customers/:customer_id/notes',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['tasks'],
        summary: 'Keep a note on a customer',
        params: IdParams,
        body: NoteInput,
        response: { 201: Note, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      const { customer_id } = req.params;
      const body = await store.run(
        createNote,
        req.accountId,
        customer_id,
        req.body.body,
        actorOf(req),
        claimToAnswer(req),
        now(),
      );
      answeredWithWrite(req);
      return sendJson(reply.code(201), body);
    },
  );
}

function listNotes(app: App, { store }: Deps): void {
  app.get(
    '/customers/:customer_id/notes',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['tasks'],
        summary: "A customer's notes, newest first",
        params: IdParams,
        querystring: NoteListQuery,
        response: { 200: NotePage, ...errorResponses(400, 401, 404) },
      },
    },
    async (req) => {
      const { customer_id } = req.params;
      if (!(await store.getCustomer(req.accountId, customer_id))) throw notFound.customer(customer_id);
      const page = await store.listNotes(req.accountId, customer_id, {
        after: req.query.starting_after,
        limit: req.query.limit ?? 10,
      });
      return { data: page.data.map(noteFields), has_more: page.hasMore };
    },
  );
}

function patchNote(app: App, { store, now }: Deps): void {
  app.patch(
    '/notes/:note_id',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['tasks'],
        summary: 'Change a note (its author or an admin)',
        params: NoteParams,
        body: NoteInput,
        response: { 200: Note, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (req) =>
      noteFields(
        await store.run(updateNote, req.accountId, req.params.note_id, req.body.body, editorOf(req), now()),
      ),
  );
}

function removeNote(app: App, { store }: Deps): void {
  app.delete(
    '/notes/:note_id',
    {
      config: { area: 'customers' },
      schema: {
        tags: ['tasks'],
        summary: 'Delete a note (its author or an admin)',
        params: NoteParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => store.run(deleteNote, req.accountId, req.params.note_id, editorOf(req)),
  );
}

export const tasksRoutes =
  (store: Store, now: () => number): Routes =>
  async (app) => {
    const deps = { store, now };
    const routes = [
      postTask,
      listTasks,
      getTask,
      patchTask,
      removeTask,
      postNote,
      listNotes,
      patchNote,
      removeNote,
    ];
    for (const route of routes) route(app, deps);
  };
