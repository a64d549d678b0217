// Bearer key → account. Keys are looked up by their SHA-256 hash; found keys are cached
// for a short TTL so the hot path skips the database, and a revoked key stops working
// within that TTL.
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import { hashApiKey } from '../domain/ids.ts';
import type { Store } from '../store/store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    accountId: string;
    apiKeyId: string;
  }
}

const BEARER = /^Bearer +([!-~]+) *$/i;
const MAX_CACHED = 10_000;

export class KeyAuthenticator {
  readonly #store: Store;
  readonly #ttlMs: number;
  readonly #cache = new Map<string, { keyId: string; accountId: string; expires: number }>();

  constructor(store: Store, ttlMs: number) {
    this.#store = store;
    this.#ttlMs = ttlMs;
  }

  async authenticate(req: FastifyRequest): Promise<void> {
    const header = req.headers.authorization;
    if (header === undefined || header === '') {
      throw new ApiError('api_key_missing', 'Send your API key as Authorization: Bearer <key>.');
    }
    const match = BEARER.exec(header);
    if (!match) throw new ApiError('api_key_invalid', 'The Authorization header must be Bearer <key>.');
    const hash = hashApiKey(match[1] as string);
    const now = Date.now();
    let found = this.#cache.get(hash);
    if (!found || found.expires <= now) {
      const key = await this.#store.findApiKey(hash);
      if (!key) {
        this.#cache.delete(hash);
        throw new ApiError('api_key_invalid', 'The API key is not valid, or it has been revoked.');
      }
      if (this.#cache.size >= MAX_CACHED) this.#cache.clear();
      found = { ...key, expires: now + this.#ttlMs };
      this.#cache.set(hash, found);
    }
    req.accountId = found.accountId;
    req.apiKeyId = found.keyId;
  }
}
