// Round trips on valid data: what a create sends is what every read returns (null metadata
// values dropped), and a PATCH merges metadata by the law of docs/api.md, written out again here.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { buildTestApp, type Client, type TestApp } from '../helpers/app.ts';
import { params } from './rules.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Metadata = Record<string, Json>;

const codePoints = (s: string) => [...s].length;
const utf8 = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
/** What JSON makes of a value on the way (-0 becomes 0). */
const viaJson = <T>(v: T): T => JSON.parse(JSON.stringify(v));

// Generators that follow the documented rules, not the server's regular expressions.
// \p{Cc} is U+0000-U+001F and U+007F-U+009F.
const FORBIDDEN_IN_ID = /[\s\p{Cc}/?#]/gu;
const idPart = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }),
  fc.constantFrom(
    '%2F',
    'a.b',
    '...',
    '%',
    '+',
    '&=',
    '~',
    "'",
    '"',
    '\\',
    '😀'.repeat(240),
    'é'.repeat(240),
  ),
);
/** Anything the rules allow after a prefix; `unique` makes it a new id for every run. */
const customerId = idPart.map((s) => s.replace(FORBIDDEN_IN_ID, '')).filter((s) => s.length > 0);
let serial = 0;
const unique = (s: string) => [...`r${serial++}_${s}`].slice(0, 255).join('');

const name = fc
  .oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 80 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 80 }),
    fc.constant('N'.repeat(512)),
    fc.constant('😀'.repeat(512)),
  )
  .filter((s) => /\S/u.test(s) && codePoints(s) <= 512);

const emailChar = (extra: RegExp) =>
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).filter((s) => !extra.test(s));
const NOT_LOCAL = /[@\s\p{Cc}]/u;
const NOT_LABEL = /[@.\s\p{Cc}]/u;
const email = fc
  .tuple(emailChar(NOT_LOCAL), fc.array(emailChar(NOT_LABEL), { minLength: 2, maxLength: 4 }))
  .map(([local, labels]) => `${local}@${labels.join('.')}`)
  .filter((e) => codePoints(e) <= 320);

const metadataKey = fc
  .oneof(
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
    fc.constantFrom(
      'plan',
      'seats',
      'owner',
      'region',
      'constructor',
      'prototype',
      'toString',
      'k'.repeat(64),
    ),
  )
  .filter((k) => k !== '__proto__' && codePoints(k) <= 64);
const metadataValue: fc.Arbitrary<Json> = fc.oneof(
  // A '__proto__' key anywhere in a body is refused (src/http/app.ts), so valid data has none.
  (fc.jsonValue({ maxDepth: 3, stringUnit: 'grapheme' }) as fc.Arbitrary<Json>).filter(
    (v) => !JSON.stringify(v).includes('"__proto__":'),
  ),
  fc.constantFrom<Json>(0, -0, 1e21, 5e-324, Number.MAX_SAFE_INTEGER, '', [], {}, true),
);
const bigValue = fc.integer({ min: 200, max: 9000 }).map((n) => 'x'.repeat(n));
/** Metadata with values or nulls: mostly small, sometimes near the 50 keys or 16 KiB limits. */
const metadataOf = (key: fc.Arbitrary<string>) =>
  fc.oneof(
    fc.dictionary(key, fc.option(metadataValue, { nil: null, freq: 4 }), { maxKeys: 50 }),
    fc.dictionary(key, fc.option(metadataValue, { nil: null, freq: 8 }), { minKeys: 35, maxKeys: 50 }),
    fc.dictionary(key, fc.option(fc.oneof(metadataValue, bigValue), { nil: null, freq: 4 }), { maxKeys: 6 }),
  );
/** Metadata as sent on create: null values allowed (they mean "no value"). */
const metadataInput = metadataOf(metadataKey).filter((m) => utf8(dropNulls(m)) <= 16 * 1024);

function dropNulls(m: Metadata): Metadata {
  return Object.fromEntries(Object.entries(m).filter(([, v]) => v !== null));
}

/** The merge law, independently: keys given as null go, other given keys are set, the rest stay. */
function merged(before: Metadata, patch: Metadata): Metadata {
  const out: Metadata = {};
  for (const [k, v] of Object.entries(before)) if (!Object.hasOwn(patch, k)) out[k] = v;
  for (const [k, v] of Object.entries(patch)) if (v !== null) out[k] = v;
  return out;
}

const sameKeysAndValues = (actual: unknown, expected: Metadata, what: string) => {
  assert.deepEqual(actual, viaJson(expected), what);
};

describe('round trips: customers', () => {
  let t: TestApp;
  let api: Client;
  before(async () => {
    t = await buildTestApp();
    api = t.api;
  });
  after(() => t.close());

  const path = (id: string) => `/api/customers/${encodeURIComponent(id)}`;

  test('create → get returns what was sent (metadata without its null values)', async () => {
    await fc.assert(
      fc.asyncProperty(customerId, name, email, fc.option(metadataInput), async (part, n, e, metadata) => {
        const id = unique(part);
        const body =
          metadata === null
            ? { customer_id: id, name: n, email: e }
            : { customer_id: id, name: n, email: e, metadata };
        const created = await api.post('/api/customers', body);
        assert.equal(created.status, 201, created.raw);
        assert.equal(created.body.id, id);
        assert.equal(created.body.name, n);
        assert.equal(created.body.email, e);
        sameKeysAndValues(created.body.metadata, dropNulls(metadata ?? {}), 'metadata in the 201');
        assert.equal(created.body.created_at, created.body.updated_at);

        const read = await api.get(path(id));
        assert.equal(read.status, 200, read.raw);
        assert.deepEqual(read.body, created.body, 'GET returns what the create answered');

        const events = await api.get('/api/events?type=customer.created&limit=1');
        assert.deepEqual(
          events.body.data[0].data,
          created.body,
          'the customer.created event carries the same object',
        );
      }),
      params(40),
    );
  });

  test('every id a create accepts can be read, changed and deleted through its URL', async () => {
    // URL parsers resolve '.' and '..' segments (%2e too) before the request is sent.
    const dotty = fc.oneof(
      fc.constantFrom('.', '..', '...', '%2e', '%2E%2E', '.%2e', '..a', 'a..', '~', '%', '%25'),
      fc.string({ unit: fc.constantFrom('.', '%', '2', 'e', 'E', 'a'), minLength: 1, maxLength: 4 }),
    );
    await fc.assert(
      fc.asyncProperty(dotty, async (id) => {
        const existing = await api.get(path(id));
        if (existing.status === 200) await api.delete(path(id));
        const created = await api.post('/api/customers', {
          customer_id: id,
          name: 'Dots',
          email: 'd@example.com',
        });
        if (created.status === 400) return; // refused at the door: fine
        assert.equal(created.status, 201, created.raw);
        const read = await api.get(path(id));
        assert.equal(read.status, 200, `GET ${path(id)}: ${read.raw}`);
        assert.deepEqual(read.body, created.body);
        assert.equal((await api.patch(path(id), { name: 'Dots 2' })).status, 200);
        assert.equal((await api.delete(path(id))).status, 200);
      }),
      params(30),
    );
  });

  test('PATCH merges metadata by the law (null deletes) and keeps every other field, or changes nothing', async () => {
    const keyPool = fc.constantFrom('plan', 'seats', 'owner', 'a', 'b', 'c', 'd', 'constructor', 'é', '😀');
    const patchMetadata = metadataOf(fc.oneof(keyPool, metadataKey));
    const update = fc
      .record({ name, email, metadata: patchMetadata }, { requiredKeys: [] })
      .filter((u) => Object.keys(u).length > 0);
    await fc.assert(
      fc.asyncProperty(customerId, metadataInput, update, async (part, initial, patch) => {
        const id = unique(part);
        const created = await api.post('/api/customers', {
          customer_id: id,
          name: 'Before',
          email: 'before@example.com',
          metadata: initial,
        });
        assert.equal(created.status, 201, created.raw);
        const before = dropNulls(initial);
        const expected = patch.metadata ? merged(before, patch.metadata) : before;
        const fits = Object.keys(expected).length <= 50 && utf8(expected) <= 16 * 1024;

        const res = await api.patch(path(id), patch);
        const read = await api.get(path(id));
        if (!fits) {
          assert.equal(res.status, 400, res.raw);
          assert.equal(res.body.error.code, 'parameter_invalid');
          assert.equal(res.body.error.param, 'metadata');
          assert.deepEqual(read.body, created.body, 'a refused PATCH changes nothing');
          return;
        }
        assert.equal(res.status, 200, res.raw);
        sameKeysAndValues(res.body.metadata, expected, 'merged metadata');
        assert.equal(res.body.name, patch.name ?? 'Before');
        assert.equal(res.body.email, patch.email ?? 'before@example.com');
        assert.equal(res.body.id, id);
        assert.equal(res.body.created_at, created.body.created_at);
        assert.ok(res.body.updated_at > created.body.updated_at, 'updated_at moves forward');
        assert.deepEqual(read.body, res.body, 'GET returns what the PATCH answered');
      }),
      params(40),
    );
  });
});
