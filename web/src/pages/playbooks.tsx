// Playbooks on the settings page (docs/dashboard.md, "Playbooks"; docs/playbooks.md): each one's
// trigger and the task it opens, in words. Admins and write keys create, edit, switch on or off and
// delete them; everyone else reads the list. The form checks nothing the server checks: a refusal is
// shown next to the field its `param` names (`trigger.days`, `task.title`), in the API's words, and
// focus moves there.
import type { Ref } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  ApiError,
  api,
  type MetricName,
  type Playbook,
  type PlaybookCreate,
  type PlaybookTrigger,
  playbookPath,
  STATUSES,
  type Status,
} from '../api.ts';
import { STATUS_LABEL } from '../format.ts';
import { AGGREGATE_LABEL, AGGREGATES, type Aggregate, aggregateWords, plain } from '../rules.ts';
import { ErrorMessage, Field, LiveNotice, Loading, useLoad, useMayAdminister } from '../ui.tsx';

type TriggerType = PlaybookTrigger['type'];

const TRIGGER_LABEL: Record<TriggerType, string> = {
  status_entered: 'A customer enters a band',
  score_dropped: "A customer's score drops (a drop alert)",
  renewal_approaching: 'A renewal comes within reach',
  metric_threshold: 'A metric crosses a value',
};
const TRIGGER_TYPES = Object.keys(TRIGGER_LABEL) as TriggerType[];

const days = (n: number) => `${n} ${n === 1 ? 'day' : 'days'}`;
const bands = (list: readonly Status[]) => list.map((s) => STATUS_LABEL[s].toLowerCase()).join(' or ');

/**
 * "When a customer enters critical", "When a renewal is 90 days away or less, while at risk or
 * critical", "When payment_failed (count of points over 7 days) is at least 1".
 */
export function triggerWords(t: Playbook['trigger']): string {
  switch (t.type) {
    case 'status_entered':
      return `When a customer enters ${t.status ? STATUS_LABEL[t.status].toLowerCase() : 'a band'}`;
    case 'score_dropped':
      return "When a customer's score drops (a drop alert fires)";
    case 'renewal_approaching':
      return `When a renewal is ${days(t.days ?? 0)} away or less${t.statuses ? `, while ${bands(t.statuses)}` : ''}`;
    case 'metric_threshold':
      return `When ${t.metric} (${aggregateWords({ aggregate: t.aggregate ?? 'last', window_days: t.window_days ?? null })}) is ${t.op === 'lte' ? 'at most' : 'at least'} ${plain(t.value ?? 0)}`;
  }
}

const assigneeWords = (a: string | null) =>
  a === 'owner' ? "the customer's owner" : a === null ? 'nobody' : a;

/** The task a playbook opens, in words: "“Call” due in 2 days, for the customer's owner". */
const taskWords = (p: Playbook) =>
  `“${p.task.title}”${p.task.due_in_days === null ? '' : `, due in ${days(p.task.due_in_days)}`}, for ${assigneeWords(p.assignee)}`;

export function PlaybooksCard() {
  const may = useMayAdminister();
  const loaded = useLoad(async (signal) => {
    const [list, names] = await Promise.all([
      api.get<{ data: Playbook[] }>('/api/playbooks', signal),
      api
        .get<{ data: MetricName[] }>('/api/metrics/names', signal)
        .then((r) => r.data.map((n) => n.name))
        .catch(() => [] as string[]),
    ]);
    return { list: list.data, names };
  }, []);
  const [editing, setEditing] = useState<Playbook | null>(null);
  const [round, setRound] = useState(0);
  const [notice, setNotice] = useState<string>();
  const [listError, setListError] = useState<unknown>();
  const [busy, setBusy] = useState<string>();
  // A switch as flipped while the server is asked (playbook id → enabled), so it does not flick back.
  const [flipping, setFlipping] = useState<{ id: string; enabled: boolean }>();
  const section = useRef<HTMLElement>(null);
  const formHeading = useRef<HTMLHeadingElement>(null);

  // Opened as /settings#playbooks (the inbox links here): the card, once it is there.
  const arrived = useRef(false);
  useEffect(() => {
    if (!loaded.data || arrived.current) return;
    arrived.current = true;
    if (location.hash === '#playbooks') section.current?.scrollIntoView({ block: 'start' });
  }, [loaded.data]);

  if (loaded.error) return <ErrorMessage error={loaded.error} />;
  if (!loaded.data) return <Loading what="the playbooks" />;
  const { list, names } = loaded.data;

  const put = (p: Playbook) =>
    loaded.set({
      list: list.some((x) => x.id === p.id) ? list.map((x) => (x.id === p.id ? p : x)) : [...list, p],
      names,
    });
  const toggle = async (p: Playbook, enabled: boolean) => {
    setFlipping({ id: p.id, enabled });
    setBusy(p.id);
    setListError(undefined);
    try {
      put(await api.patch<Playbook>(playbookPath(p.id), { enabled }));
      setNotice(`${p.name} is ${enabled ? 'on' : 'off'}.`);
    } catch (err) {
      setListError(err);
    } finally {
      setBusy(undefined);
      setFlipping(undefined);
    }
  };
  const remove = async (p: Playbook) => {
    if (!confirm(`Delete the playbook ${p.name}? The tasks it opened stay.`)) return;
    setBusy(p.id);
    setListError(undefined);
    try {
      await api.delete(playbookPath(p.id));
      loaded.set({ list: list.filter((x) => x.id !== p.id), names });
      if (editing?.id === p.id) setEditing(null);
      setNotice(`${p.name} is deleted; the tasks it opened stay.`);
    } catch (err) {
      setListError(err);
    } finally {
      setBusy(undefined);
    }
  };
  const edit = (p: Playbook) => {
    setEditing(p);
    setNotice(undefined);
    formHeading.current?.scrollIntoView({ block: 'start' });
    formHeading.current?.focus();
  };

  return (
    <section aria-labelledby="playbooks-title" class="card" id="playbooks" ref={section}>
      <h2 id="playbooks-title">Playbooks</h2>
      <p class="hint">
        A playbook opens a task when its trigger fires: in the inbox of the customer's owner (or of whom it
        names), at most one open task per playbook and customer. Churned customers, settings changes and
        backfills open none.
      </p>
      <LiveNotice notice={notice} />
      <ErrorMessage error={listError} title="Not changed:" />
      {list.length === 0 ? (
        <p data-testid="no-playbooks">No playbooks yet{may ? ': create the first below.' : '.'}</p>
      ) : (
        <ul class="playbook-list">
          {list.map((p) => (
            <li key={p.id} data-testid="playbook">
              <div class="source-head">
                <strong class="break">{p.name}</strong>
                {may ? (
                  <label class="check switch">
                    <input
                      type="checkbox"
                      checked={flipping?.id === p.id ? flipping.enabled : p.enabled}
                      disabled={busy === p.id}
                      onChange={(e) => toggle(p, e.currentTarget.checked)}
                    />
                    Enabled<span class="sr-only">: {p.name}</span>
                  </label>
                ) : (
                  <span class={`badge ${p.enabled ? 'healthy' : 'off'}`}>
                    {p.enabled ? 'Enabled' : 'Disabled'}
                  </span>
                )}
              </div>
              <p class="sub">
                {triggerWords(p.trigger)}: opens {taskWords(p)}.
              </p>
              {may && (
                <div class="row-actions">
                  <button
                    type="button"
                    class="secondary small"
                    onClick={() => edit(p)}
                    disabled={busy === p.id}
                    aria-label={`Edit the playbook ${p.name}`}
                  >
                    Edit
                  </button>
                  <button
                    type="button"
                    class="danger small"
                    onClick={() => remove(p)}
                    disabled={busy === p.id}
                    aria-label={`Delete the playbook ${p.name}`}
                  >
                    Delete
                  </button>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      {may === false && <p class="hint">Changing playbooks takes an admin.</p>}
      {may && (
        <PlaybookForm
          key={`${editing?.id ?? 'new'}-${round}`}
          editing={editing}
          names={names}
          heading={formHeading}
          onSaved={(p, created) => {
            put(p);
            setEditing(null);
            setRound((r) => r + 1);
            setNotice(created ? `${p.name} is created.` : `${p.name} is saved.`);
          }}
          onCancel={() => setEditing(null)}
        />
      )}
    </section>
  );
}

/** The form as typed: numbers as text (the server says what a number may be). */
interface Draft {
  name: string;
  enabled: boolean;
  type: TriggerType;
  status: Status;
  days: string;
  statuses: Status[];
  metric: string;
  aggregate: Aggregate;
  windowDays: string;
  op: 'gte' | 'lte';
  value: string;
  title: string;
  body: string;
  dueInDays: string;
  assignee: 'owner' | 'email' | 'nobody';
  email: string;
}

const blank = (): Draft => ({
  name: '',
  enabled: true,
  type: 'status_entered',
  status: 'critical',
  days: '90',
  statuses: [],
  metric: '',
  aggregate: 'count',
  windowDays: '7',
  op: 'gte',
  value: '',
  title: '',
  body: '',
  dueInDays: '',
  assignee: 'owner',
  email: '',
});

const text = (n: number | undefined | null) => (n === undefined || n === null ? '' : String(n));

function draftOf(p: Playbook): Draft {
  const t = p.trigger;
  const d = blank();
  return {
    ...d,
    name: p.name,
    enabled: p.enabled,
    type: t.type,
    status: t.status ?? d.status,
    days: t.type === 'renewal_approaching' ? text(t.days) : d.days,
    statuses: t.statuses ?? [],
    metric: t.metric ?? '',
    aggregate: (t.aggregate as Aggregate | undefined) ?? d.aggregate,
    windowDays: t.type === 'metric_threshold' ? text(t.window_days) : d.windowDays,
    op: t.op === 'lte' ? 'lte' : 'gte',
    value: text(t.value),
    title: p.task.title,
    body: p.task.body,
    dueInDays: text(p.task.due_in_days),
    assignee: p.assignee === 'owner' ? 'owner' : p.assignee === null ? 'nobody' : 'email',
    email: p.assignee !== 'owner' && p.assignee !== null ? p.assignee : '',
  };
}

/** A number as typed, or nothing (the server then says it is missing or not a number). */
const numberOf = (s: string): number | undefined => (s.trim() === '' ? undefined : Number(s));

function triggerOf(d: Draft): PlaybookTrigger {
  switch (d.type) {
    case 'status_entered':
      return { type: d.type, status: d.status };
    case 'score_dropped':
      return { type: d.type };
    case 'renewal_approaching':
      return {
        type: d.type,
        days: numberOf(d.days) as number,
        ...(d.statuses.length > 0 ? { statuses: STATUSES.filter((s) => d.statuses.includes(s)) } : {}),
      };
    case 'metric_threshold':
      return {
        type: d.type,
        metric: d.metric.trim(),
        aggregate: d.aggregate,
        window_days: numberOf(d.windowDays) as number,
        op: d.op,
        value: numberOf(d.value) as number,
      };
  }
}

function bodyOf(d: Draft): PlaybookCreate {
  return {
    name: d.name,
    enabled: d.enabled,
    trigger: triggerOf(d),
    task: {
      title: d.title,
      body: d.body,
      due_in_days: d.dueInDays.trim() === '' ? null : Number(d.dueInDays),
    },
    assignee: d.assignee === 'owner' ? 'owner' : d.assignee === 'nobody' ? null : d.email.trim(),
  };
}

/** The form's fields by the `param` the API names them with; a param under one (`trigger.statuses.0`) is its. */
const FIELD: Record<string, string> = {
  name: 'pb-name',
  enabled: 'pb-enabled',
  trigger: 'pb-type',
  'trigger.type': 'pb-type',
  'trigger.status': 'pb-status',
  'trigger.days': 'pb-days',
  'trigger.statuses': 'pb-statuses-critical',
  'trigger.metric': 'pb-metric',
  'trigger.aggregate': 'pb-aggregate',
  'trigger.window_days': 'pb-window',
  'trigger.op': 'pb-op',
  'trigger.value': 'pb-value',
  task: 'pb-title',
  'task.title': 'pb-title',
  'task.body': 'pb-body',
  'task.due_in_days': 'pb-due',
  assignee: 'pb-email',
};

function fieldParam(param: string | undefined): string | undefined {
  if (param === undefined) return undefined;
  if (param in FIELD) return param;
  return Object.keys(FIELD)
    .filter((k) => param.startsWith(`${k}.`))
    .sort((a, b) => b.length - a.length)[0];
}

function PlaybookForm(props: {
  editing: Playbook | null;
  names: string[];
  heading: Ref<HTMLHeadingElement>;
  onSaved: (p: Playbook, created: boolean) => void;
  onCancel: () => void;
}) {
  const { editing } = props;
  const [draft, setDraft] = useState<Draft>(() => (editing ? draftOf(editing) : blank()));
  const [refused, setRefused] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const at = refused instanceof ApiError ? fieldParam(refused.param) : undefined;
  // `assignee` is the email field's, or the owner choice's when no email is being typed.
  const idOf = (param: string) =>
    param === 'assignee' && draft.assignee !== 'email' ? 'pb-assignee-owner' : FIELD[param];
  const errorOf = (param: string) => (at === param ? (refused as ApiError).message : undefined);
  const described = (param: string, hint?: string) => {
    const error = errorOf(param);
    return {
      'aria-invalid': error ? true : undefined,
      'aria-describedby':
        [hint, error ? `${FIELD[param]}-error` : undefined].filter(Boolean).join(' ') || undefined,
    };
  };
  // In the same commit as the message (a layout effect), as useFocusRefused does.
  useLayoutEffect(() => {
    const id = at === undefined ? undefined : idOf(at);
    if (id) document.getElementById(id)?.focus();
  }, [refused]);

  const change = (patch: Partial<Draft>) => {
    setDraft({ ...draft, ...patch });
    setRefused(undefined);
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefused(undefined);
    try {
      const body = bodyOf(draft);
      const saved = editing
        ? await api.patch<Playbook>(playbookPath(editing.id), body)
        : await api.post<Playbook>('/api/playbooks', body);
      props.onSaved(saved, !editing);
    } catch (err) {
      setRefused(err);
    } finally {
      setBusy(false);
    }
  };

  const t = draft.type;
  return (
    <form onSubmit={submit} noValidate class="form playbook-form" aria-labelledby="playbook-form-title">
      <h3 id="playbook-form-title" tabIndex={-1} ref={props.heading}>
        {editing ? `Edit ${editing.name}` : 'New playbook'}
      </h3>
      <Field id="pb-name" label="Name" error={errorOf('name')}>
        <input
          id="pb-name"
          value={draft.name}
          maxLength={100}
          placeholder="Critical: call within 2 days"
          onInput={(e) => change({ name: e.currentTarget.value })}
          {...described('name')}
        />
      </Field>
      <fieldset class="field">
        <legend>When</legend>
        <div class="rule-fields">
          <Field id="pb-type" label="Trigger" error={errorOf('trigger.type') ?? errorOf('trigger')}>
            <select
              id="pb-type"
              value={t}
              onChange={(e) => change({ type: e.currentTarget.value as TriggerType })}
              {...described(at === 'trigger' ? 'trigger' : 'trigger.type')}
            >
              {TRIGGER_TYPES.map((type) => (
                <option key={type} value={type}>
                  {TRIGGER_LABEL[type]}
                </option>
              ))}
            </select>
          </Field>
          {t === 'status_entered' && (
            <Field id="pb-status" label="Band" error={errorOf('trigger.status')}>
              <select
                id="pb-status"
                value={draft.status}
                onChange={(e) => change({ status: e.currentTarget.value as Status })}
                {...described('trigger.status')}
              >
                {STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {STATUS_LABEL[s]}
                  </option>
                ))}
              </select>
            </Field>
          )}
          {t === 'renewal_approaching' && (
            <Field id="pb-days" label="Days before the renewal" error={errorOf('trigger.days')}>
              <input
                id="pb-days"
                type="number"
                inputMode="numeric"
                min={1}
                max={365}
                step={1}
                value={draft.days}
                onInput={(e) => change({ days: e.currentTarget.value })}
                {...described('trigger.days')}
              />
            </Field>
          )}
          {t === 'metric_threshold' && (
            <>
              <Field id="pb-metric" label="Metric" error={errorOf('trigger.metric')}>
                <input
                  id="pb-metric"
                  class="mono"
                  value={draft.metric}
                  maxLength={64}
                  placeholder="stripe_payment_failed"
                  spellcheck={false}
                  autoComplete="off"
                  list="pb-metric-names"
                  onInput={(e) => change({ metric: e.currentTarget.value })}
                  {...described('trigger.metric')}
                />
                <datalist id="pb-metric-names">
                  {props.names.map((n) => (
                    <option key={n} value={n} />
                  ))}
                </datalist>
              </Field>
              <Field id="pb-aggregate" label="Aggregate" error={errorOf('trigger.aggregate')}>
                <select
                  id="pb-aggregate"
                  value={draft.aggregate}
                  onChange={(e) => change({ aggregate: e.currentTarget.value as Aggregate })}
                  {...described('trigger.aggregate')}
                >
                  {AGGREGATES.map((a) => (
                    <option key={a} value={a}>
                      {AGGREGATE_LABEL[a]}
                    </option>
                  ))}
                </select>
              </Field>
              <Field id="pb-window" label="Over the last (days)" error={errorOf('trigger.window_days')}>
                <input
                  id="pb-window"
                  type="number"
                  inputMode="numeric"
                  min={1}
                  max={365}
                  step={1}
                  value={draft.windowDays}
                  onInput={(e) => change({ windowDays: e.currentTarget.value })}
                  {...described('trigger.window_days')}
                />
              </Field>
              <Field id="pb-op" label="Is" error={errorOf('trigger.op')}>
                <select
                  id="pb-op"
                  value={draft.op}
                  onChange={(e) => change({ op: e.currentTarget.value as 'gte' | 'lte' })}
                  {...described('trigger.op')}
                >
                  <option value="gte">at least</option>
                  <option value="lte">at most</option>
                </select>
              </Field>
              <Field id="pb-value" label="Value" error={errorOf('trigger.value')}>
                <input
                  id="pb-value"
                  type="number"
                  inputMode="decimal"
                  step="any"
                  value={draft.value}
                  onInput={(e) => change({ value: e.currentTarget.value })}
                  {...described('trigger.value')}
                />
              </Field>
            </>
          )}
        </div>
        {t === 'score_dropped' && (
          <p class="hint">
            A drop alert fires when a score falls by the drop rule's size within its window (Drop alerts,
            above).
          </p>
        )}
        {t === 'renewal_approaching' && (
          <fieldset
            class="bands"
            aria-describedby={errorOf('trigger.statuses') ? 'pb-statuses-error' : 'pb-statuses-hint'}
          >
            <legend>While the customer is</legend>
            {STATUSES.map((s) => (
              <label class="check" key={s}>
                <input
                  id={`pb-statuses-${s}`}
                  type="checkbox"
                  checked={draft.statuses.includes(s)}
                  onChange={(e) =>
                    change({
                      statuses: e.currentTarget.checked
                        ? [...draft.statuses, s]
                        : draft.statuses.filter((x) => x !== s),
                    })
                  }
                />
                {STATUS_LABEL[s]}
              </label>
            ))}
            <p class="hint note" id="pb-statuses-hint">
              None ticked: whatever its band.
            </p>
            {errorOf('trigger.statuses') && (
              <p class="field-error" id="pb-statuses-error">
                {errorOf('trigger.statuses')}
              </p>
            )}
          </fieldset>
        )}
      </fieldset>
      <fieldset class="field">
        <legend>The task it opens</legend>
        <Field id="pb-title" label="Title" error={errorOf('task.title') ?? errorOf('task')}>
          <input
            id="pb-title"
            value={draft.title}
            maxLength={200}
            placeholder="Call: the account went critical"
            onInput={(e) => change({ title: e.currentTarget.value })}
            {...described(at === 'task' ? 'task' : 'task.title')}
          />
        </Field>
        <Field id="pb-body" label="Details (optional)" error={errorOf('task.body')}>
          <textarea
            id="pb-body"
            rows={2}
            maxLength={10_000}
            value={draft.body}
            onInput={(e) => change({ body: e.currentTarget.value })}
            {...described('task.body')}
          />
        </Field>
        <Field id="pb-due" label="Due in (days, optional)" error={errorOf('task.due_in_days')}>
          <input
            id="pb-due"
            type="number"
            inputMode="numeric"
            min={0}
            max={365}
            step={1}
            value={draft.dueInDays}
            onInput={(e) => change({ dueInDays: e.currentTarget.value })}
            {...described('task.due_in_days', 'pb-due-hint')}
          />
          <p class="hint note" id="pb-due-hint">
            From the moment it opens; empty for no due date.
          </p>
        </Field>
      </fieldset>
      <fieldset class="field assignee-choice">
        <legend>For</legend>
        <label class="check">
          <input
            id="pb-assignee-owner"
            type="radio"
            name="pb-assignee"
            checked={draft.assignee === 'owner'}
            onChange={() => change({ assignee: 'owner' })}
          />
          The customer's owner (nobody when it has none)
        </label>
        <label class="check">
          <input
            type="radio"
            name="pb-assignee"
            checked={draft.assignee === 'email'}
            onChange={() => change({ assignee: 'email' })}
          />
          A person
        </label>
        {draft.assignee === 'email' && (
          <Field id="pb-email" label="Their email" error={errorOf('assignee')}>
            <input
              id="pb-email"
              type="email"
              value={draft.email}
              placeholder="billing@example.com"
              onInput={(e) => change({ email: e.currentTarget.value })}
              {...described('assignee')}
            />
          </Field>
        )}
        <label class="check">
          <input
            type="radio"
            name="pb-assignee"
            checked={draft.assignee === 'nobody'}
            onChange={() => change({ assignee: 'nobody' })}
          />
          Nobody
        </label>
        {draft.assignee !== 'email' && errorOf('assignee') && (
          <p class="field-error" id="pb-email-error">
            {errorOf('assignee')}
          </p>
        )}
      </fieldset>
      <label class="check">
        <input
          id="pb-enabled"
          type="checkbox"
          checked={draft.enabled}
          onChange={(e) => change({ enabled: e.currentTarget.checked })}
        />
        Enabled
      </label>
      {refused && at === undefined && <ErrorMessage error={refused} title="Not saved:" />}
      {at !== undefined && (
        <div class="message error" role="alert">
          <strong>Not saved:</strong> the server refused the marked field; its message is next to it.
        </div>
      )}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? 'Saving…' : editing ? 'Save playbook' : 'Create playbook'}
        </button>
        {editing && (
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
