// Sending an import's rows (import.tsx) with the CLI's Sender (src/transfer/batching.ts: batches
// of up to 1,000 rows, rows of one customer in file order, rows of one customer and instant in
// one batch, a batch refused whole halved), two
// requests in flight, each with an Idempotency-Key of its own.
import { groupKeyOf, type ItemResult, type Row, Sender } from '../../src/transfer/batching.ts';
import type { Kind as TransferKind } from '../../src/transfer/rows.ts';
import { ApiError, request } from './api.ts';

/**
 * What the dashboard imports: customers, health scores or metric points, as the CLI does. Outcomes
 * (which the CLI imports too) are recorded on the customer page.
 */
export type Kind = Exclude<TransferKind, 'outcomes'>;
export type { Row };

const IN_FLIGHT = 2;

export interface Refusal {
  line: number;
  customer_id: string | null;
  message: string;
  param?: string;
  code?: string;
}

/** What the import has done so far; kept when it stops part way. */
export interface Tally {
  /** Rows answered (applied or refused by the API). */
  sent: number;
  created: number;
  updated: number;
  scored: number;
  /** Metric rows recorded (each row one write of its values at its instant). */
  recorded: number;
  refused: Refusal[];
}

const PATHS: Record<Kind, { path: string; field: string }> = {
  customers: { path: '/api/customers/batch', field: 'customers' },
  scores: { path: '/api/health-scores/batch', field: 'scores' },
  metrics: { path: '/api/metrics/batch', field: 'metrics' },
};

/** Sends `rows` in order, counting into `tally` and calling `onBatch` after each answer. */
export async function sendRows(kind: Kind, rows: Row[], tally: Tally, onBatch: () => void): Promise<void> {
  const { path, field } = PATHS[kind];
  const sender = new Sender({
    post: async (items) => {
      const headers = { 'idempotency-key': crypto.randomUUID() };
      return (await request<{ results: ItemResult[] }>('POST', path, { [field]: items }, { headers }))
        .results;
    },
    refusedWhole: (error) =>
      error instanceof ApiError && (error.status === 400 || error.status === 413)
        ? { status: error.status, error: { code: error.code, message: error.message, param: error.param } }
        : null,
    onResult: (row, result) => {
      tally.sent++;
      if (result.error) {
        const { message, param, code } = result.error;
        tally.refused.push({ line: row.line, customer_id: result.customer_id, message, param, code });
      } else if (kind === 'scores') tally.scored++;
      else if (kind === 'metrics') tally.recorded++;
      else if (result.status === 201) tally.created++;
      else tally.updated++;
    },
    onBatch,
    inFlight: IN_FLIGHT,
    // The whole file is in memory already: the rows of one customer and instant travel together
    // wherever they are in it.
    groupKey: groupKeyOf(kind),
    lookahead: groupKeyOf(kind) ? { rows: rows.length, bytes: Number.POSITIVE_INFINITY } : undefined,
  });
  try {
    for (const row of rows) await sender.add(row);
  } finally {
    await sender.finish();
  }
}
