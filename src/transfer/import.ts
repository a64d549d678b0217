// `vitals import customers|scores FILE` (docs/cli.md, "Import and export"): rows read as a
// stream, sent as batches of up to 1,000 through the typed client with a few in flight, each
// refused row written with its error. Rows of one customer apply in file order: a batch holding
// a customer that a batch in flight also holds waits for that one.
import type { VitalsClient } from '../client/index.ts';
import { VitalsError } from '../client/index.ts';
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
  error: RowError | VitalsError['envelope']['error'];
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
}

interface Pending {
  line: number;
  item: Record<string, unknown>;
}

export async function importRows(opts: ImportOptions): Promise<ImportSummary> {
  const started = performance.now();
  const { client, kind, onRefused } = opts;
  const batchSize = opts.batchSize ?? 1000;
  const concurrency = opts.concurrency ?? 4;
  const maxBytes = opts.maxBatchBytes ?? 6 * 1024 * 1024;
  const summary: ImportSummary = { rows: 0, created: 0, updated: 0, refused: 0, ms: 0 };
  let done = 0;
  const report = () =>
    opts.progress?.update({ rows: done, refused: summary.refused, bytes: opts.bytesRead?.() });
  const refuse = (refusal: Refusal) => {
    summary.refused++;
    done++;
    onRefused(refusal);
  };

  const send = async (batch: Pending[]): Promise<void> => {
    let results: { customer_id: string | null; status: number; error?: Refusal['error'] }[];
    try {
      const items = batch.map((p) => p.item);
      results =
        kind === 'customers'
          ? (await client.customers.batch(items as never)).results
          : (await client.healthScores.batch(items as never)).results;
    } catch (error) {
      // A batch refused whole (JSON the server will not take anywhere, a body too large) is
      // halved until the row at fault is alone: its refusal is the request's error.
      if (!(error instanceof VitalsError && (error.status === 400 || error.status === 413))) throw error;
      if (batch.length === 1) {
        const [only] = batch as [Pending];
        refuse({ line: only.line, status: error.status, error: error.envelope.error, item: only.item });
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await send(batch.slice(0, half));
      await send(batch.slice(half));
      return;
    }
    for (const [i, result] of results.entries()) {
      const { line, item } = batch[i] as Pending;
      if (result.error) {
        refuse({ line, customer_id: result.customer_id, status: result.status, error: result.error, item });
        continue;
      }
      done++;
      if (result.status === 201) summary.created++;
      else summary.updated++;
    }
    report();
  };

  const inFlight = new Set<Promise<void>>();
  /** The batch in flight that holds each customer id. */
  const holder = new Map<string, Promise<void>>();
  let failure: { error: unknown } | undefined;
  const dispatch = async (batch: Pending[]) => {
    const ids = batch.map((p) => String(p.item.customer_id));
    const before = new Set(ids.flatMap((id) => holder.get(id) ?? []));
    await Promise.all(before);
    while (inFlight.size >= concurrency) await Promise.race(inFlight);
    if (failure) throw failure.error;
    const sent: Promise<void> = send(batch)
      .catch((error: unknown) => {
        failure ??= { error };
      })
      .finally(() => {
        inFlight.delete(sent);
        for (const id of ids) if (holder.get(id) === sent) holder.delete(id);
      });
    inFlight.add(sent);
    for (const id of ids) holder.set(id, sent);
  };

  let batch: Pending[] = [];
  let bytes = 0;
  try {
    await readAll();
  } catch (error) {
    // The rest of the file cannot be read: what was sent is still answered, and said.
    if (!(error instanceof FileError)) throw error;
    summary.fileError = error;
    if (batch.length > 0) await dispatch(batch);
  } finally {
    await Promise.allSettled(inFlight);
  }
  if (failure) throw failure.error;
  report();
  opts.progress?.stop();
  summary.ms = performance.now() - started;
  return summary;

  async function readAll(): Promise<void> {
    for await (const row of readRows(opts.input, kind, opts.format)) {
      summary.rows++;
      if ('error' in row.converted) {
        refuse({ line: row.line, error: row.converted.error });
        continue;
      }
      const item = opts.merge ? { ...row.converted.item, merge: true } : row.converted.item;
      const size = JSON.stringify(item).length + 1;
      if (batch.length > 0 && (batch.length >= batchSize || bytes + size > maxBytes)) {
        await dispatch(batch);
        batch = [];
        bytes = 0;
      }
      batch.push({ line: row.line, item });
      bytes += size;
    }
    if (batch.length > 0) await dispatch(batch);
  }
}
