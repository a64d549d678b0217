// A picked CSV file as records, for the import (import.tsx): strict UTF-8, then csv-parse's
// browser build with the CLI's options (src/transfer/read.ts). The portfolio page loads this
// module only when a file is picked: csv-parse (and the Buffer shim it brings) is most of its size.
import { parse } from 'csv-parse/browser/esm/sync';
import { csvMessage, csvOptions } from '../../src/transfer/rows.ts';
import type { Kind } from './batches.ts';

/** Above this, the browser would hold too much at once: the CLI streams a file of any size. */
export const MAX_FILE_BYTES = 50 * 1024 * 1024;

export interface CsvRecord {
  /** The file's line the record ends on, from 1. */
  line: number;
  cells: string[];
}

export interface CsvFile {
  header: string[];
  records: CsvRecord[];
  /** Rows without one cell per header column: each is refused with its line, and not sent. */
  ragged: { line: number; message: string }[];
  /** What the header looks like: customers if it has a customer's own column, metrics if an `at` or `values` one, else scores. */
  guess: Kind;
}

/** A file that cannot be read at all; its message is shown as is. */
export class CsvFileError extends Error {
  override readonly name = 'CsvFileError';
}

export async function readCsv(file: File): Promise<CsvFile> {
  if (file.size > MAX_FILE_BYTES) {
    throw new CsvFileError(
      `The file is ${Math.ceil(file.size / 1024 / 1024)} MB; the dashboard imports files up to 50 MB. ` +
        'Split it, or import it with the CLI (vitals import).',
    );
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await file.arrayBuffer());
  } catch {
    throw new CsvFileError(
      'The file is not UTF-8 text. Save it as UTF-8 (“CSV UTF-8” in Excel) and pick it again.',
    );
  }
  const ragged: CsvFile['ragged'] = [];
  let rows: { record: string[]; info: { lines: number } }[];
  try {
    rows = parse(
      text,
      csvOptions((line, error) => ragged.push({ line, message: error.message })),
    ) as unknown as typeof rows;
  } catch (err) {
    // csv-parse's errors: CSV_… codes, and INVALID_OPENING_QUOTE (a stray quote), which has no prefix.
    const e = err as { code?: unknown; message?: unknown; lines?: unknown };
    if (typeof e.code !== 'string' || !/^(CSV_|INVALID_OPENING_QUOTE$)/.test(e.code)) throw err;
    const message = csvMessage(String(e.message));
    throw new CsvFileError(`The file cannot be read as CSV: line ${Number(e.lines)}: ${message}.`);
  }
  const [first, ...rest] = rows;
  if (!first) throw new CsvFileError('The file is empty: a CSV import needs a header row.');
  return {
    header: first.record,
    records: rest.map((r) => ({ line: r.info.lines, cells: r.record })),
    ragged,
    guess: guessKind(first.record),
  };
}

function guessKind(header: readonly string[]): Kind {
  const customers = header.some((raw) => {
    const name = raw.trim();
    return name === 'name' || name === 'email' || name === 'metadata' || name.startsWith('metadata.');
  });
  if (customers) return 'customers';
  const metrics = header.some((raw) => raw.trim() === 'at' || raw.trim() === 'values');
  return metrics ? 'metrics' : 'scores';
}
