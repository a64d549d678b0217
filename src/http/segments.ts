// Segment filters in a query string: `metadata[KEY]=VALUE`, several ANDed (docs/api.md,
// "Segments"). The lists, the summary, the trend and the movers all take them; their schema is
// segmentParams (../api/common.ts).

import { SEGMENT_FILTER } from '../api/common.ts';
import { METADATA_MAX_KEYS } from '../domain/customers.ts';
import { ApiError } from '../domain/errors.ts';
import type { Segment } from '../store/store.ts';

/** The segment a query names (parameters its schema has checked), or undefined for none. */
export function segmentOf(query: object): Segment | undefined {
  const segment: { key: string; value: string }[] = [];
  for (const [param, value] of Object.entries(query)) {
    const key = SEGMENT_FILTER.exec(param)?.[1];
    if (key === undefined) continue;
    if (key.includes('\u0000')) {
      throw new ApiError(
        'parameter_invalid',
        'A metadata key in a filter cannot hold a NUL character.',
        param,
      );
    }
    segment.push({ key, value: String(value) });
  }
  if (segment.length > METADATA_MAX_KEYS) {
    throw new ApiError(
      'parameter_invalid',
      `At most ${METADATA_MAX_KEYS} metadata filters may be given (a customer has at most ${METADATA_MAX_KEYS} keys).`,
      'metadata',
    );
  }
  return segment.length > 0 ? segment : undefined;
}
