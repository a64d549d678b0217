// `vitals export customers|scores|metrics|outcomes` (docs/cli.md, "Import and export"): every customer
// (by id), every current score (the portfolio's order), or each customer's metric points or outcomes,
// through the typed client's list iterators, as CSV (csv-stringify) or NDJSON, streamed with
// backpressure: memory stays flat for any account. The CSV has the columns an import reads back
// (metadata and factors as JSON text).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { VitalsClient } from '../client/index.ts';
import { BOOK_FIELDS } from '../domain/customers.ts';
import type { Progress } from './progress.ts';
import type { Format } from './read.ts';
import type { Kind } from './rows.ts';

export const CSV_COLUMNS: Record<Kind, string[]> = {
  customers: ['customer_id', 'name', 'email', ...BOOK_FIELDS, 'metadata', 'created_at', 'updated_at'],
  scores: ['customer_id', 'health_score', 'status', 'factors', 'updated_at'],
  metrics: ['customer_id', 'at', 'values'],
  outcomes: ['customer_id', 'outcome', 'at', 'note', 'id', 'created_at'],
};

/** The API's largest page: fewest round trips. */
const PAGE = 100;

async function* records(client: VitalsClient, kind: Kind, format: Format): AsyncGenerator<unknown> {
  if (kind === 'customers') {
    for await (const c of client.customers.list({ limit: PAGE })) {
      yield format === 'ndjson'
        ? c
        : [
            c.id,
            c.name,
            c.email,
            c.owner,
            c.arr,
            c.renewal_at,
            c.lifecycle,
            c.parent_id,
            JSON.stringify(c.metadata),
            c.created_at,
            c.updated_at,
          ];
    }
    return;
  }
  if (kind === 'metrics') {
    // Each customer's points, newest first, one row per customer and instant: a metric write.
    for await (const c of client.customers.list({ limit: PAGE })) {
      let row: { at: string; values: Record<string, number> } | undefined;
      const flush = function* () {
        if (!row) return;
        yield format === 'ndjson'
          ? { customer_id: c.id, values: row.values, at: row.at }
          : [c.id, row.at, JSON.stringify(row.values)];
      };
      for await (const p of client.metrics.list(c.id, { limit: PAGE })) {
        if (row?.at !== p.at) {
          yield* flush();
          row = { at: p.at, values: {} };
        }
        row.values[p.metric] = p.value;
      }
      yield* flush();
    }
    return;
  }
  if (kind === 'outcomes') {
    // Each customer's outcomes, newest first: the API lists outcomes per customer only.
    for await (const c of client.customers.list({ limit: PAGE })) {
      for await (const o of client.outcomes.list(c.id, { limit: PAGE })) {
        yield format === 'ndjson' ? o : [o.customer_id, o.outcome, o.at, o.note, o.id, o.created_at];
      }
    }
    return;
  }
  for await (const s of client.healthScores.list({ limit: PAGE })) {
    yield format === 'ndjson'
      ? s
      : [s.customer_id, s.health_score, s.status, JSON.stringify(s.factors), s.updated_at];
  }
}

/** Writes the export to `out`; resolves with the number of records once `out` has them all. */
export async function exportRows(opts: {
  client: VitalsClient;
  kind: Kind;
  format: Format;
  out: NodeJS.WritableStream;
  progress?: Progress;
}): Promise<number> {
  let count = 0;
  const counted = async function* (source: AsyncIterable<unknown>) {
    for await (const record of source) {
      count++;
      if (count % PAGE === 0) opts.progress?.update({ rows: count, refused: 0 });
      yield record;
    }
  };
  const source = counted(records(opts.client, opts.kind, opts.format));
  if (opts.format === 'ndjson') {
    const lines = async function* () {
      for await (const record of source) yield `${JSON.stringify(record)}\n`;
    };
    await pipeline(Readable.from(lines()), opts.out);
  } else {
    await pipeline(
      Readable.from(source),
      stringify({ header: true, columns: CSV_COLUMNS[opts.kind] }),
      opts.out,
    );
  }
  opts.progress?.update({ rows: count, refused: 0 });
  opts.progress?.stop();
  return count;
}
