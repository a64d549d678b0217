// People of the account, managed over the API by admins and write keys (docs/people.md,
// "Adding people"): the same users `vitals users` manages, with the same one-time links. And
// /api/me, who the signed-in person is and their own choices (docs/api.md, "Saved views").
import { Deleted, errorResponses } from '../api/common.ts';
import {
  CreateUserBody as CreateBody,
  CreatedUser,
  UserParams as IdParams,
  Me,
  meJson,
  UpdateUserBody as UpdateBody,
  UpdateMeBody,
  User,
  UsersList,
  userJson,
} from '../api/users.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import { normalizeEmail } from '../domain/people.ts';
import { addUser } from '../keys.ts';
import type { Store } from '../store/store.ts';
import { signedIn } from './auth-routes.ts';
import { type App, publicBase, type Routes } from './reply.ts';

interface Deps {
  store: Store;
  now: () => number;
}

/** Who is signed in: a person's own (area `own`), so an API key, which is no person, is refused. */
function me(app: App): void {
  app.get(
    '/me',
    {
      config: { area: 'own' },
      schema: {
        tags: ['people'],
        summary: 'The signed-in person: email, role, account, digest',
        response: { 200: Me, ...errorResponses(401, 403) },
      },
    },
    async (req) => meJson(signedIn(req)),
  );
}

/** The signed-in person's own choices: the daily digest by mail (docs/operations.md, "Mail"). */
function updateMe(app: App, { store }: Deps): void {
  app.patch(
    '/me',
    {
      config: { area: 'own' },
      schema: {
        tags: ['people'],
        summary: 'Choose the daily digest by mail (daily or off)',
        body: UpdateMeBody,
        response: { 200: Me, ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (req) => {
      const user = signedIn(req);
      if (!(await store.setDigest(req.accountId, user.id, req.body.digest))) throw notFound.user(user.id);
      return meJson({ ...user, digest: req.body.digest });
    },
  );
}

function listUsers(app: App, { store }: Deps): void {
  app.get(
    '/users',
    {
      config: { area: 'people' },
      schema: {
        tags: ['people'],
        summary: "The account's people, by email",
        response: { 200: UsersList, ...errorResponses(401, 403) },
      },
    },
    async (req) => ({ data: (await store.listUsers(req.accountId)).map(userJson) }),
  );
}

function createUser(app: App, { store, now }: Deps): void {
  app.post(
    '/users',
    {
      config: { area: 'people', shownOnce: ['sign_in_link'] },
      schema: {
        tags: ['people'],
        summary: 'Add a person; the answer holds their one-time sign-in link, shown only this once',
        body: CreateBody,
        response: {
          201: CreatedUser,
          ...errorResponses(400, 401, 403, 409, 413, 415),
        },
      },
    },
    async (req, reply) => {
      const made = await addUser(store, req.accountId, req.body.email, req.body.role, now());
      if (!made) {
        const email = normalizeEmail(req.body.email);
        throw new ApiError('user_exists', `A user with the email '${email}' exists already.`, 'email');
      }
      const user = await store.getUser(req.accountId, made.id);
      if (!user) throw notFound.user(made.id);
      reply.code(201);
      return { user: userJson(user), sign_in_link: `${publicBase(req)}/set-password#token=${made.token}` };
    },
  );
}

function updateUser(app: App, { store }: Deps): void {
  app.patch(
    '/users/:user_id',
    {
      config: { area: 'people' },
      schema: {
        tags: ['people'],
        summary: "Change a person's role; their open sessions follow at once",
        params: IdParams,
        body: UpdateBody,
        response: { 200: User, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (req) => {
      const user = await store.setUserRole(req.accountId, req.params.user_id, req.body.role);
      if (!user) throw notFound.user(req.params.user_id);
      return userJson(user);
    },
  );
}

function removeUser(app: App, { store }: Deps): void {
  app.delete(
    '/users/:user_id',
    {
      config: { area: 'people' },
      schema: {
        tags: ['people'],
        summary: 'Remove a person; their sessions end at once',
        params: IdParams,
        response: {
          200: Deleted,
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (req) => {
      if (!(await store.removeAccountUser(req.accountId, req.params.user_id))) {
        throw notFound.user(req.params.user_id);
      }
      return { id: req.params.user_id, deleted: true };
    },
  );
}

export const usersRoutes =
  (store: Store, now: () => number): Routes =>
  async (app) => {
    const deps = { store, now };
    for (const route of [me, updateMe, listUsers, createUser, updateUser, removeUser]) route(app, deps);
  };
