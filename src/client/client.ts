// The transport under every method of the client: one JSON request to /api, retried when that is
// safe, and every failure turned into a VitalsError (docs/client.md, "Idempotency keys and retries" and "Errors").
import { randomUUID } from 'node:crypto';
import { isEnvelope, noAnswer, unexpectedResponse, VitalsError } from './errors.ts';
import type { WriteOptions } from './types.ts';

export interface ClientOptions {
  /** Where Vitals listens, e.g. `http://localhost:3000` (the client adds `/api`). */
  url: string;
  /** An API key, `vk_…`. */
  key: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  /** Time allowed for each attempt, answer body included (default 30 s). */
  timeoutMs?: number;
  /** Waits between attempts (default: a timer); tests pass one that does not wait. */
  sleep?: (ms: number) => Promise<void>;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Scalar = string | number | boolean;
type Query = Record<string, Scalar | Record<string, Scalar> | undefined>;
type Outcome = { ok: true; value: unknown } | { ok: false; error: VitalsError; retryAfter: string | null };

/** Statuses that mean "not done, try again later": the rate limit, and the database away. */
const RETRIED_STATUSES = new Set([429, 503]);
/** A Retry-After longer than this is not waited for: the error is thrown at once. */
const MAX_RETRY_AFTER_MS = 60_000;
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;

export class Transport {
  readonly #base: string;
  readonly #authorization: string;
  readonly #fetch: typeof fetch;
  readonly #maxRetries: number;
  readonly #timeoutMs: number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(opts: ClientOptions) {
    this.#base = `${opts.url.replace(/\/+$/, '')}/api`;
    this.#authorization = `Bearer ${opts.key}`;
    this.#fetch = opts.fetch ?? globalThis.fetch;
    this.#maxRetries = opts.maxRetries ?? 3;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
    this.#sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  get<T>(path: string, query?: object): Promise<T> {
    return this.request('GET', path, { query: query as Query | undefined });
  }

  post<T>(path: string, body: unknown, opts?: WriteOptions): Promise<T> {
    return this.request('POST', path, { body, idempotencyKey: opts?.idempotencyKey });
  }

  put<T>(path: string, body: unknown, opts?: WriteOptions): Promise<T> {
    return this.request('PUT', path, { body, idempotencyKey: opts?.idempotencyKey });
  }

  patch<T>(path: string, body: unknown, opts?: WriteOptions): Promise<T> {
    return this.request('PATCH', path, { body, idempotencyKey: opts?.idempotencyKey });
  }

  delete<T>(path: string, opts?: WriteOptions): Promise<T> {
    return this.request('DELETE', path, { idempotencyKey: opts?.idempotencyKey });
  }

  async request<T>(
    method: Method,
    path: string,
    call: { query?: Query | undefined; body?: unknown; idempotencyKey?: string | undefined },
  ): Promise<T> {
    const headers: Record<string, string> = {
      authorization: this.#authorization,
      accept: 'application/json',
    };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    // Made once, so every attempt carries the same key: Vitals replays the first answer to a
    // retry instead of running the POST again.
    const key = call.idempotencyKey ?? (method === 'POST' ? randomUUID() : undefined);
    if (key !== undefined) headers['idempotency-key'] = key;
    const init = { method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) };
    const url = this.#url(path, call.query);
    // Vitals ignores Idempotency-Key on PATCH and DELETE (docs/api.md), so only a GET or a keyed
    // POST may be sent again when it is unknown whether the first attempt arrived.
    const resendable = method === 'GET' || (method === 'POST' && key !== undefined);
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.#attempt(url, init);
      if (outcome.ok) return outcome.value as T;
      const wait = attempt < this.#maxRetries ? retryWait(outcome, resendable, attempt) : undefined;
      if (wait === undefined) throw outcome.error;
      await this.#sleep(wait);
    }
  }

  #url(path: string, query: Query | undefined): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined) continue;
      if (name === 'metadata' && typeof value === 'object' && value !== null) {
        // A segment: metadata[KEY]=VALUE, a number or boolean as its JSON text (docs/api.md, "Segments").
        for (const [key, v] of Object.entries(value)) params.set(`metadata[${key}]`, String(v));
      } else params.set(name, String(value));
    }
    const search = params.size > 0 ? `?${params}` : '';
    return `${this.#base}${path}${search}`;
  }

  async #attempt(url: string, init: RequestInit): Promise<Outcome> {
    let res: Response;
    let text: string;
    try {
      res = await this.#fetch(url, { ...init, signal: AbortSignal.timeout(this.#timeoutMs) });
      text = await res.text();
    } catch (err) {
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      const error = timedOut
        ? noAnswer('timeout', `No answer from Vitals within ${this.#timeoutMs} ms (${url}).`, err)
        : noAnswer('connection_error', `Could not reach Vitals at ${url}: ${describe(err)}`, err);
      return { ok: false, error, retryAfter: null };
    }
    const requestId = res.headers.get('x-request-id') ?? undefined;
    const contentType = res.headers.get('content-type') ?? '';
    let body: unknown;
    try {
      body = contentType.includes('json') ? JSON.parse(text) : undefined;
    } catch {}
    if (res.ok && body !== undefined) return { ok: true, value: body };
    const error =
      !res.ok && isEnvelope(body)
        ? new VitalsError(res.status, body, requestId)
        : unexpectedResponse(res.status, contentType, text, requestId);
    return { ok: false, error, retryAfter: res.headers.get('retry-after') };
  }
}

/** How long to wait before the next attempt, or undefined: do not retry. */
function retryWait(
  outcome: { error: VitalsError; retryAfter: string | null },
  resendable: boolean,
  attempt: number,
): number | undefined {
  const { error } = outcome;
  if (error.status === 0) return resendable ? backoff(attempt) : undefined;
  // A keyed request still running (an earlier attempt that timed out here): it will finish soon.
  const retried = RETRIED_STATUSES.has(error.status) || error.code === 'idempotency_request_in_progress';
  if (!retried) return undefined;
  const asked = retryAfterMs(outcome.retryAfter, Date.now());
  if (asked === undefined) return backoff(attempt);
  return asked <= MAX_RETRY_AFTER_MS ? asked : undefined;
}

/** 0.5 s, 1 s, 2 s, … up to 8 s, each between half and all of it so that clients spread out. */
function backoff(attempt: number): number {
  const full = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** attempt);
  return Math.round(full / 2 + (Math.random() * full) / 2);
}

/** Retry-After as seconds or as an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function describe(err: unknown): string {
  const cause = err instanceof Error ? err.cause : undefined;
  const message = err instanceof Error ? err.message : String(err);
  return cause instanceof Error ? `${message} (${cause.message})` : message;
}

/** A path with each interpolated id encoded as one path segment. */
export function path(strings: TemplateStringsArray, ...ids: (string | number)[]): string {
  return strings.reduce(
    (out, s, i) => out + s + (i < ids.length ? encodeURIComponent(String(ids[i])) : ''),
    '',
  );
}

/** Every item of a paged list, loading the next page only when the caller gets that far. */
export async function* paginate<T, C>(
  load: (cursor: C | undefined) => Promise<{ items: T[]; next: C | undefined }>,
): AsyncGenerator<T, void, undefined> {
  let cursor: C | undefined;
  do {
    const page = await load(cursor);
    yield* page.items;
    cursor = page.next;
  } while (cursor !== undefined);
}
