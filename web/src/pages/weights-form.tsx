// The factor weights on the settings page (docs/scoring.md, "Weights"): one row per factor, the sum
// checked as it is typed, and the server's preview of what saving would change, asked once typing
// pauses.
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  FACTOR_NAME,
  MAX_FACTORS,
  WEIGHT_SUM_TOLERANCE,
  weightsSumValid,
} from '../../../src/domain/scoring.ts';
import { api, type Preview, type Summary, type WeightsAnswer } from '../api.ts';
import { count, when } from '../format.ts';
import { BandsTable, CellField, ErrorMessage, Loading, Notice, NumberCell, useLoad } from '../ui.tsx';

interface Row {
  key: number;
  name: string;
  weight: string;
}

let nextKey = 1;
const row = (name = '', weight = ''): Row => ({ key: nextKey++, name, weight });

/** A weight as typed: a number in [0, 1], or why not. */
function parseWeight(text: string): { value?: number; error?: string } {
  if (text.trim() === '') return { error: 'Enter a weight.' };
  const value = Number(text);
  if (!Number.isFinite(value)) return { error: 'A weight is a number.' };
  if (value < 0 || value > 1) return { error: 'A weight is from 0 to 1.' };
  return { value };
}

function check(rows: Row[]) {
  const errors = new Map<number, { name?: string; weight?: string }>();
  const weights: Record<string, number> = {};
  const seen = new Set<string>();
  for (const r of rows) {
    const e: { name?: string; weight?: string } = {};
    if (!FACTOR_NAME.test(r.name)) {
      e.name = 'Lowercase letters, digits and _, starting with a letter; at most 64.';
    } else if (seen.has(r.name)) e.name = 'This factor is already listed.';
    seen.add(r.name);
    const w = parseWeight(r.weight);
    if (w.error) e.weight = w.error;
    else weights[r.name] = w.value as number;
    if (e.name || e.weight) errors.set(r.key, e);
  }
  const sum = rows.reduce((s, r) => s + (parseWeight(r.weight).value ?? 0), 0);
  let problem: string | undefined;
  if (rows.length === 0) problem = 'Add at least one factor.';
  else if (rows.length > MAX_FACTORS) problem = `At most ${MAX_FACTORS} factors.`;
  else if (errors.size === 0 && !weightsSumValid(weights)) {
    problem = `The weights add up to ${+sum.toFixed(6)}; they must add up to 1 (within ${WEIGHT_SUM_TOLERANCE}).`;
  }
  const valid = errors.size === 0 && problem === undefined;
  return { errors, weights, sum, problem, valid };
}

/** Each weight over their sum, rounded to 6 places, the last one taking the rounding remainder. */
function scaled(rows: Row[], sum: number): Row[] {
  let rest = 1;
  return rows.map((r, i) => {
    const v =
      i === rows.length - 1 ? rest : Math.round(((parseWeight(r.weight).value ?? 0) / sum) * 1e6) / 1e6;
    rest -= v;
    return { ...r, weight: String(+Math.max(0, v).toFixed(6)) };
  });
}

type PreviewState = { for: string; answer?: Preview; error?: unknown };

/** What `weights` would do if saved, asked once typing pauses; it answers for `json` alone. */
function useWeightsPreview(weights: Record<string, number>, json: string, valid: boolean, changed: boolean) {
  const [preview, setPreview] = useState<PreviewState>();
  const round = useRef(0);
  useEffect(() => {
    if (!valid || !changed) return;
    const mine = ++round.current;
    const timer = setTimeout(() => {
      api.post<Preview>('/api/settings/health-score/weights/preview', { weights }).then(
        (answer) => mine === round.current && setPreview({ for: json, answer }),
        (err) => mine === round.current && setPreview({ for: json, error: err }),
      );
    }, 300);
    return () => clearTimeout(timer);
  }, [json, valid, changed]);
  return [preview, setPreview] as const;
}

export function WeightsForm() {
  const loaded = useLoad(async (signal) => {
    const [weights, summary] = await Promise.all([
      api.get<WeightsAnswer>('/api/settings/health-score/weights', signal),
      api.get<Summary>('/api/health-scores/summary', signal),
    ]);
    return { weights, summary };
  }, []);
  const [rows, setRows] = useState<Row[]>();
  const [error, setError] = useState<unknown>();
  const [saved, setSaved] = useState<string>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const w = loaded.data?.weights.weights;
    if (w && rows === undefined) {
      const entries = Object.entries(w);
      setRows(entries.length > 0 ? entries.map(([n, v]) => row(n, String(v))) : [row()]);
    }
  }, [loaded.data, rows]);

  const result = check(rows ?? []);
  const json = JSON.stringify(result.weights);
  const savedJson = JSON.stringify(loaded.data?.weights.weights ?? {});
  const changed = json !== savedJson;
  const [preview, setPreview] = useWeightsPreview(result.weights, json, result.valid, changed);

  if (loaded.error) return <ErrorMessage error={loaded.error} />;
  if (!loaded.data || !rows) return <Loading what="the weights" />;
  const { weights, summary } = loaded.data;

  const update = (key: number, change: Partial<Row>) => {
    setRows(rows.map((r) => (r.key === key ? { ...r, ...change } : r)));
    setSaved(undefined);
    setError(undefined);
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!result.valid) return;
    setBusy(true);
    setError(undefined);
    try {
      const answer = await api.patch<WeightsAnswer>('/api/settings/health-score/weights', {
        weights: result.weights,
      });
      const moved = preview?.for === json ? preview.answer : undefined;
      loaded.set({
        weights: answer,
        summary: moved ? { ...summary, total: moved.customers, counts: moved.bands } : summary,
      });
      setRows(Object.entries(answer.weights).map(([n, v]) => row(n, String(v))));
      setSaved(
        moved
          ? `Weights saved. ${count(moved.scores_changed)} scores were recomputed; ${count(moved.band_changes)} customers changed band.`
          : 'Weights saved. Every score has been recomputed.',
      );
      setPreview(undefined);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const current = preview?.for === json ? preview : undefined;
  return (
    <section aria-labelledby="weights-title" class="card">
      <h2 id="weights-title">Factor weights</h2>
      <p class="hint">
        A customer's score is the weighted mean of its factors that have a weight above 0 (rescaled over the
        factors it has); with none, the plain mean. The weights must add up to 1. Saving recomputes every
        score at once.{' '}
        {weights.updated_at ? `Last changed ${when(weights.updated_at)}.` : 'No weights are set yet.'}
      </p>
      <form onSubmit={submit} noValidate>
        <table class="weights">
          <thead>
            <tr>
              <th scope="col">Factor</th>
              <th scope="col">Weight</th>
              <th scope="col">
                <span class="sr-only">Remove</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <WeightRow
                key={r.key}
                row={r}
                index={i}
                errors={result.errors.get(r.key)}
                onChange={(change) => update(r.key, change)}
                onRemove={() => setRows(rows.filter((x) => x.key !== r.key))}
              />
            ))}
          </tbody>
        </table>
        <div class="actions">
          <button
            type="button"
            class="secondary"
            onClick={() => setRows([...rows, row()])}
            disabled={rows.length >= MAX_FACTORS}
          >
            Add factor
          </button>
          {result.errors.size === 0 && !result.valid && result.sum > 0 && (
            <button type="button" class="secondary" onClick={() => setRows(scaled(rows, result.sum))}>
              Scale to add up to 1
            </button>
          )}
        </div>
        <p class={`sum${result.valid ? '' : ' bad'}`} aria-live="polite">
          Sum: {+result.sum.toFixed(6)}
          {result.problem ? ` — ${result.problem}` : result.valid ? ' ✓' : ''}
        </p>
        <div class="preview" aria-live="polite">
          {result.valid && changed && !current && <p class="loading">Working out what would change…</p>}
          {current?.error !== undefined && <ErrorMessage error={current.error} title="No preview:" />}
          {current?.answer && <PreviewTable preview={current.answer} before={summary} />}
        </div>
        <ErrorMessage error={error} title="Not saved:" />
        {saved && <Notice>{saved}</Notice>}
        <button type="submit" disabled={!result.valid || !changed || busy}>
          {busy ? 'Saving…' : 'Save weights'}
        </button>
      </form>
    </section>
  );
}

function PreviewTable({ preview, before }: { preview: Preview; before: Summary }) {
  return (
    <div class="preview-box">
      <p>
        <strong>Before you save:</strong> of {count(preview.customers)} customers with a score, these weights
        would change <strong>{count(preview.scores_changed)}</strong> scores and move{' '}
        <strong data-testid="band-changes">{count(preview.band_changes)}</strong>{' '}
        {preview.band_changes === 1 ? 'customer' : 'customers'} to another band.
      </p>
      <BandsTable before={before.counts} after={preview.bands} afterLabel="With these weights" />
    </div>
  );
}

/** One factor: its name and weight, each with its error, and a button that removes it. */
function WeightRow(props: {
  row: Row;
  index: number;
  errors: { name?: string; weight?: string } | undefined;
  onChange: (change: Partial<Row>) => void;
  onRemove: () => void;
}) {
  const { row: r, index: i, errors: e } = props;
  const nameId = `factor-${r.key}`;
  const weightId = `weight-${r.key}`;
  return (
    <tr class="weight-row">
      <CellField id={nameId} label={`Factor ${i + 1} name`} error={e?.name}>
        <input
          id={nameId}
          class="mono"
          value={r.name}
          placeholder="usage"
          maxLength={64}
          spellcheck={false}
          autoComplete="off"
          onInput={(ev) => props.onChange({ name: ev.currentTarget.value })}
          aria-invalid={e?.name ? true : undefined}
          aria-describedby={e?.name ? `${nameId}-error` : undefined}
        />
      </CellField>
      <NumberCell
        id={weightId}
        label={`Weight of factor ${i + 1} ${r.name}`}
        error={e?.weight}
        min={0}
        max={1}
        step="any"
        value={r.weight}
        onValue={(weight) => props.onChange({ weight })}
        aria-invalid={e?.weight ? true : undefined}
        aria-describedby={e?.weight ? `${weightId}-error` : undefined}
      />
      <td>
        <button
          type="button"
          class="secondary small"
          onClick={props.onRemove}
          aria-label={`Remove factor ${i + 1} ${r.name}`}
        >
          Remove
        </button>
      </td>
    </tr>
  );
}
