// Signed-in people (docs/people.md, "Sessions"): the session lives in the database behind an
// HTTP-only, SameSite=Strict cookie, and @fastify/csrf-protection guards cookie-authenticated
// changes. A request without the session cookie — every request made with an API key — costs
// this file one property read: no session object, no id, nothing to save.
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hashToken, newToken, SESSION_IDLE_MS } from '../domain/people.ts';
import type { Store, UserRecord } from '../store/store.ts';

/** A signed-in person's session on one request. */
export interface Session {
  /** The user as the database has them now (role changes and removals apply at once). */
  user: UserRecord;
  /** The CSRF secret, under the name @fastify/csrf-protection reads and writes. */
  _csrf?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when the request carried a live session cookie, or signed someone in. */
    session: Session | null;
    /** The session's id (the cookie's value); only its SHA-256 is stored. */
    sessionId: string | null;
  }
}

export const SESSION_COOKIE = 'vitals_session';

/** A session id: 256 random bits, base64url. Anything else in the cookie is no session. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * Rolling expiry without a write per request: a session used again is extended to a full
 * idle period, at most once a minute. Its cookie is sent again with each extension, so the
 * browser's copy lives as long as the stored one, give or take that minute.
 */
const EXTEND_AFTER_MS = 60_000;

export class Sessions {
  readonly #store: Store;
  readonly #now: () => number;

  constructor(store: Store, now: () => number) {
    this.#store = store;
    this.#now = now;
  }

  /** The onRequest step: the session the cookie names, if it is live; else nothing. */
  async load(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const id = req.cookies[SESSION_COOKIE];
    if (id === undefined || !SESSION_ID.test(id)) return;
    const now = this.#now();
    const found = await this.#store.getSession(hashToken(id), now);
    if (!found) return;
    const data = JSON.parse(found.data) as { _csrf?: string };
    req.session = { user: found.user, _csrf: data._csrf };
    req.sessionId = id;
    if (found.expiresAt - now < SESSION_IDLE_MS - EXTEND_AFTER_MS) await this.#save(req, reply, id, now);
  }

  /**
   * Signs `user` in on this request: a new session id (one held before sign-in is ended, never
   * promoted), the cookie with the answer, and the CSRF token their changes will carry.
   */
  async start(req: FastifyRequest, reply: FastifyReply, user: UserRecord): Promise<string> {
    if (req.sessionId) await this.#store.deleteSession(hashToken(req.sessionId));
    const id = newToken();
    req.session = { user };
    req.sessionId = id;
    const csrfToken = reply.generateCsrf();
    await this.#save(req, reply, id, this.#now());
    return csrfToken;
  }

  /** Signs out: the session ends in every process at once, and the browser forgets the cookie. */
  async end(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (req.sessionId) await this.#store.deleteSession(hashToken(req.sessionId));
    req.session = null;
    req.sessionId = null;
    reply.clearCookie(SESSION_COOKIE, cookieOptions(req));
  }

  async #save(req: FastifyRequest, reply: FastifyReply, id: string, now: number): Promise<void> {
    const session = req.session as Session;
    const data = JSON.stringify({ _csrf: session._csrf });
    await this.#store.putSession(hashToken(id), session.user.id, data, now + SESSION_IDLE_MS);
    reply.setCookie(SESSION_COOKIE, id, { ...cookieOptions(req), maxAge: SESSION_IDLE_MS / 1000 });
  }
}

/** Secure over HTTPS only: over plain HTTP a Secure cookie would never come back. */
const cookieOptions = (req: FastifyRequest) =>
  ({ httpOnly: true, sameSite: 'strict', path: '/', secure: req.protocol === 'https' }) as const;

export async function registerSessions(
  app: FastifyInstance,
  store: Store,
  now: () => number,
): Promise<Sessions> {
  const sessions = new Sessions(store, now);
  await app.register(fastifyCookie);
  app.decorateRequest('session', null);
  app.decorateRequest('sessionId', null);
  app.addHook('onRequest', async (req, reply) => {
    if (req.headers.cookie !== undefined) await sessions.load(req, reply);
  });
  // The plugin's '@fastify/session' mode keeps its secret at req.session._csrf: that is ours.
  await app.register(fastifyCsrf, { sessionPlugin: '@fastify/session' });
  return sessions;
}
