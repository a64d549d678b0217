// The factor rule editor (factor-rules.tsx): the draft as typed, the server's preview of what
// saving would change (asked once typing pauses), and Save, whose refusal is shown by the field
// the API names in `param` and moves focus there.
import type { Ref } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import {
  ApiError,
  api,
  type FactorRule,
  type FactorRulePreview,
  factorRulePath,
  type Summary,
} from '../api.ts';
import { count } from '../format.ts';
import { BandsTable, ErrorMessage } from '../ui.tsx';
import {
  blank,
  bodyOf,
  type Draft,
  type DraftFields,
  draftOf,
  fieldId,
  fieldParams,
  plural,
  read,
} from './factor-rules-draft.ts';
import { GateFieldset, RuleFields } from './factor-rules-fields.tsx';
import { ScaleFieldset } from './factor-rules-scale.tsx';

/**
 * The editor's state that moves together: the draft, the rule it edits (null: adding one), the
 * fields touched (whose missing values are shown), and Save's last refusal with the draft it was for.
 */
export function useRuleEditor(onChange: () => void) {
  const [draft, setDraft] = useState<Draft>(blank);
  const [editing, setEditing] = useState<string | null>(null);
  const [touched, setTouched] = useState<Set<string>>(() => new Set());
  const [refused, setRefused] = useState<{ for: string; error: unknown }>();
  return {
    draft,
    editing,
    touched,
    setTouched,
    refused,
    setRefused,
    change(patch: Partial<Draft>, ...keys: string[]) {
      setDraft({ ...draft, ...patch });
      setTouched(new Set([...touched, ...keys]));
      onChange();
    },
    startOver() {
      setDraft(blank());
      setEditing(null);
      setTouched(new Set());
      setRefused(undefined);
    },
    edit(rule: FactorRule) {
      setDraft(draftOf(rule));
      setEditing(rule.factor);
      setTouched(new Set());
      setRefused(undefined);
    },
  };
}
export type RuleEditor = ReturnType<typeof useRuleEditor>;

type PreviewState = { for: string; answer?: FactorRulePreview; error?: unknown };

/** What saving `body` as the rule of `factor` would change, asked once typing pauses (as the weights do). */
function usePreview(factor: string, body: ReturnType<typeof read>['body'], json: string, changed: boolean) {
  const [preview, setPreview] = useState<PreviewState>();
  const round = useRef(0);
  useEffect(() => {
    if (!body || !changed) return;
    const mine = ++round.current;
    const timer = setTimeout(() => {
      api.post<FactorRulePreview>(`${factorRulePath(factor)}/preview`, body).then(
        (answer) => mine === round.current && setPreview({ for: json, answer }),
        (err) => mine === round.current && setPreview({ for: json, error: err }),
      );
    }, 300);
    return () => clearTimeout(timer);
  }, [json, changed]);
  return [preview, setPreview] as const;
}

export function RuleForm(props: {
  editor: RuleEditor;
  rules: FactorRule[];
  summary: Summary;
  /** The metric names the account has. */
  names: string[];
  heading: Ref<HTMLHeadingElement>;
  /** Saved: the rule as stored, the summary after it, and what to tell the user. */
  onSaved: (rule: FactorRule, after: Summary, message: string) => void;
}) {
  const { editor, rules, summary } = props;
  const { draft, editing, touched, refused } = editor;
  const [busy, setBusy] = useState(false);
  const { scale, body, missing } = read(draft);
  const factor = draft.factor.trim();
  const json = body ? JSON.stringify([factor, body]) : '';
  // Editing: unchanged until the draft differs from the rule as saved. Adding: any complete draft.
  const saved = editing === null ? undefined : rules.find((r) => r.factor === editing);
  const changed = body !== undefined && (!saved || JSON.stringify([saved.factor, bodyOf(saved)]) !== json);
  const [preview, setPreview] = usePreview(factor, body, json, changed);

  // A refusal of Save moves focus to the field it names, whose message is next to it: in the
  // same commit as the message and the alert (a layout effect), never a frame after them.
  useLayoutEffect(() => {
    if (refused?.error instanceof ApiError && refused.error.param && refused.for === json) {
      document.getElementById(fieldId(refused.error.param, draft))?.focus();
    }
  }, [refused]);

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
      'aria-invalid': error ? (true as const) : undefined,
      'aria-describedby': [hint, error ? `${id}-error` : undefined].filter(Boolean).join(' ') || undefined,
    };
  };
  const fields: DraftFields = { draft, change: editor.change, errorOf, described };

  const submit = async (e: Event) => {
    e.preventDefault();
    editor.setTouched(new Set(params));
    if (!body) return;
    setBusy(true);
    editor.setRefused(undefined);
    try {
      const rule = await api.put<FactorRule>(factorRulePath(factor), body);
      const moved = current?.answer;
      const after = await api.get<Summary>('/api/health-scores/summary').catch(() => summary);
      props.onSaved(
        rule,
        after,
        moved
          ? `The rule of ${rule.factor} is saved. ${plural(moved.scores_changed, 'score was', 'scores were')} recomputed; ${plural(moved.band_changes, 'customer', 'customers')} changed band.`
          : `The rule of ${rule.factor} is saved, and every score it moves has been recomputed.`,
      );
      setPreview(undefined);
    } catch (err) {
      editor.setRefused({ for: json, error: err });
    } finally {
      setBusy(false);
    }
  };

  const replaces = editing === null && rules.some((r) => r.factor === factor);
  return (
    <form onSubmit={submit} noValidate class="rule-form" aria-labelledby="rule-editor-title">
      <h3 id="rule-editor-title" tabIndex={-1} ref={props.heading}>
        {editing ? (
          <>
            Edit the rule of <span class="mono">{editing}</span>
          </>
        ) : (
          'Add a rule'
        )}
      </h3>
      <RuleFields {...fields} editing={editing} replaces={replaces} names={props.names} />
      <ScaleFieldset {...fields} scale={scale} />
      <GateFieldset {...fields} />
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
          <button type="button" class="secondary" onClick={editor.startOver}>
            {editing ? 'Cancel' : 'Clear'}
          </button>
        )}
      </div>
    </form>
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
