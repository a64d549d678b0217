// Segment filters in a query string: `metadata[KEY]=VALUE`, several ANDed (docs/api.md,
// "Segments"). The lists, the summary, the trend and the movers all take them.

import { METADATA_MAX_KEYS } from '../domain/customers.ts';
import { ApiError } from '../domain/errors.ts';
import type { Segment } from '../store/store.ts';

const FILTER = /^metadata\[([\s\S]{1,64})\]$/;

/**
 * Schema options a query schema spreads in: `metadata[KEY]` parameters beside its own. A key or
 * value holding NUL is refused: PostgreSQL text cannot hold it, so it could match nothing.
 */
export const segmentParams = {
  patternProperties: {
    [FILTER.source]: {
      type: 'string',
      maxLength: 16384,
      pattern: '^[^\\u0000]*$',
      description:
        'metadata[KEY]=VALUE: only customers whose metadata KEY is this string, or a number or boolean with this JSON text.',
    },
  },
} as const;

/** The segment a query names (parameters its schema has checked), or undefined for none. */
export function segmentOf(query: object): Segment | undefined {
  const segment: { key: string; value: string }[] = [];
  for (const [param, value] of Object.entries(query)) {
    const key = FILTER.exec(param)?.[1];
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
