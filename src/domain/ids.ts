import { createHash, randomBytes, randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Many small randomBytes calls cost more than the ids need: draw from a pool refilled 4 KiB at a time.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++] as number;
}

/** Uniform random base62 string (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

/** Base62 of the clock, fixed width: ids that start with it sort (and index) by creation time. */
function timePrefix(ms = Date.now()): string {
  let out = '';
  for (let i = 0; i < 8; i++) {
    out = BASE62[ms % 62] + out;
    ms = Math.floor(ms / 62);
  }
  return out;
}

export const newId = {
  account: () => `acct_${randomBase62(16)}`,
  apiKeyId: () => `key_${randomBase62(16)}`,
  apiKey: () => `vk_${randomBase62(32)}`,
  webhook: () => `whk_${randomBase62(24)}`,
  // Time-ordered so that bulk inserts append to the index instead of scattering across it.
  event: () => `evt_${timePrefix()}${randomBase62(16)}`,
  delivery: () => `dlv_${timePrefix()}${randomBase62(16)}`,
  webhookSecret: () => `whsec_${randomBytes(32).toString('base64')}`,
  requestId: () => `req_${randomBase62(20)}`,
};

export const API_KEY_PATTERN = /^vk_[0-9A-Za-z]{32}$/;

/** Keys are stored only as this hash. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
