// The factor rule editor's draft (factor-rules.tsx): the form as typed, every field a string, and
// how it is read into the PUT body the API takes, with what is missing keyed by the API's `param`
// for that field (docs/api.md, "Factor rules"). No rendering here.
import type { FactorRule, FactorRuleInput } from '../api.ts';
import { count } from '../format.ts';
import type { Aggregate, Scale } from '../rules.ts';

export interface StepRow {
  key: number;
  min: string;
  score: string;
}

/** The form as typed: every field a string, checked when read. */
export interface Draft {
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
export const stepRow = (min = '', score = ''): StepRow => ({ key: nextKey++, min, score });

export const blank = (): Draft => ({
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

export function draftOf(rule: FactorRule): Draft {
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

export type Gate = NonNullable<FactorRule['gate']>;

/** A PUT body in one key order, so that two bodies of the same rule compare equal as JSON. */
export function bodyOf(rule: {
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
export const numberOf = (text: string) => (text.trim() === '' ? Number.NaN : Number(text));

/**
 * The draft read: the scale to draw (NaN where a number is missing), the body to send when every
 * field reads, and what is missing, keyed by the API's `param` for that field.
 */
export function read(draft: Draft) {
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
export function fieldParams(draft: Draft): Set<string> {
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
export const fieldId = (param: string, draft: Draft): string => {
  const step = /^scale\.steps\.(\d+)\.(min|score)$/.exec(param);
  if (step) return `rule-step-${draft.steps[Number(step[1])]?.key}-${step[2]}`;
  if (param === 'gate.below') return 'rule-gate-below';
  if (param.startsWith('gate')) return 'rule-gate-status';
  return `rule-${param.replace('scale.', '').replaceAll('_', '-')}`;
};

export const plural = (n: number, one: string, many: string) => `${count(n)} ${n === 1 ? one : many}`;

/** What each part of the form is given: the draft, how to change it, and each field's error and aria. */
export interface DraftFields {
  draft: Draft;
  change: (patch: Partial<Draft>, ...keys: string[]) => void;
  errorOf: (param: string) => string | undefined;
  described: (
    param: string,
    id: string,
    hint?: string,
  ) => { 'aria-invalid': true | undefined; 'aria-describedby': string | undefined };
}
