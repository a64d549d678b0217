// Bearer key → account and scope. Keys are looked up by their SHA-256 hash; found keys are
// cached for a short TTL so the hot path skips the database, and a revoked key stops working
// within that TTL. A read key answers GET and HEAD only (docs/api.md, "Authentication").
// What a scope or a role may do is decided on the route that serves the request (its declared
// area), never on the text of the request target.
// Without an Authorization header, a signed-in person's session cookie authenticates instead,
// with what their role allows (docs/people.md).
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../domain/errors.ts';
import { hashApiKey } from '../domain/ids.ts';
import { type Area, READS, roleAllows, scopeAllows } from '../domain/people.ts';
import type { KeyScope, Store, UserRecord } from '../store/store.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route (domain/people.ts, AREAS); `account` when not given. */
    area?: Area;
  }
  interface FastifyRequest {
    accountId: string;
    apiKeyId: string;
    /** Who made the request, as the audit log names them. */
    actor: { type: 'key' | 'user'; id: string; label: string };
    /** The signed-in person, when the session cookie (not a key) authenticated the request. */
    user?: UserRecord;
  }
}

const BEARER = /^Bearer +([!-~]+) *$/i;
const MAX_CACHED = 10_000;

export class KeyAuthenticator {
  readonly #store: Store;
  readonly #ttlMs: number;
  readonly #cache = new Map<
    string,
    { keyId: string; accountId: string; scope: KeyScope; prefix: string; expires: number }
  >();

  constructor(store: Store, ttlMs: number) {
    this.#store = store;
    this.#ttlMs = ttlMs;
  }

  async authenticate(req: FastifyRequest): Promise<void> {
    const header = req.headers.authorization;
    if (header === undefined || header === '') {
      const user = req.session?.user;
      if (user) return this.#signedIn(req, user);
      throw new ApiError('api_key_missing', 'Send your API key as Authorization: Bearer <key>.');
    }
    const match = BEARER.exec(header);
    if (!match) throw new ApiError('api_key_invalid', 'The Authorization header must be Bearer <key>.');
    const hash = hashApiKey(match[1] as string);
    // The cache's own timer, in real time (not the app's clock, which stamps writes).
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
    req.actor = { type: 'key', id: found.keyId, label: `${found.prefix}…` };
    const area = areaOf(req);
    if (!scopeAllows(found.scope, req.method, area)) {
      throw new ApiError('permission_denied', keyRefusal(req.method, area, req.routeOptions.url));
    }
  }

  #signedIn(req: FastifyRequest, user: UserRecord): void {
    req.accountId = user.accountId;
    req.apiKeyId = `user:${user.id}`; // what the rate limit counts by
    req.user = user;
    req.actor = { type: 'user', id: user.id, label: user.email };
    if (!roleAllows(user.role, req.method, areaOf(req))) {
      throw new ApiError(
        'permission_denied',
        `Your role (${user.role}) may not ${req.method} ${req.routeOptions.url}. Ask an admin of your account.`,
      );
    }
  }
}

/** Why a key may not make this request (docs/api.md, "Key scopes"). */
function keyRefusal(method: string, area: Area, url: string | undefined): string {
  if (area === 'own') {
    return `${url} is a signed-in person's own: an API key may not use it. Sign in to the dashboard.`;
  }
  if (READS.has(method)) return 'The audit log is for write keys and admins; this key is read-only.';
  return `This API key is read-only: it may only read (GET), and ${method} changes data. Use a write key.`;
}

/** The area the matched route declares: what the request is decided on, however its path was spelled. */
const areaOf = (req: FastifyRequest): Area => req.routeOptions.config.area ?? 'account';
