// The API's limits, each written once: the schemas (here), the writes and the dashboard read them.
// docs/api.md, "General".
import { FACTOR_NAME, MAX_FACTORS } from '../domain/scoring.ts';

export { FACTOR_NAME, MAX_FACTORS };

/** Factor names, and metric names (as for factors), as a JSON Schema pattern. */
export const FACTOR_NAME_PATTERN = FACTOR_NAME.source;

/** The schema options of a factor or metric name. */
export const FactorName = {
  pattern: FACTOR_NAME_PATTERN,
  description: 'lowercase letters, digits, _; 1-64 long',
};

/** Bodies of routes other than the batches may be this large (413 above). */
export const BODY_LIMIT = 1024 * 1024;
/** Bodies of the batch routes may be this large (413 above). */
export const BATCH_BODY_LIMIT = 8 * 1024 * 1024;
export const MAX_BATCH_ITEMS = 1000;

/** Metric values in one write. */
export const MAX_VALUES = 50;
/** The longest reason of an override. */
export const MAX_REASON = 500;
/** The longest note of an outcome. */
export const MAX_NOTE = 500;
/** Groups listed at most: a key with more values than this is an id, not a segment. */
export const MAX_GROUPS = 1000;
/** A backlog is counted this far: beyond it, the count would cost what the backlog is long. */
export const BACKLOG_CAP = 10_000;
/** The longest overlap a rotation may give the replaced secret: a week, in seconds. */
export const MAX_OVERLAP_SECONDS = 604_800;
/** The longest webhook URL. */
export const MAX_URL_LENGTH = 2048;
