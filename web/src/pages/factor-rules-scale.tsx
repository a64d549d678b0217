// The factor rule editor's scale (factor-rules-form.tsx): a linear ramp or steps, typed beside the
// curve they draw (docs/scoring.md, "Factors from metrics").
import { ScaleChart } from '../charts.tsx';
import { aggregateWords, MAX_STEPS, type Scale } from '../rules.ts';
import { NumberCell, NumberField } from '../ui.tsx';
import { type DraftFields, numberOf, type StepRow, stepRow } from './factor-rules-draft.ts';

/** The scale's type and numbers, and its curve as `scale` reads them (NaN where a number is missing). */
export function ScaleFieldset(props: DraftFields & { scale: Scale }) {
  const { draft, change, errorOf, described, scale } = props;
  return (
    <fieldset class="rule-scale">
      <legend>Scale</legend>
      <div class="scale-body">
        <div class="scale-inputs">
          <div class="scale-types" role="radiogroup" aria-label="Scale type">
            {(['linear', 'steps'] as const).map((t) => (
              <label key={t} class="check">
                <input
                  type="radio"
                  name="scale-type"
                  value={t}
                  checked={draft.type === t}
                  onChange={() => change({ type: t }, 'scale.type')}
                />
                {t === 'linear' ? 'Linear ramp' : 'Steps'}
              </label>
            ))}
          </div>
          {errorOf('scale.type') && (
            <p class="field-error" id="rule-type-error">
              {errorOf('scale.type')}
            </p>
          )}
          {draft.type === 'linear' ? (
            <div class="linear-fields">
              <NumberField
                id="rule-from"
                label="From (scores 0)"
                error={errorOf('scale.from')}
                step="any"
                value={draft.from}
                onValue={(from) => change({ from }, 'scale.from')}
                {...described('scale.from', 'rule-from')}
              />
              <NumberField
                id="rule-to"
                label="To (scores 1)"
                error={errorOf('scale.to')}
                step="any"
                value={draft.to}
                onValue={(to) => change({ to }, 'scale.to')}
                {...described('scale.to', 'rule-to')}
              />
              <p class="hint note">In between, in proportion. A from above the to means lower is better.</p>
            </div>
          ) : (
            <StepsTable draft={draft} errorOf={errorOf} described={described} change={change} />
          )}
        </div>
        <div class="scale-curve">
          <ScaleChart scale={scale} metric={draft.metric.trim()} />
          <p class="hint note">
            Across: the{' '}
            {aggregateWords({
              aggregate: draft.aggregate,
              window_days: numberOf(draft.window) || null,
            })}{' '}
            of <span class="mono">{draft.metric.trim() || 'the metric'}</span>; up: the factor's score.
          </p>
        </div>
      </div>
    </fieldset>
  );
}

/** One row per step: from each value on, the factor scores its score. */
function StepsTable({ draft, errorOf, described, change }: DraftFields) {
  const setStep = (key: number, patch: Partial<StepRow>, param: string) =>
    change({ steps: draft.steps.map((s) => (s.key === key ? { ...s, ...patch } : s)) }, param);
  const error = errorOf('scale.steps');
  return (
    <>
      <table class="steps">
        <caption class="sr-only">Steps: from each value on, the factor scores its score</caption>
        <thead>
          <tr>
            <th scope="col">From value</th>
            <th scope="col">Score (0–1)</th>
            <th scope="col">
              <span class="sr-only">Remove</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {draft.steps.map((s, i) => {
            const minId = `rule-step-${s.key}-min`;
            const scoreId = `rule-step-${s.key}-score`;
            const minError = errorOf(`scale.steps.${i}.min`);
            const scoreError = errorOf(`scale.steps.${i}.score`);
            return (
              <tr key={s.key}>
                <NumberCell
                  id={minId}
                  label={`Step ${i + 1} from value`}
                  error={minError}
                  step="any"
                  value={s.min}
                  onValue={(min) => setStep(s.key, { min }, `scale.steps.${i}.min`)}
                  {...described(`scale.steps.${i}.min`, minId)}
                />
                <NumberCell
                  id={scoreId}
                  label={`Step ${i + 1} score`}
                  error={scoreError}
                  min={0}
                  max={1}
                  step="any"
                  value={s.score}
                  onValue={(score) => setStep(s.key, { score }, `scale.steps.${i}.score`)}
                  {...described(`scale.steps.${i}.score`, scoreId)}
                />
                <td>
                  <button
                    type="button"
                    class="secondary small"
                    disabled={draft.steps.length === 1}
                    onClick={() =>
                      change({ steps: draft.steps.filter((x) => x.key !== s.key) }, 'scale.steps')
                    }
                    aria-label={`Remove step ${i + 1}`}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {error && (
        <p class="field-error" id="rule-steps-error">
          {error}
        </p>
      )}
      <div class="actions">
        <button
          type="button"
          class="secondary"
          disabled={draft.steps.length >= MAX_STEPS}
          onClick={() => change({ steps: [...draft.steps, stepRow()] })}
        >
          Add step
        </button>
        <p class="hint note">
          {draft.steps.length >= MAX_STEPS
            ? `At most ${MAX_STEPS} steps.`
            : 'Below the first step, the factor scores 0.'}
        </p>
      </div>
    </>
  );
}
