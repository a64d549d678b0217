// The settings page: the factor weights (weights-form.tsx), the factor rules (factor-rules.tsx),
// the status thresholds, the drop alerts (alerts-form.tsx), the backfill of past scores
// (backfill-card.tsx), which reads the rules and weights above, and the playbooks (playbooks.tsx).
import { useEffect, useState } from 'preact/hooks';
import { thresholdsValid } from '../../../src/domain/scoring.ts';
import { api, type Thresholds } from '../api.ts';
import { ErrorMessage, Loading, Notice, NumberField, Page, useLoad } from '../ui.tsx';
import { AlertsForm } from './alerts-form.tsx';
import { BackfillCard } from './backfill-card.tsx';
import { FactorRules } from './factor-rules.tsx';
import { PlaybooksCard } from './playbooks.tsx';
import { WeightsForm } from './weights-form.tsx';

export function SettingsPage() {
  return (
    <Page title="Weights, thresholds, alerts & playbooks">
      <WeightsForm />
      <FactorRules />
      <ThresholdsForm />
      <AlertsForm />
      <BackfillCard />
      <PlaybooksCard />
    </Page>
  );
}

function ThresholdsForm() {
  const loaded = useLoad(
    (signal) => api.get<Thresholds>('/api/settings/health-score/thresholds', signal),
    [],
  );
  const [values, setValues] = useState<{ healthy: string; at_risk: string }>();
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (loaded.data && !values) {
      setValues({ healthy: String(loaded.data.healthy), at_risk: String(loaded.data.at_risk) });
    }
  }, [loaded.data, values]);

  if (loaded.error) return <ErrorMessage error={loaded.error} />;
  if (!loaded.data || !values) return <Loading what="the thresholds" />;

  const healthy = Number(values.healthy);
  const atRisk = Number(values.at_risk);
  const numbers = values.healthy.trim() !== '' && values.at_risk.trim() !== '';
  const problem = !numbers
    ? 'Enter both thresholds.'
    : !thresholdsValid({ healthy, at_risk: atRisk })
      ? 'They need 0 < at risk < healthy ≤ 1.'
      : undefined;
  const changed = healthy !== loaded.data.healthy || atRisk !== loaded.data.at_risk;

  const set = (field: 'healthy' | 'at_risk') => (value: string) => {
    setValues({ ...values, [field]: value });
    setSaved(false);
    setError(undefined);
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    if (problem) return;
    setBusy(true);
    try {
      loaded.set(
        await api.patch<Thresholds>('/api/settings/health-score/thresholds', { healthy, at_risk: atRisk }),
      );
      setSaved(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="thresholds-title" class="card">
      <h2 id="thresholds-title">Status thresholds</h2>
      <p class="hint">
        A score at or above <em>healthy</em> is healthy; at or above <em>at risk</em> (and below healthy) it
        is at risk; below that, critical. Saving re-bands every customer.
      </p>
      <form onSubmit={submit} noValidate class="form thresholds">
        <NumberField
          id="threshold-healthy"
          label="Healthy from"
          min={0}
          max={1}
          step={0.01}
          value={values.healthy}
          onValue={set('healthy')}
          aria-invalid={problem ? true : undefined}
          aria-describedby="thresholds-problem"
        />
        <NumberField
          id="threshold-at-risk"
          label="At risk from"
          min={0}
          max={1}
          step={0.01}
          value={values.at_risk}
          onValue={set('at_risk')}
          aria-invalid={problem ? true : undefined}
          aria-describedby="thresholds-problem"
        />
        <p id="thresholds-problem" class={problem ? 'field-error' : 'sr-only'} aria-live="polite">
          {problem ?? 'The thresholds are valid.'}
        </p>
        <ErrorMessage error={error} title="Not saved:" />
        {saved && <Notice>Thresholds saved. Every customer has been re-banded.</Notice>}
        <button type="submit" disabled={Boolean(problem) || !changed || busy}>
          {busy ? 'Saving…' : 'Save thresholds'}
        </button>
      </form>
    </section>
  );
}
