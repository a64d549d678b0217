// What JSON can carry but Vitals does not take, whatever the route: bodies nested deeper than
// any resource needs (every JSON.stringify downstream recurses, and would exhaust the stack),
// and strings with a lone surrogate (\ud800 escapes: no UTF-8 database keeps them as sent, so
// SQLite would silently store U+FFFD and PostgreSQL's json would refuse them).
import { ApiError } from '../domain/errors.ts';
import { MAX_BODY_DEPTH, tooDeep } from './json-body.ts';

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

const notUnicode = (param: string) =>
  new ApiError(
    'invalid_json',
    'The request body has a string with an unpaired UTF-16 surrogate (\\ud800-\\udfff).',
    param || undefined,
  );

/** Why a parsed JSON body is refused, or null. Iterative: 500k nested arrays cost a loop, not the stack. */
export function bodyRefusal(body: unknown): ApiError | null {
  const pending: [unknown, number, string][] = [[body, 1, '']];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, depth, path] = next;
    if (typeof value === 'string') {
      if (!value.isWellFormed()) return notUnicode(path);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_BODY_DEPTH) return tooDeep();
    // Pushed last to first, so the first offending field in the document is the one named.
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i] as [string, unknown];
      if (!key.isWellFormed()) return notUnicode(path);
      pending.push([child, depth + 1, join(path, key)]);
    }
  }
  return null;
}
