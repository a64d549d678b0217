// A customer's source activity (docs/sources.md, "In the dashboard"): the last messages any source
// received about a customer, read from the sources' logs, and the last one that changed it. The
// messages are sent to the Segment intake as a library would (test/http/segment.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../../src/keys.ts';
import { buildTestApp, type Client, customerBody, type TestApp } from '../helpers/app.ts';

let t: TestApp;
after(() => t.close());

interface Source {
  id: string;
  key: string;
  name: string;
}

const newSource = async (api: Client, name: string, trusted: boolean): Promise<Source> => {
  const res = await api.post('/api/sources', { type: 'segment', name, trusted });
  assert.equal(res.status, 201, res.raw);
  return { id: res.body.id, key: res.body.write_key, name };
};

/** One batch to /v1/batch with the source's write key, answered 200 as Segment's API answers. */
async function send(source: Source, ...batch: Record<string, unknown>[]): Promise<void> {
  const res = await t.inject({
    method: 'POST',
    url: '/v1/batch',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${source.key}:`).toString('base64')}`,
    },
    payload: JSON.stringify({ batch }),
  });
  assert.equal(res.status, 200, res.raw);
}

const activity = async (customerId: string, api = t.api) => {
  const res = await api.get(`/api/customers/${encodeURIComponent(customerId)}/source-activity`);
  assert.equal(res.status, 200, res.raw);
  return res.body;
};

/** The source's log entries as the activity shows them (the log's own route is the reference). */
const logOf = async (source: Source) =>
  ((await t.api.get(`/api/sources/${source.id}/log?limit=100`)).body.data as Record<string, unknown>[]).map(
    (e) => ({
      id: e.id,
      source_id: source.id,
      source_name: source.name,
      kind: e.kind,
      result: e.result,
      reason: e.reason,
      received_at: e.received_at,
      customer_id: e.customer_id,
    }),
  );
const about = (customerId: string, entries: Awaited<ReturnType<typeof logOf>>) =>
  entries.filter((e) => e.customer_id === customerId).map(({ customer_id: _, ...rest }) => rest);

let backend: Source;
let browser: Source;
before(async () => {
  t = await buildTestApp();
  backend = await newSource(t.api, 'Backend', true);
  browser = await newSource(t.api, 'Browser', false);
  assert.equal((await t.api.post('/api/customers', customerBody('quiet'))).status, 201);
});

describe('a customer’s source activity', () => {
  test('a customer no source has named: nothing, and no last change', async () => {
    assert.deepEqual(await activity('quiet'), { data: [], last_applied: null });
  });

  test('the messages about it from every source, newest first, each with its source, result and reason', async () => {
    await send(
      backend,
      { type: 'group', groupId: 'acme', userId: 'u1', traits: { name: 'Acme', email: 'ops@acme.test' } },
      { type: 'track', userId: 'u1', event: 'Report Exported' },
      { type: 'group', groupId: 'initech', traits: { name: 'Initech', email: 'ops@initech.test' } },
    );
    // An untrusted key may not set a name: refused, and about acme all the same.
    await send(browser, { type: 'group', groupId: 'acme', traits: { name: 'Pwned' } });
    const got = await activity('acme');
    const expected = about('acme', [...(await logOf(browser)), ...(await logOf(backend))]);
    assert.deepEqual(
      got.data.map((e: Record<string, unknown>) => [e.source_name, e.kind, e.result]),
      [
        ['Browser', 'group', 'refused'],
        ['Backend', 'track', 'applied'],
        ['Backend', 'group', 'applied'],
      ],
    );
    assert.deepEqual(got.data, expected);
    assert.match(got.data[0].reason, /^not_trusted: /);
    assert.deepEqual(got.last_applied, expected[1], 'the last message that changed it: the track');
    assert.equal((await activity('initech')).data.length, 1);
  });

  test('the last 10 messages, and the last change even when it is older than them', async () => {
    const refused = Array.from({ length: 12 }, () => ({
      type: 'group',
      groupId: 'acme',
      traits: { arr: 1_000_000 },
    }));
    await send(browser, ...refused);
    const got = await activity('acme');
    assert.equal(got.data.length, 10);
    assert.ok(got.data.every((e: { result: string }) => e.result === 'refused'));
    assert.deepEqual(
      [got.last_applied.source_name, got.last_applied.kind, got.last_applied.result],
      ['Backend', 'track', 'applied'],
    );
  });

  test("a deleted source's messages go with its log", async () => {
    assert.equal((await t.api.delete(`/api/sources/${backend.id}`)).status, 200);
    const got = await activity('acme');
    assert.equal(got.last_applied, null);
    assert.ok(got.data.every((e: { source_name: string }) => e.source_name === 'Browser'));
    assert.deepEqual(await activity('initech'), { data: [], last_applied: null });
  });

  test("one account never sees another's: its own customer of the same id has only its own", async () => {
    const other = await t.newAccount('other');
    const theirs = await newSource(other, 'Their backend', true);
    await send(theirs, { type: 'group', groupId: 'acme', traits: { name: 'Acme', email: 'a@other.test' } });
    const mine = await activity('acme');
    assert.ok(mine.data.every((e: { source_id: string }) => e.source_id !== theirs.id));
    const seen = await activity('acme', other);
    assert.deepEqual(
      seen.data.map((e: Record<string, unknown>) => [e.source_name, e.result]),
      [['Their backend', 'applied']],
    );
    assert.equal(seen.last_applied.source_id, theirs.id);
  });

  test('an unknown customer, or one of another account only: 404 customer_not_found', async () => {
    for (const id of ['nobody', 'quiet%00x']) {
      const res = await t.api.get(`/api/customers/${id}/source-activity`);
      assert.equal(res.status, 404, res.raw);
      assert.equal(res.body.error.code, 'customer_not_found');
      assert.equal(res.body.error.param, undefined);
    }
    const other = await t.newAccount('another');
    const res = await other.get('/api/customers/quiet/source-activity');
    assert.equal(res.status, 404, res.raw);
    assert.equal(res.body.error.code, 'customer_not_found');
  });

  test('a read key reads it, as it reads the sources', async () => {
    const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
    assert.deepEqual(await activity('acme', t.as(`Bearer ${key}`)), await activity('acme'));
  });
});
