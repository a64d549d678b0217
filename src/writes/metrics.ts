// Metric writes (docs/api.md, "Metrics"): points stored and, where a rule reads them, the
// customer's score derived again in the same transaction (history reason metrics_updated, with
// its events and drop alerts). Items run in order, as if each ran alone: a customer named twice
// gets its second write built on the first — but a batch's items for the same customer and
// instant are one write (metricBatch).
import { metricAnswerJson } from '../api/metrics.ts';
import { type ApiError, notFound } from '../domain/errors.ts';
import { gatedByOf, gatesOf, type ScoreRecord } from '../domain/health.ts';
import type { AuditEntry, MetricPointRecord, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';
import { type Claim, recordAnswer } from './answers.ts';
import { answerItems, appliedTogether, type Entry } from './batches.ts';
import { settleAll } from './pipeline.ts';
import { actOnPoints } from './playbooks.ts';
import { rederive } from './rules.ts';

/** One customer's values at one instant, as plain data (it may cross to the SQLite writer thread). */
export interface MetricUpdate {
  customerId: string;
  values: Record<string, number>;
  at: number;
  /** The request's audit entry, recorded in the write's transaction if the item is applied (a single write's). */
  audit?: AuditEntry | undefined;
}

/** The customer's score after the write (null: it has none), or why the item was refused. */
export type MetricResult = { ok: true; record: ScoreRecord | null } | { ok: false; error: ApiError };

export async function applyMetricUpdates(
  tx: Tx,
  accountId: string,
  items: readonly MetricUpdate[],
  now: number,
): Promise<MetricResult[]> {
  const ids = [...new Set(items.map((i) => i.customerId))];
  // Locks every customer of the batch at once, in one order, before anything is written; the
  // settings and rules are read in the same round trip (PostgreSQL runs them in the order sent).
  // The playbooks come in the same round trip (PostgreSQL): their metric triggers are looked at after.
  const [known, settings, rules, playbooks] = await Promise.all([
    tx.scoresForUpdate(accountId, ids),
    tx.getSettings(accountId),
    tx.listFactorRules(accountId),
    tx.enabledPlaybooks(accountId),
  ]);
  const readMetrics = new Set(rules.map((r) => r.metric));
  const gates = gatesOf(rules);
  const results = new Array<MetricResult>(items.length);
  let pending = items.map((_, i) => i);
  while (pending.length > 0) {
    const inRound = new Set<string>();
    const later: number[] = [];
    const points: MetricPointRecord[] = [];
    const audits: AuditEntry[] = [];
    /** The round's customers whose new points a rule reads: their scores are derived again. */
    const moved: string[] = [];
    for (const i of pending) {
      const item = items[i] as MetricUpdate;
      if (!known.has(item.customerId)) {
        results[i] = { ok: false, error: notFound.customer(item.customerId) };
        continue;
      }
      if (inRound.has(item.customerId)) {
        later.push(i);
        continue;
      }
      inRound.add(item.customerId);
      for (const [metric, value] of Object.entries(item.values)) {
        points.push({ customerId: item.customerId, metric, at: item.at, value });
      }
      if (item.audit) audits.push(item.audit);
      if (Object.keys(item.values).some((m) => readMetrics.has(m))) moved.push(item.customerId);
    }
    // The points are sent when called (Tx.insertMetricPoints), so the rules' reads sent after them
    // see them: on PostgreSQL the points, the audit entries and those reads go in one round trip.
    const sent: Promise<unknown>[] = [];
    if (points.length > 0) sent.push(tx.insertMetricPoints(accountId, points));
    if (audits.length > 0) sent.push(tx.appendAudits(accountId, audits));
    if (moved.length > 0) {
      sent.push(
        rederive(tx, accountId, moved, rules, settings, 'metrics_updated', now, known).then((written) => {
          for (const [id, record] of written) known.set(id, record);
        }),
      );
    }
    await settleAll(sent);
    for (const i of pending) {
      const item = items[i] as MetricUpdate;
      if (results[i] === undefined && inRound.has(item.customerId) && !later.includes(i)) {
        const record = known.get(item.customerId) ?? null;
        // A score the write left as it was says which gates cap it, as a new version does (gated_by).
        results[i] = {
          ok: true,
          record: record && { ...record, gatedBy: record.gatedBy ?? gatedByOf(record, gates) },
        };
      }
    }
    pending = later;
  }
  // The metric triggers of the playbooks on what was written (docs/playbooks.md).
  const points = items.flatMap((item, i) =>
    results[i]?.ok ? Object.keys(item.values).map((metric) => ({ customerId: item.customerId, metric })) : [],
  );
  await actOnPoints(tx, accountId, points, now, playbooks);
  return results;
}

/** A single metric write (POST /api/customers/{id}/metrics), with its request's Idempotency-Key claim. */
export interface MetricWrite extends MetricUpdate {
  answer?: Claim;
}

/**
 * Single metric writes, a batched write (../store/write.ts), in arrival order as if each ran alone: each one's answer as JSON text (stored as its Idempotency-Key's answer in this
 * transaction, with its audit entry), or its refusal. A claim taken over meanwhile undoes the whole batch with
 * idempotency_request_in_progress; the backend then runs each item again alone.
 */
export const applyMetricWrites = write(
  async function applyMetricWrites(
    tx: Tx,
    accountId: string,
    items: readonly MetricWrite[],
    now: number,
  ): Promise<({ ok: true; record: string } | { ok: false; error: ApiError })[]> {
    const results = await applyMetricUpdates(tx, accountId, items, now);
    const answers = results.map((result, i) =>
      result.ok
        ? { ok: true as const, record: metricAnswerJson(items[i] as MetricWrite, result.record) }
        : result,
    );
    for (const [i, answer] of answers.entries()) {
      if (answer.ok) await recordAnswer(tx, accountId, items[i]?.answer, answer.record);
    }
    return answers;
  },
  { batched: true },
);

/**
 * POST /api/metrics/batch: every checked item in order, one result per item, as the answer's text.
 * Items for the same customer and instant are one write at the first one's place, a later value
 * of a metric winning (docs/api.md, "One customer, one instant, one version"): a file with a
 * row per source makes one version, not one per row with the score flapping between them.
 */
export const metricBatch = write(async function metricBatch(
  tx: Tx,
  accountId: string,
  entries: readonly Entry<MetricUpdate>[],
  claim: Claim,
  now: number,
): Promise<string> {
  return answerItems(
    tx,
    accountId,
    entries,
    claim,
    (items) =>
      appliedTogether(
        items,
        (item) => JSON.stringify([item.customerId, item.at]),
        (into, item) => ({ ...into, values: { ...into.values, ...item.values } }),
        (merged) => applyMetricUpdates(tx, accountId, merged, now),
      ),
    // Each item echoes its own values, with the score the merged write made.
    (item, record) => metricAnswerJson(item, record, '"status":200,'),
  );
});
