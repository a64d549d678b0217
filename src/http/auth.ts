// Bearer key → account and scope. Keys are looked up by their SHA-256 hash; found keys are
// cached for a short TTL so the hot path skips the database, and a revoked key stops working
// within that TTL. A read key answers GET and HEAD only (docs/api.md, "Authentication").
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import { hashApiKey } from '../domain/ids.ts';
import type { KeyScope, Store } from '../store/store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    accountId: string;
    apiKeyId: string;
    apiKeyScope: KeyScope;
  }
}

const BEARER = /^Bearer +([!-~]+) *$/i;
const MAX_CACHED = 10_000;

export class KeyAuthenticator {
  readonly #store: Store;
  readonly #ttlMs: number;
  readonly #cache = new Map<string, { keyId: string; accountId: string; scope: KeyScope; expires: number }>();

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
    req.apiKeyScope = found.scope;
    if (found.scope === 'read' && req.method !== 'GET' && req.method !== 'HEAD') {
      throw new ApiError(
        'permission_denied',
        `This API key is read-only: it may only read (GET), and ${req.method} changes data. Use a write key.`,
      );
    }
  }
}
