// Customer rules that a schema cannot say: metadata size and the PATCH merge law.
import { ApiError } from './errors.ts';

export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_BYTES = 16 * 1024;

export type Metadata = Record<string, unknown>;

/**
 * Top-level merge: supplied keys are set, a key given as null is removed, other keys stay.
 * On create the "current" metadata is empty, so null there simply means "no value".
 */
export function mergeMetadata(current: Metadata, patch: Metadata): Metadata {
  const next: Metadata = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}

/** Limits hold for the stored result, so a merge cannot grow metadata past them. */
export function checkMetadata(metadata: Metadata): void {
  if (Object.keys(metadata).length > METADATA_MAX_KEYS) {
    throw new ApiError(
      'parameter_invalid',
      `'metadata' may have at most ${METADATA_MAX_KEYS} keys.`,
      'metadata',
    );
  }
  if (Buffer.byteLength(JSON.stringify(metadata)) > METADATA_MAX_BYTES) {
    throw new ApiError(
      'parameter_invalid',
      `'metadata' must serialize to at most ${METADATA_MAX_BYTES} bytes of JSON.`,
      'metadata',
    );
  }
}
