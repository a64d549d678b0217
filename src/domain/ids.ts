import { createHash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniform random base62 string (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const newId = {
  account: () => `acct_${randomBase62(16)}`,
  apiKeyId: () => `key_${randomBase62(16)}`,
  apiKey: () => `vk_${randomBase62(32)}`,
  webhook: () => `whk_${randomBase62(24)}`,
  event: () => `evt_${randomBase62(24)}`,
  delivery: () => `dlv_${randomBase62(24)}`,
  webhookSecret: () => `whsec_${randomBytes(32).toString('base64')}`,
  requestId: () => `req_${randomBase62(20)}`,
};

export const API_KEY_PATTERN = /^vk_[0-9A-Za-z]{32}$/;

/** Keys are stored only as this hash. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
