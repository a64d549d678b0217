// Overrides on the customer page (docs/scoring.md, "Overrides"): an editor pins the score every
// read shows, with a reason and an end, or removes the pin. The form checks only that the score is
// a number; what an override may be is the server's to say, and each refusal is shown next to the
// field its `param` names.
import { useState } from 'preact/hooks';
import { ApiError, api, customerPath, type HealthScore, type Override, type OverrideInput } from '../api.ts';
import { date, score, time, when } from '../format.ts';
import { ErrorMessage, Field, NumberField, useFocusRefused } from '../ui.tsx';

/** How long an override stands unless told (src/writes/overrides.ts). */
const DEFAULT_DAYS = 30;

/** The form's fields by the `param` the API names them with. */
const FIELD: Record<string, string> = {
  health_score: 'override-score',
  reason: 'override-reason',
  expires_at: 'override-expires',
};

const ymd = (d: Date) =>
  `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
const daysAhead = (n: number) => {
  const d = new Date();
  d.setDate(d.getDate() + n);
  return ymd(d);
};

/** The chosen day at this moment's time of day, so the default day is 30 days from now to the minute. */
function endOf(day: string): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return undefined;
  const now = new Date();
  const at = new Date(now);
  at.setFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return at.toISOString();
}

type Changed = (score: HealthScore, message: string) => void;
/** Runs one change at a time: the form and the remove button wait while either runs. */
type Run = (work: () => Promise<void>) => Promise<void>;

export function OverrideForm(props: { customerId: string; current: HealthScore; onChanged: Changed }) {
  const pin = props.current.override;
  const path = `${customerPath(props.customerId)}/health-score/override`;
  const [busy, setBusy] = useState(false);
  const run: Run = async (work) => {
    setBusy(true);
    try {
      await work();
    } finally {
      setBusy(false);
    }
  };
  const parts = { path, busy, run, onChanged: props.onChanged };
  return (
    <>
      {pin ? (
        <CurrentPin pin={pin} {...parts} />
      ) : (
        <p class="hint">
          When you know something the signals do not (a champion left, a renewal is signed), pin the score
          every view and webhook shows. The computed score keeps moving underneath, and the pin ends on its
          own.
        </p>
      )}
      <PinForm pin={pin} {...parts} />
    </>
  );
}

interface Parts {
  path: string;
  busy: boolean;
  run: Run;
  onChanged: Changed;
}

/** The override that stands, and a button that removes it. */
function CurrentPin({ pin, path, busy, run, onChanged }: Parts & { pin: Override }) {
  const [removeError, setRemoveError] = useState<unknown>();
  const remove = async () => {
    if (
      !confirm(
        `Remove the override? The score goes back to what the factors compute, ${score(pin.computed_score)}.`,
      )
    )
      return;
    await run(async () => {
      setRemoveError(undefined);
      try {
        const updated = await api.delete<HealthScore>(path);
        onChanged(
          updated,
          `The override is removed: the score is the computed ${score(updated.health_score)} again.`,
        );
      } catch (err) {
        setRemoveError(err);
      }
    });
  };
  return (
    <>
      <p data-testid="override-now">
        Pinned at <strong>{score(pin.health_score)}</strong> by <span class="break">{pin.set_by}</span> on{' '}
        {date(pin.set_at)}, until {when(pin.expires_at)}; the factors compute {score(pin.computed_score)}.
      </p>
      <ErrorMessage error={removeError} title="Not removed:" />
      <div class="actions">
        <button type="button" class="danger" onClick={remove} disabled={busy}>
          Remove override
        </button>
      </div>
    </>
  );
}

/** A new override, or a change to the one that stands: the score, its end and the reason. */
function PinForm({ pin, path, busy, run, onChanged }: Parts & { pin: Override | null | undefined }) {
  const [value, setValue] = useState(pin ? String(pin.health_score) : '');
  const [reason, setReason] = useState(pin?.reason ?? '');
  const [expires, setExpires] = useState(pin ? ymd(new Date(pin.expires_at)) : daysAhead(DEFAULT_DAYS));
  const [missing, setMissing] = useState<string>();
  const [refused, setRefused] = useState<unknown>();

  const placed = refused instanceof ApiError && refused.param !== undefined && refused.param in FIELD;
  const errorOf = (param: string) =>
    (param === 'health_score' ? missing : undefined) ??
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

  const edited = (set: (v: string) => void) => (v: string) => {
    set(v);
    setRefused(undefined);
    setMissing(undefined);
  };
  const edit = (set: (v: string) => void) => (e: Event) =>
    edited(set)((e.currentTarget as HTMLInputElement).value);

  const submit = async (e: Event) => {
    e.preventDefault();
    const n = value.trim() === '' ? Number.NaN : Number(value);
    if (!Number.isFinite(n)) {
      setMissing('Enter a score from 0 to 1.');
      document.getElementById(FIELD.health_score as string)?.focus();
      return;
    }
    const body: OverrideInput = { health_score: n, reason };
    const end = endOf(expires);
    if (end) body.expires_at = end;
    await run(async () => {
      setRefused(undefined);
      try {
        const updated = await api.put<HealthScore>(path, body);
        onChanged(updated, `The score is pinned at ${score(updated.health_score)}.`);
      } catch (err) {
        setRefused(err);
      }
    });
  };

  return (
    <form onSubmit={submit} noValidate class="form override-form" aria-labelledby="override-form-title">
      <h3 id="override-form-title">{pin ? 'Change the override' : 'Pin the score'}</h3>
      <div class="override-fields">
        <NumberField
          id="override-score"
          label="Score (0–1)"
          error={errorOf('health_score')}
          min={0}
          max={1}
          step="any"
          value={value}
          onValue={edited(setValue)}
          {...described('health_score')}
        />
        <Field id="override-expires" label="Ends on" error={errorOf('expires_at')}>
          <input
            id="override-expires"
            type="date"
            value={expires}
            onInput={edit(setExpires)}
            {...described('expires_at', 'override-expires-hint')}
          />
          <p class="hint note" id="override-expires-hint">
            At {time(Date.now())} that day
            {pin ? '' : `, ${DEFAULT_DAYS} days from now unless you change it`}; at most a year ahead.
          </p>
        </Field>
      </div>
      <Field id="override-reason" label="Reason" error={errorOf('reason')}>
        <textarea
          id="override-reason"
          rows={3}
          maxLength={500}
          value={reason}
          onInput={edit(setReason)}
          {...described('reason', 'override-reason-hint')}
        />
        <p class="hint note" id="override-reason-hint">
          What your team knows that the signals do not; the history and the audit log keep it. Up to 500
          characters.
        </p>
      </Field>
      {placed ? (
        <div class="message error" role="alert">
          <strong>Not pinned:</strong> the server refused the marked field; its message is next to it.
        </div>
      ) : (
        <ErrorMessage error={refused} title="Not pinned:" />
      )}
      <button type="submit" disabled={busy}>
        {busy ? 'Saving…' : pin ? 'Change override' : 'Pin the score'}
      </button>
    </form>
  );
}
