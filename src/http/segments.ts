// Segment filters in a query string (docs/api.md, "Segments, trends and movers"): `metadata[KEY]=VALUE`,
// several ANDed, and the book's filters (owner, renewal_after, renewal_before, parent_id,
// lifecycle), ANDed with them. The lists, the summary, the distribution, the trend, the movers and
// the calibration all take them; their schema is segmentParams and bookParams (../api/common.ts).

import { SEGMENT_FILTER } from '../api/common.ts';
import { Email } from '../api/customers.ts';
import { type Lifecycle, METADATA_MAX_KEYS } from '../domain/customers.ts';
import { ApiError } from '../domain/errors.ts';
import type { Segment, UserRecord } from '../store/store.ts';
import { instantOf } from './instants.ts';

const EMAIL = new RegExp((Email as unknown as { pattern: string }).pattern);

/** The book filters as a query gives them (bookParams). */
interface BookQuery {
  owner?: string;
  renewal_after?: string;
  renewal_before?: string;
  parent_id?: string;
  lifecycle?: Lifecycle | 'all';
}

/**
 * The segment a query names (parameters its schema has checked), or undefined for every customer.
 * `lifecycle` is the one counted when the query names none: the portfolio's reads count the active
 * customers only, the customer list and the calibration every one (docs/api.md, "Segments, trends
 * and movers").
 */
export function segmentOf(
  req: { query: object; user?: UserRecord | undefined },
  lifecycle: Lifecycle | 'all' = 'all',
): Segment | undefined {
  const query = req.query as BookQuery & Record<string, unknown>;
  const metadata: { key: string; value: string }[] = [];
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
    metadata.push({ key, value: String(value) });
  }
  if (metadata.length > METADATA_MAX_KEYS) {
    throw new ApiError(
      'parameter_invalid',
      `At most ${METADATA_MAX_KEYS} metadata filters may be given (a customer has at most ${METADATA_MAX_KEYS} keys).`,
      'metadata',
    );
  }
  const segment: {
    -readonly [K in keyof Segment]: Segment[K];
  } = { metadata };
  const owner = ownerOf(req, query.owner);
  if (owner !== undefined) segment.owner = owner;
  if (query.renewal_after !== undefined)
    segment.renewalAfter = instantOf(query.renewal_after, 'renewal_after');
  if (query.renewal_before !== undefined) {
    segment.renewalBefore = instantOf(query.renewal_before, 'renewal_before');
  }
  if (query.parent_id !== undefined) segment.parentId = query.parent_id;
  const counted = query.lifecycle ?? lifecycle;
  if (counted !== 'all') segment.lifecycle = counted;
  return segment;
}

/** `owner=`: an email, `none` (null: no owner) or `me` (the signed-in person's email). */
function ownerOf(
  req: { user?: UserRecord | undefined },
  owner: string | undefined,
): string | null | undefined {
  if (owner === undefined) return undefined;
  if (owner === 'none') return null;
  if (owner === 'me') {
    if (!req.user) {
      throw new ApiError(
        'parameter_invalid',
        "'owner=me' names the signed-in person: with an API key there is none; give an email.",
        'owner',
      );
    }
    return req.user.email;
  }
  if (!EMAIL.test(owner)) {
    throw new ApiError('parameter_invalid', "'owner' must be an email address, 'none' or 'me'.", 'owner');
  }
  return owner;
}
