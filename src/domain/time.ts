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

// The one reading of an instant sent to Vitals (docs/api.md, "Dates and times"): ISO 8601 with a
// time zone, whose date and time exist. Date.parse rolls `2026-02-31` over to March 3 and
// `T24:00:00` to the next day; here each component is put through the calendar and must come back
// unchanged, so such text is refused instead of silently moved.
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** What an instant must be, for the message that refuses one: `'${field}' must be ${INSTANT_RULE}.` */
export const INSTANT_RULE = 'a real date and time in ISO 8601 with a time zone, such as 2026-03-31T12:00:00Z';

/** An instant as ms since the epoch, or null unless it is ISO 8601 with a time zone and a real date and time. */
export function parseInstant(text: string): number | null {
  const m = INSTANT.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  // Digits past the millisecond are dropped, as Date.parse drops them.
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  // RFC 3339's offsets: hours 00-23, minutes 00-59.
  const offsetHours = m[9] === undefined ? 0 : Number(m[9]);
  const offsetMinutes = m[10] === undefined ? 0 : Number(m[10]);
  if (offsetHours > 23 || offsetMinutes > 59) return null;
  // setUTCFullYear, not Date.UTC, which reads years 0-99 as 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  if (
    date.getUTCFullYear() !== year ||
    date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day ||
    date.getUTCHours() !== hour ||
    date.getUTCMinutes() !== minute ||
    date.getUTCSeconds() !== second
  ) {
    return null;
  }
  const offset = (offsetHours * 60 + offsetMinutes) * 60_000;
  return date.getTime() - (m[8] === '-' ? -offset : offset);
}
