// Customers leave as JSON text built by hand (customerJson: the stored metadata text passes
// through unparsed). These properties prove it byte-equal to what Fastify's schema serializer
// makes of the same customer with the documented `Customer` schema, so the fast path cannot
// drift from the contract: for any record, and for any customer stored and read back by the
// real store (on the backend the HTTP tests run on). And equal to the frozen serializer the
// migration that filled SQLite's stored JSON column used: a new shape needs a new migration.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { Customer, customerJson, customerObject } from '../../src/api/customers.ts';
import { STORED_CUSTOMER_JSON } from '../../src/store/migration-steps.ts';
import type { CustomerRecord } from '../../src/store/store.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { schemaSerializer } from '../helpers/serializer.ts';

/** Strings with what JSON escapes: quotes, backslashes, controls, lone surrogates, U+2028, astral characters. */
const text = (minLength: number) =>
  fc.oneof(
    fc.string({ unit: 'binary', minLength, maxLength: 40 }),
    fc.string({
      unit: fc.constantFrom(
        '"',
        '\\',
        '\n',
        '\u0000',
        '\u001f',
        '\u007f',
        '\ud800',
        '\udfff',
        '\u2028',
        '😀',
        'é',
      ),
      minLength,
      maxLength: 20,
    }),
  );
const metadata = fc.dictionary(fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }), fc.jsonValue(), {
  maxKeys: 8,
});
/** Milliseconds from 1970 to 9999, where ISO 8601 has four-digit years. */
const time = fc.integer({ min: 0, max: 253_402_300_799_999 });

/** ARR in cents, up to 1e12 in the API's units; renewals at any instant the API takes. */
const cents = fc.oneof(
  fc.integer({ min: 0, max: 100_000_000_000_000 }),
  fc.constantFrom(0, 1, 10, 100, 1005),
);

const record = fc.record({
  id: text(1),
  name: text(1),
  email: text(0),
  owner: fc.option(text(0), { nil: null }),
  arrCents: fc.option(cents, { nil: null }),
  renewalAt: fc.option(time, { nil: null }),
  lifecycle: fc.constantFrom('active', 'churned'),
  parentId: fc.option(text(1), { nil: null }),
  metadata,
  createdAt: time,
  updatedAt: time,
}) as fc.Arbitrary<CustomerRecord>;

describe('customer JSON built by hand', () => {
  let reference: Awaited<ReturnType<typeof schemaSerializer<CustomerRecord>>>;
  let t: TestApp;
  before(async () => {
    reference = await schemaSerializer(Customer, customerObject);
    t = await buildTestApp();
  });
  after(async () => {
    await reference.app.close();
    await t.close();
  });

  test('equals the schema serializer byte for byte, for any customer record', async () => {
    await fc.assert(
      fc.asyncProperty(record, async (c) => {
        assert.equal(customerJson(c), await reference.serialize(c));
      }),
      { numRuns: 300 },
    );
  });

  test('equals what the migration that filled the stored JSON column made: else that column is stale', () => {
    fc.assert(
      fc.property(record, (c) => {
        const stored = STORED_CUSTOMER_JSON({ ...c, metadata: JSON.stringify(c.metadata) });
        assert.equal(
          customerJson(c),
          stored,
          'The customer JSON changed. Rows of customers.api_json (SQLite) written before hold the old text: ' +
            'add a migration that refills the column with a frozen copy of the new serializer in ' +
            'src/store/migration-steps.ts, and point STORED_CUSTOMER_JSON at it.',
        );
      }),
      { numRuns: 300 },
    );
  });

  test('equals it for customers stored and read back, their metadata text passed through', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(text(1), metadata, async (name, meta) => {
        const id = `json-${n++}`;
        const created = await t.api.post('/api/customers', {
          customer_id: id,
          name,
          email: 'a@b.co',
          metadata: meta,
        });
        // Names and metadata the API refuses (blank, NUL on PostgreSQL) say nothing about the serializer.
        assert.ok(created.status === 201 || created.status === 400, created.raw);
        fc.pre(created.status === 201);
        const stored = await t.store.getCustomer((await t.store.ensureAccount('default', 0)).id, id);
        assert.ok(stored);
        const read = await t.api.get(`/api/customers/${encodeURIComponent(id)}`);
        assert.equal(read.raw, customerJson(stored));
        assert.equal(read.raw, await reference.serialize(stored));
        assert.equal(created.raw, read.raw);
        // The list page carries the same bytes for it.
        const listed = await t.api.get(`/api/customers?limit=1&search=${encodeURIComponent(id)}`);
        assert.equal(listed.raw, `{"customers":[${read.raw}],"has_more":false}`);
      }),
      { numRuns: 60 },
    );
  });

  test('after an update, the list page carries the updated bytes, not those stored at creation', async () => {
    const body = { customer_id: 'upd-1', name: 'Before', email: 'a@b.co', metadata: { keep: 1, drop: 'x' } };
    assert.equal((await t.api.post('/api/customers', body)).status, 201);
    const patched = await t.api.patch('/api/customers/upd-1', {
      name: 'After "quoted"\n',
      metadata: { drop: null, added: [1, 'é'] },
    });
    assert.equal(patched.status, 200);
    assert.deepEqual(patched.body.metadata, { keep: 1, added: [1, 'é'] });
    const read = await t.api.get('/api/customers/upd-1');
    assert.equal(read.raw, patched.raw);
    const listed = await t.api.get('/api/customers?search=upd-1');
    assert.equal(listed.raw, `{"customers":[${patched.raw}],"has_more":false}`);
  });

  test("a list page is the customers' own JSON, in id order, and has_more exactly when more follow", async () => {
    const ids = Array.from({ length: 7 }, (_, i) => `page-${i}`);
    for (const id of ids) {
      const meta = { n: Number(id.slice(5)), s: 'é\n"', big: 1e21, neg: -0.5 };
      assert.equal(
        (await t.api.post('/api/customers', { customer_id: id, name: id, email: 'a@b.co', metadata: meta }))
          .status,
        201,
      );
    }
    const one = async (id: string) => (await t.api.get(`/api/customers/${id}`)).raw;
    const singles = await Promise.all(ids.map(one));
    for (const [limit, after, expected, more] of [
      [3, undefined, singles.slice(0, 3), true],
      [3, 'page-2', singles.slice(3, 6), true],
      [3, 'page-5', singles.slice(6), false],
      [7, undefined, singles, false],
      [6, undefined, singles.slice(0, 6), true],
      [3, 'page-6', [], false],
    ] as const) {
      const q = `search=page-&limit=${limit}${after ? `&starting_after=${after}` : ''}`;
      const res = await t.api.get(`/api/customers?${q}`);
      assert.equal(res.raw, `{"customers":[${expected.join(',')}],"has_more":${more}}`, q);
    }
  });
});
