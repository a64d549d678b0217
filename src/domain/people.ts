// People who sign in to the dashboard (docs/people.md): their roles and what each may do,
// passwords (scrypt, node:crypto) and the one-time sign-in links. Pure but for the hashing.
import { hash, randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { randomToken } from './ids.ts';

export const USER_ROLES = ['admin', 'editor', 'viewer'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 1024;
/** A one-time sign-in link works this long. */
export const SIGN_IN_LINK_MS = 24 * 3_600_000;
/** A session ends after this long without a request. */
export const SESSION_IDLE_MS = 12 * 3_600_000;
/** This many failed sign-ins of one email within LOCK_WINDOW_MS lock it until the window has passed them. */
export const LOCK_FAILURES = 10;
export const LOCK_WINDOW_MS = 15 * 60_000;

export const READS = new Set(['GET', 'HEAD']);

/**
 * What a route touches, declared in its route config (`config: { area }`), which decides who may
 * call it (docs/people.md, "Roles"). It is read off the route that serves the request, never off
 * the request's target, so no spelling of a path (percent-escapes, an absolute-form target, a
 * `#`) changes the answer. A route that declares none is `account`, the strictest for writes.
 * - `customers`: customers and their scores, one at a time or in batches; editors change them.
 * - `account`: settings, webhooks, events; everyone reads, admins (and write keys) change.
 * - `people`: who signs in; admins and write keys only (a read key may list them).
 * - `audit`: the audit log; admins and write keys only.
 * - `own`: a signed-in person's own things (their saved views, who they are): every role, for
 *   themselves alone; no API key, of either scope, since a key is no person (docs/people.md, "Roles").
 */
export const AREAS = ['customers', 'account', 'people', 'audit', 'own'] as const;
export type Area = (typeof AREAS)[number];

/**
 * Whether a key of this scope may make this request (docs/api.md, "Key scopes"): a write key
 * anything but a person's own things, a read key every GET but the audit log's and those.
 */
export function scopeAllows(scope: 'read' | 'write', method: string, area: Area): boolean {
  if (area === 'own') return false;
  return scope === 'write' || (READS.has(method) && area !== 'audit');
}

/** Whether a user of this role may make this request (docs/people.md, "Roles"). */
export function roleAllows(role: UserRole, method: string, area: Area): boolean {
  if (role === 'admin' || area === 'own') return true;
  if (area === 'people' || area === 'audit') return false;
  if (READS.has(method)) return true;
  return role === 'editor' && area === 'customers';
}

const SCRYPT: ScryptOptions = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, o: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, o, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64): the parameters travel with the hash, so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** A stored hash to check against when there is no user, so an unknown email costs what a wrong password does. */
export const DECOY_HASH = `scrypt$16384$8$1$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(KEY_LENGTH).toString('base64')}`;

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await derive(password, Buffer.from(salt, 'base64'), {
    ...SCRYPT,
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** Why a password cannot be used, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `A password needs at least ${PASSWORD_MIN} characters.`;
  if (password.length > PASSWORD_MAX) return `A password may have at most ${PASSWORD_MAX} characters.`;
  return null;
}

/** A random token for a link or a session id: 32 bytes, base64url. */
export const newToken = (): string => randomToken(32);
/** Tokens are kept only as their SHA-256, as API keys are. */
export const hashToken = (token: string): string => hash('sha256', token, 'hex');

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();
