/** Timestamps are kept as epoch milliseconds and shown as ISO 8601 UTC with milliseconds. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** A successful update is strictly later than the state it replaces, even if the clock has not moved. */
export const nextTimestamp = (now: number, previous: number): number => (now > previous ? now : previous + 1);
