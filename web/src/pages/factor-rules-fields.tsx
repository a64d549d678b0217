// The factor rule editor's fields (factor-rules-form.tsx): what the rule derives and reads, and
// its optional gate (docs/scoring.md, "Gates"). Each field shows its error and is described by it.
import { AGGREGATE_LABEL, AGGREGATES, type Aggregate } from '../rules.ts';
import { Field, NumberField } from '../ui.tsx';
import type { Draft, DraftFields } from './factor-rules-draft.ts';

/** The factor, the metric it reads (a name no customer has is called out), and how it reads it. */
export function RuleFields(
  props: DraftFields & {
    /** The factor of the rule being edited, or null when adding one. */
    editing: string | null;
    /** Adding a rule for a factor that has one already: saving replaces it. */
    replaces: boolean;
    /** The metric names the account has. */
    names: string[];
  },
) {
  const { draft, change, errorOf, described, editing, replaces, names } = props;
  const factor = draft.factor.trim();
  const metric = draft.metric.trim();
  const unknownMetric = metric !== '' && !names.includes(metric);
  return (
    <div class="rule-fields">
      <Field id="rule-factor" label="Factor" error={errorOf('factor')}>
        <input
          id="rule-factor"
          class="mono"
          value={draft.factor}
          placeholder="usage"
          maxLength={64}
          spellcheck={false}
          autoComplete="off"
          readOnly={editing !== null}
          onInput={(ev) => change({ factor: ev.currentTarget.value }, 'factor')}
          {...described('factor', 'rule-factor', replaces || editing ? 'rule-factor-hint' : undefined)}
        />
        {(replaces || editing) && (
          <p class="hint note" id="rule-factor-hint">
            {editing
              ? 'To derive another factor, cancel and add a rule.'
              : `${factor} has a rule already: saving replaces it.`}
          </p>
        )}
      </Field>
      <Field id="rule-metric" label="Metric" error={errorOf('metric')}>
        <input
          id="rule-metric"
          class="mono"
          value={draft.metric}
          placeholder="logins"
          maxLength={64}
          spellcheck={false}
          autoComplete="off"
          list="rule-metric-names"
          onInput={(ev) => change({ metric: ev.currentTarget.value }, 'metric')}
          {...described('metric', 'rule-metric', unknownMetric ? 'rule-metric-warning' : undefined)}
        />
        <datalist id="rule-metric-names">
          {names.map((n) => (
            <option key={n} value={n} />
          ))}
        </datalist>
        {unknownMetric && (
          <p class="hint note metric-warning" id="rule-metric-warning" data-testid="rule-metric-warning">
            No customer has a metric named <span class="mono">{metric}</span> yet: check the spelling;{' '}
            {names.length === 0 ? (
              'no metric has been recorded yet.'
            ) : (
              <>
                known metrics: <span class="mono">{names.join(', ')}</span>.
              </>
            )}
          </p>
        )}
      </Field>
      <Field id="rule-aggregate" label="Aggregate" error={errorOf('aggregate')}>
        <select
          id="rule-aggregate"
          value={draft.aggregate}
          onChange={(ev) => change({ aggregate: ev.currentTarget.value as Aggregate }, 'aggregate')}
          {...described('aggregate', 'rule-aggregate')}
        >
          {AGGREGATES.map((a) => (
            <option key={a} value={a}>
              {AGGREGATE_LABEL[a]}
            </option>
          ))}
        </select>
      </Field>
      <NumberField
        id="rule-window-days"
        label="Window (days)"
        error={errorOf('window_days')}
        min={1}
        max={365}
        step={1}
        value={draft.window}
        placeholder={draft.aggregate === 'last' ? 'none' : '30'}
        onValue={(window) => change({ window }, 'window_days')}
        {...described('window_days', 'rule-window-days', 'rule-window-days-hint')}
      >
        <p class="hint note" id="rule-window-days-hint">
          {draft.aggregate === 'last' ? 'Empty: the newest point, however old.' : 'Empty: the last 30 days.'}
        </p>
      </NumberField>
      <NumberField
        id="rule-max-age-days"
        label="Max age (days)"
        error={errorOf('max_age_days')}
        min={1}
        max={365}
        step={1}
        value={draft.maxAge}
        placeholder="none"
        onValue={(maxAge) => change({ maxAge }, 'max_age_days')}
        {...described('max_age_days', 'rule-max-age-days', 'rule-max-age-days-hint')}
      >
        <p class="hint note" id="rule-max-age-days-hint">
          An older newest point leaves the factor out.
        </p>
      </NumberField>
    </div>
  );
}

/** While the factor scores below the gate, the customer's status is at most the band chosen. */
export function GateFieldset({ draft, change, errorOf, described }: DraftFields) {
  return (
    <fieldset class="rule-gate">
      <legend>Gate (optional)</legend>
      <p class="hint note" id="rule-gate-hint">
        While this factor scores below the gate, the customer's status is at most the band chosen, however
        high the score: a single bad signal, such as an invoice long overdue, cannot average out to healthy.
      </p>
      <div class="rule-fields">
        <Field id="rule-gate-status" label="Status at most" error={errorOf('gate.status') ?? errorOf('gate')}>
          <select
            id="rule-gate-status"
            value={draft.gateStatus}
            onChange={(ev) =>
              change({ gateStatus: ev.currentTarget.value as Draft['gateStatus'] }, 'gate.status')
            }
            {...described('gate.status', 'rule-gate-status', 'rule-gate-hint')}
          >
            <option value="">No gate</option>
            <option value="at_risk">At risk</option>
            <option value="critical">Critical</option>
          </select>
        </Field>
        {draft.gateStatus !== '' && (
          <NumberField
            id="rule-gate-below"
            label="While the factor is below (0–1)"
            error={errorOf('gate.below')}
            min={0}
            max={1}
            step="any"
            value={draft.gateBelow}
            placeholder="0.5"
            onValue={(gateBelow) => change({ gateBelow }, 'gate.below')}
            {...described('gate.below', 'rule-gate-below')}
          />
        )}
      </div>
    </fieldset>
  );
}
