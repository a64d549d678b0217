// Tasks on the customer page (docs/dashboard.md, "Customer"): the customer's open tasks, snoozed ones
// included and marked, with the inbox's actions (tasks.tsx), and a form to open one: a title, a due
// day and whom it is for. The form checks only that there is a title; what a task may be is the
// server's to say, and each refusal is shown by the field its `param` names.
import { useState } from 'preact/hooks';
import { ApiError, api, customerPath, session, type Task, type TaskCreate } from '../api.ts';
import { ErrorMessage, Field, Notice, useFocusRefused, useMayEdit } from '../ui.tsx';
import { TaskList, tasksChanged, usePeople } from './tasks.tsx';

const TITLE_MAX = 200;

/** The form's fields by the `param` the API names them with. */
const FIELD: Record<string, string> = {
  title: 'new-task-title',
  due_at: 'new-task-due',
  assignee: 'new-task-assignee',
};

/** The end of a chosen day where the browser is: a task due "Nov 5" is overdue once Nov 5 is over. */
function dueOf(day: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return day === '' ? null : day;
  return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 23, 59, 59, 999).toISOString();
}

export function TasksCard({ customerId }: { customerId: string }) {
  const may = useMayEdit();
  const [round, setRound] = useState(0);
  const [opened, setOpened] = useState<string>();
  return (
    <section aria-labelledby="tasks-title" class="card" data-testid="customer-tasks">
      <h2 id="tasks-title">Tasks</h2>
      {opened && <Notice>{opened}</Notice>}
      <TaskList
        params={{ customer_id: customerId, include_snoozed: 'true' }}
        mode="open"
        showCustomer={false}
        label="Open tasks of this customer"
        empty="No open task."
        round={round}
      />
      {may && (
        <NewTaskForm
          customerId={customerId}
          onOpened={(task) => {
            setOpened(`Opened “${task.title}”.`);
            setRound((r) => r + 1);
            tasksChanged();
          }}
        />
      )}
    </section>
  );
}

function NewTaskForm(props: { customerId: string; onOpened: (task: Task) => void }) {
  const people = usePeople(true);
  const [title, setTitle] = useState('');
  const [day, setDay] = useState('');
  const [assignee, setAssignee] = useState(() => session.user?.email ?? '');
  const [missing, setMissing] = useState<string>();
  const [refused, setRefused] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const placed = refused instanceof ApiError && refused.param !== undefined && refused.param in FIELD;
  const errorOf = (param: string) =>
    (param === 'title' ? missing : undefined) ??
    (placed && refused.param === param ? refused.message : undefined);
  const described = (param: string, hint?: string) => {
    const error = errorOf(param);
    return {
      'aria-invalid': error ? true : undefined,
      'aria-describedby':
        [hint, error ? `${FIELD[param]}-error` : undefined].filter(Boolean).join(' ') || undefined,
    };
  };
  useFocusRefused(refused, FIELD);

  const edit = (set: (v: string) => void) => (e: Event) => {
    set((e.currentTarget as HTMLInputElement).value);
    setRefused(undefined);
    setMissing(undefined);
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    if (title.trim() === '') {
      setMissing('Say what is to be done.');
      document.getElementById(FIELD.title as string)?.focus();
      return;
    }
    const body: TaskCreate = {
      title,
      due_at: dueOf(day),
      assignee: assignee.trim() === '' ? null : assignee.trim(),
    };
    setBusy(true);
    setRefused(undefined);
    try {
      const task = await api.post<Task>(`${customerPath(props.customerId)}/tasks`, body);
      setTitle('');
      setDay('');
      props.onOpened(task);
    } catch (err) {
      setRefused(err);
    } finally {
      setBusy(false);
    }
  };

  // The people the API lists (admins, keys), the signed-in person among them; an editor types an email.
  const choices =
    people === null ? null : [...new Set([...(session.user ? [session.user.email] : []), ...(people ?? [])])];
  return (
    <form onSubmit={submit} noValidate class="form task-form" aria-labelledby="new-task-title-heading">
      <h3 id="new-task-title-heading">New task</h3>
      <Field id={FIELD.title as string} label="Title" error={errorOf('title')}>
        <input
          id={FIELD.title}
          value={title}
          maxLength={TITLE_MAX}
          placeholder="Call about the renewal"
          onInput={edit(setTitle)}
          {...described('title')}
        />
      </Field>
      <div class="task-fields">
        <Field id={FIELD.due_at as string} label="Due (optional)" error={errorOf('due_at')}>
          <input id={FIELD.due_at} type="date" value={day} onInput={edit(setDay)} {...described('due_at')} />
        </Field>
        <Field id={FIELD.assignee as string} label="For" error={errorOf('assignee')}>
          {choices ? (
            <select
              id={FIELD.assignee}
              value={assignee}
              onChange={edit(setAssignee)}
              {...described('assignee')}
            >
              {choices.map((p) => (
                <option key={p} value={p}>
                  {p === session.user?.email ? `${p} (you)` : p}
                </option>
              ))}
              <option value="">Nobody</option>
            </select>
          ) : (
            <>
              <input
                id={FIELD.assignee}
                type="email"
                value={assignee}
                placeholder="name@example.com"
                onInput={edit(setAssignee)}
                {...described('assignee', 'new-task-assignee-hint')}
              />
              <p class="hint note" id="new-task-assignee-hint">
                An email; empty for nobody.
              </p>
            </>
          )}
        </Field>
      </div>
      {placed ? (
        <div class="message error" role="alert">
          <strong>Not opened:</strong> the server refused the marked field; its message is next to it.
        </div>
      ) : (
        <ErrorMessage error={refused} title="Not opened:" />
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Opening…' : 'Open task'}
      </button>
    </form>
  );
}
