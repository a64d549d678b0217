// The walk of event retention, the same on every backend (docs/operations.md, "Event retention").

/**
 * Of up to `limit` events (rows of seq, id, created_at) read in the order they were written, from
 * just after position `after`: the ones to remove, those created before `before` up to the first
 * that was not (created_at follows the write order but for clock skew, which only delays an
 * event's turn); and `next`, where the following batch starts, or null once the walk has reached
 * an event too young to go, or the end.
 */
export function oldestEvents(
  rows: readonly Record<string, unknown>[],
  before: number,
  opts: { after: number; limit: number },
): { ids: string[]; next: number | null } {
  const ids: string[] = [];
  let last = opts.after;
  for (const r of rows) {
    if (Number(r.created_at) >= before) return { ids, next: null };
    ids.push(r.id as string);
    last = Number(r.seq);
  }
  return { ids, next: rows.length < opts.limit ? null : last };
}
