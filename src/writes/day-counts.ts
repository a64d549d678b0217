// A day's count of an event, as the intakes keep it (docs/sources.md): a Segment `track`, a Stripe
// invoice. Each count is added to the customer's point of that metric at 00:00:00.000Z of its UTC
// day, and the customers whose new points a factor rule reads are rescored once, after every
// point is in (history reason metrics_updated), and the playbooks' metric triggers looked at, as
// a metric write does.
import type { MetricPointRecord, Tx } from '../store/store.ts';
import { actOnPoints } from './playbooks.ts';
import { rederive } from './rules.ts';

export async function addDayCounts(
  tx: Tx,
  accountId: string,
  counts: readonly MetricPointRecord[],
  now: number,
): Promise<void> {
  if (counts.length === 0) return;
  const ids = [...new Set(counts.map((c) => c.customerId))];
  // Locks the customers' scores at once, in one order, before the points are written (as a metric
  // write does): the points are sent right behind the reads, which run first on the connection.
  const reads = Promise.all([
    tx.scoresForUpdate(accountId, ids),
    tx.getSettings(accountId),
    tx.listFactorRules(accountId),
    tx.enabledPlaybooks(accountId),
  ]);
  const added = tx.addMetricCounts(accountId, counts);
  const [[known, settings, rules, playbooks]] = await Promise.all([reads, added]);
  const read = new Set(rules.map((r) => r.metric));
  const moved = [...new Set(counts.filter((c) => read.has(c.metric)).map((c) => c.customerId))];
  if (moved.length > 0) {
    await rederive(tx, accountId, moved, rules, settings, 'metrics_updated', now, known);
  }
  await actOnPoints(tx, accountId, counts, now, playbooks);
}
