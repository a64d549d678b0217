// How a row of an import file becomes a batch item (docs/cli.md, "Import and export"): the
// columns a CSV header may have, and what each cell means. Pure, without Node: the dashboard's
// import (web/) reads CSV files with these same rules.
import { BOOK_FIELDS } from '../domain/customers.ts';
import { FACTOR_NAME } from '../domain/scoring.ts';
import { INSTANT_RULE, parseInstant } from '../domain/time.ts';

export type Kind = 'customers' | 'scores' | 'metrics' | 'outcomes';

/** A field of a row the API would refuse before it is sent: the row's own error, in the API's envelope. */
export interface RowError {
  type: 'invalid_request_error';
  code: 'parameter_invalid' | 'parameter_missing';
  message: string;
  param?: string;
}

export type Converted = { item: Record<string, unknown> } | { error: RowError };

/** What a header column means, or why it cannot be read. */
export type Column =
  | {
      to:
        | 'customer_id'
        | 'name'
        | 'email'
        | (typeof BOOK_FIELDS)[number]
        | 'metadata'
        | 'factors'
        | 'values'
        | 'at'
        | 'outcome'
        | 'note';
    }
  | { to: 'metadata_key'; key: string }
  | { to: 'factor'; name: string }
  | { to: 'metric'; name: string }
  | { to: 'ignored' };

/** Columns an export writes that an import reads past: they are the server's to set (a score's
 * `name`, book and `metadata` are its customer's, which a scores import does not change; an
 * outcome's `id` is new on each import). */
const READ_ONLY: Record<Kind, readonly string[]> = {
  customers: ['created_at', 'updated_at'],
  scores: [
    'name',
    'health_score',
    'status',
    'gated_by',
    'updated_at',
    'override',
    ...BOOK_FIELDS,
    'metadata',
  ],
  metrics: ['health_score'],
  outcomes: ['id', 'created_at'],
};

export const COLUMN_RULES: Record<Kind, string> = {
  customers:
    'customer_id, name, email, owner, arr, renewal_at, lifecycle, parent_id, metadata (a JSON object) or metadata.KEY (1-64 characters)',
  scores:
    'customer_id, factors (a JSON object) or a factor name (lowercase letters, digits and _, 1-64, from a letter)',
  metrics:
    'customer_id, at (ISO 8601), values (a JSON object) or a metric name (lowercase letters, digits and _, 1-64, from a letter)',
  outcomes: 'customer_id, outcome (churned or retained), at (ISO 8601, not in the future), note',
};

export class HeaderError extends Error {
  override readonly name = 'HeaderError';
}

/** Each header column's meaning; throws HeaderError naming the first column that has none. */
export function readHeader(kind: Kind, header: readonly string[]): Column[] {
  const seen = new Set<string>();
  const columns = header.map((raw, i): Column => {
    const name = raw.trim();
    if (seen.has(name)) throw new HeaderError(`column ${i + 1} ('${name}') appears twice in the header`);
    seen.add(name);
    const column = columnOf(kind, name);
    if (!column) {
      throw new HeaderError(
        `column ${i + 1} ('${name}') is not ${kind === 'outcomes' ? 'an' : 'a'} ${kind} column; the columns are ${COLUMN_RULES[kind]}`,
      );
    }
    return column;
  });
  if (!seen.has('customer_id')) throw new HeaderError("the header has no 'customer_id' column");
  return columns;
}

function columnOf(kind: Kind, name: string): Column | null {
  if (name === 'customer_id') return { to: 'customer_id' };
  if (READ_ONLY[kind].includes(name)) return { to: 'ignored' };
  if (kind === 'customers') {
    if (name === 'name' || name === 'email' || name === 'metadata') return { to: name };
    const book = BOOK_FIELDS.find((column) => column === name);
    if (book) return { to: book };
    const key = name.startsWith('metadata.') ? name.slice('metadata.'.length) : null;
    return key !== null && key.length >= 1 && key.length <= 64 ? { to: 'metadata_key', key } : null;
  }
  if (kind === 'metrics') {
    if (name === 'at' || name === 'values') return { to: name };
    return FACTOR_NAME.test(name) ? { to: 'metric', name } : null;
  }
  if (kind === 'outcomes') {
    return name === 'outcome' || name === 'at' || name === 'note' ? { to: name } : null;
  }
  if (name === 'factors') return { to: 'factors' };
  return FACTOR_NAME.test(name) ? { to: 'factor', name } : null;
}

const DECIMAL = /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/**
 * A CSV record as the batch item it stands for. An empty cell is a field not sent. A factor's
 * cell that is not a number is sent as text, for the API to refuse with its own message.
 */
export function fromCsv(columns: readonly Column[], cells: readonly string[]): Converted {
  const item: Record<string, unknown> = {};
  let metadata: Record<string, unknown> | undefined;
  let factors: Record<string, unknown> | undefined;
  let values: Record<string, unknown> | undefined;
  for (const [i, column] of columns.entries()) {
    const cell = cells[i] ?? '';
    if (cell === '' || column.to === 'ignored') continue;
    switch (column.to) {
      case 'at':
        if (parseInstant(cell) === null) return notAnInstant();
        item.at = cell;
        break;
      case 'arr':
        // Text that is not a number goes as it is, for the API to refuse with its own message.
        item.arr = DECIMAL.test(cell) ? Number(cell) : cell;
        break;
      case 'customer_id':
      case 'name':
      case 'email':
      case 'owner':
      case 'renewal_at':
      case 'lifecycle':
      case 'parent_id':
      case 'outcome':
      case 'note':
        item[column.to] = cell;
        break;
      case 'metadata':
      case 'factors':
      case 'values': {
        const parsed = jsonObject(cell);
        if (!parsed) return refused(column.to, `'${column.to}' must be a JSON object.`);
        if (column.to === 'metadata') metadata = { ...parsed, ...metadata };
        else if (column.to === 'factors') factors = { ...parsed, ...factors };
        else values = { ...parsed, ...values };
        break;
      }
      case 'metric':
        values = { ...values, [column.name]: DECIMAL.test(cell) ? Number(cell) : cell };
        break;
      case 'metadata_key':
        metadata = { ...metadata, [column.key]: cell };
        break;
      case 'factor':
        factors = { ...factors, [column.name]: DECIMAL.test(cell) ? Number(cell) : cell };
        break;
    }
  }
  if (metadata) item.metadata = metadata;
  if (factors) item.factors = factors;
  if (values) item.values = values;
  return { item };
}

/**
 * An NDJSON line's object as a batch item: the batch item itself, or what an export wrote (a
 * Customer's `id` is its `customer_id`; the server's own fields are read past).
 */
export function fromJson(kind: Kind, value: unknown): Converted {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {
      error: {
        type: 'invalid_request_error',
        code: 'parameter_invalid',
        message: 'The line must be a JSON object.',
      },
    };
  }
  const item: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  if (kind === 'customers' && !('customer_id' in item) && typeof item.id === 'string') {
    item.customer_id = item.id;
    delete item.id;
  }
  for (const field of READ_ONLY[kind]) delete item[field];
  // An Outcome as the API answers it says "no note" with null, which a write refuses: not sent.
  if (kind === 'outcomes' && item.note === null) delete item.note;
  // A date that does not exist is the row's own error, as the API would give it (docs/api.md, "Dates and times").
  if (
    (kind === 'metrics' || kind === 'outcomes') &&
    typeof item.at === 'string' &&
    parseInstant(item.at) === null
  )
    return notAnInstant();
  return { item };
}

function jsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

const refused = (param: string, message: string): Converted => ({
  error: { type: 'invalid_request_error', code: 'parameter_invalid', message, param },
});
const notAnInstant = (): Converted => refused('at', `'at' must be ${INSTANT_RULE}.`);

/** The longest line (or CSV record) read: far above any row the API takes (16 KiB metadata). */
export const MAX_LINE = 1024 * 1024;

/**
 * csv-parse's options for an import, on Node (read.ts) and in the browser (web/src/csv.ts): a
 * ragged row (a cell too many or too few) goes to `onRagged` as that row's refusal, and every
 * other parse error (an unclosed quote, a record over MAX_LINE) is thrown, since the rest of the
 * file cannot be read after it. Records come with `info.lines`, the line each ends on.
 */
export function csvOptions(onRagged: (line: number, error: RowError) => void) {
  return {
    bom: true,
    info: true,
    skip_empty_lines: true,
    relax_column_count: false,
    max_record_size: MAX_LINE,
    skip_records_with_error: true,
    on_skip: (err: { code?: string; lines?: unknown; message: string } | undefined): undefined => {
      if (err?.code !== 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH') throw err;
      onRagged(Number(err.lines), {
        type: 'invalid_request_error',
        code: 'parameter_invalid',
        message: `The row does not have one cell per header column (${err.message.replace(/ on line \d+$/, '')}).`,
      });
      return undefined;
    },
  } as const;
}

/**
 * A csv-parse error's message without its own "at line N" (the caller names the line), and with
 * its 0-based "field N" as the column a person counts.
 */
export const csvMessage = (message: string) =>
  message
    .replace(/ at line \d+/, '')
    .replace(/ on field (\d+)/, (_, field: string) => ` in column ${Number(field) + 1}`);
