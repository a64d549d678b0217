// Signed-in people (docs/people.md): @fastify/cookie and @fastify/session keep the session in
// the database behind an HTTP-only, SameSite=Strict cookie; @fastify/csrf-protection guards
// cookie-authenticated changes. This file only adapts the Store to the session plugin's store.
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifySession from '@fastify/session';
import type { FastifyInstance, Session } from 'fastify';
import { hashToken, newToken, SESSION_IDLE_MS } from '../domain/people.ts';
import type { Store, UserRecord } from '../store/store.ts';

declare module 'fastify' {
  interface Session {
    /** Set at sign-in. */
    userId?: string;
    /** The user as the database has them now (role changes and removals apply at once); never stored. */
    user?: UserRecord;
    _csrf?: string;
  }
}

export const SESSION_COOKIE = 'vitals_session';

type Done = (err?: unknown) => void;

/**
 * The sessions table as the plugin's store. Ids are 256 random bits and only their SHA-256 is
 * stored, as for API keys; a session read joins its user, so a removed user's session is gone.
 */
function sessionStore(store: Store, now: () => number) {
  return {
    set(sid: string, session: Session, done: Done) {
      if (!session.userId) return done();
      const data = JSON.stringify({ userId: session.userId, _csrf: session._csrf, cookie: session.cookie });
      store
        .putSession(hashToken(sid), session.userId, data, now() + SESSION_IDLE_MS)
        .then(() => done(), done);
    },
    get(sid: string, done: (err: unknown, session?: Session | null) => void) {
      store
        .getSession(hashToken(sid), now())
        .then(
          (found) => done(null, found ? ({ ...JSON.parse(found.data), user: found.user } as Session) : null),
          done,
        );
    },
    destroy(sid: string, done: Done) {
      store.deleteSession(hashToken(sid)).then(() => done(), done);
    },
  };
}

/**
 * The cookie carries the session id itself. The plugin would sign it with a secret every
 * process shares; a 256-bit random id looked up by its hash is already unforgeable, so the
 * "signer" passes it through and no secret has to be configured or stored.
 */
const PASS_THROUGH = {
  sign: (value: string) => value,
  unsign: (value: string) => ({ valid: /^[A-Za-z0-9_-]{43}$/.test(value), renew: false, value }),
};

export async function registerSessions(app: FastifyInstance, store: Store, now: () => number): Promise<void> {
  await app.register(fastifyCookie);
  await app.register(fastifySession, {
    secret: PASS_THROUGH,
    cookieName: SESSION_COOKIE,
    idGenerator: newToken,
    store: sessionStore(store, now),
    saveUninitialized: false,
    rolling: true,
    // Not secure: 'auto', which makes the cookie SameSite=Lax over plain HTTP; Secure is added below.
    cookie: { httpOnly: true, sameSite: 'strict', secure: false, path: '/', maxAge: SESSION_IDLE_MS },
  });
  app.addHook('onRequest', async (req) => {
    if (req.protocol === 'https' && req.session?.cookie) req.session.options({ secure: true });
  });
  await app.register(fastifyCsrf, { sessionPlugin: '@fastify/session' });
}
