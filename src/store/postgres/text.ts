// PostgreSQL text cannot hold U+0000; SQLite's can, and the API lets a NUL into free text (a
// name, a description, a receiver's answer). Both backends must give back what they were given.

/** A noncharacter: free text starting with it, or holding a NUL, is stored as it + a JSON string. */
const MARK = '\uFFFF';

/** Free text as stored: unchanged unless it holds a NUL (or starts with the marker). */
export const toText = (s: string): string =>
  s.includes('\0') || s.startsWith(MARK) ? MARK + JSON.stringify(s) : s;

export const toTextOrNull = (s: string | null): string | null => (s === null ? null : toText(s));

export const fromText = (s: string): string => (s.startsWith(MARK) ? (JSON.parse(s.slice(1)) as string) : s);

export const fromTextOrNull = (s: string | null): string | null => (s === null ? null : fromText(s));
