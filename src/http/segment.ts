// The Segment Spec intake (docs/sources.md, "Segment"): POST /v1/batch, /v1/track, /v1/identify,
// /v1/group, /v1/page, /v1/screen and /v1/alias at the root, where a Segment-Spec library sends
// when its host is set to Vitals. No API key and no CSRF: the source's write key authenticates,
// as HTTP Basic's user name or `writeKey` in the body. The body is JSON whatever its Content-Type
// says (RudderStack's library labels its gzipped JSON application/x-www-form-urlencoded), gzipped
// or not, read against a byte budget on its decompressed size. Every message is logged with its
// result; the answer is 200 {"success": true} once they are recorded, refused ones included.
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { CustomerId, errorResponses, Metadata } from '../api/common.ts';
import { bookFields, Email, Name } from '../api/customers.ts';
import type { Config } from '../config.ts';
import { ApiError } from '../domain/errors.ts';
import { hashApiKey } from '../domain/ids.ts';
import {
  BATCH_MAX_BYTES,
  type Bounds,
  MESSAGE_MAX_BYTES,
  readMessage,
  type SegmentMessage,
  type SegmentType,
} from '../domain/segment.ts';
import type { Store } from '../store/store.ts';
import { segmentIntake } from '../writes/segment.ts';
import { parseJsonBody } from './json-body.ts';
import type { Routes } from './reply.ts';
import { bodyRefusal } from './text-rules.ts';
import { itemValidator } from './validation.ts';

export interface SegmentDeps {
  store: Store;
  now: () => number;
  /** VITALS_INGEST_RATE: messages per source per window; null when off. */
  rate: Config['ingestRate'];
  /** VITALS_METRIC_RETENTION: an older message could not be kept. */
  retentionMs: number | null;
}

const SINGLE: readonly SegmentType[] = ['track', 'identify', 'group', 'page', 'screen', 'alias'];

/** A group's traits as the API's customer fields: refused in the API's words when one is not valid. */
const checkGroup = itemValidator(
  Type.Object({
    customer_id: CustomerId,
    name: Type.Optional(Name),
    email: Type.Optional(Email),
    owner: bookFields.owner,
    arr: bookFields.arr,
    renewal_at: bookFields.renewal_at,
    metadata: Type.Optional(Metadata),
  }),
);

const tooLarge = (limit: number, what: string) =>
  new ApiError(
    'invalid_request',
    `${what} may be at most ${limit / 1024} KB once decompressed (docs/sources.md, "Limits").`,
  );

/**
 * The body as text, decompressed as it arrives when gzipped, and refused as soon as it passes
 * `limit`: a gzip that would inflate to gigabytes (a zip bomb) stops at the budget, the rest
 * neither read nor inflated.
 */
async function readBody(req: FastifyRequest, payload: Readable): Promise<string> {
  const batch = req.routeOptions.url === '/v1/batch';
  const limit = batch ? BATCH_MAX_BYTES : MESSAGE_MAX_BYTES;
  const what = batch ? 'A batch' : 'A message';
  const encoding = String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (!['identity', 'gzip', 'x-gzip', ''].includes(encoding)) {
    throw new ApiError(
      'invalid_request',
      `Content-Encoding '${encoding}' is not read here: send the body as it is or gzipped.`,
    );
  }
  const gunzip = encoding.endsWith('gzip') ? createGunzip() : null;
  if (gunzip) {
    payload.on('error', (err) => gunzip.destroy(err));
    payload.pipe(gunzip);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of gunzip ?? payload) {
      total += (chunk as Buffer).length;
      if (total > limit) throw tooLarge(limit, what);
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (gunzip) throw new ApiError('invalid_request', 'The body is not valid gzip.');
    throw err;
  } finally {
    if (gunzip) {
      payload.unpipe(gunzip);
      gunzip.destroy();
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A fixed window per source, in this process's memory (the Stripe and webhook intakes count with it too). */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly rate: NonNullable<Config['ingestRate']>;
  constructor(rate: NonNullable<Config['ingestRate']>) {
    this.rate = rate;
  }

  /**
   * Counts `n` messages of the source: null when they fit (a window's first request always does,
   * whatever its size), else the seconds until the window ends.
   */
  take(sourceId: string, n: number, now: number): number | null {
    let w = this.windows.get(sourceId);
    if (!w || now - w.start >= this.rate.windowMs) {
      // The map keeps one entry per source that sent: at most the sources of every account.
      w = { start: now, count: 0 };
      this.windows.set(sourceId, w);
    }
    if (w.count > 0 && w.count + n > this.rate.max) {
      return Math.max(1, Math.ceil((w.start + this.rate.windowMs - now) / 1000));
    }
    w.count += n;
    return null;
  }
}

/** The write key: HTTP Basic's user name (the password empty), else `writeKey` in the body. */
function writeKeyOf(req: FastifyRequest, body: Record<string, unknown>): string | null {
  const header = req.headers.authorization;
  if (typeof header === 'string') {
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
    if (m?.[1]) {
      const decoded = Buffer.from(m[1], 'base64').toString('utf8');
      const user = decoded.split(':')[0] ?? '';
      if (user !== '') return user;
    }
  }
  return typeof body.writeKey === 'string' && body.writeKey !== '' ? body.writeKey : null;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** A message's group traits checked as the API checks a customer's fields. */
function checked(m: SegmentMessage): SegmentMessage {
  if (m.refused !== null || m.change === null) return m;
  const refusal = checkGroup({ customer_id: m.groupId, ...m.change.fields, metadata: m.change.metadata });
  if (!refusal) return m;
  const param = refusal.param?.startsWith('metadata.')
    ? `traits.${refusal.param.slice('metadata.'.length)}`
    : refusal.param === 'customer_id'
      ? 'groupId'
      : `traits.${refusal.param ?? ''}`;
  return { ...m, refused: `${refusal.code}: ${param}: ${refusal.message}` };
}

function sendRefusal(reply: FastifyReply, err: ApiError, headers: Record<string, string> = {}) {
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  return reply.code(err.status).send(err.toBody());
}

const Success = Type.Object({ success: Type.Literal(true) });

export const segmentRoutes =
  ({ store, now, rate, retentionMs }: SegmentDeps): Routes =>
  async (app) => {
    const limiter = rate ? new RateLimiter(rate) : null;
    // Whatever the Content-Type, and none: the body is read as JSON (see the file's head).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', async (req: FastifyRequest, payload: Readable) => {
      const text = await readBody(req, payload);
      const parsed = parseJsonBody(text);
      if (!isObject(parsed)) throw new ApiError('invalid_json', 'The body must be a JSON object.');
      return parsed;
    });

    for (const type of [null, ...SINGLE]) {
      const path = `/v1/${type ?? 'batch'}`;
      app.post(
        path,
        {
          schema: {
            tags: ['segment'],
            summary:
              type === null
                ? 'Segment Spec: a batch of messages (at most 500 KB, each at most 32 KB), as a Segment-Spec library sends them'
                : `Segment Spec: one ${type} message (at most 32 KB)`,
            description:
              "Authenticated by a Segment source's write key: HTTP Basic's user name, or `writeKey` in the body. " +
              'JSON whatever the Content-Type, gzipped or not. Each message is logged in the source with its result (docs/sources.md).',
            response: { 200: Success, ...errorResponses(400, 401, 429) },
          },
        },
        async (req, reply) => {
          const body = (req.body ?? {}) as Record<string, unknown>;
          if (!isObject(req.body)) {
            throw new ApiError('invalid_json', 'The body must be a JSON object.');
          }
          const key = writeKeyOf(req, body);
          const basic = { 'www-authenticate': 'Basic realm="Vitals Segment source"' };
          if (key === null) {
            return sendRefusal(
              reply,
              new ApiError(
                'write_key_missing',
                "Send the source's write key as the HTTP Basic user name (empty password) or as writeKey in the body.",
              ),
              basic,
            );
          }
          const found = await store.sourceByKey(hashApiKey(key));
          const invalid = new ApiError(
            'write_key_invalid',
            'This write key is not an enabled Segment source’s: check the key, or enable the source.',
          );
          if (!found?.source.enabled || found.source.config.type !== 'segment') {
            return sendRefusal(reply, invalid, basic);
          }
          let raw: unknown[];
          if (type === null) {
            if (!Array.isArray(body.batch)) {
              throw new ApiError('parameter_invalid', "'batch' must be an array of messages.", 'batch');
            }
            raw = body.batch;
          } else raw = [body];
          const at = now();
          const wait = limiter?.take(found.source.id, raw.length, Date.now()) ?? null;
          if (wait !== null && rate) {
            return sendRefusal(
              reply,
              new ApiError(
                'rate_limited',
                `This source sent more than ${rate.max} messages in ${rate.windowMs / 1000} s (VITALS_INGEST_RATE); retry after the Retry-After header's seconds.`,
              ),
              { 'retry-after': String(wait) },
            );
          }
          const bounds: Bounds = { now: at, retentionMs };
          const messages = raw.map((m) => {
            const size = type === null ? Buffer.byteLength(JSON.stringify(m) ?? '') : undefined;
            const read = readMessage(m, type, bounds, size);
            if (read.refused === null) {
              const refusal = bodyRefusal(m);
              if (refusal) return { ...read, refused: `${refusal.code}: ${refusal.message}` };
            }
            return checked(read);
          });
          const recorded = await store.run(
            segmentIntake,
            found.accountId,
            found.source.id,
            messages,
            req.id,
            at,
          );
          if (!recorded) return sendRefusal(reply, invalid, basic);
          return { success: true as const };
        },
      );
    }
  };
