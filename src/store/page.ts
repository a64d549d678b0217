import type { Page } from './store.ts';

/** Rows fetched with LIMIT limit + 1: the extra row only says that more follow. */
export function page<R, T>(rows: readonly R[], limit: number, map: (r: R) => T): Page<T> {
  return { data: rows.slice(0, limit).map(map), hasMore: rows.length > limit };
}
