// One HTTP attempt: signed POST, no redirects, bounded in time and in how much of the answer we read.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { signingSecrets, standardSignatures, vitalsSignatures } from '../domain/signing.ts';
import type { ClaimedDelivery } from '../store/store.ts';
import { type SlackContext, slackBody } from './slack.ts';
import { addressRefusal } from './url-guard.ts';

export const RESPONSE_SNIPPET_BYTES = 1024;

export interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  retryAfter: string | undefined;
  durationMs: number;
}

/** DNS answers are checked at connect time, so a name that resolves somewhere forbidden is refused. */
function guardedLookup(blockPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      for (const a of addresses) {
        const refusal = addressRefusal(a.address, blockPrivate);
        if (refusal) {
          const blocked = Object.assign(new Error(`${hostname} resolves to ${refusal}`), {
            code: 'EADDRBLOCKED',
          });
          return callback(blocked, '', 0);
        }
      }
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/** undici's own timers tick every ~0.5 s and may fire up to a tick early: they are only a backstop. */
const BACKSTOP_MS = 1000;

export function createAgent(opts: { blockPrivate: boolean; timeoutMs: number }): Agent {
  // The attempt's AbortSignal (see `attempt`) is the timeout: exact, and reported as one.
  const backstop = opts.timeoutMs + BACKSTOP_MS;
  return new Agent({
    connect: { lookup: guardedLookup(opts.blockPrivate), timeout: backstop },
    keepAliveTimeout: 10_000,
    headersTimeout: backstop,
    bodyTimeout: backstop,
  });
}

/**
 * `{type, data}` with the event's stored data as is (the same bytes on every attempt), or for a
 * Slack-format webhook Slack's JSON (./slack.ts), which names the customer from `slack`.
 */
export function deliveryBody(
  d: Pick<ClaimedDelivery, 'eventType' | 'data'> & { format?: ClaimedDelivery['format'] },
  slack?: SlackContext,
): string {
  if (d.format === 'slack') {
    const context = slack ?? { customerName: null, publicUrl: undefined };
    return slackBody(d.eventType, JSON.parse(d.data) as Record<string, unknown>, context);
  }
  return `{"type":${JSON.stringify(d.eventType)},"data":${d.data}}`;
}

/** During a rotation's overlap both headers carry a signature with each secret, the new one first. */
export function deliveryHeaders(d: ClaimedDelivery, body: string, signatureHeader: string, nowMs: number) {
  const timestamp = Math.floor(nowMs / 1000);
  const secrets = signingSecrets(d, nowMs);
  return {
    'content-type': 'application/json',
    'user-agent': 'Vitals-Webhooks/1',
    [signatureHeader.toLowerCase()]: vitalsSignatures(secrets, body),
    'x-vitals-event': d.eventType,
    'x-vitals-event-id': d.eventId,
    'x-vitals-delivery-attempt': String(d.attempt),
    'webhook-id': d.eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': standardSignatures(secrets, d.eventId, timestamp, body),
  };
}

function describe(err: unknown, timedOut: boolean): string {
  if (timedOut) return 'timeout: no complete answer in time';
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? e.code;
  const message = e.cause?.message ?? e.message ?? String(err);
  return (code ? `${code}: ${message}` : message).slice(0, 500);
}

export async function attempt(
  d: ClaimedDelivery,
  opts: {
    agent: Agent;
    timeoutMs: number;
    signatureHeader: string;
    blockPrivate: boolean;
    now: number;
    /** What a Slack-format body names beside the event (the dispatcher reads it). */
    slack?: SlackContext;
  },
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const url = new URL(d.url);
  const refusal = addressRefusal(url.hostname, opts.blockPrivate);
  if (refusal) {
    return {
      statusCode: null,
      error: `EADDRBLOCKED: ${refusal}`,
      responseBody: null,
      retryAfter: undefined,
      durationMs: 0,
    };
  }
  const body = deliveryBody(d, opts.slack);
  const signal = AbortSignal.timeout(opts.timeoutMs);
  try {
    const res = await request(url, {
      method: 'POST',
      body,
      headers: deliveryHeaders(d, body, opts.signatureHeader, opts.now),
      dispatcher: opts.agent,
      signal,
    });
    // Read at most a snippet of the answer; a huge or endless one is cut off, not buffered.
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= RESPONSE_SNIPPET_BYTES) break;
    }
    if (size >= RESPONSE_SNIPPET_BYTES) res.body.destroy();
    const snippet = Buffer.concat(chunks).subarray(0, RESPONSE_SNIPPET_BYTES).toString('utf8');
    const retryAfter = res.headers['retry-after'];
    return {
      statusCode: res.statusCode,
      error: null,
      responseBody: snippet,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      durationMs: elapsed(),
    };
  } catch (err) {
    return {
      statusCode: null,
      error: describe(err, signal.aborted),
      responseBody: null,
      retryAfter: undefined,
      durationMs: elapsed(),
    };
  }
}
