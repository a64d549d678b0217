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

/**
 * The secrets a delivery sent at `sentAt` is signed with: the current one first, then the one a
 * rotation replaced while its overlap lasts (docs/webhooks.md, "Rotating the secret"). An expired
 * previous secret simply stops signing: it is compared with the send time, no job clears it.
 */
export function signingSecrets(
  w: { secret: string; previousSecret: string | null; previousSecretExpiresAt: number | null },
  sentAt: number,
): string[] {
  const overlapping =
    w.previousSecret !== null && w.previousSecretExpiresAt !== null && sentAt < w.previousSecretExpiresAt;
  return overlapping ? [w.secret, w.previousSecret as string] : [w.secret];
}

/** `X-Vitals-Signature`: one hex signature per secret, comma-separated, the current secret's first. */
export function vitalsSignatures(secrets: readonly string[], body: string): string {
  return secrets.map((secret) => vitalsSignature(secret, body)).join(',');
}

/** `webhook-signature`: one `v1,<base64>` per secret, space-separated as Standard Webhooks lists them. */
export function standardSignatures(
  secrets: readonly string[],
  msgId: string,
  timestampSeconds: number,
  body: string,
): string {
  return secrets.map((secret) => standardSignature(secret, msgId, timestampSeconds, body)).join(' ');
}

/** Constant-time comparison for a receiver that checks our hex signature. */
export function verifyVitalsSignature(secret: string, body: string, signature: string): boolean {
  const expected = Buffer.from(vitalsSignature(secret, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
