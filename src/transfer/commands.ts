// The CLI's `import` and `export` (docs/cli.md, "Import and export"): they talk to a running
// Vitals over HTTP with the typed client, so they work against any server, local or not. Exit
// status: 0 done, 1 some rows refused or the work failed, 2 a usage mistake. `vitals explain`
// (./explain.ts) is such a client too, and shares `connect`, `run` and their messages.
import { createReadStream, createWriteStream, existsSync, rmSync, statSync } from 'node:fs';
import { finished } from 'node:stream/promises';
import { VitalsClient, VitalsError } from '../client/index.ts';
import { backfillAfterImport } from './backfill.ts';
import { detectFormat } from './detect.ts';
import { exportRows } from './export.ts';
import { importRows, type Refusal } from './import.ts';
import { backfillProgress, progress } from './progress.ts';
import { type Format, formatOf } from './read.ts';
import type { Kind } from './rows.ts';

export interface TransferArgs {
  kind: string | undefined;
  file: string | undefined;
  url: string | undefined;
  key: string | undefined;
  format: string | undefined;
  merge: boolean;
  /** Import metrics: then backfill from the earliest point's day (./backfill.ts). */
  backfill: boolean;
  batchSize: string | undefined;
  concurrency: string | undefined;
}

/** A mistake in the command line: exit status 2, with a pointer to --help. */
export class UsageError extends Error {}

const KINDS: readonly string[] = ['customers', 'scores', 'metrics', 'outcomes'];

/** The client for --url (or the local default) and --key (or VITALS_API_KEY). */
export function connect(args: { url: string | undefined; key: string | undefined }): VitalsClient {
  const key = args.key ?? process.env.VITALS_API_KEY;
  if (!key) throw new UsageError('give an API key with --key or in VITALS_API_KEY');
  const url = serverUrl(args);
  if (!/^https?:\/\/[^/]/.test(url))
    throw new UsageError(`--url must be an http(s) URL like http://localhost:3000 (got '${url}')`);
  return new VitalsClient({ url, key });
}

function common(args: TransferArgs): { kind: Kind; client: VitalsClient; format: Format | undefined } {
  if (!args.kind || !KINDS.includes(args.kind))
    throw new UsageError("say what to move: 'customers', 'scores', 'metrics' or 'outcomes'");
  const client = connect(args);
  if (args.format !== undefined && args.format !== 'csv' && args.format !== 'ndjson') {
    throw new UsageError("--format must be 'csv' or 'ndjson'");
  }
  return { kind: args.kind as Kind, client, format: args.format as Format | undefined };
}

export function positive(value: string | undefined, name: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new UsageError(`--${name} must be a whole number from 1 to ${max}`);
  return n;
}

/** What the server said, in its words, with the request id that finds it in the server's log. */
function answered(error: VitalsError): string {
  const where = error.requestId ? ` (request ${error.requestId})` : '';
  const verb = error.status >= 500 ? 'failed with' : 'refused it with';
  return `the server ${verb} ${error.status} ${error.code}: ${error.message}${where}`;
}

/** No answer at all: where it was sent, why in a few words, and the likely remedy. */
function unanswered(error: VitalsError, url: string): string | undefined {
  if (error.status !== 0) return undefined;
  if (error.code === 'timeout')
    return `${url} did not answer in time — is it overloaded, or is it not Vitals?`;
  const code = errorCode(error.cause);
  const why =
    code === 'ECONNREFUSED'
      ? 'connection refused'
      : code === 'ENOTFOUND'
        ? 'no such host'
        : (code ?? 'no connection');
  return `could not reach ${url} (${why}) — is Vitals running there? Point --url at it.`;
}

/** The system error code (ECONNREFUSED, …) under what fetch threw, however deep undici nests it. */
function errorCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 5; depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    const inner =
      (e as { cause?: unknown; errors?: unknown[] }).cause ?? (e as { errors?: unknown[] }).errors?.[0];
    e = inner;
  }
  return undefined;
}

/** Runs `fn`, turning what goes wrong into a message and an exit status. */
export async function run(command: string, url: string, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`vitals ${command}: ${error.message}. See vitals --help.`);
      return 2;
    }
    if (error instanceof VitalsError) {
      console.error(`vitals ${command}: ${unanswered(error, url) ?? answered(error)}`);
      return 1;
    }
    // A file that cannot be opened, read or written (missing, a directory, not allowed): the
    // system's one line, e.g. "ENOENT: no such file or directory, stat 'x.csv'".
    if (typeof (error as NodeJS.ErrnoException).syscall === 'string') {
      console.error(`vitals ${command}: ${(error as Error).message}`);
      return 1;
    }
    throw error;
  }
}

/** Where the commands send their requests: --url, or the local default. */
export const serverUrl = (args: { url: string | undefined }) => args.url ?? 'http://localhost:3000';

export const runImport = (args: TransferArgs) =>
  run('import', serverUrl(args), async () => {
    const { kind, client, format } = common(args);
    const file = args.file;
    if (!file) throw new UsageError('give the file to import, or - for standard input');
    if (args.merge && kind !== 'scores') throw new UsageError('--merge is for scores');
    if (args.backfill && kind !== 'metrics') throw new UsageError('--backfill is for metrics');
    const batchSize = positive(args.batchSize, 'batch-size', 1000);
    const concurrency = positive(args.concurrency, 'concurrency', 16);
    const stdin = file === '-';
    // stat first: a missing file is one message, before any stream can fail on it.
    const total = stdin ? undefined : statSync(file).size;
    const opened = stdin ? undefined : createReadStream(file);
    // Standard input has no extension to tell its format: its first character does.
    const { input, format: readAs } = opened
      ? { input: opened, format: format ?? formatOf(file) }
      : format
        ? { input: process.stdin, format }
        : await detectFormat(process.stdin);
    const rejectedPath = stdin ? undefined : `${file}.rejected.ndjson`;
    let rejected: NodeJS.WritableStream | undefined;
    const onRefused = (refusal: Refusal) => {
      rejected ??= rejectedPath ? createWriteStream(rejectedPath) : process.stderr;
      rejected.write(`${JSON.stringify(refusal)}\n`);
    };
    const summary = await importRows({
      client,
      kind,
      input,
      format: readAs,
      merge: args.merge,
      batchSize,
      concurrency,
      onRefused,
      progress: progress(`import ${kind}`, process.stderr, total),
      bytesRead: opened && (() => opened.bytesRead),
    });
    if (rejected && rejected !== process.stderr) {
      rejected.end();
      await finished(rejected);
    }
    // A rejected file left from an earlier run would say rows were refused that were not.
    if (!rejected && rejectedPath && existsSync(rejectedPath)) rmSync(rejectedPath);
    const seconds = summary.ms / 1000;
    const rate = Math.round(summary.rows / Math.max(seconds, 0.001)).toLocaleString('en-US');
    const applied =
      kind === 'customers'
        ? `${summary.created} created, ${summary.updated} updated`
        : kind === 'metrics'
          ? `${summary.updated} recorded`
          : kind === 'outcomes'
            ? `${summary.created} recorded`
            : `${summary.updated} scored`;
    const where = summary.refused > 0 ? ` (${rejectedPath ? `see ${rejectedPath}` : 'listed above'})` : '';
    const source = stdin ? 'standard input' : file;
    let status: number;
    // A file that stops being readable before its first row (a misspelt header): that, once.
    if (summary.fileError && summary.rows === 0) {
      console.error(`vitals import: ${source}: ${summary.fileError.message}. Nothing was imported.`);
      status = 1;
    } else {
      console.error(
        `Imported ${kind}: ${summary.rows} rows in ${seconds.toFixed(1)} s (${rate} rows/s): ${applied}, ${summary.refused} refused${where}.`,
      );
      if (summary.fileError) {
        console.error(
          `vitals import: ${source}: ${summary.fileError.message}. The ${summary.rows} rows before it were imported; nothing after it was read.`,
        );
      }
      status = summary.fileError || summary.refused > 0 ? 1 : 0;
    }
    if (!args.backfill) return status;
    // The points that were recorded are backfilled even when some rows were refused: the exit
    // status still says they were.
    const backfilled = await backfillAfterImport({
      client,
      earliest: summary.earliest,
      now: Date.now(),
      progress: () => backfillProgress(process.stderr),
      say: (line) => console.error(line),
    });
    return Math.max(status, backfilled);
  });

export const runExport = (args: TransferArgs) =>
  run('export', serverUrl(args), async () => {
    const { kind, client, format } = common(args);
    const file = args.file ?? '-';
    const out = file === '-' ? process.stdout : createWriteStream(file);
    let count: number;
    try {
      count = await exportRows({
        client,
        kind,
        format: format ?? (file === '-' ? 'csv' : formatOf(file)),
        out,
        progress: progress(`export ${kind}`, process.stderr, undefined, false),
      });
    } catch (error) {
      // The reader went away (`vitals export … | head`): it has what it wanted; stop quietly.
      if ((error as NodeJS.ErrnoException).code === 'EPIPE' && out === process.stdout) return 0;
      throw error;
    }
    console.error(`Exported ${count} ${kind}.`);
    return 0;
  });
