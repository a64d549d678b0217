// The Segment Spec intake (docs/sources.md, "Segment") through HTTP: every bad input, its answer,
// its log entry, and proof that nothing else changed. The libraries themselves drive it in
// segment-libraries.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { buildTestApp, type Response, type TestApp } from '../helpers/app.ts';

let t: TestApp;
after(() => t.close());

interface Source {
  id: string;
  key: string;
}

const newSource = async (name: string, extra: Record<string, unknown> = {}): Promise<Source> => {
  const res = await t.api.post('/api/sources', { type: 'segment', name, ...extra });
  assert.equal(res.status, 201, res.raw);
  return { id: res.body.id, key: res.body.write_key };
};

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

/** A request to /v1/{route}, the key as HTTP Basic unless `headers` says otherwise. */
const send = (
  route: string,
  body: unknown,
  key: string | null,
  headers: Record<string, string> = {},
): Promise<Response> =>
  t.inject({
    method: 'POST',
    url: `/v1/${route}`,
    headers: {
      'content-type': 'application/json',
      ...(key === null ? {} : { authorization: basic(key) }),
      ...headers,
    },
    payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });

const log = async (s: Source) => (await t.api.get(`/api/sources/${s.id}/log?limit=100`)).body.data;
const stats = async (s: Source) => (await t.api.get(`/api/sources/${s.id}`)).body.stats;

/** What a refused request must leave as it was: the customers, their points, the sources and logs, the audit log. */
async function snapshot(...sources: Source[]) {
  const customers = (await t.api.get('/api/customers?limit=100')).body.customers;
  const points: Record<string, unknown> = {};
  for (const c of customers)
    points[c.id] = (await t.api.get(`/api/customers/${c.id}/metrics?limit=100`)).body;
  const logs = await Promise.all(sources.map(log));
  const all = (await t.api.get('/api/sources')).body.data;
  const audit = (await t.api.get('/api/audit-log?limit=100')).body.data.filter(
    (e: { actor: { type: string } }) => e.actor.type === 'source',
  );
  return { customers, points, logs, all, audit };
}

const refusedWith = (res: Response, status: number, code: string) => {
  assert.equal(res.status, status, res.raw);
  assert.equal(res.body.error.code, code, res.raw);
};

let trusted: Source;
let untrusted: Source;
before(async () => {
  t = await buildTestApp({ ingestRate: { max: 1000, windowMs: 1000 }, metricRetentionMs: 30 * 86_400_000 });
  trusted = await newSource('Backend', { trusted: true });
  untrusted = await newSource('Browser');
  const made = await send(
    'group',
    { groupId: 'acme', userId: 'u_acme', traits: { name: 'Acme', email: 'ops@acme.test', plan: 'pro' } },
    trusted.key,
  );
  assert.equal(made.status, 200, made.raw);
});

describe('the write key', () => {
  const track = { userId: 'u_acme', event: 'Report Exported', context: { groupId: 'acme' } };

  test('missing, unknown, an API key, disabled, or not a Segment source: 401 and nothing recorded', async () => {
    const disabled = await newSource('Disabled');
    await t.api.patch(`/api/sources/${disabled.id}`, { enabled: false });
    const stripe = await t.api.post('/api/sources', {
      type: 'stripe',
      name: 'Stripe',
      signing_secret: 'whsec_abcdefghijklmnopqrstuvwxyz012345',
    });
    assert.equal(stripe.status, 201, stripe.raw);
    const before = await snapshot(trusted, disabled);
    refusedWith(await send('track', track, null), 401, 'write_key_missing');
    const missing = await send('track', track, null);
    assert.match(String(missing.headers['www-authenticate']), /^Basic /);
    refusedWith(await send('track', track, 'sk_unknown'), 401, 'write_key_invalid');
    refusedWith(await send('track', track, t.api.key), 401, 'write_key_invalid');
    refusedWith(await send('track', track, disabled.key), 401, 'write_key_invalid');
    refusedWith(
      await send('track', track, null, { authorization: `Bearer ${trusted.key}` }),
      401,
      'write_key_missing',
    );
    refusedWith(
      await send('batch', { batch: [{ type: 'track', ...track }] }, 'sk_nope'),
      401,
      'write_key_invalid',
    );
    assert.deepEqual(await snapshot(trusted, disabled), before);
  });

  test('writeKey in the body stands for the header', async () => {
    const res = await send('track', { ...track, writeKey: trusted.key }, null);
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, { success: true });
    assert.equal((await log(trusted))[0].result, 'applied');
  });
});

describe('bodies', () => {
  test('not JSON, not an object, batch not an array: 400 and nothing recorded', async () => {
    const before = await snapshot(trusted);
    refusedWith(await send('track', '{"event": ', trusted.key), 400, 'invalid_json');
    refusedWith(await send('track', '[1, 2]', trusted.key), 400, 'invalid_json');
    refusedWith(await send('batch', { batch: 'nope' }, trusted.key), 400, 'parameter_invalid');
    assert.deepEqual(await snapshot(trusted), before);
  });

  test('JSON whatever the Content-Type says, and with none', async () => {
    const body = JSON.stringify({ event: 'Content Types', context: { groupId: 'acme' }, messageId: 'ct-1' });
    for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
      const res = await send('track', body, trusted.key, { 'content-type': type });
      assert.equal(res.status, 200, `${type}: ${res.raw}`);
    }
    const none = await t.app.inject({
      method: 'POST',
      url: '/v1/track',
      headers: { authorization: basic(trusted.key) },
      payload: JSON.stringify({ event: 'Content Types', context: { groupId: 'acme' } }),
    });
    assert.equal(none.statusCode, 200, none.body);
  });

  test('a gzipped body is read; a corrupt gzip is 400 and nothing recorded', async () => {
    const zipped = gzipSync(
      JSON.stringify({ batch: [{ type: 'track', event: 'Zipped', context: { groupId: 'acme' } }] }),
    );
    const ok = await send('batch', zipped, trusted.key, {
      'content-encoding': 'gzip',
      'content-type': 'application/x-www-form-urlencoded',
    });
    assert.equal(ok.status, 200, ok.raw);
    assert.equal((await log(trusted))[0].kind, 'track');
    const before = await snapshot(trusted);
    const corrupt = Buffer.from(zipped);
    corrupt.fill(0x41, 12, 30);
    refusedWith(
      await send('batch', corrupt, trusted.key, { 'content-encoding': 'gzip' }),
      400,
      'invalid_request',
    );
    refusedWith(
      await send('batch', zipped.subarray(0, zipped.length - 12), trusted.key, {
        'content-encoding': 'gzip',
      }),
      400,
      'invalid_request',
    );
    refusedWith(
      await send('batch', 'plain', trusted.key, { 'content-encoding': 'gzip' }),
      400,
      'invalid_request',
    );
    refusedWith(
      await send('batch', zipped, trusted.key, { 'content-encoding': 'br' }),
      400,
      'invalid_request',
    );
    assert.deepEqual(await snapshot(trusted), before);
  });

  test('a gzip bomb (200 MB of spaces) is refused at the budget, not inflated whole', async () => {
    const bomb = gzipSync(Buffer.alloc(200 * 1024 * 1024, 0x20), { level: 9 });
    assert.ok(bomb.length < 400_000);
    const before = await snapshot(trusted);
    const heap = process.memoryUsage().arrayBuffers;
    const started = process.cpuUsage();
    const res = await send('batch', bomb, trusted.key, { 'content-encoding': 'gzip' });
    const cpu = process.cpuUsage(started);
    refusedWith(res, 400, 'invalid_request');
    assert.match(res.body.error.message, /500 KB/);
    // Inflating 200 MB takes ~400 ms of CPU and holds 200 MB; stopping at 500 KB, a few ms (the
    // bound leaves room for the process's other threads on a busy machine).
    assert.ok(cpu.user + cpu.system < 150_000, `${cpu.user + cpu.system} µs of CPU`);
    assert.ok(process.memoryUsage().arrayBuffers - heap < 20 * 1024 * 1024);
    assert.deepEqual(await snapshot(trusted), before);
  });

  test('a batch over 500 KB, a single message over 32 KB: 400 and nothing recorded', async () => {
    const before = await snapshot(trusted);
    const big = 'x'.repeat(20_000);
    const batch = Array.from({ length: 30 }, (_, i) => ({
      type: 'track',
      event: 'Big',
      context: { groupId: 'acme' },
      properties: { big, i },
    }));
    refusedWith(await send('batch', { batch }, trusted.key), 400, 'invalid_request');
    refusedWith(
      await send(
        'track',
        { event: 'Big', context: { groupId: 'acme' }, properties: { big: 'x'.repeat(33_000) } },
        trusted.key,
      ),
      400,
      'invalid_request',
    );
    assert.deepEqual(await snapshot(trusted), before);
  });

  test('within a batch, a message over 32 KB is refused in the log; the others apply', async () => {
    const before = await stats(trusted);
    const res = await send(
      'batch',
      {
        batch: [
          {
            type: 'track',
            event: 'Huge',
            context: { groupId: 'acme' },
            properties: { big: 'x'.repeat(33_000) },
          },
          { type: 'track', event: 'Small', context: { groupId: 'acme' } },
        ],
      },
      trusted.key,
    );
    assert.equal(res.status, 200, res.raw);
    const [small, huge] = await log(trusted);
    assert.equal(small.result, 'applied');
    assert.equal(huge.result, 'refused');
    assert.match(huge.reason, /^message_too_large: /);
    const after = await stats(trusted);
    assert.equal(after.received, before.received + 2);
    assert.equal(after.refused, before.refused + 1);
    assert.equal(after.applied, before.applied + 1);
    const points = (await t.api.get('/api/customers/acme/metrics?metric=huge')).body.data;
    assert.deepEqual(points, []);
  });
});

describe('the rate per source', () => {
  test('past VITALS_INGEST_RATE: 429 with Retry-After, nothing recorded; another source is not held', async () => {
    const limited = await buildTestApp({ ingestRate: { max: 3, windowMs: 60_000 } });
    try {
      const make = async (name: string) => {
        const res = await limited.api.post('/api/sources', { type: 'segment', name, trusted: true });
        return { id: res.body.id as string, key: res.body.write_key as string };
      };
      const [a, b] = [await make('A'), await make('B')];
      const post = (s: { key: string }, n: number) =>
        limited.inject({
          method: 'POST',
          url: '/v1/batch',
          headers: { authorization: basic(s.key), 'content-type': 'application/json' },
          payload: JSON.stringify({
            batch: Array.from({ length: n }, () => ({ type: 'page', name: 'Home' })),
          }),
        });
      assert.equal((await post(a, 2)).status, 200);
      const over = await post(a, 2);
      refusedWith(over, 429, 'rate_limited');
      assert.ok(Number(over.headers['retry-after']) >= 1);
      assert.equal((await post(a, 1)).status, 200, 'what fits still passes');
      refusedWith(await post(a, 1), 429, 'rate_limited');
      assert.equal((await post(b, 3)).status, 200);
      const statsA = (await limited.api.get(`/api/sources/${a.id}`)).body.stats;
      assert.equal(statsA.received, 3, 'the refused requests recorded nothing');
      assert.equal((await limited.api.get(`/api/sources/${a.id}/log?limit=100`)).body.data.length, 3);
    } finally {
      await limited.close();
    }
  });
});

describe('messages refused or ignored, each in the log, nothing else changed', () => {
  /** Sends one message; answers its log entry, having checked that nothing but the log and stats moved. */
  async function judged(s: Source, route: string, message: Record<string, unknown>) {
    const before = await snapshot(s);
    const counted = await stats(s);
    const res = await send(route, message, s.key);
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, { success: true });
    const entries = await log(s);
    const after = await snapshot(s);
    assert.deepEqual(after.customers, before.customers);
    assert.deepEqual(after.points, before.points);
    assert.deepEqual(after.audit, before.audit);
    assert.deepEqual(entries.slice(1), before.logs[0]);
    const entry = entries[0];
    const now = await stats(s);
    assert.equal(now.received, counted.received + 1);
    assert.equal(now[entry.result], counted[entry.result] + 1);
    return entry;
  }

  test('a track without a group: refused no_group', async () => {
    const entry = await judged(trusted, 'track', { event: 'Lonely', userId: 'u_nobody' });
    assert.equal(entry.result, 'refused');
    assert.equal(entry.kind, 'track');
    assert.equal(entry.customer_id, null);
    assert.match(entry.reason, /^no_group: .*'u_nobody'/);
    const anonymous = await judged(trusted, 'track', { event: 'Lonely', anonymousId: 'a1' });
    assert.match(anonymous.reason, /^no_group: /);
  });

  test('a track for a customer that does not exist: refused customer_not_found', async () => {
    const entry = await judged(trusted, 'track', { event: 'Ghost', context: { groupId: 'ghost' } });
    assert.deepEqual([entry.result, entry.customer_id], ['refused', 'ghost']);
    assert.match(entry.reason, /^customer_not_found: no customer 'ghost'/);
  });

  test('an event name without a letter or digit: refused event_name_invalid', async () => {
    const entry = await judged(trusted, 'track', { event: '!!!', context: { groupId: 'acme' } });
    assert.match(entry.reason, /^event_name_invalid: /);
  });

  test('a timestamp more than 5 minutes ahead, or older than the metric retention: refused', async () => {
    const ahead = new Date(Date.now() + 10 * 60_000).toISOString();
    const future = await judged(trusted, 'track', {
      event: 'Future',
      context: { groupId: 'acme' },
      timestamp: ahead,
    });
    assert.deepEqual([future.result, future.customer_id], ['refused', 'acme']);
    assert.match(future.reason, /^timestamp_in_future: /);
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
    const past = await judged(trusted, 'track', {
      event: 'Past',
      context: { groupId: 'acme' },
      originalTimestamp: old,
    });
    assert.match(past.reason, /^timestamp_too_old: /);
    const bad = await judged(trusted, 'track', {
      event: 'Bad',
      context: { groupId: 'acme' },
      timestamp: 'yesterday',
    });
    assert.match(bad.reason, /^timestamp_invalid: /);
  });

  test('a group for an unknown customer without traits.email: refused customer_not_found', async () => {
    const entry = await judged(trusted, 'group', { groupId: 'newco', traits: { name: 'New Co' } });
    assert.deepEqual([entry.result, entry.customer_id, entry.kind], ['refused', 'newco', 'group']);
    assert.equal(
      entry.reason,
      "customer_not_found: no customer 'newco', and the group has no traits.email to create it with",
    );
  });

  test('bad trait values: refused in the API’s words', async () => {
    const arr = await judged(trusted, 'group', { groupId: 'acme', traits: { arr: 'lots' } });
    assert.match(arr.reason, /^parameter_invalid: traits\.arr: 'arr' must be a number/);
    const owner = await judged(trusted, 'group', { groupId: 'acme', traits: { owner: 'not an email' } });
    assert.match(owner.reason, /^parameter_invalid: traits\.owner: /);
    const id = await judged(trusted, 'group', { groupId: 'has space', traits: { email: 'a@b.test' } });
    assert.match(id.reason, /^parameter_invalid: groupId: /);
    const renewal = await judged(trusted, 'group', { groupId: 'acme', traits: { renewal_at: 'soon' } });
    assert.match(renewal.reason, /^parameter_invalid: .*renewal_at/);
  });

  test('an untrusted source may not create a customer, nor set its book fields or stripe_customer_id', async () => {
    const create = await judged(untrusted, 'group', { groupId: 'sneaky', traits: { email: 's@x.test' } });
    assert.match(create.reason, /^not_trusted: .*email/);
    const bare = await judged(untrusted, 'group', { groupId: 'sneaky', traits: { plan: 'free' } });
    assert.match(bare.reason, /^not_trusted: no customer 'sneaky'/);
    const arr = await judged(untrusted, 'group', {
      groupId: 'acme',
      traits: { arr: 1_000_000, name: 'Pwned' },
    });
    assert.equal(arr.result, 'refused');
    assert.match(arr.reason, /^not_trusted: this source is not trusted to set arr, name/);
    const stripe = await judged(untrusted, 'group', {
      groupId: 'acme',
      traits: { stripe_customer_id: 'cus_x' },
    });
    assert.match(stripe.reason, /^not_trusted: .*stripe_customer_id/);
  });

  test('the same messageId twice: applied once, then ignored as a duplicate', async () => {
    const message = { event: 'Once', context: { groupId: 'acme' }, messageId: 'dup-1' };
    const first = await send('track', message, trusted.key);
    assert.equal(first.status, 200, first.raw);
    assert.equal((await log(trusted))[0].result, 'applied');
    const points = (await t.api.get('/api/customers/acme/metrics?metric=once')).body.data;
    assert.equal(points[0].value, 1);
    const again = await judged(trusted, 'track', message);
    assert.equal(again.result, 'ignored');
    assert.match(again.reason, /^duplicate: /);
    // Twice in one batch: the second is a duplicate of the first.
    const res = await send(
      'batch',
      {
        batch: [
          { type: 'track', ...message, messageId: 'dup-2' },
          { type: 'track', ...message, messageId: 'dup-2' },
        ],
      },
      trusted.key,
    );
    assert.equal(res.status, 200);
    const [second, firstOfBatch] = await log(trusted);
    assert.deepEqual([firstOfBatch.result, second.result], ['applied', 'ignored']);
    assert.equal((await t.api.get('/api/customers/acme/metrics?metric=once')).body.data[0].value, 2);
  });

  test('page, screen, alias, and identify without context.groupId: ignored', async () => {
    for (const route of ['page', 'screen', 'alias']) {
      const entry = await judged(trusted, route, { userId: 'u1', name: 'Home', previousId: 'x' });
      assert.deepEqual([entry.kind, entry.result], [route, 'ignored']);
    }
    const identify = await judged(trusted, 'identify', { userId: 'u1', traits: { email: 'u1@x.test' } });
    assert.equal(identify.result, 'ignored');
  });

  test('an event the source ignores: ignored', async () => {
    const quiet = await newSource('Quiet', { trusted: true, events: { 'Page Viewed': null } });
    const entry = await judged(quiet, 'track', { event: 'Page Viewed', context: { groupId: 'acme' } });
    assert.deepEqual([entry.result, entry.customer_id], ['ignored', 'acme']);
    assert.match(entry.reason, /^event_ignored: /);
  });
});

describe('what messages change', () => {
  test('an untrusted group sets metadata on an existing customer, audited as the source', async () => {
    const res = await send(
      'group',
      { groupId: 'acme', traits: { plan: 'enterprise', seats: 40 } },
      untrusted.key,
    );
    assert.equal(res.status, 200, res.raw);
    const acme = (await t.api.get('/api/customers/acme')).body;
    assert.equal(acme.name, 'Acme');
    assert.deepEqual(acme.metadata, { plan: 'enterprise', seats: 40 });
    const audit = (await t.api.get('/api/audit-log?limit=5')).body.data[0];
    assert.deepEqual(audit.actor, { type: 'source', id: untrusted.id, label: 'Browser' });
    assert.deepEqual([audit.action, audit.object_id], ['customer.updated', 'acme']);
    const events = (await t.api.get('/api/events?limit=1')).body.data;
    assert.equal(events[0].type, 'customer.updated');
  });

  test('a renamed event counts into its metric; a day holds one point with its count', async () => {
    const renamed = await newSource('Renamed', { trusted: true, events: { 'Report Exported': 'reports' } });
    const day = '2026-01-01';
    const now = Date.now();
    const at = new Date(now - 2 * 86_400_000);
    const start = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
    const batch = [1, 2, 3].map((i) => ({
      type: 'track',
      event: 'Report Exported',
      context: { groupId: 'acme' },
      timestamp: new Date(start + i * 3_600_000).toISOString(),
    }));
    assert.ok(day);
    assert.equal((await send('batch', { batch }, renamed.key)).status, 200);
    assert.equal((await send('batch', { batch: batch.slice(0, 1) }, renamed.key)).status, 200);
    const points = (await t.api.get('/api/customers/acme/metrics?metric=reports')).body.data;
    assert.deepEqual(points, [{ metric: 'reports', value: 4, at: new Date(start).toISOString() }]);
  });

  test('an identify with context.groupId links its user, whose later tracks count for that customer', async () => {
    assert.equal(
      (await send('identify', { userId: 'u_linked', context: { groupId: 'acme' } }, trusted.key)).status,
      200,
    );
    assert.equal((await log(trusted))[0].result, 'applied');
    assert.equal(
      (await send('track', { userId: 'u_linked', event: 'Linked Event' }, trusted.key)).status,
      200,
    );
    const entry = (await log(trusted))[0];
    assert.deepEqual([entry.result, entry.customer_id], ['applied', 'acme']);
    const points = (await t.api.get('/api/customers/acme/metrics?metric=linked_event')).body.data;
    assert.equal(points[0].value, 1);
  });
});

describe('requests side by side (a source is not locked: message ids are claimed, customers locked in one order)', () => {
  /** `n` items in an order of their own for request `r`: some forwards, some backwards, some rotated. */
  const ordered = <T>(items: T[], r: number): T[] => {
    const turned = [...items.slice(r % items.length), ...items.slice(0, r % items.length)];
    return r % 2 === 0 ? turned : turned.reverse();
  };
  const total = async (ids: string[], metric: string) => {
    let sum = 0;
    for (const id of ids) {
      const points = (await t.api.get(`/api/customers/${id}/metrics?metric=${metric}&limit=100`)).body.data;
      sum += points.reduce((n: number, p: { value: number }) => n + p.value, 0);
    }
    return sum;
  };
  const customers = ['par_a', 'par_b', 'par_c', 'par_d', 'par_e'];

  before(async () => {
    const batch = customers.map((id) => ({
      type: 'group',
      groupId: id,
      traits: { name: id, email: `ops@${id}.test` },
    }));
    assert.equal((await send('batch', { batch }, trusted.key)).status, 200);
  });

  test('the same 20 messages in 10 requests at once: each applied exactly once, the rest duplicates', async () => {
    const s = await newSource('Burst', { trusted: true });
    const messages = Array.from({ length: 20 }, (_, i) => ({
      type: 'track',
      messageId: `burst-${i}`,
      event: 'Burst',
      context: { groupId: customers[i % customers.length] },
    }));
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, r) => send('batch', { batch: ordered(messages, r) }, s.key)),
    );
    for (const res of answers) assert.equal(res.status, 200, res.raw);
    assert.equal(await total(customers, 'burst'), 20);
    const counted = await stats(s);
    assert.deepEqual([counted.received, counted.applied, counted.ignored], [200, 20, 180]);
  });

  test('groups and tracks over the same customers in opposite orders from 8 requests: all 200, counts exact', async () => {
    const s = await newSource('Crossing', { trusted: true });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, r) =>
        send(
          'batch',
          {
            batch: ordered(customers, r).flatMap((id) => [
              { type: 'group', groupId: id, traits: { crossing: r } },
              { type: 'track', event: 'Crossing', context: { groupId: id } },
            ]),
          },
          s.key,
        ),
      ),
    );
    for (const res of answers) assert.equal(res.status, 200, res.raw);
    assert.equal(await total(customers, 'crossing'), 8 * customers.length);
    const counted = await stats(s);
    assert.deepEqual([counted.received, counted.applied], [80, 80]);
    for (const id of customers) {
      const { metadata } = (await t.api.get(`/api/customers/${id}`)).body;
      assert.ok(Number.isInteger(metadata.crossing) && metadata.crossing >= 0 && metadata.crossing < 8);
    }
  });

  test('a refused message does not keep its id: sent again once its customer exists, it applies once', async () => {
    const s = await newSource('Retry', { trusted: true });
    const message = { event: 'Retried', context: { groupId: 'par_later' }, messageId: 'retry-1' };
    assert.equal((await send('track', message, s.key)).status, 200);
    assert.match((await log(s))[0].reason, /^customer_not_found: /);
    const made = await send('group', { groupId: 'par_later', traits: { email: 'ops@later.test' } }, s.key);
    assert.equal(made.status, 200, made.raw);
    assert.equal((await send('track', message, s.key)).status, 200);
    assert.equal((await log(s))[0].result, 'applied');
    assert.equal((await send('track', message, s.key)).status, 200);
    assert.match((await log(s))[0].reason, /^duplicate: /);
    assert.equal(await total(['par_later'], 'retried'), 1);
  });
});
