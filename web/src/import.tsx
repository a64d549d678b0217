// The portfolio page's CSV import (docs/dashboard.md, "Importing a CSV"): pick a file, say what it
// holds, see its first rows as they will be read, import them in batches, then read what was
// refused. A row becomes a batch item by the CLI's own rules (src/transfer/rows.ts).
import { useMemo, useRef, useState } from 'preact/hooks';
import { type Column, fromCsv, HeaderError, type RowError, readHeader } from '../../src/transfer/rows.ts';
import { type Kind, type Refusal, type Row, sendRows, type Tally } from './batches.ts';
import type { CsvFile } from './csv.ts';
import { count } from './format.ts';
import { ImportProgress, ImportResults, Preview } from './import-view.tsx';
import { ErrorMessage, Loading } from './ui.tsx';

const KINDS: Record<Kind, string> = { customers: 'Customers', scores: 'Health scores', metrics: 'Metrics' };

type Picked =
  | { state: 'reading'; name: string }
  | { state: 'unreadable'; name: string; error: unknown }
  | { state: 'read'; name: string; csv: CsvFile };

export interface Run {
  total: number;
  started: number;
  /** When `tally` was taken (performance.now()). */
  at: number;
  tally: Tally;
  done: boolean;
  error?: unknown;
}

/** The file's rows for `kind`: the items to send, and the rows refused before sending. */
interface Prepared {
  columns: Column[];
  rows: Row[];
  local: Refusal[];
}

function prepare(kind: Kind, csv: CsvFile): Prepared | HeaderError {
  let columns: Column[];
  try {
    columns = readHeader(kind, csv.header);
  } catch (err) {
    if (err instanceof HeaderError) return err;
    throw err;
  }
  const id = columns.findIndex((c) => c.to === 'customer_id');
  const rows: Row[] = [];
  const local: Refusal[] = csv.ragged.map((r) => ({ line: r.line, customer_id: null, message: r.message }));
  for (const { line, cells } of csv.records) {
    const converted = fromCsv(columns, cells);
    if ('item' in converted) rows.push({ line, item: converted.item });
    else local.push({ line, customer_id: cells[id] || null, ...refusalOf(converted.error) });
  }
  return { columns, rows, local };
}

const refusalOf = ({ message, param, code }: RowError) => ({ message, param, code });

export function CsvImport({ onImported }: { onImported: () => void }) {
  const [picked, setPicked] = useState<Picked>();
  const [kind, setKind] = useState<Kind>('customers');
  const [run, setRun] = useState<Run>();
  const latest = useRef<File | undefined>(undefined);
  const heading = useRef<HTMLHeadingElement>(null);
  const csv = picked?.state === 'read' ? picked.csv : undefined;
  const prepared = useMemo(() => (csv ? prepare(kind, csv) : undefined), [kind, csv]);
  const busy = run !== undefined && !run.done;
  const ready = prepared instanceof HeaderError ? undefined : prepared;
  // Every refused row, in file order: those read here and never sent, then the API's.
  const refused = useMemo(
    () => (run?.done ? [...(ready?.local ?? []), ...run.tally.refused].sort((a, b) => a.line - b.line) : []),
    [run, ready],
  );

  const pick = async (file: File | undefined) => {
    latest.current = file;
    setRun(undefined);
    if (!file) {
      setPicked(undefined);
      return;
    }
    setPicked({ state: 'reading', name: file.name });
    try {
      // csv-parse comes with the first file: the page itself stays small.
      const { readCsv } = await import('./csv.ts');
      const read = await readCsv(file);
      if (latest.current !== file) return;
      setKind(read.guess);
      setPicked({ state: 'read', name: file.name, csv: read });
    } catch (error) {
      if (latest.current === file) setPicked({ state: 'unreadable', name: file.name, error });
    }
  };

  const start = async (ready: Prepared) => {
    const tally: Tally = { sent: 0, created: 0, updated: 0, scored: 0, recorded: 0, refused: [] };
    const total = ready.rows.length;
    const started = performance.now();
    // The button goes with the preview: keyboard focus moves to the panel's heading instead.
    heading.current?.focus();
    const snapshot = (end?: { error?: unknown }) =>
      setRun({ total, started, at: performance.now(), tally: { ...tally }, done: end !== undefined, ...end });
    snapshot();
    try {
      await sendRows(kind, ready.rows, tally, () => snapshot());
      snapshot({});
    } catch (error) {
      snapshot({ error });
    }
    onImported();
  };

  return (
    <section aria-labelledby="import-title" class="card">
      <h2 id="import-title" tabIndex={-1} ref={heading}>
        Import a CSV file
      </h2>
      <p class="hint" id="import-hint">
        Customers, health scores or metrics, read as <code>vitals import</code> reads them. Each row creates
        or updates its customer, replaces its factors, or records its metric values at its instant (
        <code>at</code>, now when empty).
      </p>
      <div class="import-controls">
        <div class="field">
          <label for="import-file">CSV file</label>
          <input
            id="import-file"
            type="file"
            accept=".csv,text/csv"
            aria-describedby="import-hint"
            disabled={busy}
            onChange={(e) => pick(e.currentTarget.files?.[0])}
          />
        </div>
        {csv && (
          <div class="field">
            <label for="import-kind">The file holds</label>
            <select
              id="import-kind"
              value={kind}
              disabled={busy || run !== undefined}
              onChange={(e) => setKind(e.currentTarget.value as Kind)}
            >
              {Object.entries(KINDS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </div>
        )}
      </div>
      {picked?.state === 'reading' && <Loading what={picked.name} />}
      {picked?.state === 'unreadable' && (
        <ErrorMessage error={picked.error} title={`${picked.name} cannot be imported.`} />
      )}
      {prepared instanceof HeaderError && (
        <ErrorMessage error={prepared} title={`The header cannot be read as ${KINDS[kind].toLowerCase()}:`} />
      )}
      {csv && ready && !run && (
        <>
          <Preview name={picked?.name ?? ''} csv={csv} columns={ready.columns} />
          <p>
            {count(ready.rows.length)} {ready.rows.length === 1 ? 'row' : 'rows'} to import.
            {ready.local.length > 0 &&
              ` ${count(ready.local.length)} cannot be read and will not be sent: ${ready.local.length === 1 ? 'it is' : 'they are'} listed as refused after the import.`}
          </p>
          <div class="actions">
            <button type="button" onClick={() => start(ready)}>
              Import {KINDS[kind].toLowerCase()}
            </button>
          </div>
        </>
      )}
      {run && <ImportProgress run={run} />}
      <div role="status" class="import-status">
        {run && <Summary run={run} kind={kind} refused={refused.length} />}
      </div>
      {run?.error !== undefined && (
        <ErrorMessage
          error={run.error}
          title={`The import stopped with ${count(run.tally.sent)} of ${count(run.total)} rows answered; the others may not be stored (importing the file again is safe).`}
        />
      )}
      {run?.done && <ImportResults refused={refused} />}
    </section>
  );
}

/** What the live region says: that the import runs, then what it did. */
function Summary({ run, kind, refused }: { run: Run; kind: Kind; refused: number }) {
  if (!run.done) return <p>Importing {count(run.total)} rows…</p>;
  const { created, updated, scored, recorded } = run.tally;
  const done =
    kind === 'customers'
      ? `${count(created)} created, ${count(updated)} updated`
      : kind === 'scores'
        ? `${count(scored)} scored`
        : `${count(recorded)} ${recorded === 1 ? 'row' : 'rows'} of metrics recorded`;
  if (run.error !== undefined)
    return (
      <p class="message">
        Import stopped: {done}, {count(refused)} refused.
      </p>
    );
  if (refused === 0) return <p class="message ok">Import done: {done}, 0 refused.</p>;
  // Not a success to skim past: those rows are not stored, and the file needs fixing.
  return (
    <p class="message warning">
      Import done: {done}. {count(refused)} {refused === 1 ? 'row was' : 'rows were'} refused and not stored:
      see Refused rows below.
    </p>
  );
}
