// What every answer must obey, and a snapshot of everything an account has stored (read through
// the API) for tests that have only a client. VITALS_FUZZ_RUNS=<n> runs every property n times
// (CI keeps the small defaults); VITALS_FUZZ_SEED=<n> replays a failure that fast-check reported.
import assert from 'node:assert/strict';
import type fc from 'fast-check';
import { ERRORS } from '../../src/domain/errors.ts';
import type { Client, Response } from '../helpers/app.ts';

const RUNS = Number(process.env.VITALS_FUZZ_RUNS) || undefined;
const SEED = process.env.VITALS_FUZZ_SEED ? Number(process.env.VITALS_FUZZ_SEED) : undefined;

/** fast-check parameters: `numRuns` unless VITALS_FUZZ_RUNS says otherwise. */
export function params(numRuns: number): fc.Parameters<unknown> {
  return { numRuns: RUNS ?? numRuns, ...(SEED === undefined ? {} : { seed: SEED }) };
}

const STACK_FRAME = /\n\s+at |\bat .*\.ts:\d+:\d+/;

/** The dashboard's pages (src/http/dashboard.ts) answer 503 until `npm run build` has run. */
const DASHBOARD_PAGES = /^\/(sign-in|settings|webhooks(\/[^/]+)?|customers\/[^/]+)?$/;

/** Every answer: below 500, an X-Request-Id, and a 4xx is exactly our envelope with a known code. */
export function assertWellFormed(res: Response, method: string, url: string, what: string): void {
  const path = new URL(url, 'http://vitals.test').pathname;
  const notBuilt = res.status === 503 && DASHBOARD_PAGES.test(path.replace(/\/$/, '') || '/');
  assert.ok(res.status < 500 || notBuilt, `${what}: ${res.status} ${res.raw.slice(0, 500)}`);
  assert.ok(res.status >= 200, `${what}: ${res.status}`);
  assert.match(
    String(res.headers['x-request-id'] ?? ''),
    /^[A-Za-z0-9._:-]{1,128}$/,
    `${what}: X-Request-Id`,
  );
  if (res.status < 400 || method === 'HEAD') return;
  assertEnvelope(res, what);
}

export function assertEnvelope(res: Response, what: string): void {
  assert.match(String(res.headers['content-type']), /^application\/json/, `${what}: content-type`);
  const body = res.body as { error?: Record<string, unknown> };
  assert.ok(body && typeof body === 'object' && !Array.isArray(body), `${what}: ${res.raw.slice(0, 300)}`);
  assert.deepEqual(Object.keys(body), ['error'], `${what}: ${res.raw.slice(0, 300)}`);
  const error = body.error as Record<string, unknown>;
  const code = error.code as keyof typeof ERRORS;
  assert.ok(Object.hasOwn(ERRORS, code), `${what}: unknown code ${String(code)}`);
  assert.equal(ERRORS[code].status, res.status, `${what}: ${String(code)} is not a ${res.status}`);
  assert.equal(error.type, ERRORS[code].type, `${what}: type of ${String(code)}`);
  assert.equal(typeof error.message, 'string');
  assert.ok((error.message as string).length > 0, `${what}: empty message`);
  for (const key of Object.keys(error)) {
    assert.ok(['type', 'code', 'message', 'param'].includes(key), `${what}: extra key ${key}`);
  }
  if ('param' in error) assert.equal(typeof error.param, 'string', `${what}: param`);
  if (res.status === 401)
    assert.equal(res.headers['www-authenticate'], 'Bearer', `${what}: WWW-Authenticate`);
  if (res.status === 429) assert.match(String(res.headers['retry-after']), /^\d+$/, `${what}: Retry-After`);
  assert.doesNotMatch(res.raw, STACK_FRAME, `${what}: a stack trace in the answer`);
}

/** No request may have planted a property on Object.prototype (prototype pollution). */
export function assertPrototypeClean(): void {
  const probe: Record<string, unknown> = {};
  for (const name of ['polluted', 'x', 'isAdmin', 'a']) {
    assert.equal(probe[name], undefined, `Object.prototype.${name} was set by a request`);
  }
}

// ---------- the account's stored state, as the API shows it ----------
// (The fuzz harness reads the same through the Store: state.ts. This one is for tests that
// only have a client.)

async function ok(api: Client, url: string): Promise<Record<string, unknown>> {
  const res = await api.get(url);
  assert.equal(res.status, 200, `${url}: ${res.raw.slice(0, 300)}`);
  return res.body;
}

/** Every item of a list whose pages have `data` and `has_more`, `next` giving the next page's query. */
async function pages<T>(
  api: Client,
  url: string,
  next: (last: T) => string,
  list: (page: Record<string, unknown>) => T[] = (page) => page.data as T[],
): Promise<T[]> {
  const items: T[] = [];
  for (let after = ''; ; ) {
    const page = await ok(api, `${url}${url.includes('?') ? '&' : '?'}limit=100${after}`);
    const data = list(page);
    items.push(...data);
    if (!page.has_more || data.length === 0) return items;
    after = `&${next(data.at(-1) as T)}`;
  }
}

/**
 * Every customer, score (with every customer's whole history), setting, webhook, delivery and
 * event of the account.
 */
export async function snapshot(api: Client) {
  const id = (v: { id: string }) => `starting_after=${encodeURIComponent(v.id)}`;
  const customers = await pages<{ id: string }>(
    api,
    '/api/customers',
    id,
    (p) => p.customers as { id: string }[],
  );
  const scores: unknown[] = [];
  for (let cursor = ''; ; ) {
    const page = await ok(api, `/api/health-scores?limit=100${cursor}`);
    scores.push(...(page.data as unknown[]));
    if (!page.has_more) break;
    cursor = `&cursor=${page.next_cursor}`;
  }
  const history: Record<string, unknown[]> = {};
  for (const c of customers) {
    history[c.id] = await pages<{ version: number }>(
      api,
      `/api/customers/${encodeURIComponent(c.id)}/health-score/history`,
      (v) => `starting_after=${v.version}`,
    );
  }
  const outcomes: Record<string, unknown[]> = {};
  for (const c of customers) {
    outcomes[c.id] = await pages(api, `/api/customers/${encodeURIComponent(c.id)}/outcomes`, id);
  }
  const webhooks = (await ok(api, '/api/webhooks')).webhooks as { id: string }[];
  const deliveries: Record<string, unknown[]> = {};
  for (const w of webhooks) deliveries[w.id] = await pages(api, `/api/webhooks/${w.id}/deliveries`, id);
  return {
    customers,
    scores,
    history,
    outcomes,
    summary: await ok(api, '/api/health-scores/summary'),
    weights: await ok(api, '/api/settings/health-score/weights'),
    thresholds: await ok(api, '/api/settings/health-score/thresholds'),
    webhooks,
    deliveries,
    // Newest first: a new event would show at the top.
    events: await pages(api, '/api/events', id),
  };
}
