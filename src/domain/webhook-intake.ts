// How a webhook source's deliveries are authenticated and bounded (docs/sources.md, "Webhooks"):
// an HMAC-SHA256 of the raw body in a header of the source's choosing, or a token in the ingest
// URL, each compared in constant time. Pure.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { hashApiKey } from './ids.ts';
import type { WebhookSignature } from './sources.ts';

/**
 * The largest delivery. Larger than Segment's 32 KB message: a tool's webhook carries its whole
 * object, and an Intercom conversation with its parts or a HubSpot batch of 100 events passes
 * 32 KB; and an HMAC covers the body as sent, so it cannot be cut. 256 KB bounds what one
 * delivery holds in memory and gives the mapping to evaluate.
 */
export const WEBHOOK_BODY_MAX = 256 * 1024;
/** A body that is a JSON array is that many messages (HubSpot sends up to 100 events at once). */
export const WEBHOOK_MESSAGES_MAX = 100;

const DIGEST_BYTES = 32;

/** The signature's bytes as the header gives them (after the prefix), or null when not in the encoding. */
function decode(text: string, encoding: WebhookSignature['encoding']): Buffer | null {
  if (encoding === 'hex') return /^[0-9a-f]{64}$/i.test(text) ? Buffer.from(text, 'hex') : null;
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === DIGEST_BYTES ? bytes : null;
}

/**
 * Why the delivery's signature does not prove it came from the holder of `secret` (a log reason
 * a person reads), or null when it does: the header holds `prefix` then the HMAC-SHA256 of the raw
 * body, keyed with the secret's text as given, in the encoding.
 */
export function signatureRefusal(
  signature: WebhookSignature,
  secret: string,
  body: Buffer,
  header: string | string[] | undefined,
): string | null {
  const given = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!given) return `signature_missing: the delivery has no ${signature.header} header`;
  const prefix = signature.prefix ?? '';
  if (!given.toLowerCase().startsWith(prefix.toLowerCase())) {
    return `signature_invalid: the ${signature.header} header does not start with '${prefix}'`;
  }
  const bytes = decode(given.slice(prefix.length).trim(), signature.encoding);
  const expected = createHmac('sha256', secret).update(body).digest();
  if (!bytes || !timingSafeEqual(bytes, expected)) {
    return `signature_invalid: the ${signature.header} header is not the ${signature.encoding} HMAC-SHA256 of this body with the source's secret`;
  }
  return null;
}

/** Whether `token` is the one whose hash the source keeps; in constant time. */
export function tokenMatches(token: string, keyHash: string): boolean {
  const given = Buffer.from(hashApiKey(token));
  const kept = Buffer.from(keyHash);
  return given.length === kept.length && timingSafeEqual(given, kept);
}
