// Playbooks (docs/api.md, "Playbooks"; docs/playbooks.md): a trigger and the task it opens. The
// account's settings (the `account` area): everyone reads them, admins and write keys change them.
// A trigger is checked by its own type's schema, so a refusal names that type's field.
import { Deleted, errorResponses } from '../api/common.ts';
import {
  CreatePlaybookBody,
  Playbook,
  PlaybookList,
  PlaybookParams,
  playbookFields,
  TRIGGERS,
  triggerOf,
  UpdatePlaybookBody,
} from '../api/playbooks.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import type { PlaybookTask, Trigger, TriggerType } from '../domain/playbooks.ts';
import type { Store } from '../store/store.ts';
import { createPlaybook, deletePlaybook, type PlaybookInput, updatePlaybook } from '../writes/playbooks.ts';
import { answeredWithWrite, claimToAnswer } from './idempotency.ts';
import { type App, type Routes, sendJson } from './reply.ts';
import { itemValidator } from './validation.ts';

interface Deps {
  store: Store;
  now: () => number;
}

const checks = Object.fromEntries(
  Object.entries(TRIGGERS).map(([type, schema]) => [type, itemValidator(schema)]),
) as Record<TriggerType, (item: unknown) => ApiError | null>;

/** The trigger, checked by its type's schema; a refusal's param is under `trigger`. */
function checkedTrigger(body: Record<string, unknown>): Trigger {
  const refused = checks[body.type as TriggerType](body);
  if (refused) {
    const param = refused.param ? `trigger.${refused.param}` : 'trigger';
    throw new ApiError(refused.code, refused.message.replaceAll(`'${refused.param}'`, `'${param}'`), param);
  }
  return triggerOf(body);
}

type Template = { title: string; body?: string | undefined; due_in_days?: number | null | undefined };
const taskOf = (t: Template): PlaybookTask => ({
  title: t.title,
  body: t.body ?? '',
  dueInDays: t.due_in_days ?? null,
});

interface Given {
  name?: string | undefined;
  enabled?: boolean | undefined;
  trigger?: Record<string, unknown> | undefined;
  task?: Template | undefined;
  assignee?: string | null | undefined;
}

const inputOf = (b: Given): PlaybookInput => ({
  name: b.name,
  enabled: b.enabled,
  trigger: b.trigger === undefined ? undefined : checkedTrigger(b.trigger),
  task: b.task === undefined ? undefined : taskOf(b.task),
  assignee: b.assignee,
});

function listPlaybooks(app: App, { store }: Deps): void {
  app.get(
    '/playbooks',
    {
      schema: {
        tags: ['playbooks'],
        summary: "The account's playbooks, oldest first",
        response: { 200: PlaybookList, ...errorResponses(401) },
      },
    },
    async (req) => ({ data: (await store.listPlaybooks(req.accountId)).map(playbookFields) }),
  );
}

function postPlaybook(app: App, { store, now }: Deps): void {
  app.post(
    '/playbooks',
    {
      schema: {
        tags: ['playbooks'],
        summary: 'Add a playbook: a trigger and the task it opens for the customer’s owner',
        body: CreatePlaybookBody,
        response: { 201: Playbook, ...errorResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (req, reply) => {
      const { name, trigger, task } = req.body;
      const input = { ...inputOf(req.body), name, trigger: checkedTrigger(trigger), task: taskOf(task) };
      const body = await store.run(createPlaybook, req.accountId, input, claimToAnswer(req), now());
      answeredWithWrite(req);
      return sendJson(reply.code(201), body);
    },
  );
}

function getPlaybook(app: App, { store }: Deps): void {
  app.get(
    '/playbooks/:playbook_id',
    {
      schema: {
        tags: ['playbooks'],
        summary: 'A playbook',
        params: PlaybookParams,
        response: { 200: Playbook, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const found = await store.getPlaybook(req.accountId, req.params.playbook_id);
      if (!found) throw notFound.playbook(req.params.playbook_id);
      return playbookFields(found);
    },
  );
}

function patchPlaybook(app: App, { store, now }: Deps): void {
  app.patch(
    '/playbooks/:playbook_id',
    {
      schema: {
        tags: ['playbooks'],
        summary: 'Change a playbook: its name, trigger, task, assignee; disable or enable it',
        params: PlaybookParams,
        body: UpdatePlaybookBody,
        response: { 200: Playbook, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (req) => store.run(updatePlaybook, req.accountId, req.params.playbook_id, inputOf(req.body), now()),
  );
}

function removePlaybook(app: App, { store }: Deps): void {
  app.delete(
    '/playbooks/:playbook_id',
    {
      schema: {
        tags: ['playbooks'],
        summary: 'Delete a playbook; the tasks it opened stay',
        params: PlaybookParams,
        response: { 200: Deleted, ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => store.run(deletePlaybook, req.accountId, req.params.playbook_id),
  );
}

export const playbooksRoutes =
  (store: Store, now: () => number): Routes =>
  async (app) => {
    const deps = { store, now };
    for (const route of [listPlaybooks, postPlaybook, getPlaybook, patchPlaybook, removePlaybook])
      route(app, deps);
  };
