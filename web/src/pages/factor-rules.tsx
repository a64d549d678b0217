// Factor rules on the settings page (docs/scoring.md, "Factors from metrics"; docs/api.md, "Factor
// rules"): the rules listed in words, and an editor that draws the scale's curve as it is typed,
// asks the server what saving would change (the preview route), and shows each refusal next to
// the field the API names in `param`. The form checks only that its numbers are numbers; what a
// rule may be is the server's to say, so its messages are the ones shown.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  ApiError,
  api,
  can,
  type FactorRule,
  type FactorRuleInput,
  type FactorRulePreview,
  factorRulePath,
  type MetricName,
  type Summary,
} from '../api.ts';
import { ScaleChart } from '../charts.tsx';
import { count } from '../format.ts';
import {
  AGGREGATE_LABEL,
  AGGREGATES,
  type Aggregate,
  aggregateWords,
  gateWords,
  MAX_STEPS,
  maxAgeWords,
  type Scale,
  scaleWords,
} from '../rules.ts';
import { BandsTable, ErrorMessage, Field, Loading, Notice, useLoad } from '../ui.tsx';

interface StepRow {
  key: number;
  min: string;
  score: string;
}

/** The form as typed: every field a string, checked when read. */
interface Draft {
  factor: string;
  metric: string;
  aggregate: Aggregate;
  window: string;
  maxAge: string;
  type: Scale['type'];
  from: string;
  to: string;
  steps: StepRow[];
  /** The gate's band ('': no gate) and the factor score it applies below (docs/scoring.md, "Gates"). */
  gateStatus: '' | 'at_risk' | 'critical';
  gateBelow: string;
}

let nextKey = 1;
const stepRow = (min = '', score = ''): StepRow => ({ key: nextKey++, min, score });

const blank = (): Draft => ({
  factor: '',
  metric: '',
  aggregate: 'sum',
  window: '',
  maxAge: '',
  type: 'linear',
  from: '0',
  to: '',
  steps: [stepRow()],
  gateStatus: '',
  gateBelow: '',
});

function draftOf(rule: FactorRule): Draft {
  const s = rule.scale;
  return {
    factor: rule.factor,
    metric: rule.metric,
    aggregate: rule.aggregate as Aggregate,
    window: rule.window_days === null ? '' : String(rule.window_days),
    maxAge: rule.max_age_days === null ? '' : String(rule.max_age_days),
    type: s.type,
    from: s.type === 'linear' ? String(s.from) : '0',
    to: s.type === 'linear' ? String(s.to) : '',
    steps: s.type === 'steps' ? s.steps.map((x) => stepRow(String(x.min), String(x.score))) : [stepRow()],
    gateStatus: rule.gate?.status ?? '',
    gateBelow: rule.gate ? String(rule.gate.below) : '',
  };
}

type Gate = NonNullable<FactorRule['gate']>;

/** A PUT body in one key order, so that two bodies of the same rule compare equal as JSON. */
function bodyOf(rule: {
  metric: string;
  aggregate: string;
  window_days: number | null;
  scale: Scale;
  max_age_days: number | null;
  gate?: Gate | null;
}): FactorRuleInput {
  const body: FactorRuleInput = {
    metric: rule.metric,
    aggregate: rule.aggregate as Aggregate,
    scale:
      rule.scale.type === 'linear'
        ? { type: 'linear', from: rule.scale.from, to: rule.scale.to }
        : { type: 'steps', steps: rule.scale.steps.map((s) => ({ min: s.min, score: s.score })) },
  };
  if (rule.window_days !== null) body.window_days = rule.window_days;
  if (rule.max_age_days !== null) body.max_age_days = rule.max_age_days;
  // A put replaces the whole rule: a rule sent without a gate has none.
  if (rule.gate) body.gate = { below: rule.gate.below, status: rule.gate.status };
  return body;
}

/** A number as typed: NaN when empty or not a number (a number input gives '' for what it cannot read). */
const numberOf = (text: string) => (text.trim() === '' ? Number.NaN : Number(text));

/**
 * The draft read: the scale to draw (NaN where a number is missing), the body to send when every
 * field reads, and what is missing, keyed by the API's `param` for that field.
 */
function read(draft: Draft) {
  const missing: Record<string, string> = {};
  if (draft.factor.trim() === '') missing.factor = 'Enter the name of the factor this rule derives.';
  if (draft.metric.trim() === '') missing.metric = 'Enter the name of the metric it reads.';
  const days = (key: string, text: string) => {
    const n = numberOf(text);
    if (text.trim() !== '' && !Number.isFinite(n)) missing[key] = 'A number of days, or leave it empty.';
    return Number.isFinite(n) ? n : null;
  };
  const window_days = days('window_days', draft.window);
  const max_age_days = days('max_age_days', draft.maxAge);
  const need = (key: string, text: string) => {
    const n = numberOf(text);
    if (!Number.isFinite(n)) missing[key] = 'Enter a number.';
    return n;
  };
  const scale: Scale =
    draft.type === 'linear'
      ? { type: 'linear', from: need('scale.from', draft.from), to: need('scale.to', draft.to) }
      : {
          type: 'steps',
          steps: draft.steps.map((s, i) => ({
            min: need(`scale.steps.${i}.min`, s.min),
            score: need(`scale.steps.${i}.score`, s.score),
          })),
        };
  const gate: Gate | null =
    draft.gateStatus === '' ? null : { below: need('gate.below', draft.gateBelow), status: draft.gateStatus };
  const complete = Object.keys(missing).length === 0;
  const body = complete
    ? bodyOf({
        metric: draft.metric.trim(),
        aggregate: draft.aggregate,
        window_days,
        scale,
        max_age_days,
        gate,
      })
    : undefined;
  return { scale, body, missing };
}

/** The fields the form shows, by the `param` the API names them with. */
function fieldParams(draft: Draft): Set<string> {
  const params = [
    'factor',
    'metric',
    'aggregate',
    'window_days',
    'max_age_days',
    'scale.type',
    'gate',
    'gate.status',
  ];
  if (draft.gateStatus !== '') params.push('gate.below');
  if (draft.type === 'linear') params.push('scale.from', 'scale.to');
  else {
    params.push('scale.steps');
    for (const i of draft.steps.keys()) params.push(`scale.steps.${i}.min`, `scale.steps.${i}.score`);
  }
  return new Set(params);
}

/** The element id of the field a param names. */
const fieldId = (param: string, draft: Draft): string => {
  const step = /^scale\.steps\.(\d+)\.(min|score)$/.exec(param);
  if (step) return `rule-step-${draft.steps[Number(step[1])]?.key}-${step[2]}`;
  if (param === 'gate.below') return 'rule-gate-below';
  if (param.startsWith('gate')) return 'rule-gate-status';
  return `rule-${param.replace('scale.', '').replaceAll('_', '-')}`;
};

const plural = (n: number, one: string, many: string) => `${count(n)} ${n === 1 ? one : many}`;

export function FactorRules() {
  const admin = can('administer');
  const loaded = useLoad(async (signal) => {
    const [rules, summary, names] = await Promise.all([
      api.get<{ data: FactorRule[] }>('/api/settings/health-score/factors', signal),
      api.get<Summary>('/api/health-scores/summary', signal),
      // The names a rule can read: offered as the metric is typed, and a name not among them is
      // called out (a misspelt metric previews "0 changed" and saves a rule that never scores).
      api.get<{ data: MetricName[] }>('/api/metrics/names', signal),
    ]);
    return { rules: rules.data, summary, names: names.data.map((n) => n.name) };
  }, []);
  const [draft, setDraft] = useState<Draft>(blank);
  const [editing, setEditing] = useState<string | null>(null);
  const [touched, setTouched] = useState<Set<string>>(() => new Set());
  const [preview, setPreview] = useState<{ for: string; answer?: FactorRulePreview; error?: unknown }>();
  const [refused, setRefused] = useState<{ for: string; error: unknown }>();
  const [notice, setNotice] = useState<string>();
  const [listError, setListError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);

  const { scale, body, missing } = read(draft);
  const factor = draft.factor.trim();
  const json = body ? JSON.stringify([factor, body]) : '';
  // Editing: unchanged until the draft differs from the rule as saved. Adding: any complete draft.
  const saved = editing === null ? undefined : loaded.data?.rules.find((r) => r.factor === editing);
  const changed = body !== undefined && (!saved || JSON.stringify([saved.factor, bodyOf(saved)]) !== json);

  // Ask the server what saving would change, once typing pauses (as the weights do).
  const round = useRef(0);
  useEffect(() => {
    if (!admin || !body || !changed) return;
    const mine = ++round.current;
    const timer = setTimeout(() => {
      api.post<FactorRulePreview>(`${factorRulePath(factor)}/preview`, body).then(
        (answer) => mine === round.current && setPreview({ for: json, answer }),
        (err) => mine === round.current && setPreview({ for: json, error: err }),
      );
    }, 300);
    return () => clearTimeout(timer);
  }, [json, changed, admin]);

  // A refusal of Save moves focus to the field it names, whose message is next to it: in the
  // same commit as the message and the alert (a layout effect), never a frame after them.
  useLayoutEffect(() => {
    if (refused?.error instanceof ApiError && refused.error.param && refused.for === json) {
      document.getElementById(fieldId(refused.error.param, draft))?.focus();
    }
  }, [refused]);

  if (loaded.error) return <ErrorMessage error={loaded.error} />;
  if (!loaded.data) return <Loading what="the factor rules" />;
  const { rules, summary, names } = loaded.data;
  const metric = draft.metric.trim();
  const unknownMetric = metric !== '' && !names.includes(metric);

  const params = fieldParams(draft);
  const current = preview?.for === json ? preview : undefined;
  // The server's word on this very draft, Save's or the preview's: by its field when the form has it.
  const placed = (e: unknown): e is ApiError =>
    e instanceof ApiError && e.param !== undefined && params.has(e.param);
  const saveError = refused?.for === json ? refused.error : undefined;
  const refusal = [saveError, current?.error].find(placed);
  const errorOf = (param: string): string | undefined =>
    (touched.has(param) ? missing[param] : undefined) ??
    (refusal?.param === param ? refusal.message : undefined);
  const described = (param: string, id: string, hint?: string) => {
    const error = errorOf(param);
    return {
      'aria-invalid': error ? true : undefined,
      'aria-describedby': [hint, error ? `${id}-error` : undefined].filter(Boolean).join(' ') || undefined,
    };
  };

  const change = (patch: Partial<Draft>, ...keys: string[]) => {
    setDraft({ ...draft, ...patch });
    setTouched(new Set([...touched, ...keys]));
    setNotice(undefined);
  };
  const setStep = (key: number, patch: Partial<StepRow>, param: string) =>
    change({ steps: draft.steps.map((s) => (s.key === key ? { ...s, ...patch } : s)) }, param);

  const startOver = () => {
    setDraft(blank());
    setEditing(null);
    setTouched(new Set());
    setRefused(undefined);
  };
  const edit = (rule: FactorRule) => {
    setDraft(draftOf(rule));
    setEditing(rule.factor);
    setTouched(new Set());
    setRefused(undefined);
    setNotice(undefined);
    heading.current?.scrollIntoView({ block: 'start' });
    heading.current?.focus();
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(new Set(params));
    if (!body) return;
    setBusy(true);
    setRefused(undefined);
    try {
      const rule = await api.put<FactorRule>(factorRulePath(factor), body);
      const moved = current?.answer;
      const after = await api.get<Summary>('/api/health-scores/summary').catch(() => summary);
      loaded.set({
        rules: [...rules.filter((r) => r.factor !== rule.factor), rule].sort((a, b) =>
          a.factor < b.factor ? -1 : 1,
        ),
        summary: after,
        names,
      });
      startOver();
      setNotice(
        moved
          ? `The rule of ${rule.factor} is saved. ${plural(moved.scores_changed, 'score was', 'scores were')} recomputed; ${plural(moved.band_changes, 'customer', 'customers')} changed band.`
          : `The rule of ${rule.factor} is saved, and every score it moves has been recomputed.`,
      );
      setPreview(undefined);
    } catch (err) {
      setRefused({ for: json, error: err });
    } finally {
      setBusy(false);
    }
  };

  const remove = async (rule: FactorRule) => {
    if (
      !confirm(
        `Delete the rule of ${rule.factor}? The factor leaves every score that has it, and those scores are recomputed.`,
      )
    )
      return;
    setListError(undefined);
    try {
      await api.delete(factorRulePath(rule.factor));
      const after = await api.get<Summary>('/api/health-scores/summary').catch(() => summary);
      loaded.set({ rules: rules.filter((r) => r.factor !== rule.factor), summary: after, names });
      if (editing === rule.factor) startOver();
      setNotice(`The rule of ${rule.factor} is deleted; ${rule.factor} has left every score.`);
    } catch (err) {
      setListError(err);
    }
  };

  const replaces = editing === null && rules.some((r) => r.factor === factor);
  return (
    <section aria-labelledby="rules-title" class="card">
      <h2 id="rules-title">Factor rules</h2>
      <p class="hint">
        A rule derives a factor from a metric the API records for each customer: an aggregate of its points
        over a window, put on a scale from 0 to 1. A derived factor can no longer be posted. Saving or
        deleting a rule recomputes every score it moves at once.
      </p>
      {notice && <Notice>{notice}</Notice>}
      <ErrorMessage error={listError} title="Not deleted:" />
      {rules.length === 0 ? (
        <p>No factor rules yet: every factor is posted.</p>
      ) : (
        <div class="table-wrap">
          <table class="rules">
            <caption class="sr-only">Factor rules</caption>
            <thead>
              <tr>
                <th scope="col">Factor</th>
                <th scope="col">Metric</th>
                <th scope="col">Reads</th>
                <th scope="col">Scale</th>
                <th scope="col">Max age</th>
                <th scope="col">Gate</th>
                {admin && (
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {rules.map((r) => (
                <tr key={r.factor} data-factor={r.factor}>
                  <th scope="row" class="mono">
                    {r.factor}
                  </th>
                  <td data-label="Metric">
                    <span class="mono">{r.metric}</span>
                  </td>
                  <td data-label="Reads">{aggregateWords(r)}</td>
                  <td data-label="Scale">{scaleWords(r.scale)}</td>
                  <td data-label="Max age">{maxAgeWords(r.max_age_days)}</td>
                  <td data-label="Gate">{gateWords(r.gate)}</td>
                  {admin && (
                    <td class="row-actions">
                      <button
                        type="button"
                        class="secondary small"
                        onClick={() => edit(r)}
                        aria-label={`Edit the rule of ${r.factor}`}
                      >
                        Edit
                      </button>
                      <button
                        type="button"
                        class="danger small"
                        onClick={() => remove(r)}
                        aria-label={`Delete the rule of ${r.factor}`}
                      >
                        Delete
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {!admin ? (
        <p class="hint">Changing factor rules takes an admin.</p>
      ) : (
        <form onSubmit={submit} noValidate class="rule-form" aria-labelledby="rule-editor-title">
          <h3 id="rule-editor-title" tabIndex={-1} ref={heading}>
            {editing ? (
              <>
                Edit the rule of <span class="mono">{editing}</span>
              </>
            ) : (
              'Add a rule'
            )}
          </h3>
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
                <p
                  class="hint note metric-warning"
                  id="rule-metric-warning"
                  data-testid="rule-metric-warning"
                >
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
            <Field id="rule-window-days" label="Window (days)" error={errorOf('window_days')}>
              <input
                id="rule-window-days"
                type="number"
                inputMode="numeric"
                min={1}
                max={365}
                step={1}
                value={draft.window}
                placeholder={draft.aggregate === 'last' ? 'none' : '30'}
                onInput={(ev) => change({ window: ev.currentTarget.value }, 'window_days')}
                {...described('window_days', 'rule-window-days', 'rule-window-days-hint')}
              />
              <p class="hint note" id="rule-window-days-hint">
                {draft.aggregate === 'last'
                  ? 'Empty: the newest point, however old.'
                  : 'Empty: the last 30 days.'}
              </p>
            </Field>
            <Field id="rule-max-age-days" label="Max age (days)" error={errorOf('max_age_days')}>
              <input
                id="rule-max-age-days"
                type="number"
                inputMode="numeric"
                min={1}
                max={365}
                step={1}
                value={draft.maxAge}
                placeholder="none"
                onInput={(ev) => change({ maxAge: ev.currentTarget.value }, 'max_age_days')}
                {...described('max_age_days', 'rule-max-age-days', 'rule-max-age-days-hint')}
              />
              <p class="hint note" id="rule-max-age-days-hint">
                An older newest point leaves the factor out.
              </p>
            </Field>
          </div>
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
                    <Field id="rule-from" label="From (scores 0)" error={errorOf('scale.from')}>
                      <input
                        id="rule-from"
                        type="number"
                        inputMode="decimal"
                        step="any"
                        value={draft.from}
                        onInput={(ev) => change({ from: ev.currentTarget.value }, 'scale.from')}
                        {...described('scale.from', 'rule-from')}
                      />
                    </Field>
                    <Field id="rule-to" label="To (scores 1)" error={errorOf('scale.to')}>
                      <input
                        id="rule-to"
                        type="number"
                        inputMode="decimal"
                        step="any"
                        value={draft.to}
                        onInput={(ev) => change({ to: ev.currentTarget.value }, 'scale.to')}
                        {...described('scale.to', 'rule-to')}
                      />
                    </Field>
                    <p class="hint note">
                      In between, in proportion. A from above the to means lower is better.
                    </p>
                  </div>
                ) : (
                  <StepsTable
                    draft={draft}
                    errorOf={errorOf}
                    described={described}
                    setStep={setStep}
                    change={change}
                  />
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
          <fieldset class="rule-gate">
            <legend>Gate (optional)</legend>
            <p class="hint note" id="rule-gate-hint">
              While this factor scores below the gate, the customer's status is at most the band chosen,
              however high the score: a single bad signal, such as an invoice long overdue, cannot average out
              to healthy.
            </p>
            <div class="rule-fields">
              <Field
                id="rule-gate-status"
                label="Status at most"
                error={errorOf('gate.status') ?? errorOf('gate')}
              >
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
                <Field
                  id="rule-gate-below"
                  label="While the factor is below (0–1)"
                  error={errorOf('gate.below')}
                >
                  <input
                    id="rule-gate-below"
                    type="number"
                    inputMode="decimal"
                    min={0}
                    max={1}
                    step="any"
                    value={draft.gateBelow}
                    placeholder="0.5"
                    onInput={(ev) => change({ gateBelow: ev.currentTarget.value }, 'gate.below')}
                    {...described('gate.below', 'rule-gate-below')}
                  />
                </Field>
              )}
            </div>
          </fieldset>
          <div class="preview" aria-live="polite">
            {body && changed && !current && <p class="loading">Working out what saving would change…</p>}
            {current?.answer && (
              <RulePreview preview={current.answer} before={summary} metric={body?.metric ?? ''} />
            )}
            {current?.error !== undefined &&
              (placed(current.error) ? (
                <p class="field-error">No preview: the server refused the marked field.</p>
              ) : (
                <ErrorMessage error={current.error} title="No preview:" />
              ))}
          </div>
          {placed(saveError) ? (
            <div class="message error" role="alert">
              <strong>Not saved:</strong> the server refused the marked field; its message is next to it.
            </div>
          ) : (
            <ErrorMessage error={saveError} title="Not saved:" />
          )}
          <div class="actions">
            <button type="submit" disabled={busy || (editing !== null && !changed)}>
              {busy ? 'Saving…' : 'Save rule'}
            </button>
            {(editing !== null || touched.size > 0) && (
              <button type="button" class="secondary" onClick={startOver}>
                {editing ? 'Cancel' : 'Clear'}
              </button>
            )}
          </div>
        </form>
      )}
    </section>
  );
}

function StepsTable(props: {
  draft: Draft;
  errorOf: (param: string) => string | undefined;
  described: (param: string, id: string) => Record<string, unknown>;
  setStep: (key: number, patch: Partial<StepRow>, param: string) => void;
  change: (patch: Partial<Draft>, ...keys: string[]) => void;
}) {
  const { draft, errorOf, described, setStep, change } = props;
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
                <td>
                  <label for={minId} class="sr-only">
                    Step {i + 1} from value
                  </label>
                  <input
                    id={minId}
                    type="number"
                    inputMode="decimal"
                    step="any"
                    value={s.min}
                    onInput={(ev) => setStep(s.key, { min: ev.currentTarget.value }, `scale.steps.${i}.min`)}
                    {...described(`scale.steps.${i}.min`, minId)}
                  />
                  {minError && (
                    <p class="field-error" id={`${minId}-error`}>
                      {minError}
                    </p>
                  )}
                </td>
                <td>
                  <label for={scoreId} class="sr-only">
                    Step {i + 1} score
                  </label>
                  <input
                    id={scoreId}
                    type="number"
                    inputMode="decimal"
                    min={0}
                    max={1}
                    step="any"
                    value={s.score}
                    onInput={(ev) =>
                      setStep(s.key, { score: ev.currentTarget.value }, `scale.steps.${i}.score`)
                    }
                    {...described(`scale.steps.${i}.score`, scoreId)}
                  />
                  {scoreError && (
                    <p class="field-error" id={`${scoreId}-error`}>
                      {scoreError}
                    </p>
                  )}
                </td>
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

function RulePreview({
  preview,
  before,
  metric,
}: {
  preview: FactorRulePreview;
  before: Summary;
  metric: string;
}) {
  return (
    <div class="preview-box" data-testid="rule-preview">
      <p>
        <strong>Before you save:</strong> saving would change{' '}
        <strong data-testid="rule-scores-changed">{count(preview.scores_changed)}</strong>{' '}
        {preview.scores_changed === 1 ? 'score' : 'scores'};{' '}
        <strong data-testid="rule-band-changes">{count(preview.band_changes)}</strong>{' '}
        {preview.band_changes === 1 ? 'customer' : 'customers'} would move band (of the{' '}
        <span data-testid="rule-customers">{plural(preview.customers, 'customer', 'customers')}</span> with a
        score or a point of <span class="mono">{metric}</span>).
      </p>
      <BandsTable before={before.counts} after={preview.bands} afterLabel="With this rule" />
    </div>
  );
}
