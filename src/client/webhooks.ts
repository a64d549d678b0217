// Verifying a webhook delivery (docs/client.md, "verifyWebhook"). Vitals signs every delivery
// twice (docs/webhooks.md, "Headers"): X-Vitals-Signature, the hex HMAC of the body keyed with
// the whole `whsec_…` string, and Standard Webhooks' `webhook-signature`, which also signs the
// event id and the send time. The Standard Webhooks signature must verify, since only it binds
// the send time (the hex one alone would let an old delivery be replayed with a fresh
// timestamp), and the hex one, when present, must verify too. The send time must be recent.
// During a rotation's overlap each header carries a signature with each secret (docs/webhooks.md,
// "Rotating the secret"): the old secret's and the new one's both verify.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from './types.ts';

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyOptions {
  /** The current time in ms since the epoch (default: Date.now()). */
  now?: number;
  /** How far `webhook-timestamp` may be from now, either way, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The name of Vitals' own signature header, if VITALS_SIGNATURE_HEADER changed it. */
  signatureHeader?: string;
}

/** A fetch `Headers`, or Node's `req.headers` / any object of header names in any case. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

/**
 * The delivery's event `{type, data}` when `rawBody` (the bytes exactly as received) is signed with
 * `secret` and was sent within the tolerance; otherwise throws WebhookVerificationError.
 */
export function verifyWebhook(
  secret: string,
  rawBody: string | Uint8Array,
  headers: HeadersLike,
  opts: VerifyOptions = {},
): WebhookEvent {
  // A missing secret is a receiver's misconfiguration, not a forged delivery: say so.
  if (typeof secret !== 'string' || secret === '')
    throw new TypeError('verifyWebhook needs the webhook secret.');
  const header = headerReader(headers);
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const timestamp = recentTimestamp(header('webhook-timestamp'), opts);
  const vitals = header(opts.signatureHeader ?? 'x-vitals-signature');
  const standard = header('webhook-signature');
  const id = header('webhook-id');
  const vitalsValid = vitals !== undefined && vitalsSignatureValid(secret, body, vitals);
  const standardValid =
    standard !== undefined &&
    id !== undefined &&
    standardSignatureValid(secret, id, timestamp, body, standard);
  if (!standardValid) {
    throw new WebhookVerificationError(
      'The webhook-signature of the delivery does not match the secret (or webhook-id is missing).',
    );
  }
  if (vitals !== undefined && !vitalsValid) {
    throw new WebhookVerificationError('The X-Vitals-Signature of the delivery does not match the secret.');
  }
  try {
    return JSON.parse(body.toString('utf8')) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('The delivery is signed but its body is not JSON.');
  }
}

function headerReader(headers: HeadersLike): (name: string) => string | undefined {
  if (headers instanceof Headers) return (name) => headers.get(name) ?? undefined;
  const lower = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    // Repeated headers join as fetch's Headers joins them.
    if (value !== undefined) lower.set(name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value);
  }
  return (name) => lower.get(name.toLowerCase());
}

/** The send time, if it is within the tolerance of now: an older delivery may be a replay. */
function recentTimestamp(timestamp: string | undefined, opts: VerifyOptions): string {
  if (timestamp === undefined || !/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError('The delivery has no valid webhook-timestamp header.');
  }
  const tolerance = opts.toleranceSeconds ?? 300;
  const age = (opts.now ?? Date.now()) / 1000 - Number(timestamp);
  if (age > tolerance) {
    throw new WebhookVerificationError('The delivery is too old (webhook-timestamp).');
  }
  if (age < -tolerance) {
    throw new WebhookVerificationError('The delivery is dated in the future (webhook-timestamp).');
  }
  return timestamp;
}

/** `X-Vitals-Signature` holds one hex signature per secret, comma-separated (two during an overlap). */
function vitalsSignatureValid(secret: string, body: Buffer, header: string): boolean {
  const expected = createHmac('sha256', secret).update(body).digest('hex');
  return header.split(',').some((signature) => sameText(expected, signature.trim()));
}

/** `webhook-signature` may hold several space-separated `v1,<base64>` signatures (during a rotation). */
function standardSignatureValid(secret: string, id: string, timestamp: string, body: Buffer, header: string) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return header
    .split(' ')
    .map((s) => s.replace(/,$/, ''))
    .some((signature) => sameText(`v1,${mac}`, signature));
}

/** Constant-time for equal lengths; the length of a signature is no secret. */
function sameText(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
