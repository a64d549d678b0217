// One app per fuzz file, seeded with a customer that has a score, one without, weights, and a
// webhook with pending deliveries (no dispatcher runs, so nothing changes behind the test's
// back). `check(route)` sends hostile requests to one route and holds every answer to the
// rules in rules.ts; a refused request must leave the snapshot exactly as it was.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { bodyArb, corpus, MULTIPART } from './bodies.ts';
import {
  CONTENT_TYPES,
  describeRequest,
  type FuzzRequest,
  headersArb,
  idArb,
  methodArb,
  queryArb,
  send,
} from './requests.ts';
import { assertPrototypeClean, assertWellFormed, params, snapshot } from './rules.ts';

/** Requests judged in this file, printed at exit so RELIABILITY.md can count what was tried. */
let judged = 0;
process.once('exit', () => {
  if (judged > 0) console.log(`fuzz: ${judged} hostile requests judged`);
});

export interface Route {
  method: string;
  /** With :customer_id, :webhook_id, :delivery_id or :event_id placeholders. */
  path: string;
  /** A valid body as [key, JSON text] pairs (the fuzzer changes it), or null for none. */
  body: [string, string][] | null;
  /** The route's query parameters. */
  query: string[];
  /** A route that never changes stored data, whatever it answers (besides every GET). */
  pure?: boolean;
}

type Kind = 'customer_id' | 'webhook_id' | 'delivery_id' | 'event_id';
type Snapshot = Awaited<ReturnType<typeof snapshot>>;

export class Harness {
  readonly t: TestApp;
  #before!: Snapshot;
  readonly #existing: Record<Kind, string[]> = {
    customer_id: [],
    webhook_id: [],
    delivery_id: [],
    event_id: [],
  };

  private constructor(t: TestApp) {
    this.t = t;
  }

  static async start(): Promise<Harness> {
    const h = new Harness(await buildTestApp());
    const api = h.t.api;
    const created = [
      await api.post('/api/customers', {
        customer_id: 'fx_scored',
        name: 'Scored',
        email: 'scored@example.com',
        metadata: { plan: 'pro', nested: { list: [1, 'two', null] } },
      }),
      await api.post('/api/customers', {
        customer_id: 'fx_plain',
        name: 'Plain',
        email: 'plain@example.com',
      }),
      await api.patch('/api/settings/health-score/weights', { weights: { usage: 0.6, support: 0.4 } }),
      await api.post('/api/webhooks', {
        url: 'http://127.0.0.1:9/fuzz',
        events: ['customer.updated', 'customer.health_score.updated'],
      }),
      await api.post('/api/customers/fx_scored/health-score', { factors: { usage: 0.9, support: 0.5 } }),
      await api.patch('/api/customers/fx_plain', { name: 'Plain Too' }),
    ];
    for (const res of created) assert.ok(res.status < 300, res.raw);
    await h.refresh();
    return h;
  }

  /** Reads the stored state again, topping up what successful requests may have deleted. */
  async refresh(): Promise<void> {
    const api = this.t.api;
    let state = await snapshot(api);
    let toppedUp = false;
    if (state.customers.length < 2) {
      const id = `fx_${state.customers.length}_${Date.now()}`;
      await api.post('/api/customers', { customer_id: id, name: 'Again', email: 'again@example.com' });
      await api.post(`/api/customers/${id}/health-score`, { factors: { usage: 0.5 } });
      toppedUp = true;
    }
    if (state.webhooks.length === 0) {
      await api.post('/api/webhooks', { url: 'http://127.0.0.1:9/fuzz', events: ['customer.updated'] });
      const any = state.customers[0] as { id: string } | undefined;
      if (any) await api.patch(`/api/customers/${encodeURIComponent(any.id)}`, { name: 'Touched' });
      toppedUp = true;
    }
    if (toppedUp) state = await snapshot(api);
    this.#before = state;
    this.#existing.customer_id = state.customers.map((c) => (c as { id: string }).id);
    this.#existing.webhook_id = state.webhooks.map((w) => w.id);
    this.#existing.delivery_id = Object.values(state.deliveries).flatMap((page) =>
      ((page as { data: { id: string }[] }).data ?? []).map((d) => d.id),
    );
    this.#existing.event_id = ((state.events as { data: { id: string }[] }).data ?? []).map((e) => e.id);
  }

  requestArb(route: Route): fc.Arbitrary<FuzzRequest> {
    const kinds = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1] as Kind);
    const ids = fc.tuple(...kinds.map((k) => idArb(() => this.#existing[k])));
    return fc
      .tuple(
        methodArb(route.method),
        ids,
        queryArb(route.query),
        headersArb(this.t.api.key),
        bodyArb(route.body),
      )
      .map(([method, values, query, headers, body]) => {
        let i = 0;
        const path = route.path.replace(/:(\w+)/g, () => values[i++] as string);
        return request(method, `${path}${query}`, headers, body);
      });
  }

  /**
   * Hostile requests to one route: first the fixed corpus (every special value in every field,
   * under every content type), then `numRuns` random ones. Never a 5xx, always the envelope,
   * and a refusal changes nothing.
   */
  async check(route: Route, numRuns: number): Promise<void> {
    for (const r of this.corpusRequests(route)) await this.judge(route, r);
    await fc.assert(
      fc.asyncProperty(this.requestArb(route), (r) => this.judge(route, r)),
      params(numRuns),
    );
  }

  async judge(route: Route, r: FuzzRequest): Promise<void> {
    judged++;
    const what = describeRequest(r);
    const res = await send(this.t, r);
    assertWellFormed(res, r.method, r.url, what);
    assertPrototypeClean();
    const pure =
      r.method === 'GET' || r.method === 'HEAD' || (route.pure === true && r.method === route.method);
    if (res.status >= 400 || (pure && route.path.startsWith('/api/'))) {
      const why = res.status >= 400 ? 'a refused request' : 'a request that only reads';
      assert.deepEqual(await snapshot(this.t.api), this.#before, `${what}: ${why} changed data`);
    } else if (!pure) {
      await this.refresh();
    }
    const alive = await this.t.inject({ method: 'GET', url: '/healthz' });
    assert.equal(alive.status, 200, `${what}: /healthz afterwards`);
  }

  /** The corpus against existing resources, with the valid key: JSON, then every other content type. */
  corpusRequests(route: Route): FuzzRequest[] {
    const url = route.path.replace(/:(\w+)/g, (_, kind: Kind) =>
      encodeURIComponent(this.#existing[kind][0] ?? 'none'),
    );
    const headers = (type: string | undefined): Record<string, string> => ({
      authorization: `Bearer ${this.t.api.key}`,
      ...(type === undefined ? {} : { 'content-type': type }),
    });
    const valid = route.body
      ? `{${route.body.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`
      : '{}';
    return [
      ...corpus(route.body).map((body) => request(route.method, url, headers('application/json'), body)),
      ...[...CONTENT_TYPES, undefined].map((type) => request(route.method, url, headers(type), valid)),
      request(route.method, url, headers('multipart/form-data; boundary=x'), MULTIPART),
    ];
  }

  close(): Promise<void> {
    return this.t.close();
  }
}

/** A request that fast-check prints as one short line (a counterexample may hold a 1 MiB body). */
function request(method: string, url: string, headers: Record<string, string>, body: string | undefined) {
  const r: FuzzRequest = { method, url, headers, body };
  return Object.assign(r, { [fc.toStringMethod]: () => describeRequest(r) });
}

// The routes, with a valid body for each that takes one.
const customer: [string, string][] = [
  ['customer_id', '"fz_new"'],
  ['name', '"Fuzz"'],
  ['email', '"fuzz@example.com"'],
  ['metadata', '{"plan":"pro","seats":3}'],
];
const customerPatch: [string, string][] = [
  ['name', '"Renamed"'],
  ['email', '"renamed@example.com"'],
  ['metadata', '{"plan":null,"tier":2}'],
];
const webhook: [string, string][] = [
  ['url', '"http://127.0.0.1:9/new"'],
  ['events', '["customer.created","customer.status.changed"]'],
  ['description', '"fuzz"'],
];
const webhookPatch: [string, string][] = [
  ['url', '"http://127.0.0.1:9/other"'],
  ['events', '["customer.deleted"]'],
  ['description', 'null'],
  ['enabled', 'true'],
];

export const ROUTES = {
  customers: [
    { method: 'POST', path: '/api/customers', body: customer, query: [] },
    { method: 'GET', path: '/api/customers', body: null, query: ['limit', 'starting_after', 'search'] },
    { method: 'GET', path: '/api/customers/:customer_id', body: null, query: [] },
    { method: 'PATCH', path: '/api/customers/:customer_id', body: customerPatch, query: [] },
    { method: 'DELETE', path: '/api/customers/:customer_id', body: null, query: [] },
  ],
  scores: [
    {
      method: 'POST',
      path: '/api/customers/:customer_id/health-score',
      body: [['factors', '{"usage":0.5,"support":0.25}']],
      query: [],
    },
    {
      method: 'PATCH',
      path: '/api/customers/:customer_id/health-score',
      body: [['factors', '{"usage":null,"billing":0.75}']],
      query: [],
    },
    { method: 'GET', path: '/api/customers/:customer_id/health-score', body: null, query: [] },
    {
      method: 'GET',
      path: '/api/customers/:customer_id/health-score/history',
      body: null,
      query: ['limit', 'starting_after'],
    },
    { method: 'GET', path: '/api/health-scores', body: null, query: ['status', 'limit', 'cursor'] },
    { method: 'GET', path: '/api/health-scores/summary', body: null, query: [] },
  ],
  settings: [
    { method: 'GET', path: '/api/settings/health-score/weights', body: null, query: [] },
    {
      method: 'PATCH',
      path: '/api/settings/health-score/weights',
      body: [['weights', '{"usage":0.5,"support":0.5}']],
      query: [],
    },
    {
      method: 'POST',
      path: '/api/settings/health-score/weights/preview',
      body: [['weights', '{"usage":0.25,"billing":0.75}']],
      query: [],
      pure: true,
    },
    { method: 'GET', path: '/api/settings/health-score/thresholds', body: null, query: [] },
    {
      method: 'PATCH',
      path: '/api/settings/health-score/thresholds',
      body: [
        ['healthy', '0.8'],
        ['at_risk', '0.3'],
      ],
      query: [],
    },
  ],
  events: [
    { method: 'GET', path: '/api/events', body: null, query: ['type', 'limit', 'starting_after'] },
    { method: 'GET', path: '/api/events/:event_id', body: null, query: [] },
  ],
  webhooks: [
    { method: 'POST', path: '/api/webhooks', body: webhook, query: [] },
    { method: 'GET', path: '/api/webhooks', body: null, query: [] },
    { method: 'GET', path: '/api/webhooks/:webhook_id', body: null, query: [] },
    { method: 'PATCH', path: '/api/webhooks/:webhook_id', body: webhookPatch, query: [] },
    { method: 'DELETE', path: '/api/webhooks/:webhook_id', body: null, query: [] },
    { method: 'POST', path: '/api/webhooks/:webhook_id/rotate-secret', body: null, query: [] },
    {
      method: 'GET',
      path: '/api/webhooks/:webhook_id/deliveries',
      body: null,
      query: ['status', 'limit', 'starting_after'],
    },
    {
      method: 'POST',
      path: '/api/webhooks/:webhook_id/deliveries/:delivery_id/retry',
      body: null,
      query: [],
    },
  ],
  operations: [
    { method: 'GET', path: '/healthz', body: null, query: [] },
    { method: 'GET', path: '/readyz', body: null, query: [] },
    { method: 'GET', path: '/openapi.json', body: null, query: [] },
  ],
} satisfies Record<string, Route[]>;
