// `vitals import customers|scores|metrics|outcomes FILE` (docs/cli.md, "Import and export"): rows
// read as a stream and sent through the typed client by a Sender (batching.ts: batches of up to
// 1,000, a few in flight, rows of one customer in file order), each refused row told with its error.
import type { VitalsClient } from '../client/index.ts';
import { VitalsError } from '../client/index.ts';
import { groupKeyOf, type ItemError, Sender } from './batching.ts';
import type { Progress } from './progress.ts';
import { FileError, type Format, readRows } from './read.ts';
import type { Kind, RowError } from './rows.ts';

export interface ImportOptions {
  client: VitalsClient;
  kind: Kind;
  input: NodeJS.ReadableStream;
  format: Format;
  /** Scores: merge each row's factors into the current ones instead of replacing them. */
  merge?: boolean;
  batchSize?: number;
  /** Batches in flight at once. */
  concurrency?: number;
  /** A batch is sent before its JSON would pass this (the server takes 8 MiB). */
  maxBatchBytes?: number;
  /** Told of every refused row, in the order the answers come. */
  onRefused: (refusal: Refusal) => void;
  progress?: Progress;
  /** Bytes of the input read so far, for the progress's ETA. */
  bytesRead?: () => number;
}

export interface Refusal {
  line: number;
  customer_id?: string | null;
  status?: number;
  error: RowError | ItemError;
  item?: Record<string, unknown>;
}

export interface ImportSummary {
  rows: number;
  created: number;
  updated: number;
  refused: number;
  ms: number;
  /** Set when the file stopped being readable part way: the rows before it were imported. */
  fileError?: FileError;
  /** Metrics: the earliest instant (ms) of a row recorded, where `--backfill` starts (./backfill.ts). */
  earliest?: number;
}

/**
 * Rows read ahead of the batch being cut, to find the other rows of its customers and instants
 * (docs/cli.md, "Import and export"): a file with a row per source stays one version per
 * customer and instant while the rows of one are within 10,000 rows of each other, in a few
 * MiB of memory.
 */
const LOOKAHEAD = { rows: 10_000, bytes: 16 * 1024 * 1024 };

/**
 * A customers row's parent, set in a second pass once every row's customer exists (docs/cli.md,
 * "Import and export"): a child may come before its parent in the file. `status` is the first
 * pass's (201 created, 200 updated; 0 when the row had nothing else to send).
 */
interface Parent {
  line: number;
  item: Record<string, unknown>;
  status: number;
}

/** The rows' parents, in file order, kept out of the first pass. */
class Parents {
  readonly #byLine = new Map<number, Parent>();

  /** The item to send first: without its parent (null, a clearing, goes at once); null if nothing else is left. */
  take(line: number, item: Record<string, unknown>): Record<string, unknown> | null {
    if (item.parent_id === undefined || item.parent_id === null) return item;
    const { parent_id, ...rest } = item;
    this.#byLine.set(line, { line, item: { customer_id: item.customer_id, parent_id }, status: 0 });
    return Object.keys(rest).some((key) => key !== 'customer_id') ? rest : null;
  }

  /** The first pass's answer for a row: a refused row's parent is not sent. */
  answered(line: number, status: number | null): void {
    const parent = this.#byLine.get(line);
    if (!parent) return;
    if (status === null) this.#byLine.delete(line);
    else parent.status = status;
  }

  /** The second pass, in file order. */
  rows(): Parent[] {
    return [...this.#byLine.values()].sort((a, b) => a.line - b.line);
  }
}

export async function importRows(opts: ImportOptions): Promise<ImportSummary> {
  const started = performance.now();
  const { client, kind, onRefused } = opts;
  const summary: ImportSummary = { rows: 0, created: 0, updated: 0, refused: 0, ms: 0 };
  let done = 0;
  const report = () =>
    opts.progress?.update({ rows: done, refused: summary.refused, bytes: opts.bytesRead?.() });
  const refuse = (refusal: Refusal) => {
    summary.refused++;
    done++;
    onRefused(refusal);
  };
  const parents = kind === 'customers' ? new Parents() : null;
  const post = async (items: Record<string, unknown>[]) =>
    kind === 'customers'
      ? (await client.customers.batch(items as never)).results
      : kind === 'metrics'
        ? (await client.metrics.batch(items as never)).results
        : kind === 'outcomes'
          ? (await client.outcomes.batch(items as never)).results
          : (await client.healthScores.batch(items as never)).results;
  const refusedWhole = (error: unknown) =>
    error instanceof VitalsError && (error.status === 400 || error.status === 413)
      ? { status: error.status, error: error.envelope.error }
      : null;
  const sender = new Sender({
    post,
    refusedWhole,
    onResult: ({ line, item }, result) => {
      if (result.error) {
        parents?.answered(line, null);
        refuse({ line, customer_id: result.customer_id, status: result.status, error: result.error, item });
        return;
      }
      parents?.answered(line, result.status);
      done++;
      if (result.status === 201) summary.created++;
      else summary.updated++;
      const at = result.at === undefined ? Number.NaN : Date.parse(result.at);
      if (!Number.isNaN(at) && (summary.earliest === undefined || at < summary.earliest))
        summary.earliest = at;
    },
    onBatch: report,
    inFlight: opts.concurrency,
    maxItems: opts.batchSize,
    maxBytes: opts.maxBatchBytes,
    groupKey: groupKeyOf(kind),
    lookahead: groupKeyOf(kind) ? LOOKAHEAD : undefined,
  });
  try {
    for await (const row of readRows(opts.input, kind, opts.format)) {
      summary.rows++;
      if ('error' in row.converted) {
        refuse({ line: row.line, error: row.converted.error });
        continue;
      }
      let item: Record<string, unknown> | null = opts.merge
        ? { ...row.converted.item, merge: true }
        : row.converted.item;
      if (parents) item = parents.take(row.line, item);
      if (item) await sender.add({ line: row.line, item });
    }
  } catch (error) {
    // The rest of the file cannot be read: what was read before it is still sent, and said.
    if (!(error instanceof FileError)) {
      await sender.finish().catch(() => {});
      throw error;
    }
    summary.fileError = error;
  }
  await sender.finish();
  if (parents) {
    // Every row's customer exists now: the parents, in file order. A row counted by the first
    // pass and refused here moves from created or updated to refused.
    const first = new Map(parents.rows().map((p) => [p.line, p.status]));
    const second = new Sender({
      post,
      refusedWhole,
      onResult: ({ line, item }, result) => {
        const status = first.get(line) ?? 0;
        if (status === 201) summary.created--;
        else if (status === 200) summary.updated--;
        else done++;
        if (result.error) {
          summary.refused++;
          onRefused({
            line,
            customer_id: result.customer_id,
            status: result.status,
            error: result.error,
            item,
          });
        } else if (status === 201 || result.status === 201) summary.created++;
        else summary.updated++;
      },
      onBatch: report,
      inFlight: opts.concurrency,
      maxItems: opts.batchSize,
      maxBytes: opts.maxBatchBytes,
    });
    for (const { line, item } of parents.rows()) await second.add({ line, item });
    await second.finish();
  }
  report();
  opts.progress?.stop();
  summary.ms = performance.now() - started;
  return summary;
}
