// The Stripe intake (docs/sources.md, "Stripe"): POST /ingest/stripe/{source_id}, the endpoint a
// Stripe account's webhook sends its events to. No API key: the source's signing secret
// authenticates each delivery through its Stripe-Signature, an HMAC of the body's exact bytes, so
// the body is read raw (whatever its Content-Type) and parsed only after. An unknown id answers
// 404 and a disabled source 401, recording nothing; a delivery whose signature does not check is
// logged as refused and answered 400 signature_invalid, and changes nothing else. Every other
// delivery is answered 200 {"received": true} once its log entry is recorded: Stripe retries an
// answer that is not 2xx, and an event refused once (no customer matches) would be refused again.
// Each source takes VITALS_INGEST_RATE deliveries a window, as a Segment source takes messages.
import { Type } from 'typebox';
import { errorResponses } from '../api/common.ts';
import { SourceParams } from '../api/sources.ts';
import type { Config } from '../config.ts';
import { ApiError, notFound } from '../domain/errors.ts';
import {
  kindOf,
  readEvent,
  refusedEvent,
  STRIPE_BODY_MAX,
  type StripeEvent,
  signatureProblem,
} from '../domain/stripe.ts';
import type { Store } from '../store/store.ts';
import { stripeIntake } from '../writes/stripe.ts';
import { parseJsonBody } from './json-body.ts';
import type { Routes } from './reply.ts';
import { RateLimiter } from './segment.ts';

export interface StripeDeps {
  store: Store;
  now: () => number;
  /** VITALS_INGEST_RATE: deliveries per source per window, as for a Segment source; null when off. */
  rate: Config['ingestRate'];
}

const disabled = (id: string) =>
  new ApiError('source_disabled', `Source '${id}' is disabled: enable it to take Stripe's events again.`);

/** The body as JSON, or the refusal that says why it is not. */
function parsed(raw: Buffer): { body: unknown } | { error: ApiError } {
  try {
    return { body: parseJsonBody(raw.toString('utf8')) };
  } catch (err) {
    if (err instanceof ApiError) return { error: err };
    throw err;
  }
}

const Received = Type.Object({ received: Type.Literal(true) });

export const stripeRoutes =
  ({ store, now, rate }: StripeDeps): Routes =>
  async (app) => {
    const limiter = rate ? new RateLimiter(rate) : null;
    // The body's bytes as they came, whatever the Content-Type: the signature is over them.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: STRIPE_BODY_MAX }, (_req, body, done) =>
      done(null, body),
    );
    app.post(
      '/ingest/stripe/:source_id',
      {
        schema: {
          tags: ['sources'],
          summary: "Stripe: a webhook event, sent by Stripe to a Stripe source's ingest_url",
          description:
            "Authenticated by the Stripe-Signature header (t=…,v1=…: HMAC-SHA256 of `t.` and the raw body with the source's signing secret, t within 300 s). " +
            'Answered 200 once the event is logged in the source, also when it is ignored or refused there (docs/sources.md, "Stripe").',
          params: SourceParams,
          response: { 200: Received, ...errorResponses(400, 401, 404, 429) },
        },
      },
      async (req, reply) => {
        const id = req.params.source_id;
        const found = await store.sourceById(id);
        if (found?.source.type !== 'stripe') throw notFound.source(id);
        if (!found.source.enabled) throw disabled(id);
        // Before the signature: a flood of forged deliveries is held off before it costs a write each.
        const wait = limiter?.take(found.source.id, 1, Date.now()) ?? null;
        if (wait !== null && rate) {
          reply.header('retry-after', String(wait));
          throw new ApiError(
            'rate_limited',
            `This source received more than ${rate.max} deliveries in ${rate.windowMs / 1000} s (VITALS_INGEST_RATE); retry after the Retry-After header's seconds.`,
          );
        }
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const at = now();
        const header = req.headers['stripe-signature'];
        const secret = found.source.secret;
        const problem =
          secret === null
            ? 'the source has no signing secret: set it with PATCH /api/sources/{id}'
            : signatureProblem(typeof header === 'string' ? header : undefined, raw, secret, at);
        const json = parsed(raw);
        let event: StripeEvent;
        let answer: ApiError | null = null;
        if (problem !== null) {
          event = refusedEvent(
            kindOf('body' in json ? json.body : null),
            `signature_invalid: ${problem}`,
            at,
          );
          answer = new ApiError('signature_invalid', `The Stripe-Signature does not check: ${problem}.`);
        } else if ('error' in json) {
          event = refusedEvent('unknown', `${json.error.code}: ${json.error.message}`, at);
          answer = json.error;
        } else event = readEvent(json.body, at);
        const result = await store.run(stripeIntake, found.accountId, id, event, req.id, at);
        if (result === 'gone') throw notFound.source(id);
        if (result === 'disabled') throw disabled(id);
        if (answer) throw answer;
        return { received: true as const };
      },
    );
  };
