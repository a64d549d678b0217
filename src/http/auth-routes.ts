// Signing in and out (docs/people.md): /auth/login, /auth/logout, /auth/session, /auth/password (a
// one-time link's token sets the password and signs the person in) and /auth/password/link (who a
// link is for, so the page can say it before it is used). Outside /api: they take no API key.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errorResponses } from '../api/common.ts';
import { LinkBody, LoginBody, PasswordBody, SessionAnswer, UserAnswer, userJson } from '../api/users.ts';
import { ApiError } from '../domain/errors.ts';
import {
  DECOY_HASH,
  hashPassword,
  hashToken,
  LOCK_FAILURES,
  LOCK_WINDOW_MS,
  normalizeEmail,
  passwordProblem,
  verifyPassword,
} from '../domain/people.ts';
import type { Store, UserRecord } from '../store/store.ts';
import type { App, Routes } from './reply.ts';
import type { Sessions } from './sessions.ts';

const INVALID = 'The email or the password is not right.';

interface Deps {
  store: Store;
  now: () => number;
  sessions: Sessions;
}

/**
 * Signs `user` in on this request: a new session id (one set before sign-in is never signed in),
 * the session cookie with the answer, and the CSRF token their changes will carry.
 */
async function startSession({ sessions }: Deps, req: FastifyRequest, reply: FastifyReply, user: UserRecord) {
  return { user: userJson(user), csrf_token: await sessions.start(req, reply, user) };
}

function login(app: App, deps: Deps): void {
  const { store, now } = deps;
  app.post(
    '/auth/login',
    {
      schema: {
        tags: ['people'],
        summary: 'Sign in with email and password; sets the session cookie',
        body: LoginBody,
        response: { 200: SessionAnswer, ...errorResponses(400, 401, 429) },
      },
    },
    async (req, reply) => {
      const email = normalizeEmail(req.body.email);
      const at = now();
      // The attempt is counted before the password is checked, in one atomic step, so a burst
      // in parallel has at most LOCK_FAILURES checked; a right password gives its count back.
      const claim = await store.claimSignInAttempt(email, at, {
        since: at - LOCK_WINDOW_MS,
        limit: LOCK_FAILURES,
      });
      if (!claim.claimed) {
        const wait = Math.max(1, Math.ceil((claim.oldest + LOCK_WINDOW_MS - at) / 1000));
        reply.header('retry-after', String(wait));
        throw new ApiError(
          'sign_in_locked',
          `Too many failed sign-ins for this email: try again in ${Math.ceil(wait / 60)} minutes.`,
        );
      }
      const user = await store.findUserByEmail(email);
      // An unknown email or a user without a password costs one scrypt too: no telling them apart.
      const matches = await verifyPassword(req.body.password, user?.passwordHash ?? DECOY_HASH);
      if (!user?.passwordHash || !matches) throw new ApiError('credentials_invalid', INVALID);
      await store.releaseSignInAttempt(email, at);
      return startSession(deps, req, reply, user);
    },
  );
}

function currentSession(app: App): void {
  app.get(
    '/auth/session',
    {
      schema: {
        tags: ['people'],
        summary: 'Who is signed in, with the CSRF token for their changes',
        response: { 200: SessionAnswer, ...errorResponses(401) },
      },
    },
    async (req, reply) => ({ user: userJson(signedIn(req)), csrf_token: reply.generateCsrf() }),
  );
}

function logout(app: App, { sessions }: Deps): void {
  app.post(
    '/auth/logout',
    {
      schema: {
        tags: ['people'],
        summary: 'Sign out: the session ends in every process at once',
        response: { 204: Type.Null(), ...errorResponses(401) },
      },
    },
    async (req, reply: FastifyReply) => {
      signedIn(req);
      await sessions.end(req, reply);
      return reply.code(204).send();
    },
  );
}

const LINK_INVALID =
  'This sign-in link cannot be used: it was used already, it is older than 24 hours, or it was never issued. Ask an admin for a new one.';

function inspectLink(app: App, { store, now }: Deps): void {
  app.post(
    '/auth/password/link',
    {
      schema: {
        tags: ['people'],
        summary: 'Who a one-time sign-in link is for (email, role, account), without using it',
        body: LinkBody,
        response: { 200: Type.Object({ user: UserAnswer }), ...errorResponses(400) },
      },
    },
    async (req) => {
      const user = await store.findSignInLink(hashToken(req.body.token), now());
      if (!user) throw new ApiError('link_invalid', LINK_INVALID, 'token');
      return { user: userJson(user) };
    },
  );
}

function setPassword(app: App, deps: Deps): void {
  const { store, now } = deps;
  app.post(
    '/auth/password',
    {
      schema: {
        tags: ['people'],
        summary:
          "Set a password with a one-time sign-in link's token (it works once, for 24 hours); signs the person in",
        body: PasswordBody,
        response: { 200: SessionAnswer, ...errorResponses(400) },
      },
    },
    async (req, reply) => {
      const problem = passwordProblem(req.body.password);
      if (problem) throw new ApiError('parameter_invalid', problem, 'password');
      const user = await store.redeemSignInLink(
        hashToken(req.body.token),
        await hashPassword(req.body.password),
        now(),
      );
      if (!user) throw new ApiError('link_invalid', LINK_INVALID, 'token');
      // The link proved who this is, as a password would: the person is signed in at once.
      return startSession(deps, req, reply, user);
    },
  );
}

/** The signed-in user, or 401. */
export function signedIn(req: FastifyRequest): UserRecord {
  const user = req.session?.user;
  if (!user) throw new ApiError('session_missing', 'Sign in first: there is no session, or it has ended.');
  return user;
}

export const authRoutes =
  (store: Store, now: () => number, sessions: Sessions): Routes =>
  async (app) => {
    const deps = { store, now, sessions };
    login(app, deps);
    currentSession(app);
    logout(app, deps);
    inspectLink(app, deps);
    setPassword(app, deps);
  };
