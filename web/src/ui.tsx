// Pieces every page uses: loading state, the page heading, error and status messages, badges, paging.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, can, mayAdminister, type Override, STATUSES, type Status, session } from './api.ts';
import { count, date, STATUS_LABEL, score } from './format.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  set: (data: T) => void;
}

/** Runs `load` now and whenever `deps` change; a newer run aborts the older one. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    const abort = new AbortController();
    setState((s) => ({ data: s.data, loading: true }));
    load(abort.signal).then(
      (data) => abort.signal.aborted || setState({ data, loading: false }),
      (error) => abort.signal.aborted || setState({ error, loading: false }),
    );
    return () => abort.abort();
  }, [...deps, round]);
  return {
    data: state.data,
    error: state.error,
    loading: state.loading,
    reload: useCallback(() => setRound((r) => r + 1), []),
    set: useCallback((data: T) => setState({ data, loading: false }), []),
  };
}

/**
 * Whether this session may change the account (mayAdminister: not a viewer or editor, not a read
 * key); undefined until known, so that write controls stay hidden until then.
 */
export function useMayAdminister(): boolean | undefined {
  const [may, setMay] = useState<boolean>();
  useEffect(() => {
    let current = true;
    mayAdminister().then((answer) => current && setMay(answer));
    return () => {
      current = false;
    };
  }, []);
  return may;
}

/**
 * Whether this session may write customers' records (tasks, notes): a person by their role (not a
 * viewer), a key by its scope (a write key may, a read key not, as mayAdminister finds out);
 * undefined until known, so that write controls stay hidden until then.
 */
export function useMayEdit(): boolean | undefined {
  const may = useMayAdminister();
  return session.user ? can('edit customers') : may;
}

/**
 * A form's refusal moves focus to the field its `param` names (`fields`: param → the input's id),
 * whose message is next to it: in the same commit as the message and the alert (a layout effect),
 * never a frame after them.
 */
export function useFocusRefused(refused: unknown, fields: Record<string, string>): void {
  useLayoutEffect(() => {
    const id = refused instanceof ApiError && refused.param ? fields[refused.param] : undefined;
    if (id) document.getElementById(id)?.focus();
  }, [refused]);
}

let firstPage = true;

/** A page's heading and document title. After a navigation, focus moves to the heading. */
export function Page(props: { title: string; subtitle?: ComponentChildren; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · Vitals`;
  }, [props.title]);
  useEffect(() => {
    if (firstPage) firstPage = false;
    else heading.current?.focus();
  }, []);
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1} ref={heading}>
          {props.title}
        </h1>
        {props.subtitle && <p class="subtitle">{props.subtitle}</p>}
      </div>
      {props.children}
    </>
  );
}

export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** An error from the API (its envelope's message) or from the page's own checks. */
export function ErrorMessage({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const code = error instanceof ApiError ? error.code : undefined;
  return (
    <div class="message error" role="alert">
      {title && <strong>{title} </strong>}
      {messageOf(error)}
      {code && <span class="code"> ({code})</span>}
    </div>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <div class="message ok" role="status">
      {children}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}

export function StatusBadge({ status }: { status: Status }) {
  return <span class={`badge ${status}`}>{STATUS_LABEL[status]}</span>;
}

/**
 * Marks a score a person pinned (docs/scoring.md, "Overrides"): "pinned", with the computed score
 * beside it unless `computed` is false (where the text around says it), and the rest on hover.
 */
export function PinnedBadge({ override, computed = true }: { override: Override; computed?: boolean }) {
  return (
    <span
      class="pinned-mark"
      title={`Pinned by a person until ${date(override.expires_at)}: “${override.reason}”. The factors compute ${score(override.computed_score)}.`}
    >
      <span class="badge pinned">pinned</span>
      {computed && <span class="computed">computed {score(override.computed_score)}</span>}
    </span>
  );
}

/** Previous / next over a keyset-paginated list. */
export function Pager(props: {
  label: string;
  page: number;
  hasNext: boolean;
  onPrevious: () => void;
  onNext: () => void;
  busy?: boolean;
}) {
  if (props.page === 1 && !props.hasNext) return null;
  return (
    <nav class="pager" aria-label={props.label}>
      <button type="button" onClick={props.onPrevious} disabled={props.page === 1 || props.busy}>
        ← Previous
      </button>
      <span>Page {props.page}</span>
      <button type="button" onClick={props.onNext} disabled={!props.hasNext || props.busy}>
        Next →
      </button>
    </nav>
  );
}

/**
 * A value to copy (a secret, an address), read-only, with a Copy button. Without a clipboard (a page
 * not served over https) the text is selected for Ctrl+C instead; either way the button says so.
 */
export function CopyField(props: { id: string; label: string; value: string; hideLabel?: boolean }) {
  const [copied, setCopied] = useState<string>('');
  const field = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.value);
      setCopied('Copied to the clipboard.');
    } catch {
      field.current?.select();
      setCopied('Selected: press Ctrl+C (⌘C) to copy.');
    }
  };
  return (
    <div class="copy-field">
      <label class={props.hideLabel ? 'sr-only' : undefined} for={props.id}>
        {props.label}
      </label>
      <div class="copy-row">
        <input
          id={props.id}
          ref={field}
          readOnly
          value={props.value}
          spellcheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          Copy<span class="sr-only"> {props.label.toLowerCase()}</span>
        </button>
      </div>
      <p class="hint copy-note" aria-live="polite">
        {copied}
      </p>
    </div>
  );
}

/** A webhook signing secret, shown once, with a copy button. */
export function SecretReveal({ secret, onDismiss }: { secret: string; onDismiss: () => void }) {
  useEffect(() => (document.getElementById('secret-value') as HTMLInputElement | null)?.select(), []);
  return (
    <section class="secret" aria-labelledby="secret-title">
      <h2 id="secret-title">Signing secret</h2>
      <p>
        Copy this secret now and keep it with your receiver: <strong>it is shown only this once</strong>. Use
        it to check the <code>X-Vitals-Signature</code> and <code>webhook-signature</code> headers.
      </p>
      <CopyField id="secret-value" label="Signing secret" value={secret} hideLabel />
      <button type="button" class="secondary" onClick={onDismiss}>
        I have saved it
      </button>
    </section>
  );
}

/** A labelled form control with its error message (the control sets aria-describedby to `${id}-error`). */
export function Field(props: { id: string; label: string; error?: string; children: ComponentChildren }) {
  return (
    <div class={`field${props.error ? ' invalid' : ''}`}>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.error && (
        <p class="field-error" id={`${props.id}-error`}>
          {props.error}
        </p>
      )}
    </div>
  );
}

/**
 * A number input. `value` is the text as typed, which the form checks and parses (a half-typed "0."
 * or an emptied field is no number yet, and must stay as the person left it); the input reports each
 * edit with `onValue`. A step of 1 asks a phone for its digits keypad, any other step for the one
 * with a decimal point. The form describes the input as it does its other fields: aria-invalid, and
 * aria-describedby naming its error (shown by the field whose `param` the API refused,
 * docs/dashboard.md) and its hints.
 */
interface NumberInputProps {
  id: string;
  value: string;
  onValue: (value: string) => void;
  step: number | 'any';
  min?: number;
  max?: number;
  placeholder?: string;
  disabled?: boolean;
  'aria-invalid'?: boolean | undefined;
  'aria-describedby'?: string | undefined;
}

function NumberInput(props: NumberInputProps) {
  return (
    <input
      id={props.id}
      type="number"
      inputMode={props.step === 1 ? 'numeric' : 'decimal'}
      min={props.min}
      max={props.max}
      step={props.step}
      disabled={props.disabled}
      value={props.value}
      placeholder={props.placeholder}
      onInput={(ev) => props.onValue(ev.currentTarget.value)}
      aria-invalid={props['aria-invalid']}
      aria-describedby={props['aria-describedby']}
    />
  );
}

/** A Field whose control is a NumberInput; its hints come as `children`, below the input. */
export function NumberField(
  props: NumberInputProps & { label: string; error?: string; children?: ComponentChildren },
) {
  return (
    <Field id={props.id} label={props.label} error={props.error}>
      <NumberInput {...props} />
      {props.children}
    </Field>
  );
}

/**
 * A form control in a table cell (a row of a list the person edits): its label is for screen
 * readers alone, the column's heading naming it to the eye; its error below it, as in a Field.
 */
export function CellField(props: { id: string; label: string; error?: string; children: ComponentChildren }) {
  return (
    <td>
      <label for={props.id} class="sr-only">
        {props.label}
      </label>
      {props.children}
      {props.error && (
        <p class="field-error" id={`${props.id}-error`}>
          {props.error}
        </p>
      )}
    </td>
  );
}

/** A CellField whose control is a NumberInput. */
export function NumberCell(props: NumberInputProps & { label: string; error?: string }) {
  return (
    <CellField id={props.id} label={props.label} error={props.error}>
      <NumberInput {...props} />
    </CellField>
  );
}

/** Customers per band now and after a change a preview describes (weights, a factor rule). */
export function BandsTable(props: {
  before: Record<Status, number>;
  after: Record<Status, number>;
  afterLabel: string;
}) {
  return (
    <table>
      <caption class="sr-only">Customers per band now and {props.afterLabel.toLowerCase()}</caption>
      <thead>
        <tr>
          <th scope="col">Band</th>
          <th scope="col" class="num">
            Now
          </th>
          <th scope="col" class="num">
            {props.afterLabel}
          </th>
        </tr>
      </thead>
      <tbody>
        {STATUSES.map((s) => (
          <tr key={s}>
            <th scope="row">{STATUS_LABEL[s]}</th>
            <td class="num">{count(props.before[s])}</td>
            <td class="num">{count(props.after[s])}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * A polite live region that stays in the page while its message comes and goes, so that screen
 * readers announce each new message (a region added together with its text often goes unheard).
 */
export function LiveNotice({ notice }: { notice: string | undefined }) {
  return <div role="status">{notice && <div class="message ok">{notice}</div>}</div>;
}
