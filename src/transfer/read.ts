// An import file as rows, streamed: CSV through csv-parse, NDJSON through split2, both behind a
// strict UTF-8 decoder. Memory stays flat for any file size. What makes the rest of the file
// unreadable (bad UTF-8, an unclosed quote, a line longer than MAX_LINE, a wrong header) stops
// the import with a FileError naming the line; a row that is merely wrong (a ragged CSV row,
// an NDJSON line that is not JSON) is that row's refusal, and the import goes on.
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import split from 'split2';
import {
  type Converted,
  csvMessage,
  csvOptions,
  fromCsv,
  fromJson,
  HeaderError,
  type Kind,
  MAX_LINE,
  readHeader,
} from './rows.ts';

export type Format = 'csv' | 'ndjson';

export interface Row {
  /** The file's line the row ends on, from 1. */
  line: number;
  converted: Converted;
}

export class FileError extends Error {
  override readonly name = 'FileError';
  readonly line: number | undefined;
  constructor(message: string, line?: number) {
    super(line === undefined ? message : `line ${line}: ${message}`);
    this.line = line;
  }
}

export const formatOf = (path: string): Format => (/\.(ndjson|jsonl)$/i.test(path) ? 'ndjson' : 'csv');

/** Bytes to text, refusing what is not UTF-8 (a Latin-1 export, say) with the line it is on. */
class Utf8 extends Transform {
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });
  #lines = 1;

  constructor() {
    super({ decodeStrings: true, readableObjectMode: false, encoding: 'utf8' });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.#decode(chunk, true, done);
  }

  override _flush(done: TransformCallback): void {
    this.#decode(new Uint8Array(0), false, done);
  }

  #decode(bytes: Uint8Array, stream: boolean, done: TransformCallback): void {
    let text: string;
    try {
      text = this.#decoder.decode(bytes, { stream });
    } catch {
      const line = this.#lines + newlines(validPrefix(bytes));
      done(new FileError('the file is not UTF-8 text; save it as UTF-8 (CSV UTF-8) and import again', line));
      return;
    }
    this.#lines += newlines(text);
    done(null, text);
  }
}

function newlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** The longest start of `bytes` that is UTF-8 (an unfinished last character allowed), as text. */
function validPrefix(bytes: Uint8Array): string {
  const decodes = (n: number) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, n), { stream: true });
      return true;
    } catch {
      return false;
    }
  };
  let [good, bad] = [0, bytes.length];
  while (bad - good > 1) {
    const mid = (good + bad) >> 1;
    if (decodes(mid)) good = mid;
    else bad = mid;
  }
  return new TextDecoder('utf-8').decode(bytes.subarray(0, good));
}

/** The rows of `input`, in order. Throws FileError for a file that cannot be read on. */
export async function* readRows(
  input: NodeJS.ReadableStream,
  kind: Kind,
  format: Format,
): AsyncGenerator<Row> {
  yield* format === 'csv' ? csvRows(input, kind) : ndjsonRows(input, kind);
}

async function* csvRows(input: NodeJS.ReadableStream, kind: Kind): AsyncGenerator<Row> {
  const skipped: Row[] = [];
  const parser = parse(
    csvOptions((line, error) => {
      skipped.push({ line, converted: { error } });
    }),
  );
  const done = pipeline(input, new Utf8(), parser).catch((err: unknown) => {
    throw toFileError(err);
  });
  let columns: ReturnType<typeof readHeader> | undefined;
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[];
      info: { lines: number };
    }>) {
      yield* skipped.splice(0);
      if (!columns) {
        try {
          columns = readHeader(kind, record);
        } catch (err) {
          if (err instanceof HeaderError) throw new FileError(err.message, info.lines);
          throw err;
        }
        continue;
      }
      yield { line: info.lines, converted: fromCsv(columns, record) };
    }
    yield* skipped.splice(0);
  } catch (err) {
    throw toFileError(err);
  } finally {
    // Stops reading when the caller stops early; a pipeline error was already thrown above.
    parser.destroy();
    await done.catch(() => {});
  }
  await done;
  if (!columns) throw new FileError('the file is empty: a CSV import needs a header row');
}

async function* ndjsonRows(input: NodeJS.ReadableStream, kind: Kind): AsyncGenerator<Row> {
  let line = 0;
  // split2 destroys the stream when a line outgrows maxLength, before it is all in memory.
  const lines = split({ maxLength: MAX_LINE });
  const done = pipeline(input, new Utf8(), lines).catch((err: unknown) => {
    throw toFileError(err, line + 1);
  });
  try {
    for await (const text of lines as AsyncIterable<string>) {
      line++;
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        yield {
          line,
          converted: {
            error: {
              type: 'invalid_request_error',
              code: 'parameter_invalid',
              message: 'The line is not valid JSON.',
            },
          },
        };
        continue;
      }
      yield { line, converted: fromJson(kind, value) };
    }
  } catch (err) {
    throw toFileError(err, line + 1);
  } finally {
    lines.destroy();
    await done.catch(() => {});
  }
  await done;
}

function toFileError(err: unknown, line?: number): Error {
  if (err instanceof FileError) return err;
  const e = err as { code?: string; message?: string; lines?: number };
  if (e.code === 'CSV_MAX_RECORD_SIZE')
    return new FileError(`a record is longer than ${MAX_LINE} bytes`, e.lines);
  if (typeof e.code === 'string' && e.code.startsWith('CSV_')) {
    return new FileError(csvMessage(String(e.message)), e.lines);
  }
  if (/maxLength|maximum buffer/i.test(String(e.message))) {
    return new FileError(`the line is longer than ${MAX_LINE} bytes`, line);
  }
  return err instanceof Error ? err : new Error(String(err));
}
