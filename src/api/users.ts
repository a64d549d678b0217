// People and signing in (docs/people.md): the schemas of /api/users and /auth, and a user as the
// API writes it.
import { Type } from 'typebox';
import { PASSWORD_MAX, USER_ROLES, type UserRole } from '../domain/people.ts';
import { iso } from '../domain/time.ts';
import { oneOf } from './common.ts';

const Role = oneOf(USER_ROLES, {
  description: 'admin: everything; editor: customers and scores; viewer: read only.',
});
export const User = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Role,
  account: Type.String(),
  created_at: Type.String(),
});
export const UsersList = Type.Object({ data: Type.Array(User) });

/** A person's choice of the daily digest by mail (docs/operations.md, "Mail"). */
export const DIGESTS = ['daily', 'off'] as const;
const DigestChoice = oneOf(DIGESTS, {
  description:
    'daily: a mail each day at VITALS_DIGEST_HOUR (UTC) with your customers that entered critical or dropped, renewals within 30 days and your tasks due; off: none.',
});
/** The signed-in person, as GET and PATCH /api/me answer: a user with their own choices. */
export const Me = Type.Object({ ...User.properties, digest: DigestChoice });
export const UpdateMeBody = Type.Object({ digest: DigestChoice }, { additionalProperties: false });
export const CreateUserBody = Type.Object(
  {
    email: Type.String({ maxLength: 320, pattern: '^[^@\\s\\u0000]+@[^@\\s\\u0000]+$' }),
    role: Role,
  },
  { additionalProperties: false },
);
export const CreatedUser = Type.Object({
  user: User,
  sign_in_link: Type.Optional(
    Type.String({
      description:
        'Valid 24 hours, once. Send it to the person. Only in the first answer: a replayed Idempotency-Key answer leaves it out (it is kept only as a hash).',
    }),
  ),
});
export const UpdateUserBody = Type.Object({ role: Role }, { additionalProperties: false });
export const UserParams = Type.Object({ user_id: Type.String() });

const NO_NUL = '^[^\\u0000]*$';
export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320, pattern: NO_NUL }),
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX }),
  },
  { additionalProperties: false },
);
export const PasswordBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 256, description: 'From the one-time sign-in link.' }),
    password: Type.String({ maxLength: PASSWORD_MAX, description: 'At least 12 characters.' }),
  },
  { additionalProperties: false },
);
export const LinkBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 256, description: 'From the one-time sign-in link.' }) },
  { additionalProperties: false },
);
export const UserAnswer = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.Union([Type.Literal('admin'), Type.Literal('editor'), Type.Literal('viewer')]),
  account: Type.String(),
  created_at: Type.String(),
});
export const SessionAnswer = Type.Object({
  user: UserAnswer,
  csrf_token: Type.String({ description: 'Send it as X-CSRF-Token with every change this session makes.' }),
});

/** What /api/me writes of the signed-in person. */
export const meJson = (u: UserFields & { digest: (typeof DIGESTS)[number] }) => ({
  ...userJson(u),
  digest: u.digest,
});

/** What the API writes of a user (the store's UserRecord has it). */
export interface UserFields {
  id: string;
  email: string;
  role: UserRole;
  accountName: string;
  createdAt: number;
}

export const userJson = (u: UserFields) => ({
  id: u.id,
  email: u.email,
  role: u.role,
  account: u.accountName,
  created_at: iso(u.createdAt),
});
