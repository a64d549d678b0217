// Drop alerts (docs/scoring.md, "Drop alerts"): a customer whose score falls at least `delta`
// below the highest it had within the last `days` days gets one customer.health_score.dropped
// event, and no other within `days` of it. Pure: the write path reads the peak and the last
// alert, asks here, and writes what this returns.
import { type EventRecord, event } from './events.ts';
import type { ScoreRecord } from './health.ts';
import { DAY_MS } from './portfolio.ts';
import { round6 } from './scoring.ts';
import { iso } from './time.ts';

export interface DropRule {
  /** In (0, 1]. */
  delta: number;
  /** 1–90. */
  days: number;
}

/** What the write path knows of a customer before an update. */
export interface DropWatch {
  /**
   * The highest score it had within the window: the score it stood at when the window opened
   * and every score since, but none from before its latest version of a settings change or a
   * backfill (docs/scoring.md, "Drop alerts": a weights or rules change rescales scores, so older
   * ones are not comparable). Null before its first score.
   */
  peak: number | null;
  /** When it was last alerted, or null. */
  alertedAt: number | null;
}

/**
 * A drop alert as the customer's timeline keeps it (score_drops, docs/api.md, "Timeline"): when,
 * the score before the version that dropped (null: none), the score it dropped to, and the peak.
 */
export interface DropRecord {
  customerId: string;
  at: number;
  from: number | null;
  to: number;
  peak: number;
}

/** The drop `dropped` (dropAlert's event) records, the customer's score having been `from` before it. */
export const dropRecord = (dropped: EventRecord, from: number | null): DropRecord => ({
  customerId: dropped.data.customer_id as string,
  at: dropped.createdAt,
  from,
  to: dropped.data.health_score as number,
  peak: dropped.data.peak_score as number,
});

/** Where a drop window starts for an update at `now`. */
export const windowStart = (rule: DropRule, now: number): number => now - rule.days * DAY_MS;

/**
 * The dropped event this factor update earns, or null; `watch` is brought up to date with the
 * new score (and the alert, if any) for a later update of the same customer in the batch.
 */
export function dropAlert(watch: DropWatch, record: ScoreRecord, rule: DropRule): EventRecord | null {
  const { peak, alertedAt } = watch;
  watch.peak = peak === null ? record.score : Math.max(peak, record.score);
  if (peak === null) return null;
  const change = round6(record.score - peak);
  if (-change < rule.delta) return null;
  if (alertedAt !== null && alertedAt > windowStart(rule, record.updatedAt)) return null;
  watch.alertedAt = record.updatedAt;
  return event(
    'customer.health_score.dropped',
    {
      customer_id: record.customerId,
      health_score: record.score,
      peak_score: peak,
      change,
      days: rule.days,
      status: record.status,
      updated_at: iso(record.updatedAt),
    },
    record.updatedAt,
  );
}
