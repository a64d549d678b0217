// The drop alert rule on the settings page (docs/scoring.md, "Drop alerts"): off, or "alert when a
// score falls DELTA below its peak of the last DAYS days".
import { useEffect, useState } from 'preact/hooks';
import { type Alerts, api } from '../api.ts';
import { ErrorMessage, Loading, Notice, NumberField, useLoad } from '../ui.tsx';

export function AlertsForm() {
  const loaded = useLoad((signal) => api.get<Alerts>('/api/settings/health-score/alerts', signal), []);
  const [values, setValues] = useState<{ on: boolean; delta: string; days: string }>();
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState<string>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (loaded.data && !values) {
      const drop = loaded.data.drop;
      setValues({ on: drop !== null, delta: String(drop?.delta ?? 0.2), days: String(drop?.days ?? 7) });
    }
  }, [loaded.data, values]);

  if (loaded.error) return <ErrorMessage error={loaded.error} />;
  if (!loaded.data || !values) return <Loading what="the alert rule" />;

  const delta = Number(values.delta);
  const days = Number(values.days);
  const problem = !values.on
    ? undefined
    : !(values.delta.trim() !== '' && delta > 0 && delta <= 1)
      ? 'The drop must be more than 0 and at most 1.'
      : !(Number.isInteger(days) && days >= 1 && days <= 90)
        ? 'The window must be a whole number of days from 1 to 90.'
        : undefined;
  const change = (patch: Partial<typeof values>) => {
    setValues({ ...values, ...patch });
    setSaved(undefined);
    setError(undefined);
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    if (problem) return;
    setBusy(true);
    try {
      const answer = await api.patch<Alerts>('/api/settings/health-score/alerts', {
        drop: values.on ? { delta, days } : null,
      });
      loaded.set(answer);
      setSaved(answer.drop ? 'Drop alerts are on.' : 'Drop alerts are off.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="alerts-title" class="card">
      <h2 id="alerts-title">Drop alerts</h2>
      <p class="hint">
        When a customer’s score falls this far below the highest it had in the window, Vitals records{' '}
        <code>customer.health_score.dropped</code> (once per customer per window) and sends it to the webhooks
        that subscribe to it.
      </p>
      <form onSubmit={submit} noValidate class="form thresholds">
        <label class="check">
          <input
            type="checkbox"
            checked={values.on}
            onChange={(e) => change({ on: e.currentTarget.checked })}
          />
          Alert on drops
        </label>
        <NumberField
          id="alert-delta"
          label="A fall of at least"
          min={0}
          max={1}
          step={0.01}
          disabled={!values.on}
          value={values.delta}
          onValue={(delta) => change({ delta })}
          aria-invalid={problem ? true : undefined}
          aria-describedby="alerts-problem"
        />
        <NumberField
          id="alert-days"
          label="Within (days)"
          min={1}
          max={90}
          step={1}
          disabled={!values.on}
          value={values.days}
          onValue={(days) => change({ days })}
          aria-invalid={problem ? true : undefined}
          aria-describedby="alerts-problem"
        />
        <p id="alerts-problem" class={problem ? 'field-error' : 'sr-only'} aria-live="polite">
          {problem ?? 'The rule is valid.'}
        </p>
        <ErrorMessage error={error} title="Not saved:" />
        {saved && <Notice>{saved}</Notice>}
        <button type="submit" disabled={Boolean(problem) || busy}>
          {busy ? 'Saving…' : 'Save alert rule'}
        </button>
      </form>
    </section>
  );
}
