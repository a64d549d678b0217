// People of the account, managed over the API by admins and write keys (docs/people.md,
// "Adding people"): the same users `vitals users` manages, with the same one-time links.
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { ApiError, notFound } from '../domain/errors.ts';
import { normalizeEmail, USER_ROLES } from '../domain/people.ts';
import { addUser } from '../keys.ts';
import type { Store } from '../store/store.ts';
import { userJson } from './auth-routes.ts';
import { errorResponses } from './schemas.ts';

const Role = Type.Union(
  USER_ROLES.map((r) => Type.Literal(r)),
  { description: 'admin: everything; editor: customers and scores; viewer: read only.' },
);
const User = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Role,
  account: Type.String(),
  created_at: Type.String(),
});
const CreateBody = Type.Object(
  {
    email: Type.String({ maxLength: 320, pattern: '^[^@\\s\\u0000]+@[^@\\s\\u0000]+$' }),
    role: Role,
  },
  { additionalProperties: false },
);
const UpdateBody = Type.Object({ role: Role }, { additionalProperties: false });
const IdParams = Type.Object({ user_id: Type.String() });

interface Deps {
  store: Store;
  now: () => number;
}

/** Where this dashboard is, as the request reached it: the link goes back there. */
const dashboardUrl = (req: FastifyRequest) => `${req.protocol}://${req.host}`;

function listUsers(app: FastifyInstance, { store }: Deps): void {
  app.get(
    '/users',
    {
      config: { area: 'people' },
      schema: {
        tags: ['people'],
        summary: "The account's people, by email",
        response: { 200: Type.Object({ data: Type.Array(User) }), ...errorResponses(401, 403) },
      },
    },
    async (req) => ({ data: (await store.listUsers(req.accountId)).map(userJson) }),
  );
}

function createUser(app: FastifyInstance, { store, now }: Deps): void {
  app.post<{ Body: Static<typeof CreateBody> }>(
    '/users',
    {
      config: { area: 'people', shownOnce: ['sign_in_link'] },
      schema: {
        tags: ['people'],
        summary: 'Add a person; the answer holds their one-time sign-in link, shown only this once',
        body: CreateBody,
        response: {
          201: Type.Object({
            user: User,
            sign_in_link: Type.Optional(
              Type.String({
                description:
                  'Valid 24 hours, once. Send it to the person. Only in the first answer: a replayed Idempotency-Key answer leaves it out (it is kept only as a hash).',
              }),
            ),
          }),
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
      return { user: userJson(user), sign_in_link: `${dashboardUrl(req)}/set-password#token=${made.token}` };
    },
  );
}

function updateUser(app: FastifyInstance, { store }: Deps): void {
  app.patch<{ Params: Static<typeof IdParams>; Body: Static<typeof UpdateBody> }>(
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

function removeUser(app: FastifyInstance, { store }: Deps): void {
  app.delete<{ Params: Static<typeof IdParams> }>(
    '/users/:user_id',
    {
      config: { area: 'people' },
      schema: {
        tags: ['people'],
        summary: 'Remove a person; their sessions end at once',
        params: IdParams,
        response: {
          200: Type.Object({ id: Type.String(), deleted: Type.Boolean() }),
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
  (store: Store, now: () => number): FastifyPluginAsync =>
  async (app) => {
    const deps = { store, now };
    for (const route of [listUsers, createUser, updateUser, removeUser]) route(app, deps);
  };
