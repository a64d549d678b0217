// When to try a failed delivery again. Pure: the dispatcher supplies the clock and randomness.

export interface RetryPolicy {
  /** Delays before retry 1, 2, 3…; the last one repeats if there are more retries than entries. */
  backoffMs: number[];
  maxRetries: number;
}

/** Up to ±10% jitter so that a burst of failures does not retry in lockstep. */
export function jittered(ms: number, random: number): number {
  return Math.round(ms * (0.9 + 0.2 * random));
}

/** Retry-After as seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * The furthest a receiver's Retry-After can push the next attempt: 1 hour (docs/webhooks.md,
 * "Delivery and retries"). Not the schedule's longest step: that is 25 s by default, rate
 * limiters often ask for a minute or more, and retrying sooner only burns the few retries there
 * are. Not unbounded: a pending delivery and its event are never removed (docs/operations.md,
 * "Event retention"), so "Retry-After: 31536000" would keep them for a year as a delivery that
 * looks merely late, instead of one that failed and can be retried by hand. Steps of the
 * schedule itself are not capped.
 */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * After failed attempt number `attempt` (1-based): the time of the next attempt, or null when
 * the retries are used up. A Retry-After (honoured on 429 and 503) wins when it is longer, up to
 * MAX_RETRY_AFTER_MS.
 */
export function nextAttemptAt(
  policy: RetryPolicy,
  attempt: number,
  now: number,
  random: number,
  retryAfterMs: number | null = null,
): number | null {
  if (attempt > policy.maxRetries) return null;
  const base = policy.backoffMs[Math.min(attempt, policy.backoffMs.length) - 1] ?? 0;
  const delay = Math.max(jittered(base, random), Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
  return now + delay;
}
