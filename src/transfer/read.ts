// An import file as rows, streamed: CSV through csv-parse, NDJSON through split2, both behind a
// strict UTF-8 decoder. Memory stays flat for any file size. What makes the rest of the file
// unreadable (bad UTF-8, an unclosed quote, a line longer than MAX_LINE, a wrong header) stops
// the import with a FileError naming the line; a row that is merely wrong (a ragged CSV row,
// an NDJSON line that is not JSON) is that row's refusal, and the import goes on.
//
// Such an error is not let loose in the pipeline: that would destroy the parser with the rows it
// holds, which end before the error and must still be sent. The decoder keeps it (`stop`), ends
// its output there, and the rows before its line are given before it is thrown.
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError, type Info, parse } from 'csv-parse';
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

/**
 * Bytes to text, refusing what is not UTF-8 (a Latin-1 export, say) with the line it is on, and
 * with `maxLine`, a line longer than that many bytes. It is also where reading stops: after
 * `stop()` it passes on nothing more and ends, so the parser after it ends with the rows it has.
 */
class Utf8 extends Transform {
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });
  readonly #maxLine: number;
  #lines = 1;
  /** Bytes of the line being read, so far. */
  #lineBytes = 0;
  /** Why the file cannot be read on: of what was found, the error on the earliest line. */
  stopped: FileError | undefined;

  constructor(maxLine = Number.POSITIVE_INFINITY) {
    super({ decodeStrings: true, readableObjectMode: false, encoding: 'utf8' });
    this.#maxLine = maxLine;
  }

  /** Ends the input at `error`'s line, unless it was stopped on an earlier one. */
  stop(error: FileError): void {
    if (this.stopped && !this.before(error.line ?? Number.POSITIVE_INFINITY)) return;
    // Not at once: stop() may be called by the parser, from within this stream's push.
    if (!this.stopped) process.nextTick(() => this.push(null));
    this.stopped = error;
  }

  /** Whether a row that ends on `line` was read whole, before where the input stopped. */
  before(line: number): boolean {
    return line < (this.stopped?.line ?? Number.POSITIVE_INFINITY);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.stopped) {
      done();
      return;
    }
    this.#measure(chunk);
    this.#decode(chunk, true, done);
  }

  override _flush(done: TransformCallback): void {
    if (this.stopped) {
      done();
      return;
    }
    this.#decode(new Uint8Array(0), false, done);
  }

  #measure(bytes: Uint8Array): void {
    let line = this.#lines;
    for (let start = 0; start <= bytes.length; line++) {
      const end = bytes.indexOf(0x0a, start);
      this.#lineBytes += (end === -1 ? bytes.length : end) - start;
      if (this.#lineBytes > this.#maxLine) {
        this.stop(new FileError(`the line is longer than ${this.#maxLine} bytes`, line));
        return;
      }
      if (end === -1) return;
      this.#lineBytes = 0;
      start = end + 1;
    }
  }

  #decode(bytes: Uint8Array, stream: boolean, done: TransformCallback): void {
    let text: string;
    try {
      text = this.#decoder.decode(bytes, { stream });
    } catch {
      // What comes before the bad bytes is passed on: the rows that end before them are sent.
      text = validPrefix(bytes);
      this.stop(
        new FileError(
          'the file is not UTF-8 text; save it as UTF-8 (CSV UTF-8) and import again',
          this.#lines + newlines(text),
        ),
      );
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
  const utf8 = new Utf8();
  const skipped: Row[] = [];
  // Where the last record (or ragged row) ended: a quote never closed is in the record after it.
  let ended = { lines: 0, empty_lines: 0 };
  const options = csvOptions((line, error) => {
    skipped.push({ line, converted: { error } });
    ended = { lines: line, empty_lines: parser.info.empty_lines };
  });
  const parser = parse({
    ...options,
    on_record: (record: string[], info: Info) => {
      ended = info;
      return record;
    },
    // An error that ends the file is kept, not thrown: thrown, it would lose the rows before it.
    on_skip: (err: CsvError | undefined) => {
      try {
        return options.on_skip(err);
      } catch {
        const start = ended.lines + 1 + (parser.info.empty_lines - ended.empty_lines);
        // A quote left open where utf8 stopped the input is not the file's error.
        if (!(err?.code === 'CSV_QUOTE_NOT_CLOSED' && utf8.stopped)) utf8.stop(csvError(err, start));
        return undefined;
      }
    },
  });
  const done = pipeline(input, utf8, parser).catch((err: unknown) => {
    throw toFileError(err);
  });
  const before = (row: Row) => utf8.before(row.line);
  let columns: ReturnType<typeof readHeader> | undefined;
  try {
    for await (const { record, info } of parser as AsyncIterable<{
      record: string[];
      info: { lines: number };
    }>) {
      yield* skipped.splice(0).filter(before);
      if (!utf8.before(info.lines)) break;
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
    yield* skipped.splice(0).filter(before);
    if (utf8.stopped) throw utf8.stopped;
  } catch (err) {
    throw toFileError(err);
  } finally {
    // Stops reading when the caller stops early or the file was stopped; a pipeline error was
    // already thrown above.
    parser.destroy();
    utf8.destroy();
    await done.catch(() => {});
  }
  await done;
  if (!columns) throw new FileError('the file is empty: a CSV import needs a header row');
}

async function* ndjsonRows(input: NodeJS.ReadableStream, kind: Kind): AsyncGenerator<Row> {
  // utf8 stops at a line over MAX_LINE, before it is all in memory (split2 would hold it whole).
  const utf8 = new Utf8(MAX_LINE);
  const lines = split();
  const done = pipeline(input, utf8, lines).catch((err: unknown) => {
    throw toFileError(err);
  });
  let line = 0;
  try {
    for await (const text of lines as AsyncIterable<string>) {
      if (!utf8.before(++line)) break;
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
    if (utf8.stopped) throw utf8.stopped;
  } catch (err) {
    throw toFileError(err);
  } finally {
    lines.destroy();
    utf8.destroy();
    await done.catch(() => {});
  }
  await done;
}

/** What csv-parse found that ends the file, as a FileError; `start`: the line its record starts on. */
function csvError(err: unknown, start: number): FileError {
  if (!(err instanceof CsvError)) return new FileError(String(err), start);
  const line = Number(err.lines) || start;
  if (err.code === 'CSV_MAX_RECORD_SIZE')
    return new FileError(`a record is longer than ${MAX_LINE} bytes`, line);
  // csv-parse names the last line of the file: the quote is in the record that starts at `start`.
  if (err.code === 'CSV_QUOTE_NOT_CLOSED')
    return new FileError(
      'Quote Not Closed: the record that starts here has a quote that is never closed',
      start,
    );
  return new FileError(csvMessage(err.message), line);
}

/**
 * A parser's error as a FileError naming its line. Any other is let through: the input's own (a
 * file that cannot be opened or read) the command tells in one line, and the rest are bugs.
 */
function toFileError(err: unknown): Error {
  if (err instanceof FileError) return err;
  if (err instanceof CsvError) return csvError(err, Number(err.lines));
  return err instanceof Error ? err : new Error(String(err));
}
