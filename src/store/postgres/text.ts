// PostgreSQL text cannot hold U+0000; SQLite's can, and the API lets a NUL into free text (a
// name, a description, a receiver's answer). Both backends must give back what they were given.

/** A noncharacter: free text starting with it, or holding a NUL, is stored as it + a JSON string. */
const MARK = '\uFFFF';

/** Free text as stored: unchanged unless it holds a NUL (or starts with the marker). */
export const toText = (s: string): string =>
  s.includes('\0') || s.startsWith(MARK) ? MARK + JSON.stringify(s) : s;

export const toTextOrNull = (s: string | null): string | null => (s === null ? null : toText(s));

export const fromText = (s: string): string => (s.startsWith(MARK) ? (JSON.parse(s.slice(1)) as string) : s);

/** What JSON.stringify writes its own way where an array literal needs another: `\n`, `\u0000`, … */
const JSON_ESCAPE = /\\[^\\"]/;

/**
 * A list as PostgreSQL's array literal, for a bulk statement's array parameter (postgres.js sends
 * a string given for an array as it is). For text without control characters a JSON string is a
 * quoted element (a backslash before `"` and `\`), so JSON.stringify writes the literal natively,
 * where postgres.js's own serializer escapes element by element (about a third of the process's
 * CPU time in a whole-account rescore: docs/development.md, "The store"). Lists JSON would write otherwise (a
 * control character, a lone surrogate, a number that is not finite) go element by element.
 */
export function pgArray(values: readonly (string | number | boolean | null)[]): string {
  const json = JSON.stringify(values);
  if (!JSON_ESCAPE.test(json) && values.every((v) => typeof v !== 'number' || Number.isFinite(v))) {
    return `{${json.slice(1, -1)}}`;
  }
  const element = (v: string | number | boolean | null) =>
    v === null ? 'NULL' : typeof v !== 'string' ? String(v) : `"${v.replace(/[\\"]/g, '\\$&')}"`;
  return `{${values.map(element).join(',')}}`;
}
