// What the CSV import (import.tsx) shows: the file's first rows as they will be read, the
// progress of the batches, and the rows that were refused.
import type { Column } from '../../src/transfer/rows.ts';
import type { Refusal } from './batches.ts';
import type { CsvFile } from './csv.ts';
import { count } from './format.ts';
import type { Run } from './import.tsx';

const PREVIEW_ROWS = 5;
/** More refused rows than this are counted, not listed: the CLI writes them all to a file. */
const LISTED = 100;

/** The field a column becomes, as the preview's header says it. */
function fieldOf(column: Column): string {
  switch (column.to) {
    case 'metadata_key':
      return `metadata.${column.key}`;
    case 'factor':
      return `factor ${column.name}`;
    case 'metric':
      return `metric ${column.name}`;
    default:
      return column.to;
  }
}

export function Preview({ name, csv, columns }: { name: string; csv: CsvFile; columns: Column[] }) {
  const rows = csv.records.slice(0, PREVIEW_ROWS);
  return (
    <div class="table-wrap">
      <table class="import-preview">
        <caption>
          {rows.length < csv.records.length ? `The first ${rows.length} rows` : 'The rows'} of {name}, as they
          will be read
        </caption>
        <thead>
          <tr>
            <th scope="col" class="num">
              Line
            </th>
            {csv.header.map((raw, i) => (
              <th key={i} scope="col" class={columns[i]?.to === 'ignored' ? 'ignored' : undefined}>
                <span class="mono">{raw.trim()}</span> → {columns[i] ? fieldOf(columns[i]) : ''}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.line}>
              <th scope="row" class="num">
                {r.line}
              </th>
              {r.cells.map((cell, i) => (
                <td key={i} class={columns[i]?.to === 'ignored' ? 'ignored' : undefined}>
                  {cell}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ImportProgress({ run }: { run: Run }) {
  const seconds = (run.at - run.started) / 1000;
  const rate = seconds > 0 ? Math.round(run.tally.sent / seconds) : 0;
  return (
    <div class="import-progress">
      <label for="import-progress">Rows sent</label>
      {/* An import with nothing to send is full at once. */}
      <progress
        id="import-progress"
        max={Math.max(run.total, 1)}
        value={run.total === 0 ? 1 : run.tally.sent}
      />
      <span class="hint">
        {count(run.tally.sent)} of {count(run.total)} rows · {count(rate)} rows/s
      </span>
    </div>
  );
}

export function ImportResults({ refused }: { refused: Refusal[] }) {
  if (refused.length === 0) return <p>No row was refused.</p>;
  const listed = refused.slice(0, LISTED);
  return (
    <div class="table-wrap">
      <table class="refused">
        <caption>
          Refused rows
          {listed.length < refused.length && ` (the first ${listed.length} of ${count(refused.length)})`}
        </caption>
        <thead>
          <tr>
            <th scope="col" class="num">
              Line
            </th>
            <th scope="col">Customer</th>
            <th scope="col">Why</th>
          </tr>
        </thead>
        <tbody>
          {listed.map((r) => (
            <tr key={r.line}>
              <th scope="row" class="num">
                {r.line}
              </th>
              <td class="break">{r.customer_id ?? '—'}</td>
              <td>
                {r.message}
                {(r.param || r.code) && (
                  <span class="sub">
                    {[r.param && `param: ${r.param}`, r.code].filter(Boolean).join(' · ')}
                  </span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
