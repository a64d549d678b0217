// Idempotency-Key on POST requests, with Stripe's semantics: the first answer to a key is
// kept for 24 hours and replayed to retries; the same key with a different request is a 400;
// a retry while the first is still running is a 409. Requests refused by validation or
// authentication are not recorded, and neither are answers that failed on our side (5xx).
// A request that writes stores its answer in the transaction of its writes: its write, sent
// whole with store.run, builds the answer's text and stores it where it runs (the route passes
// it claimToAnswer, then calls answeredWithWrite; src/writes/answers.ts). A crash cannot commit
// the one without the other, so a retry never runs a write twice (docs/api.md, "Idempotency
// keys"). Other answers are stored once sent, without what the route shows only once (its
// config's `shownOnce` fields: a one-time sign-in link), so that is never at rest in plain text
// and a replay does not show it again.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, idempotencyInProgress } from '../domain/errors.ts';
import type { Store } from '../store/store.ts';
import { isDatabaseUnavailable, unavailableCode } from '../store/unavailable.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** A claim still running after this long belongs to a process that died: a retry may take it. */
const STALE_MS = 60_000;
const KEY = /^[\x21-\x7e]{1,255}$/;

interface Claim {
  key: string;
  /** The claim's created_at: the answer is stored only while the claim is still this one. */
  claimedAt: number;
  /** The answer was stored with the request's writes. */
  answered: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: Claim;
  }
  interface FastifyContextConfig {
    /** Top-level answer fields shown only in the first answer, never stored for a replay. */
    shownOnce?: readonly string[];
  }
}

/** The answer as it may be kept: without the fields the route shows only once. */
function storable(req: FastifyRequest, body: string): string {
  const fields = req.routeOptions.config.shownOnce;
  if (!fields) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  if (parsed === null || typeof parsed !== 'object') return body;
  const kept = { ...(parsed as Record<string, unknown>) };
  for (const field of fields) delete kept[field];
  return JSON.stringify(kept);
}

const inProgress = idempotencyInProgress;

/**
 * For a write that stores the answer itself, where it runs (writes/factor-updates.ts): the
 * request's claim, if it has one. Once the write has committed, call answeredWithWrite.
 */
export function claimToAnswer(req: FastifyRequest): { key: string; claimedAt: number } | undefined {
  const claim = req.idempotency;
  return claim && { key: claim.key, claimedAt: claim.claimedAt };
}

/** The write that committed stored the request's answer: nothing to store once it is sent. */
export function answeredWithWrite(req: FastifyRequest): void {
  if (req.idempotency) req.idempotency.answered = true;
}

export function registerIdempotency(api: FastifyInstance, store: Store, clock: () => number): void {
  api.addHook('preHandler', async (req, reply) => {
    if (req.method !== 'POST') return;
    const key = req.headers['idempotency-key'];
    if (key === undefined) return;
    if (typeof key !== 'string' || !KEY.test(key)) {
      throw new ApiError(
        'parameter_invalid',
        'The Idempotency-Key header must be 1-255 visible ASCII characters.',
        'Idempotency-Key',
      );
    }
    // A signed-in person's key is their own: the same key from another person of the account is
    // another request (idempotency_key_reused), never a replay of someone else's answer. API keys
    // share the account's keys, as Stripe's do, so a retry sent with a rotated key still replays.
    const sender = req.user ? `user:${req.user.id}\n` : '';
    const fingerprint = createHash('sha256')
      .update(`${sender}${req.method} ${req.url}\n${JSON.stringify(req.body ?? null)}`)
      .digest('hex');
    const now = clock();
    const claim = await store.claimIdempotencyKey(req.accountId, key, fingerprint, now, {
      expiresBefore: now - IDEMPOTENCY_TTL_MS,
      staleBefore: now - STALE_MS,
    });
    switch (claim.state) {
      case 'new':
        req.idempotency = { key, claimedAt: now, answered: false };
        return;
      case 'replay':
        reply.header('idempotent-replayed', 'true');
        return reply
          .code(claim.status)
          .type('application/json; charset=utf-8')
          .serializer((payload: unknown) => payload as string)
          .send(claim.body);
      case 'mismatch':
        throw new ApiError(
          'idempotency_key_reused',
          'This Idempotency-Key was already used for a different request; send a new key.',
          'Idempotency-Key',
        );
      case 'in_progress':
        throw inProgress();
    }
  });

  api.addHook('onSend', async (req, reply, payload) => {
    const claim = req.idempotency;
    if (claim === undefined) return payload;
    req.idempotency = undefined;
    const key = claim.key;
    // Stored with the writes, and committed (a rolled-back one fails the request: a 5xx, and
    // the release below finds the claim unanswered and frees it).
    if (claim.answered && reply.statusCode < 500) return payload;
    try {
      if (reply.statusCode >= 500) await store.releaseIdempotencyKey(req.accountId, key);
      else {
        await store.completeIdempotencyKey(
          req.accountId,
          key,
          reply.statusCode,
          storable(req, String(payload)),
        );
      }
    } catch (err) {
      // The database went away after the request was handled: the answer stands (a 503 from
      // the handler, or what it did, which is done). The key stays claimed; a retry with it is
      // a 409 until the claim is stale (STALE_MS), then runs. Thrown from here, the error would
      // turn a done write into a 503, or, after a 503, reach Fastify's own error handler (its
      // body, with the driver's message and the database's address).
      if (!isDatabaseUnavailable(err)) throw err;
      req.log.warn({ code: unavailableCode(err) }, 'idempotency: the key could not be recorded');
    }
    return payload;
  });
}
