// Webhook signatures (docs/webhooks.md, "Headers"): our own header and the Standard Webhooks scheme, so
// receivers can verify with a few lines of their own or with stock libraries.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Lowercase hex HMAC-SHA256 of the raw body, keyed with the secret string as given at creation. */
export function vitalsSignature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed with the base64 part of `whsec_…`. */
export function standardSignature(
  secret: string,
  msgId: string,
  timestampSeconds: number,
  body: string,
): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** Constant-time comparison for a receiver that checks our hex signature. */
export function verifyVitalsSignature(secret: string, body: string, signature: string): boolean {
  const expected = Buffer.from(vitalsSignature(secret, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
