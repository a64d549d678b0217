// Health scores leave as JSON text built by hand (healthScoreJson: the stored factor text passes
// through, and the same text is stored as an Idempotency-Key's answer where the write runs).
// These properties prove it byte-equal to Fastify's schema serializer with the documented
// HealthScore schema: for any score record, and for any score written and read back through HTTP.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import {
  HealthScore,
  healthScoreJson,
  OverrideSchema,
  PortfolioEntry,
  type PortfolioEntryFields,
  portfolioPageJson,
  toHealthScore,
} from '../../src/api/health-scores.ts';
import type { ScoreRecord } from '../../src/domain/health.ts';
import { STATUSES } from '../../src/domain/scoring.ts';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';
import { schemaSerializer } from '../helpers/serializer.ts';

const factorName = fc.stringMatching(/^[a-z][a-z0-9_]{0,63}$/);
const unit = fc.double({ min: 0, max: 1, noNaN: true });
const factors = fc.dictionary(factorName, unit, { minKeys: 1, maxKeys: 8 });
const record = fc
  .record({
    customerId: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
    score: unit,
    status: fc.constantFrom(...STATUSES),
    factors,
    gatedBy: fc.array(factorName, { maxLength: 3 }),
    version: fc.integer({ min: 1, max: 1e6 }),
    updatedAt: fc.integer({ min: 0, max: 253_402_300_799_999 }),
    withText: fc.boolean(),
    computed: unit,
    override: fc.option(
      fc.record({
        score: unit,
        reason: fc.string({ unit: 'binary', minLength: 1, maxLength: 500 }),
        expiresAt: fc.integer({ min: 0, max: 253_402_300_799_999 }),
        setAt: fc.integer({ min: 0, max: 253_402_300_799_999 }),
        setBy: fc.string({ unit: 'binary', minLength: 1, maxLength: 80 }),
      }),
    ),
  })
  .map(
    ({ withText, ...r }): ScoreRecord => (withText ? { ...r, factorsJson: JSON.stringify(r.factors) } : r),
  );

describe('health score JSON built by hand', () => {
  let reference: Awaited<ReturnType<typeof schemaSerializer<ScoreRecord>>>;
  let t: TestApp;
  before(async () => {
    reference = await schemaSerializer(HealthScore, toHealthScore, [OverrideSchema]);
    t = await buildTestApp();
    assert.equal((await t.api.post('/api/customers', customerBody('scored'))).status, 201);
  });
  after(async () => {
    await reference.app.close();
    await t.close();
  });

  test('equals the schema serializer byte for byte, for any score record', async () => {
    await fc.assert(
      fc.asyncProperty(record, async (s) => {
        assert.equal(healthScoreJson(s), await reference.serialize(s));
      }),
      { numRuns: 300 },
    );
  });

  test('equals it for scores written and read back; a replayed answer is the same text', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(factors, async (f) => {
        const key = `score-json-${n++}`;
        const written = await t.api.request(
          'POST',
          '/api/customers/scored/health-score',
          { factors: f },
          {
            'idempotency-key': key,
          },
        );
        assert.equal(written.status, 200, written.raw);
        const read = await t.api.get('/api/customers/scored/health-score');
        const stored = await t.store.getScore((await t.store.ensureAccount('default', 0)).id, 'scored');
        assert.ok(stored);
        assert.equal(read.raw, written.raw);
        assert.equal(read.raw, await reference.serialize(stored));
        const replayed = await t.api.request(
          'POST',
          '/api/customers/scored/health-score',
          { factors: f },
          {
            'idempotency-key': key,
          },
        );
        assert.equal(replayed.headers['idempotent-replayed'], 'true');
        assert.equal(replayed.raw, written.raw);
      }),
      { numRuns: 40 },
    );
  });
});

describe("portfolio entries' JSON built by hand", () => {
  const entry = fc
    .record({
      score: record,
      name: fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
      owner: fc.option(fc.emailAddress()),
      arrCents: fc.option(fc.integer({ min: 0, max: 1e14 })),
      renewalAt: fc.option(fc.integer({ min: 0, max: 253_402_300_799_999 })),
      lifecycle: fc.constantFrom('active' as const, 'churned' as const),
      parentId: fc.option(fc.string({ unit: 'binary', minLength: 1, maxLength: 40 })),
      metadata: fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
    })
    .map(
      ({ score, metadata, ...book }): PortfolioEntryFields => ({
        // No rules, so no gate applies: the list computes gated_by from the account's rules.
        ...score,
        gatedBy: [],
        ...book,
        metadataJson: JSON.stringify(metadata),
      }),
    );
  let reference: Awaited<ReturnType<typeof schemaSerializer<PortfolioEntryFields>>>;
  before(async () => {
    reference = await schemaSerializer(
      PortfolioEntry,
      (e) => ({
        ...toHealthScore(e),
        name: e.name,
        owner: e.owner,
        arr: e.arrCents === null ? null : e.arrCents / 100,
        renewal_at: e.renewalAt === null ? null : new Date(e.renewalAt).toISOString(),
        lifecycle: e.lifecycle,
        parent_id: e.parentId,
        metadata: JSON.parse(e.metadataJson),
      }),
      [OverrideSchema],
    );
  });
  after(() => reference.app.close());

  test("equals the schema serializer byte for byte, the customer's book and metadata included", async () => {
    await fc.assert(
      fc.asyncProperty(entry, async (e) => {
        const page = portfolioPageJson([e], new Map(), false, null);
        const text = page.slice('{"data":['.length, page.lastIndexOf('],"has_more"'));
        assert.equal(text, await reference.serialize(e));
      }),
      { numRuns: 300 },
    );
  });
});
