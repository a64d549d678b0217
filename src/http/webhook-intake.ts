// The webhook intake (docs/sources.md, "Webhooks"): POST /ingest/webhook/{id} (a signed source)
// and /ingest/webhook/{id}/{token}, where any tool's webhook sends. No API key and no CSRF: the
// source's HMAC signature of the raw body, or the token in its URL, proves the sender. The body is
// JSON whatever its Content-Type; a JSON array is that many messages. Each message goes through
// the source's JSONata mapping on a mapping thread (src/work/mapping-threads.ts: 50 ms each, the
// main thread never runs a mapping), is checked as the API checks what it stands for, and is
// applied by the write with its log entry. The answer is 202 with the log entries, refused ones
// included: a tool retries what it is refused with an error, and the mapping would refuse it again.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errorResponses } from '../api/common.ts';
import { logItemFields, SourceLogItem } from '../api/sources.ts';
import type { Config } from '../config.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import {
  signatureRefusal,
  tokenMatches,
  WEBHOOK_BODY_MAX,
  WEBHOOK_MESSAGES_MAX,
} from '../domain/webhook-intake.ts';
import type { SourceRecord, Store } from '../store/store.ts';
import { MappingThreads } from '../work/mapping-threads.ts';
import { type WebhookMessage, webhookIntake } from '../writes/webhook-intake.ts';
import { parseJsonBody } from './json-body.ts';
import type { App, Routes } from './reply.ts';
import { RateLimiter } from './segment.ts';
import { readOutcome } from './webhook-messages.ts';

export interface WebhookIntakeDeps {
  store: Store;
  now: () => number;
  /** VITALS_INGEST_RATE: messages per source per window; null when off. */
  rate: Config['ingestRate'];
  /** VITALS_METRIC_RETENTION: an older message could not be kept. */
  retentionMs: number | null;
}

const Params = Type.Object({ source_id: Type.String(), token: Type.Optional(Type.String()) });
const Received = Type.Object({
  received: Type.Literal(true),
  log: Type.Array(SourceLogItem, { description: "Each message's entry in the source's log, in order." }),
});

const disabled = () =>
  new ApiError('source_disabled', 'This source is disabled: enable it (PATCH {"enabled": true}) to receive.');

interface Refusal {
  reason: string;
  error: ApiError;
}

/** Why the delivery does not prove its sender (the log's reason and the answer), or null when it does. */
function authRefusal(
  source: SourceRecord,
  body: Buffer,
  req: FastifyRequest,
  token: string | undefined,
): Refusal | null {
  const signature = source.config.type === 'webhook' ? source.config.webhook.signature : null;
  if (signature) {
    if (token !== undefined) {
      return {
        reason: 'token_unexpected: this source checks a signature; its ingest URL has no token',
        error: new ApiError(
          'webhook_token_invalid',
          `This source checks the ${signature.header} signature: send to /ingest/webhook/${source.id}, without a token.`,
        ),
      };
    }
    const reason = source.secret
      ? signatureRefusal(signature, source.secret, body, req.headers[signature.header.toLowerCase()])
      : 'signature_invalid: the source has no secret';
    if (reason === null) return null;
    return {
      reason,
      error: new ApiError(
        'webhook_signature_invalid',
        `The ${signature.header} header must hold ${signature.prefix ? `'${signature.prefix}' and ` : ''}the ${signature.encoding} HMAC-SHA256 of the body, keyed with the source's secret.`,
      ),
    };
  }
  if (token !== undefined && source.keyHash !== null && tokenMatches(token, source.keyHash)) return null;
  return {
    reason:
      token === undefined
        ? "token_missing: this source's ingest URL carries a token, and the delivery came without it"
        : "token_invalid: the URL's token is not this source's",
    error: new ApiError(
      'webhook_token_invalid',
      "Send to the source's ingest URL with its token (/ingest/webhook/{id}/{token}), as its create answer showed it.",
    ),
  };
}

/** A refused delivery as one refused message of the log. */
const refusedWhole = (reason: string, now: number): WebhookMessage => ({
  customerId: null,
  at: now,
  metrics: {},
  counts: {},
  customer: null,
  decided: { result: 'refused', reason },
});

/** The delivery's messages (a JSON array is that many, anything else one), or why it is refused whole. */
function messagesOf(body: Buffer): unknown[] | Refusal {
  let parsed: unknown;
  try {
    parsed = parseJsonBody(body.toString('utf8'));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { reason: `invalid_json: ${err.message}`, error: err };
  }
  if (parsed === undefined) {
    const error = new ApiError('invalid_json', 'The request body is empty: send JSON.');
    return { reason: `invalid_json: ${error.message}`, error };
  }
  const bodies = Array.isArray(parsed) ? parsed : [parsed];
  if (bodies.length <= WEBHOOK_MESSAGES_MAX) return bodies;
  const message = `A delivery may hold at most ${WEBHOOK_MESSAGES_MAX} messages; this one holds ${bodies.length}.`;
  return { reason: `too_many_messages: ${message}`, error: new ApiError('invalid_request', message) };
}

/** What both routes share: the mapping threads, and the rate of each source. */
interface Intake extends WebhookIntakeDeps {
  threads: MappingThreads;
  limiter: RateLimiter | null;
}

/** Counts `n` messages of the source: false (and the 429 sent) when they pass its rate. */
function withinRate(intake: Intake, sourceId: string, n: number, reply: FastifyReply): boolean {
  const wait = intake.limiter?.take(sourceId, n, Date.now()) ?? null;
  if (wait === null || !intake.rate) return true;
  const err = new ApiError(
    'rate_limited',
    `This source sent more than ${intake.rate.max} messages in ${intake.rate.windowMs / 1000} s (VITALS_INGEST_RATE); retry after the Retry-After header's seconds.`,
  );
  reply.code(429).header('retry-after', String(wait)).send(err.toBody());
  return false;
}

function ingest(app: App, intake: Intake, url: string): void {
  const { store, now, retentionMs, threads } = intake;
  app.post(
    url,
    {
      bodyLimit: WEBHOOK_BODY_MAX,
      schema: {
        tags: ['webhook intake'],
        summary: url.endsWith(':token')
          ? "A tool's webhook, to a source authenticated by the token in its URL"
          : "A tool's webhook, to a source authenticated by an HMAC signature of the body",
        description:
          "JSON whatever the Content-Type, at most 256 KB; a JSON array is up to 100 messages. Each message goes through the source's mapping " +
          'and is logged with its result (docs/sources.md, "Webhooks").',
        params: Params,
        response: { 202: Received, ...errorResponses(400, 401, 404, 413, 429) },
      },
    },
    async (req, reply) => {
      const { source_id: id, token } = req.params;
      const at = now();
      const found = await store.sourceById(id);
      if (found?.source.config.type !== 'webhook') throw notFound.source(id);
      const { accountId, source } = found;
      if (!source.enabled) throw disabled();
      const refuse = async (refusal: Refusal) => {
        if (
          !(await store.run(webhookIntake, accountId, id, [refusedWhole(refusal.reason, at)], req.id, at))
        ) {
          throw disabled();
        }
        throw refusal.error;
      };
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const auth = authRefusal(source, body, req, token);
      if (auth) return withinRate(intake, id, 1, reply) ? refuse(auth) : reply;
      const bodies = messagesOf(body);
      if (!Array.isArray(bodies)) return refuse(bodies);
      if (!withinRate(intake, id, Math.max(1, bodies.length), reply)) return reply;
      const key = `${source.id}:${source.updatedAt}`;
      const mapping = source.config.type === 'webhook' ? source.config.webhook.mapping : { customer_id: '' };
      const headers = { ...req.headers };
      const outcomes = await Promise.all(
        bodies.map((b) => threads.evaluate(accountId, key, mapping, { body: b, headers })),
      );
      const messages = outcomes.map((o) => readOutcome(o, { now: at, retentionMs }));
      const entries = await store.run(webhookIntake, accountId, id, messages, req.id, at);
      if (!entries) throw disabled();
      reply.code(202);
      return { received: true as const, log: entries.map(logItemFields) };
    },
  );
}

export const webhookIntakeRoutes =
  (deps: WebhookIntakeDeps): Routes =>
  async (app) => {
    const threads = new MappingThreads();
    app.addHook('onClose', () => threads.close());
    const intake: Intake = { ...deps, threads, limiter: deps.rate ? new RateLimiter(deps.rate) : null };
    // Whatever the Content-Type, and none: the raw bytes, which the signature covers as sent.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_MAX }, (_req, body, done) =>
      done(null, body),
    );
    for (const url of ['/ingest/webhook/:source_id', '/ingest/webhook/:source_id/:token']) {
      ingest(app, intake, url);
    }
  };
