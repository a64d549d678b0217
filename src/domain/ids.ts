import { hash, randomBytes, randomFillSync } from 'node:crypto';

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

/**
 * `n` random bytes as base64url, from the same pool (a session id, a one-time link's token): a
 * randomBytes call per token cost 5% of a key-authenticated GET, which gets a session id it never
 * uses. Pooled bytes are CSPRNG output all the same, and each is handed out once.
 */
export function randomToken(n: number): string {
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = randomByte();
  return out.toString('base64url');
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
function timePrefix(ms: number): string {
  let out = '';
  for (let i = 0; i < 8; i++) {
    out = BASE62[ms % 62] + out;
    ms = Math.floor(ms / 62);
  }
  return out;
}

/** The next base62 string of the same length (false when it would overflow). */
function increment(text: string): string | false {
  const chars = text.split('');
  for (let i = chars.length - 1; i >= 0; i--) {
    const at = BASE62.indexOf(chars[i] as string);
    if (at < 61) {
      chars[i] = BASE62[at + 1] as string;
      return chars.join('');
    }
    chars[i] = '0';
  }
  return false;
}

/**
 * Time prefix + 16 random characters, strictly increasing within this process (as a monotonic
 * ULID factory does): within one millisecond the random part counts up, so ids made in the same
 * millisecond still sort in the order they were made (docs/api.md, "Identifiers").
 */
function monotonic(prefix: string): () => string {
  let lastMs = 0;
  let lastRandom = '';
  return () => {
    const now = Date.now();
    const next = now > lastMs ? false : increment(lastRandom);
    if (next === false) {
      lastMs = Math.max(now, lastMs + (lastRandom === '' ? 0 : 1));
      lastRandom = randomBase62(16);
    } else {
      lastRandom = next;
    }
    return `${prefix}${timePrefix(lastMs)}${lastRandom}`;
  };
}

export const newId = {
  account: () => `acct_${randomBase62(16)}`,
  apiKeyId: () => `key_${randomBase62(16)}`,
  user: () => `usr_${randomBase62(16)}`,
  apiKey: () => `vk_${randomBase62(32)}`,
  webhook: () => `whk_${randomBase62(24)}`,
  // Time-ordered so that bulk inserts append to the index instead of scattering across it.
  event: monotonic('evt_'),
  delivery: monotonic('dlv_'),
  audit: monotonic('aud_'),
  outcome: monotonic('out_'),
  view: monotonic('view_'),
  backfill: monotonic('bf_'),
  source: monotonic('src_'),
  sourceMessage: monotonic('msg_'),
  task: monotonic('task_'),
  note: monotonic('note_'),
  playbook: monotonic('pb_'),
  mail: monotonic('mail_'),
  webhookSecret: () => `whsec_${randomBytes(32).toString('base64')}`,
  requestId: () => `req_${randomBase62(20)}`,
};

export const API_KEY_PATTERN = /^vk_[0-9A-Za-z]{32}$/;

/** Keys are stored only as this hash. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}
