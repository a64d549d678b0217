// Customer rules that a schema cannot say: metadata size, its numbers, and the PATCH merge law.
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

/**
 * Where the first number JSON cannot hold is, as a dotted path, or null. 1e309 parses to
 * Infinity, which JSON.stringify would store as null: what is sent must read back as sent.
 * Metadata nests at most 64 levels (text-rules.ts), so recursion is safe here.
 */
function nonFinite(value: unknown, path: string): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : path;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, child] of Object.entries(value)) {
    const found = nonFinite(child, `${path}.${key}`);
    if (found) return found;
  }
  return null;
}

/** Limits hold for the stored result, so a merge cannot grow metadata past them. */
export function checkMetadata(metadata: Metadata): void {
  const infinite = nonFinite(metadata, 'metadata');
  if (infinite) {
    throw new ApiError(
      'parameter_invalid',
      `'${infinite}' is a number beyond what a double holds (±1.8e308), so it could not be kept as sent.`,
      infinite,
    );
  }
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

/** A customer's lifecycle (docs/api.md, "Customers"): `active` unless said otherwise. */
export const LIFECYCLES = ['active', 'churned'] as const;
export type Lifecycle = (typeof LIFECYCLES)[number];

/** A customer's book (docs/api.md, "Customers"): its fields, by their API names, in the order the API answers them. */
export const BOOK_FIELDS = ['owner', 'arr', 'renewal_at', 'lifecycle', 'parent_id'] as const;

/** The most ARR a customer may have (docs/api.md, "Customers"), in the API's units. */
export const ARR_MAX = 1e12;

/**
 * An ARR (finite, 0 to ARR_MAX: the schema checks) as integer cents, rounded half away from zero
 * at the second decimal (docs/api.md, "Customers"). Rounded on the number's shortest decimal text,
 * the digits the client sent: 1.005 is stored as 1.01, though the double nearest 1.005 lies below it.
 */
export function arrCentsOf(arr: number): number {
  if (!Number.isFinite(arr) || arr < 0 || arr > ARR_MAX) {
    throw new ApiError('parameter_invalid', `'arr' must be a number from 0 to ${ARR_MAX}.`, 'arr');
  }
  const [mantissa = '0', exponent = '0'] = String(arr).split('e');
  const [whole = '0', fraction = ''] = mantissa.split('.');
  const digits = whole + fraction;
  // Where the decimal point of arr × 100 falls in `digits`.
  const point = whole.length + Number(exponent) + 2;
  if (point >= digits.length) return Number(digits.padEnd(point, '0'));
  if (point < 0) return 0;
  const kept = point === 0 ? 0 : Number(digits.slice(0, point));
  return kept + ((digits[point] as string) >= '5' ? 1 : 0);
}

/** The instants a renewal may be at: years 1970-9999 (docs/api.md, "Customers"). */
export const RENEWAL_MAX_MS = 253_402_300_800_000;
