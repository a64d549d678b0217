// Tasks as the inbox and the customer page list them (docs/dashboard.md, "Inbox"; docs/playbooks.md):
// each with its customer, its due date (overdue in red, and said so), its assignee and the playbook
// that opened it, and the actions a person takes in one click: done, snooze 1, 3 or 7 days, reassign,
// back from a snooze, reopen. Viewers and read keys see the tasks without the actions (the API
// refuses them too). A change reloads the list it was made in and the navigation's count.
import { useEffect, useState } from 'preact/hooks';
import {
  ApiError,
  api,
  type Customer,
  customerPath,
  type Playbook,
  query,
  session,
  type Task,
  type TaskUpdate,
  taskPath,
  type User,
} from '../api.ts';
import { date, when } from '../format.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, Field, LiveNotice, Loading, Pager, useLoad, useMayEdit } from '../ui.tsx';

/**
 * Fired on window when this tab changed a task (done, snoozed, reassigned, opened): the navigation's
 * inbox count reads again.
 */
export const TASKS_CHANGED = 'vitals:tasks-changed';
export const tasksChanged = () => window.dispatchEvent(new Event(TASKS_CHANGED));

export const SNOOZE_DAYS = [1, 3, 7] as const;
const DAY = 86_400_000;
const PAGE = 25;

/** What a list shows, and so which actions its rows offer. */
export type TaskMode = 'open' | 'snoozed' | 'done';

const daysWords = (n: number) => `${n} ${n === 1 ? 'day' : 'days'}`;

/** Customers' names by id, asked once per id while the dashboard is open (a task carries only the id). */
const customerNames = new Map<string, Promise<string | null>>();
function customerName(id: string): Promise<string | null> {
  let known = customerNames.get(id);
  if (!known) {
    known = api.get<Customer>(customerPath(id)).then(
      (c) => c.name,
      () => {
        customerNames.delete(id);
        return null;
      },
    );
    customerNames.set(id, known);
  }
  return known;
}

/** A customer's name (its id until known), linked to its page. */
function CustomerLink({ id }: { id: string }) {
  const name = useLoad(() => customerName(id), [id]);
  return (
    <Link href={paths.customer(id)} class="break">
      {name.data ?? id}
    </Link>
  );
}

/**
 * The account's playbooks by id, to name the one that opened a task (everyone may read them);
 * undefined until they are read.
 */
export function usePlaybookNames(): Map<string, string> | undefined {
  const list = useLoad((signal) => api.get<{ data: Playbook[] }>('/api/playbooks', signal), []);
  return list.data && new Map(list.data.data.map((p) => [p.id, p.name]));
}

/** The people API's answer for this session (who asked: a person's id or a key), asked once. */
let peopleAsked: { who: string; list: Promise<string[] | null> } | undefined;

/**
 * The account's people, to reassign a task to: their emails from the people API, which admins and
 * keys may read. null when it refuses this session (an editor): the form then takes an email.
 * Asked only by a session that may write tasks (`wanted`), once.
 */
export function usePeople(wanted: boolean): string[] | null | undefined {
  const loaded = useLoad(async () => {
    if (!wanted) return undefined;
    const who = session.user?.id ?? session.key ?? '';
    if (peopleAsked?.who !== who) {
      const list = api.get<{ data: User[] }>('/api/users').then(
        (r) => r.data.map((u) => u.email),
        (err) => {
          if (err instanceof ApiError && err.status === 403) return null;
          peopleAsked = undefined; // another failure: ask again next time
          return null;
        },
      );
      peopleAsked = { who, list };
      return list;
    }
    return peopleAsked.list;
  }, [wanted]);
  return loaded.data;
}

/** When the task is due, in words; overdue once its instant has passed. */
export function dueWords(dueAt: string | null, now: number): { text: string; overdue: boolean } {
  if (dueAt === null) return { text: 'No due date', overdue: false };
  const due = Date.parse(dueAt);
  if (due < now) return { text: `Overdue: due ${date(due)}`, overdue: true };
  if (new Date(due).toDateString() === new Date(now).toDateString())
    return { text: 'Due today', overdue: false };
  return { text: `Due ${date(due)}`, overdue: false };
}

const assigneeWords = (assignee: string | null) =>
  assignee === null
    ? 'Unassigned'
    : session.user && assignee.toLowerCase() === session.user.email.toLowerCase()
      ? 'Assigned to you'
      : `Assigned to ${assignee}`;

/**
 * One page of tasks at a time, by the API's cursor, for `params` (GET /api/tasks's filters). `round`
 * reloads it from outside (a task opened beside it).
 */
export function TaskList(props: {
  params: Record<string, string | undefined>;
  mode: TaskMode;
  /** The customer is named on each row (the inbox), or not (the customer's own page). */
  showCustomer: boolean;
  label: string;
  empty: string;
  round?: number;
}) {
  const key = JSON.stringify(props.params);
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [notice, setNotice] = useState<string>();
  const cursor = cursors.at(-1);
  useEffect(() => setCursors([undefined]), [key]);
  const page = useLoad(
    async (signal) => {
      const answer = await api.get<{ data: Task[]; has_more: boolean; next_cursor: string | null }>(
        `/api/tasks${query({ ...props.params, limit: PAGE, cursor })}`,
        signal,
      );
      return { ...answer, now: Date.now(), for: `${key} ${cursor ?? ''}` };
    },
    [key, cursor, props.round],
  );
  const may = useMayEdit() === true;
  const playbooks = usePlaybookNames();
  const people = usePeople(may);
  const rows = page.data?.data;
  // A change that empties a later page (its last task done) goes back to the page before.
  useEffect(() => {
    if (rows && rows.length === 0 && cursors.length > 1) setCursors(cursors.slice(0, -1));
  }, [rows]);

  // From a change until the list has been read again, it is busy: in the same commit as the notice.
  const [refreshing, setRefreshing] = useState(false);
  useEffect(() => setRefreshing(false), [page.data]);
  // Another page asked for, not read yet (the render before the load starts shows the old rows).
  const stale = page.data !== undefined && page.data.for !== `${key} ${cursor ?? ''}`;
  const changed = (said: string) => {
    setNotice(said);
    setRefreshing(true);
    tasksChanged();
    page.reload();
  };
  return (
    <div class="task-list">
      <LiveNotice notice={notice} />
      <ErrorMessage error={page.error} />
      {page.loading && !rows && <Loading what="the tasks" />}
      {rows && rows.length === 0 && cursors.length === 1 && <p data-testid="no-tasks">{props.empty}</p>}
      {rows && rows.length > 0 && (
        <ul class="tasks" aria-label={props.label} aria-busy={page.loading || refreshing || stale}>
          {rows.map((t) => (
            <TaskItem
              key={t.id}
              task={t}
              now={page.data?.now ?? Date.now()}
              mode={props.mode}
              showCustomer={props.showCustomer}
              playbook={
                // Named once the playbooks are read; one deleted since is said so (its tasks stay).
                t.playbook_id === null || playbooks === undefined
                  ? undefined
                  : (playbooks.get(t.playbook_id) ?? 'a deleted playbook')
              }
              may={may}
              people={people}
              onChanged={changed}
            />
          ))}
        </ul>
      )}
      <Pager
        label={`Pages of ${props.label.toLowerCase()}`}
        page={cursors.length}
        hasNext={page.data?.next_cursor != null}
        busy={page.loading}
        onPrevious={() => setCursors(cursors.slice(0, -1))}
        onNext={() => page.data?.next_cursor && setCursors([...cursors, page.data.next_cursor])}
      />
    </div>
  );
}

function TaskItem(props: {
  task: Task;
  now: number;
  mode: TaskMode;
  showCustomer: boolean;
  playbook: string | undefined;
  may: boolean;
  people: string[] | null | undefined;
  onChanged: (said: string) => void;
}) {
  const { task, now, mode } = props;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [reassigning, setReassigning] = useState(false);
  const due = dueWords(task.due_at, now);
  const snoozed = task.snoozed_until !== null && Date.parse(task.snoozed_until) > now;
  const title = `“${task.title}”`;

  const change = async (body: TaskUpdate, said: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await api.patch<Task>(taskPath(task.id), body);
      setReassigning(false);
      props.onChanged(said);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const snooze = (days: number) =>
    change(
      { snoozed_until: new Date(Date.now() + days * DAY).toISOString() },
      `Snoozed ${title} for ${daysWords(days)}.`,
    );

  return (
    <li class="task" data-testid="task" data-task={task.id}>
      <div class="task-main">
        <p class="task-title">
          <span class="break">{task.title}</span>
          {props.playbook && (
            <span class="tag playbook" title="Opened by this playbook">
              {props.playbook}
            </span>
          )}
        </p>
        <p class="task-meta">
          {props.showCustomer && (
            <>
              <CustomerLink id={task.customer_id} />
              <span aria-hidden="true"> · </span>
            </>
          )}
          {mode === 'done' && task.done_at ? (
            <span>Done {date(task.done_at)}</span>
          ) : (
            <span class={due.overdue ? 'overdue' : undefined} data-testid="due">
              {due.text}
            </span>
          )}
          <span aria-hidden="true"> · </span>
          <span class="break">{assigneeWords(task.assignee)}</span>
          {snoozed && task.snoozed_until && mode !== 'done' && (
            <>
              <span aria-hidden="true"> · </span>
              <span>Snoozed until {when(task.snoozed_until)}</span>
            </>
          )}
        </p>
        {task.body && <p class="task-body">{task.body}</p>}
      </div>
      {props.may && (
        <div class="task-actions">
          {mode === 'done' ? (
            <button
              type="button"
              class="small secondary"
              disabled={busy}
              onClick={() => change({ status: 'open' }, `Reopened ${title}.`)}
            >
              Reopen<span class="sr-only"> {title}</span>
            </button>
          ) : (
            <>
              <button
                type="button"
                class="small"
                disabled={busy}
                onClick={() => change({ status: 'done' }, `Done: ${title}.`)}
              >
                Done<span class="sr-only"> {title}</span>
              </button>
              {snoozed ? (
                <button
                  type="button"
                  class="small secondary"
                  disabled={busy}
                  onClick={() => change({ snoozed_until: null }, `${title} is back in the inbox.`)}
                >
                  Back now<span class="sr-only"> {title}</span>
                </button>
              ) : (
                // biome-ignore lint/a11y/useSemanticElements: a group of buttons, not a form's fieldset
                <span class="snooze" role="group" aria-label={`Snooze ${title}`}>
                  <span class="snooze-label" aria-hidden="true">
                    Snooze
                  </span>
                  {SNOOZE_DAYS.map((d) => (
                    <button
                      key={d}
                      type="button"
                      class="small secondary"
                      disabled={busy}
                      onClick={() => snooze(d)}
                    >
                      <span class="sr-only">Snooze </span>
                      {daysWords(d)}
                    </button>
                  ))}
                </span>
              )}
              <button
                type="button"
                class="small secondary"
                disabled={busy}
                aria-expanded={reassigning}
                onClick={() => {
                  setReassigning(!reassigning);
                  setError(undefined);
                }}
              >
                Reassign<span class="sr-only"> {title}</span>
              </button>
            </>
          )}
        </div>
      )}
      {reassigning && (
        <ReassignForm
          task={task}
          people={props.people}
          busy={busy}
          refused={error}
          onReassign={(assignee) => change({ assignee }, `Reassigned ${title} to ${assignee ?? 'nobody'}.`)}
          onCancel={() => {
            setReassigning(false);
            setError(undefined);
          }}
        />
      )}
      {!(reassigning && error instanceof ApiError && error.param === 'assignee') && (
        <ErrorMessage error={error} title="Not changed:" />
      )}
    </li>
  );
}

/**
 * Whom to give the task: a person of the account (the people API's list, for admins and keys) or
 * nobody; for an editor, whom the API does not list people to, an email (empty: nobody).
 */
function ReassignForm(props: {
  task: Task;
  people: string[] | null | undefined;
  busy: boolean;
  refused: unknown;
  onReassign: (assignee: string | null) => void;
  onCancel: () => void;
}) {
  const { task, people } = props;
  const id = `reassign-${task.id}`;
  const listed = people ?? [];
  const [to, setTo] = useState(() => {
    const current = task.assignee?.toLowerCase();
    if (people) return listed.find((p) => p.toLowerCase() !== current) ?? '';
    return '';
  });
  const error =
    props.refused instanceof ApiError && props.refused.param === 'assignee'
      ? props.refused.message
      : undefined;
  const submit = (e: Event) => {
    e.preventDefault();
    props.onReassign(to.trim() === '' ? null : to.trim());
  };
  return (
    <form class="reassign" onSubmit={submit} noValidate>
      <Field id={id} label="Assign to" error={error}>
        {people ? (
          <select
            id={id}
            value={to}
            onChange={(e) => setTo(e.currentTarget.value)}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? `${id}-error` : undefined}
          >
            {listed.map((p) => (
              <option key={p} value={p}>
                {p}
                {p.toLowerCase() === task.assignee?.toLowerCase() ? ' (now)' : ''}
              </option>
            ))}
            <option value="">Nobody</option>
          </select>
        ) : (
          <input
            id={id}
            type="email"
            value={to}
            placeholder="name@example.com"
            onInput={(e) => setTo(e.currentTarget.value)}
            aria-invalid={error ? true : undefined}
            aria-describedby={`${id}-hint${error ? ` ${id}-error` : ''}`}
          />
        )}
        {!people && (
          <p class="hint note" id={`${id}-hint`}>
            A teammate's email; leave it empty for nobody.
          </p>
        )}
      </Field>
      <div class="reassign-buttons">
        <button type="submit" class="small" disabled={props.busy}>
          {props.busy ? 'Assigning…' : 'Assign'}
        </button>
        <button type="button" class="small secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
