// What reading a webhook's backlog costs when it is large: N scored customers, one webhook, one
// weights change that queues N deliveries, no dispatcher (VITALS_ROLES=api) so they stay queued;
// then GET /api/webhooks/{id} (which counts them) under autocannon for 5 s. Any non-2xx is an error.
//   ./node_modules/.bin/node bench/webhook-backlog.ts [--customers 100000] [--backend sqlite|postgres] [--metrics]
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { dataset } from './seed.ts';

const { values } = parseArgs({
  options: {
    customers: { type: 'string', default: '100000' },
    backend: { type: 'string', default: 'sqlite' },
    /** GET /metrics instead (its backlog gauges count the same deliveries, per account). */
    metrics: { type: 'boolean', default: false },
  },
});
const N = Number(values.customers);
const backend = values.backend === 'postgres' ? 'postgres' : 'sqlite';
const { db, server, headers } = await dataset(backend, N, true, {
  VITALS_RATE_LIMIT: 'off',
  VITALS_ROLES: 'api',
});
try {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(server.url + path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const hook = await call('POST', '/api/webhooks', {
    url: 'http://127.0.0.1:9/hook',
    events: ['customer.health_score.updated'],
  });
  await call('PATCH', '/api/settings/health-score/weights', {
    weights: { usage: 0.5, support: 0.3, billing: 0.2 },
  });
  const shown = await call('GET', `/api/webhooks/${hook.id}`);
  const path = values.metrics ? '/metrics' : `/api/webhooks/${hook.id}`;
  const result = await autocannon({
    url: `${server.url}${path}`,
    connections: 8,
    duration: 5,
    headers,
  });
  const errors = result.non2xx + result.errors + result.timeouts;
  console.log(
    `${backend}: ${shown.pending} pending; GET ${values.metrics ? 'metrics' : 'webhook'} ${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, errors ${errors}`,
  );
  if (errors > 0) process.exitCode = 1;
} finally {
  await server.stop();
  await db.drop();
}
