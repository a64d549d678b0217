// One app per fuzz file, seeded with a customer that has a score, one without, weights, and a
// webhook with pending deliveries (no dispatcher runs, so nothing changes behind the test's
// back), and a second account seeded alike whose key no fuzzed request carries (its ids are
// among those the requests aim at). `check(route)` sends hostile requests to one route and holds
// every answer to the rules in rules.ts and to the OpenAPI document (contract.ts); after every
// request the other account and the API keys are exactly as they were, and a refused request
// (or one that only reads) leaves the whole stored state (state.ts) exactly as it was.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ApiKeyRecord } from '../../src/store/store.ts';
import { buildTestApp, type Client, type Response, type TestApp } from '../helpers/app.ts';
import { bodyArb, corpus, MULTIPART } from './bodies.ts';
import { Contract } from './contract.ts';
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
import { assertPrototypeClean, assertWellFormed, params } from './rules.ts';
import { type AccountState, accountState, type TableCounts, tableCounts } from './state.ts';

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

type Kind = 'customer_id' | 'webhook_id' | 'delivery_id' | 'event_id' | 'factor';

interface State {
  /** The account whose key the requests carry. */
  mine: AccountState;
  /** The second account: nothing a request with the first one's key does may show here. */
  other: AccountState;
  keys: ApiKeyRecord[];
  /** Rows per table, for writes that no account's view shows. */
  tables: Record<string, number>;
}

const OTHER_ACCOUNT = 'fuzz_other';

/** The ids of each kind that an account's state holds. */
function idsOf(state: AccountState): Record<Kind, string[]> {
  return {
    customer_id: state.customers.map((c) => c.id),
    webhook_id: state.webhooks.map((w) => w.id),
    delivery_id: state.deliveries.flatMap((w) => w.deliveries.map((d) => d.id)),
    event_id: state.events.map((e) => e.id),
    factor: state.rules.map((r) => r.factor),
  };
}

/** The factor rule every fuzzed account has (topped up if a request deletes it). */
const ENGAGEMENT = { metric: 'logins', aggregate: 'sum', scale: { type: 'linear', from: 0, to: 20 } };

/** Customers, a score with history, weights, thresholds, a factor rule with a metric point, and a webhook with a pending delivery. */
async function seed(api: Client, prefix: string): Promise<void> {
  const created = [
    await api.post('/api/customers', {
      customer_id: `${prefix}scored`,
      name: 'Scored',
      email: 'scored@example.com',
      metadata: { plan: 'pro', nested: { list: [1, 'two', null] } },
    }),
    await api.post('/api/customers', {
      customer_id: `${prefix}plain`,
      name: 'Plain',
      email: 'plain@example.com',
    }),
    await api.patch('/api/settings/health-score/weights', { weights: { usage: 0.6, support: 0.4 } }),
    await api.post('/api/webhooks', {
      url: 'http://127.0.0.1:9/fuzz',
      events: ['customer.updated', 'customer.health_score.updated'],
    }),
    await api.post(`/api/customers/${prefix}scored/health-score`, { factors: { usage: 0.9, support: 0.5 } }),
    await api.patch('/api/settings/health-score/thresholds', { healthy: 0.75, at_risk: 0.35 }),
    await api.patch(`/api/customers/${prefix}scored/health-score`, { factors: { support: 0.1 } }),
    await api.patch(`/api/customers/${prefix}plain`, { name: 'Plain Too' }),
    await api.request('PUT', '/api/settings/health-score/factors/engagement', ENGAGEMENT),
    await api.post(`/api/customers/${prefix}scored/metrics`, { values: { logins: 12, seats: 3 } }),
  ];
  for (const res of created) assert.ok(res.status < 300, res.raw);
}

export class Harness {
  readonly t: TestApp;
  readonly #contract: Contract;
  readonly #tables: TableCounts;
  readonly #accounts: { mine: string; other: string };
  #before!: State;
  #existing!: Record<Kind, string[]>;
  /** The other account's ids: a request with the first account's key must not reach them. */
  #foreign!: Record<Kind, string[]>;

  private constructor(t: TestApp, contract: Contract, accounts: { mine: string; other: string }) {
    this.t = t;
    this.#contract = contract;
    this.#accounts = accounts;
    this.#tables = tableCounts(t);
  }

  static async start(): Promise<Harness> {
    const t = await buildTestApp();
    await seed(t.api, 'fx_');
    await seed(await t.newAccount(OTHER_ACCOUNT), 'fx_other_');
    const keys = await t.store.listApiKeys();
    const accountOf = (name: string) => {
      const key = keys.find((k) => k.accountName === name);
      assert.ok(key, `no key for the account ${name}`);
      return key.accountId;
    };
    const h = new Harness(t, await Contract.load(t), {
      mine: accountOf('default'),
      other: accountOf(OTHER_ACCOUNT),
    });
    await h.refresh();
    h.#foreign = idsOf(h.#before.other);
    return h;
  }

  async state(): Promise<State> {
    const store = this.t.store;
    const [mine, other, keys, tables] = await Promise.all([
      accountState(store, this.#accounts.mine),
      accountState(store, this.#accounts.other),
      store.listApiKeys(),
      this.#tables.read(),
    ]);
    return { mine, other, keys, tables };
  }

  /** Takes the stored state (read now unless given), topping up what successful requests may have deleted. */
  async refresh(read?: State): Promise<void> {
    const api = this.t.api;
    let state = read ?? (await this.state());
    let toppedUp = false;
    if (state.mine.customers.length < 2) {
      const id = `fx_${state.mine.customers.length}_${Date.now()}`;
      await api.post('/api/customers', { customer_id: id, name: 'Again', email: 'again@example.com' });
      await api.post(`/api/customers/${id}/health-score`, { factors: { usage: 0.5 } });
      toppedUp = true;
    }
    if (state.mine.rules.length === 0) {
      await api.request('PUT', '/api/settings/health-score/factors/engagement', ENGAGEMENT);
      toppedUp = true;
    }
    if (state.mine.webhooks.length === 0) {
      await api.post('/api/webhooks', { url: 'http://127.0.0.1:9/fuzz', events: ['customer.updated'] });
      const any = state.mine.customers[0];
      if (any) await api.patch(`/api/customers/${encodeURIComponent(any.id)}`, { name: 'Touched' });
      toppedUp = true;
    }
    if (toppedUp) state = await this.state();
    this.#before = state;
    this.#existing = idsOf(state.mine);
  }

  requestArb(route: Route): fc.Arbitrary<FuzzRequest> {
    const kinds = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1] as Kind);
    const ids = fc.tuple(
      ...kinds.map((k) =>
        idArb(
          () => this.#existing[k],
          () => this.#foreign[k],
        ),
      ),
    );
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
   * every answer as /openapi.json describes it, the other account untouched, and a refusal
   * changes nothing.
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
    this.#contract.check(r.method, r.url, res, what);
    assertPrototypeClean();
    const now = await this.state();
    const before = this.#before;
    assert.deepEqual(now.other, before.other, `${what}: ${res.status}, and another account's data changed`);
    assert.deepEqual(now.keys, before.keys, `${what}: ${res.status}, and the API keys changed`);
    const pure =
      r.method === 'GET' || r.method === 'HEAD' || (route.pure === true && r.method === route.method);
    if (res.status >= 400 || pure) {
      const why = `${res.status >= 400 ? 'a refused request' : 'a request that only reads'} (${res.status})`;
      assert.deepEqual(now.mine, before.mine, `${what}: ${why} changed data`);
      assertSameRows(now.tables, before.tables, r, res, `${what}: ${why}`);
      before.tables = now.tables;
    } else {
      await this.refresh(now);
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

  async close(): Promise<void> {
    await this.#tables.close();
    await this.t.close();
  }
}

/**
 * No table gained or lost a row, but for one: a POST with an Idempotency-Key that got past
 * authentication may record its answer, a refusal from the handler (404, 409) included
 * (src/http/idempotency.ts).
 */
function assertSameRows(
  now: Record<string, number>,
  before: Record<string, number>,
  r: FuzzRequest,
  res: Response,
  what: string,
): void {
  for (const table of new Set([...Object.keys(now), ...Object.keys(before)])) {
    const change = (now[table] ?? 0) - (before[table] ?? 0);
    if (change === 0) continue;
    const claim =
      /(^|\.)idempotency_keys$/.test(table) &&
      change === 1 &&
      r.method === 'POST' &&
      Object.hasOwn(r.headers, 'idempotency-key') &&
      res.status !== 401;
    assert.ok(claim, `${what} changed the rows of ${table}: ${before[table]} → ${now[table]}`);
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
    {
      method: 'POST',
      path: '/api/customers/batch',
      body: [
        [
          'customers',
          '[{"customer_id":"fz_b1","name":"B","email":"b@example.com"},{"customer_id":"fx_plain","metadata":{"tier":null,"k":[1]}},{"customer_id":"fx_other_plain","name":"Not theirs"}]',
        ],
      ],
      query: [],
    },
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
    {
      method: 'POST',
      path: '/api/customers/:customer_id/metrics',
      body: [['values', '{"logins":3,"tickets":-1.5}']],
      query: [],
    },
    {
      method: 'GET',
      path: '/api/customers/:customer_id/metrics',
      body: null,
      query: ['metric', 'limit', 'starting_after'],
    },
    {
      method: 'POST',
      path: '/api/metrics/batch',
      body: [
        [
          'metrics',
          '[{"customer_id":"fx_scored","values":{"logins":1}},{"customer_id":"fx_other_scored","values":{"logins":2}}]',
        ],
      ],
      query: [],
    },
    {
      method: 'POST',
      path: '/api/health-scores/batch',
      body: [
        [
          'scores',
          '[{"customer_id":"fx_scored","factors":{"usage":0.5}},{"customer_id":"fx_plain","factors":{"billing":null,"usage":1},"merge":true},{"customer_id":"fx_other_scored","factors":{"usage":0}}]',
        ],
      ],
      query: [],
    },
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
    { method: 'GET', path: '/api/settings/health-score/factors', body: null, query: [] },
    { method: 'GET', path: '/api/settings/health-score/factors/:factor', body: null, query: [] },
    {
      method: 'PUT',
      path: '/api/settings/health-score/factors/:factor',
      body: [
        ['metric', '"logins"'],
        ['aggregate', '"avg"'],
        ['window_days', '7'],
        ['scale', '{"type":"steps","steps":[{"min":0,"score":0.2},{"min":5,"score":1}]}'],
      ],
      query: [],
    },
    {
      method: 'POST',
      path: '/api/settings/health-score/factors/:factor/preview',
      body: [
        ['metric', '"logins"'],
        ['aggregate', '"sum"'],
        ['scale', '{"type":"linear","from":0,"to":10}'],
      ],
      query: [],
      pure: true,
    },
    { method: 'DELETE', path: '/api/settings/health-score/factors/:factor', body: null, query: [] },
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
    {
      method: 'POST',
      path: '/api/webhooks/:webhook_id/rotate-secret',
      body: [['expire_previous_in', '3600']],
      query: [],
    },
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
