// Fills a running Vitals of the previous release with at least one object of every kind, through its
// API, and writes what that release answers for each (test/upgrade/make-fixtures.sh runs it; the
// upgrade test compares today's answers with these). Only HTTP: it runs against any release.
//
//   VITALS=http://127.0.0.1:PORT KEY=vk_… node test/upgrade/populate.ts MANIFEST.json
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const VITALS = process.env.VITALS as string;
const KEY = process.env.KEY as string;
const [manifestPath] = process.argv.slice(2);
assert.ok(VITALS && KEY && manifestPath, 'usage: VITALS=… KEY=… node test/upgrade/populate.ts MANIFEST.json');

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${VITALS}${path}`, {
    method,
    headers: {
      ...(headers.cookie ? {} : { authorization: `Bearer ${KEY}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return { json: JSON.parse(text), cookie: res.headers.get('set-cookie') };
}
const post = (path: string, body: unknown) => call('POST', path, body).then((r) => r.json);

// A receiver that answers 200, so every delivery is finished before the snapshot.
let received = 0;
const receiver = createServer((req, res) => {
  req.resume().on('end', () => {
    received++;
    res.end('ok');
  });
}).listen(0, '127.0.0.1');
await new Promise((r) => receiver.once('listening', r));
const receiverPort = (receiver.address() as AddressInfo).port;

const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString();

// The book: owner, ARR, renewal, a parent, metadata.
await post('/api/customers', {
  customer_id: 'initech',
  name: 'Initech',
  email: 'it@initech.example',
  owner: 'dana@example.com',
  arr: 180000,
  renewal_at: day(200),
  metadata: { plan: 'enterprise', region: 'eu', seats: 40 },
});
await post('/api/customers', {
  customer_id: 'initech_eu',
  name: 'Initech Europe',
  email: 'eu@initech.example',
  owner: 'sam@example.com',
  arr: 20000.5,
  parent_id: 'initech',
});
await post('/api/customers', {
  customer_id: 'globex',
  name: 'Globex "Ünïcode"',
  email: 'ops@globex.example',
});

const webhook = await post('/api/webhooks', {
  url: `http://127.0.0.1:${receiverPort}/vitals`,
  events: ['customer.health_score.updated', 'customer.status.changed'],
  description: 'CS alerts',
});

// History: several versions, a settings change, thresholds.
await post('/api/customers/initech/health-score', { factors: { usage: 0.9, support: 0.6, billing: 1 } });
await post('/api/customers/initech/health-score', { factors: { usage: 0.3, support: 0.2, billing: 0.5 } });
await post('/api/customers/initech_eu/health-score', { factors: { usage: 0.7, support: 0.8 } });
await call('PATCH', '/api/settings/health-score/weights', {
  weights: { usage: 0.5, support: 0.3, billing: 0.2 },
});
await call('PATCH', '/api/settings/health-score/thresholds', { healthy: 0.7, at_risk: 0.4 });

// Metrics and a factor rule that reads them (the newest point, whatever its age).
await call('PUT', '/api/settings/health-score/factors/seats_used', {
  metric: 'seats_used',
  aggregate: 'last',
  scale: { type: 'linear', from: 0, to: 50 },
});
await post('/api/metrics/batch', {
  metrics: [
    { customer_id: 'globex', values: { seats_used: 10, logins: 3 }, at: day(-20) },
    { customer_id: 'globex', values: { seats_used: 25, logins: 7 }, at: day(-2) },
  ],
});

// An override, an outcome.
await call('PUT', '/api/customers/initech_eu/health-score/override', {
  health_score: 0.3,
  reason: 'Champion left; renewal call went badly',
});
await post('/api/customers/initech/outcomes', {
  outcome: 'retained',
  note: 'renewed for 2 years',
  at: day(-1),
});

// A test delivery, sent through the same signed path.
await post(`/api/webhooks/${webhook.id}/test`, {});

// Sources (a trusted Segment source, a Stripe one), a playbook, a task, a note.
await post('/api/sources', { type: 'segment', name: 'Backend', trusted: true });
await post('/api/sources', {
  type: 'stripe',
  name: 'Stripe',
  signing_secret: 'whsec_fixture0000000000000000',
});
await post('/api/playbooks', {
  name: 'Critical: call within 2 days',
  trigger: { type: 'status_entered', status: 'critical' },
  task: { title: 'Call: the account went critical', due_in_days: 2 },
});
await post('/api/customers/globex/tasks', {
  title: 'Kick-off call',
  body: 'Agenda: goals.',
  assignee: 'sam@example.com',
});
await post('/api/customers/initech/notes', { body: 'Called Dana: the champion left in March.' });
// A status change the playbook turns into a task.
await post('/api/customers/globex/health-score', { factors: { usage: 0.1, support: 0.1 } });

// A person with a password, and their saved view (a session's own).
const made = await post('/api/users', { email: 'ana@example.com', role: 'editor' });
const token = new URL(made.sign_in_link).hash.replace('#token=', '');
await call('POST', '/auth/password', { token, password: 'a long enough password' }, { authorization: '' });
const login = await call(
  'POST',
  '/auth/login',
  { email: 'ana@example.com', password: 'a long enough password' },
  { authorization: '' },
);
const cookie = (login.cookie ?? '').split(';')[0] as string;
const session = { cookie, 'x-csrf-token': login.json.csrf_token };
await call(
  'POST',
  '/api/views',
  { name: 'EU at risk', query: 'status=at_risk&metadata[region]=eu' },
  session,
);

// Every delivery finished before the snapshot.
for (let i = 0; ; i++) {
  const { json } = await call('GET', `/api/webhooks/${webhook.id}/deliveries?limit=100`);
  if (json.data.every((d: { status: string }) => d.status === 'succeeded')) break;
  assert.ok(i < 100, 'the deliveries never finished');
  await new Promise((r) => setTimeout(r, 100));
}
receiver.close();

// What this release answers, read back for the upgrade test.
const reads: Record<string, unknown> = {};
const read = async (path: string, headers: Record<string, string> = {}) => {
  reads[path] = (await call('GET', path, undefined, headers)).json;
};
for (const path of [
  '/api/customers?limit=100',
  '/api/health-scores?limit=100',
  '/api/settings/health-score/weights',
  '/api/settings/health-score/thresholds',
  '/api/settings/health-score/factors',
  '/api/events?limit=100',
  '/api/webhooks',
  `/api/webhooks/${webhook.id}/deliveries?limit=100`,
  '/api/sources',
  '/api/tasks?status=all',
  '/api/playbooks',
  '/api/users',
  '/api/audit-log?limit=100',
]) {
  await read(path);
}
for (const id of ['initech', 'initech_eu', 'globex']) {
  for (const what of [
    '',
    '/health-score',
    '/health-score/history?limit=100',
    '/metrics?limit=100',
    '/outcomes',
    '/notes',
  ]) {
    await read(`/api/customers/${id}${what}`);
  }
}
await read('/api/views', session);
await read('/api/me', session);

writeFileSync(
  manifestPath,
  `${JSON.stringify({ made_at: new Date().toISOString(), key: KEY, received, reads }, null, 1)}\n`,
);
console.log(`populated: ${Object.keys(reads).length} reads recorded, ${received} deliveries received`);
