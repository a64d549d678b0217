// Sources (docs/api.md, "Sources"): create, list, read, change, delete, the log; keys and
// tokens shown once and never replayed; every refusal leaves the sources as they were; one account
// never sees another's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type Client, type TestApp } from '../helpers/app.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

const sources = async (api: Client = t.api) => (await api.get('/api/sources')).body.data;
const STRIPE_SECRET = 'whsec_abcdefghijklmnopqrstuvwxyz012345';
const MAPPING = { customer_id: 'body.account.id', counts: '{"tickets": 1}' };

describe('creating sources', () => {
  test('segment: 201 with its write key once (sk_ and 32 letters or digits), trusted false unless said', async () => {
    const res = await t.api.post('/api/sources', { type: 'segment', name: 'Product events' });
    assert.equal(res.status, 201, res.raw);
    assert.match(res.body.id, /^src_/);
    assert.match(res.body.write_key, /^sk_[0-9A-Za-z]{32}$/);
    assert.equal(res.body.trusted, false);
    assert.deepEqual(res.body.events, {});
    assert.equal(res.body.enabled, true);
    assert.match(res.body.ingest_url, /^http:\/\/[^/]+\/v1\/batch$/);
    assert.deepEqual(res.body.stats, {
      received: 0,
      applied: 0,
      ignored: 0,
      refused: 0,
      last_received_at: null,
    });
    const read = await t.api.get(`/api/sources/${res.body.id}`);
    assert.equal(read.status, 200, read.raw);
    assert.equal(read.body.write_key, undefined, 'the key is never shown again');
    assert.equal(read.raw.includes(res.body.write_key), false);
  });

  test('stripe: the signing secret is never answered', async () => {
    const res = await t.api.post('/api/sources', {
      type: 'stripe',
      name: 'Billing',
      signing_secret: STRIPE_SECRET,
    });
    assert.equal(res.status, 201, res.raw);
    assert.match(res.body.ingest_url, new RegExp(`/ingest/stripe/${res.body.id}$`));
    assert.equal(res.raw.includes(STRIPE_SECRET), false);
    assert.equal(JSON.stringify(await sources()).includes(STRIPE_SECRET), false);
  });

  test('webhook without a signature: a token in its ingest URL, shown once', async () => {
    const res = await t.api.post('/api/sources', { type: 'webhook', name: 'Zendesk', mapping: MAPPING });
    assert.equal(res.status, 201, res.raw);
    assert.match(res.body.ingest_url, new RegExp(`/ingest/webhook/${res.body.id}/[0-9A-Za-z]{32}$`));
    assert.deepEqual(res.body.mapping, MAPPING);
    assert.equal(res.body.signature, null);
    const read = await t.api.get(`/api/sources/${res.body.id}`);
    assert.match(read.body.ingest_url, new RegExp(`/ingest/webhook/${res.body.id}/…$`));
  });

  test('webhook with a signature: a generated secret shown once, no token', async () => {
    const res = await t.api.post('/api/sources', {
      type: 'webhook',
      name: 'Intercom',
      mapping: MAPPING,
      signature: { header: 'X-Hub-Signature', encoding: 'hex', prefix: 'sha256=' },
    });
    assert.equal(res.status, 201, res.raw);
    assert.match(res.body.signature_secret, /^whsec_/);
    assert.deepEqual(res.body.signature, { header: 'X-Hub-Signature', encoding: 'hex', prefix: 'sha256=' });
    assert.match(res.body.ingest_url, new RegExp(`/ingest/webhook/${res.body.id}$`));
    const read = await t.api.get(`/api/sources/${res.body.id}`);
    assert.equal(read.raw.includes(res.body.signature_secret), false);
  });

  test('an Idempotency-Key replay answers the source without its key', async () => {
    const headers = { 'idempotency-key': 'create-segment-1' };
    const body = { type: 'segment', name: 'Replayed' };
    const first = await t.api.request('POST', '/api/sources', body, headers);
    assert.equal(first.status, 201, first.raw);
    const again = await t.api.request('POST', '/api/sources', body, headers);
    assert.equal(again.status, 201, again.raw);
    assert.equal(again.body.id, first.body.id);
    assert.equal(again.body.write_key, undefined);
    assert.equal((await sources()).filter((s: { name: string }) => s.name === 'Replayed').length, 1);
  });
});

describe('changing and deleting', () => {
  let id: string;
  before(async () => {
    id = (await t.api.post('/api/sources', { type: 'segment', name: 'To change' })).body.id;
  });

  test('PATCH renames, disables and sets a type setting; the stats stay', async () => {
    const res = await t.api.patch(`/api/sources/${id}`, {
      name: 'Changed',
      enabled: false,
      trusted: true,
      events: { 'Report Exported': 'reports', 'Page Viewed': null },
    });
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.name, 'Changed');
    assert.equal(res.body.enabled, false);
    assert.equal(res.body.trusted, true);
    assert.deepEqual(res.body.events, { 'Report Exported': 'reports', 'Page Viewed': null });
    assert.equal(res.body.write_key, undefined);
    assert.deepEqual((await t.api.get(`/api/sources/${id}`)).body, res.body);
  });

  test('a webhook turning to a signature loses its token; back to none, a new token', async () => {
    const made = await t.api.post('/api/sources', { type: 'webhook', name: 'Toggle', mapping: MAPPING });
    const signed = await t.api.patch(`/api/sources/${made.body.id}`, {
      signature: { header: 'X-Sig', encoding: 'base64', secret: 'a-secret-of-twenty-chars' },
    });
    assert.equal(signed.status, 200, signed.raw);
    assert.equal(signed.body.signature_secret, undefined, 'a given secret is not shown back');
    assert.match(signed.body.ingest_url, new RegExp(`/ingest/webhook/${made.body.id}$`));
    const unsigned = await t.api.patch(`/api/sources/${made.body.id}`, { signature: null });
    assert.match(unsigned.body.ingest_url, new RegExp(`/ingest/webhook/${made.body.id}/[0-9A-Za-z]{32}$`));
    assert.notEqual(unsigned.body.ingest_url, made.body.ingest_url);
  });

  test('DELETE removes it; then 404', async () => {
    const made = await t.api.post('/api/sources', { type: 'segment', name: 'Gone soon' });
    const res = await t.api.delete(`/api/sources/${made.body.id}`);
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, { id: made.body.id, deleted: true });
    const again = await t.api.get(`/api/sources/${made.body.id}`);
    assert.equal(again.status, 404);
    assert.equal(again.body.error.code, 'source_not_found');
  });

  test('the audit log names each change and its source, never its key', async () => {
    const made = await t.api.post('/api/sources', { type: 'segment', name: 'Audited' });
    await t.api.patch(`/api/sources/${made.body.id}`, { name: 'Audited again' });
    await t.api.delete(`/api/sources/${made.body.id}`);
    const res = await t.api.get('/api/audit-log?limit=3');
    assert.deepEqual(
      res.body.data.map((e: { action: string; object_id: string }) => [e.action, e.object_id]),
      [
        ['source.deleted', made.body.id],
        ['source.updated', made.body.id],
        ['source.created', made.body.id],
      ],
    );
    assert.equal(res.raw.includes(made.body.write_key), false);
  });

  test('the log of a new source is empty; an unknown source is 404', async () => {
    const res = await t.api.get(`/api/sources/${id}/log`);
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual(res.body, { data: [], has_more: false });
    assert.equal((await t.api.get('/api/sources/src_nope/log')).status, 404);
  });
});

describe('what POST and PATCH refuse, changing nothing', () => {
  const refused = async (
    method: 'POST' | 'PATCH',
    url: string,
    body: unknown,
    code: string,
    param?: string,
  ) => {
    const before = await sources();
    const res = await t.api.request(method, url, body);
    assert.equal(res.status, 400, res.raw);
    assert.equal(res.body.error.code, code, res.raw);
    assert.equal(res.body.error.param, param, res.raw);
    assert.deepEqual(await sources(), before);
  };
  const cases: [string, unknown, string, string | undefined][] = [
    ['no type', { name: 'x' }, 'parameter_missing', 'type'],
    ['an unknown type', { type: 'zendesk', name: 'x' }, 'parameter_invalid', 'type'],
    ['no name', { type: 'segment' }, 'parameter_missing', 'name'],
    ['an empty name', { type: 'segment', name: '' }, 'parameter_invalid', 'name'],
    ['a name over 100', { type: 'segment', name: 'x'.repeat(101) }, 'parameter_invalid', 'name'],
    ['stripe without its secret', { type: 'stripe', name: 'x' }, 'parameter_missing', 'signing_secret'],
    [
      'stripe with a malformed secret',
      { type: 'stripe', name: 'x', signing_secret: 'sk_live' },
      'parameter_invalid',
      'signing_secret',
    ],
    ['webhook without a mapping', { type: 'webhook', name: 'x' }, 'parameter_missing', 'mapping'],
    [
      'a mapping without customer_id',
      { type: 'webhook', name: 'x', mapping: { counts: '1' } },
      'parameter_missing',
      'mapping.customer_id',
    ],
    [
      'a mapping that does not parse',
      { type: 'webhook', name: 'x', mapping: { customer_id: 'body.(' } },
      'parameter_invalid',
      'mapping.customer_id',
    ],
    [
      'a metrics expression that does not parse',
      { type: 'webhook', name: 'x', mapping: { customer_id: 'body.id', metrics: '{"a": }' } },
      'parameter_invalid',
      'mapping.metrics',
    ],
    [
      'a setting of another type',
      { type: 'segment', name: 'x', mapping: MAPPING },
      'parameter_invalid',
      'mapping',
    ],
    [
      'trusted on stripe',
      { type: 'stripe', name: 'x', signing_secret: STRIPE_SECRET, trusted: true },
      'parameter_invalid',
      'trusted',
    ],
    [
      'an event renamed to a bad metric name',
      { type: 'segment', name: 'x', events: { Login: 'Bad Name' } },
      'parameter_invalid',
      'events.Login',
    ],
    ['an unknown field', { type: 'segment', name: 'x', colour: 'red' }, 'parameter_unknown', 'colour'],
  ];
  for (const [what, body, code, param] of cases) {
    test(`POST ${what}: 400 ${code}`, async () => {
      await refused('POST', '/api/sources', body, code, param);
    });
  }

  test('PATCH with nothing, a field of another type, or a bad mapping', async () => {
    const id = (await t.api.post('/api/sources', { type: 'segment', name: 'Patched badly' })).body.id;
    await refused('PATCH', `/api/sources/${id}`, {}, 'parameter_missing', undefined);
    await refused(
      'PATCH',
      `/api/sources/${id}`,
      { signing_secret: STRIPE_SECRET },
      'parameter_invalid',
      'signing_secret',
    );
    const hook = (await t.api.post('/api/sources', { type: 'webhook', name: 'Hook', mapping: MAPPING })).body
      .id;
    await refused(
      'PATCH',
      `/api/sources/${hook}`,
      { mapping: { customer_id: '$$$(' } },
      'parameter_invalid',
      'mapping.customer_id',
    );
  });

  test('the 21st source: 400, and a burst of creates never passes 20', async () => {
    const other = await t.newAccount('many');
    const made = await Promise.all(
      Array.from({ length: 30 }, (_, i) => other.post('/api/sources', { type: 'segment', name: `s${i}` })),
    );
    assert.equal(made.filter((r) => r.status === 201).length, 20);
    for (const r of made.filter((r) => r.status !== 201)) {
      assert.equal(r.status, 400, r.raw);
      assert.equal(r.body.error.code, 'parameter_invalid');
      assert.match(r.body.error.message, /at most 20 sources/);
    }
    assert.equal((await sources(other)).length, 20);
  });
});

describe('one account never sees another’s', () => {
  test('every route answers 404 source_not_found to the other account, and it lists none', async () => {
    const id = (await t.api.post('/api/sources', { type: 'segment', name: 'Mine' })).body.id;
    const other = await t.newAccount('other');
    assert.deepEqual(await sources(other), []);
    for (const [method, url, body] of [
      ['GET', `/api/sources/${id}`, undefined],
      ['PATCH', `/api/sources/${id}`, { name: 'Theirs' }],
      ['DELETE', `/api/sources/${id}`, undefined],
      ['GET', `/api/sources/${id}/log`, undefined],
    ] as const) {
      const res = await other.request(method, url, body);
      assert.equal(res.status, 404, `${method} ${url}: ${res.raw}`);
      assert.equal(res.body.error.code, 'source_not_found');
    }
    assert.equal((await t.api.get(`/api/sources/${id}`)).body.name, 'Mine');
  });
});
