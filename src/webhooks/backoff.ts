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
 * After failed attempt number `attempt` (1-based): the time of the next attempt, or null when
 * the retries are used up. A Retry-After (honoured on 429 and 503) wins when it is longer.
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
  const delay = Math.max(jittered(base, random), retryAfterMs ?? 0);
  return now + delay;
}
