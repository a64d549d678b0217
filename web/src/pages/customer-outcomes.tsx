// Outcomes on the customer page (docs/scoring.md, "Does the score predict churn?"): what happened at
// each renewal, churned or retained, with its date and a note; the Calibration page judges the score
// by them. An editor records one (the form checks only that a kind is chosen; what an outcome may be
// is the server's to say, and each refusal is shown next to the field its `param` names) and deletes
// one recorded by mistake, after a confirmation.
import { useState } from 'preact/hooks';
import {
  ApiError,
  api,
  can,
  type Page as ListPage,
  OUTCOME_KINDS,
  type Outcome,
  type OutcomeInput,
  type OutcomeKind,
  outcomesPath,
  query,
} from '../api.ts';
import { count, date } from '../format.ts';
import { Link, paths } from '../router.tsx';
import { ErrorMessage, Field, Loading, Notice, useFocusRefused, useLoad } from '../ui.tsx';

/** The outcomes listed: a customer has a handful, one a renewal. */
const LIMIT = 100;
const MAX_NOTE = 500;

const KIND_LABEL: Record<OutcomeKind, string> = { retained: 'Retained', churned: 'Churned' };

/** The form's fields by the `param` the API names them with. */
const FIELD: Record<string, string> = {
  outcome: 'outcome-kind',
  at: 'outcome-at',
  note: 'outcome-note',
};

const ymd = (d: Date) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;

/**
 * The instant sent for a chosen day: none for today (the server's now), else that day at this
 * moment's time of day, as the override form does. A day that is not one is sent as typed, for the
 * server to refuse by its field.
 */
function atOf(day: string): string | undefined {
  if (day === ymd(new Date())) return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return day;
  const at = new Date();
  at.setFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return at.toISOString();
}

export function OutcomesCard({ customerId }: { customerId: string }) {
  const list = useLoad(
    (signal) => api.get<ListPage<Outcome>>(`${outcomesPath(customerId)}${query({ limit: LIMIT })}`, signal),
    [customerId],
  );
  const [notice, setNotice] = useState<string>();
  const [deleteError, setDeleteError] = useState<unknown>();
  const [deleting, setDeleting] = useState<string>();
  const editor = can('edit customers');

  const remove = async (o: Outcome) => {
    const what = `the ${o.outcome} outcome of ${date(o.at)}`;
    if (!confirm(`Delete ${what}? The calibration report stops counting it.`)) return;
    setDeleting(o.id);
    setDeleteError(undefined);
    setNotice(undefined);
    try {
      await api.delete(`${outcomesPath(customerId)}/${encodeURIComponent(o.id)}`);
      setNotice(`Deleted ${what}.`);
      list.reload();
    } catch (err) {
      setDeleteError(err);
    } finally {
      setDeleting(undefined);
    }
  };

  const outcomes = list.data?.data;
  return (
    <section aria-labelledby="outcomes-title" class="card">
      <h2 id="outcomes-title">Outcomes</h2>
      <p class="hint">
        What happened at each renewal. The <Link href={paths.calibration}>Calibration</Link> page judges the
        score by these.
      </p>
      {notice && <Notice>{notice}</Notice>}
      <ErrorMessage error={list.error} />
      <ErrorMessage error={deleteError} title="Not deleted:" />
      {list.loading && !list.data && <Loading what="the outcomes" />}
      {outcomes && outcomes.length === 0 && <p data-testid="no-outcomes">No outcomes recorded yet.</p>}
      {outcomes && outcomes.length > 0 && (
        <ul class="outcomes" aria-label="Recorded outcomes, newest first">
          {outcomes.map((o) => (
            <li key={o.id} data-testid="outcome">
              <span class={`badge outcome-kind ${o.outcome}`}>{KIND_LABEL[o.outcome]}</span>
              <span class="when">{date(o.at)}</span>
              {editor && (
                <button
                  type="button"
                  class="danger small outcome-delete"
                  onClick={() => remove(o)}
                  disabled={deleting !== undefined}
                  aria-label={`Delete the ${o.outcome} outcome of ${date(o.at)}`}
                >
                  Delete
                </button>
              )}
              {o.note && <p class="outcome-said">{o.note}</p>}
            </li>
          ))}
        </ul>
      )}
      {list.data?.has_more && <p class="hint">The latest {count(LIMIT)} outcomes.</p>}
      {editor && (
        <OutcomeForm
          customerId={customerId}
          onRecorded={(o) => {
            setNotice(`Recorded: ${o.outcome} on ${date(o.at)}.`);
            setDeleteError(undefined);
            list.reload();
          }}
        />
      )}
    </section>
  );
}

function OutcomeForm(props: { customerId: string; onRecorded: (o: Outcome) => void }) {
  const [kind, setKind] = useState<OutcomeKind | ''>('');
  const [day, setDay] = useState(() => ymd(new Date()));
  const [note, setNote] = useState('');
  const [missing, setMissing] = useState<string>();
  const [refused, setRefused] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const placed = refused instanceof ApiError && refused.param !== undefined && refused.param in FIELD;
  const errorOf = (param: string) =>
    (param === 'outcome' ? missing : undefined) ??
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
    if (kind === '') {
      setMissing('Choose retained or churned.');
      document.getElementById(FIELD.outcome as string)?.focus();
      return;
    }
    const body: OutcomeInput = { outcome: kind };
    const at = atOf(day);
    if (at !== undefined) body.at = at;
    if (note.trim() !== '') body.note = note;
    setBusy(true);
    setRefused(undefined);
    try {
      const recorded = await api.post<Outcome>(outcomesPath(props.customerId), body);
      setKind('');
      setNote('');
      setDay(ymd(new Date()));
      props.onRecorded(recorded);
    } catch (err) {
      setRefused(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate class="form outcome-form" aria-labelledby="outcome-form-title">
      <h3 id="outcome-form-title">Record an outcome</h3>
      <div class="outcome-fields">
        <Field id="outcome-kind" label="Outcome" error={errorOf('outcome')}>
          <select
            id="outcome-kind"
            value={kind}
            onChange={edit((v) => setKind(v as OutcomeKind | ''))}
            {...described('outcome')}
          >
            <option value="">Choose…</option>
            {OUTCOME_KINDS.map((k) => (
              <option key={k} value={k}>
                {k === 'retained' ? 'Retained: renewed' : 'Churned: left'}
              </option>
            ))}
          </select>
        </Field>
        <Field id="outcome-at" label="Date" error={errorOf('at')}>
          <input
            id="outcome-at"
            type="date"
            max={ymd(new Date())}
            value={day}
            onInput={edit(setDay)}
            {...described('at', 'outcome-at-hint')}
          />
          <p class="hint note" id="outcome-at-hint">
            The renewal date; today unless you change it.
          </p>
        </Field>
      </div>
      <Field id="outcome-note" label="Note (optional)" error={errorOf('note')}>
        <textarea
          id="outcome-note"
          rows={2}
          maxLength={MAX_NOTE}
          value={note}
          onInput={edit(setNote)}
          {...described('note', 'outcome-note-hint')}
        />
        <p class="hint note" id="outcome-note-hint">
          Why, in a line: “renewed for 2 years”, “moved to a competitor”. Up to {MAX_NOTE} characters.
        </p>
      </Field>
      {placed ? (
        <div class="message error" role="alert">
          <strong>Not recorded:</strong> the server refused the marked field; its message is next to it.
        </div>
      ) : (
        <ErrorMessage error={refused} title="Not recorded:" />
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Recording…' : 'Record outcome'}
      </button>
    </form>
  );
}
