/**
 * Timestamps are kept as epoch milliseconds and shown as ISO 8601 UTC with milliseconds.
 * Formatting is on every response's hot path, so the date part is cached per day and the
 * time of day is built with arithmetic (the same text as Date#toISOString for years 1970-9999).
 */
const DAY_MS = 86_400_000;
let cachedDay = Number.NaN;
let cachedPrefix = '';

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

export function iso(ms: number): string {
  if (!(ms >= 0 && ms < 253402300800000) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay) {
    cachedDay = day;
    cachedPrefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
  }
  let rest = ms - day * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  return `${cachedPrefix}${pad2(h)}:${pad2(m)}:${pad2(s)}.${pad3(rest - s * 1000)}Z`;
}

/** A successful update is strictly later than the state it replaces, even if the clock has not moved. */
export const nextTimestamp = (now: number, previous: number): number => (now > previous ? now : previous + 1);
