// The webhook POSTs' answers leave as JSON text their writes build where they run, to store for
// an Idempotency-Key (webhookWithSecretJson, deliveryJson in src/api/webhooks.ts). These prove it
// byte-equal to what Fastify's schema serializer makes of the same webhook or delivery with the
// documented schemas (WebhookWithSecret, Delivery): for any record, and through the real routes,
// where create, rotate-secret, test and retry answer exactly the bytes the list routes (which
// serialize with the schema) give for the same object, and a replay answers them again
// (docs/api.md, "Idempotency keys").
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import {
  type DeliveryFields,
  Delivery as DeliverySchema,
  deliveryJson,
  toDelivery,
  toWebhook,
  type WebhookFields,
  WebhookWithSecret,
  webhookWithSecretJson,
} from '../../src/api/webhooks.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { waitForDelivery } from '../helpers/deliveries.ts';
import { TestReceiver } from '../helpers/receiver.ts';
import { schemaSerializer } from '../helpers/serializer.ts';

/** Strings with what JSON escapes: quotes, backslashes, controls, lone surrogates, U+2028, astral characters. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
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
    maxLength: 20,
  }),
);
/** Milliseconds from 1970 to 9999, where ISO 8601 has four-digit years. */
const time = fc.integer({ min: 0, max: 253_402_300_799_999 });

type Secreted = { w: WebhookFields & { secret: string }; now: number };
const webhook: fc.Arbitrary<Secreted> = fc.record({
  w: fc.record({
    id: text,
    url: text,
    events: fc.array(text, { maxLength: 5 }),
    description: fc.option(text),
    format: fc.constantFrom('standard' as const, 'slack' as const),
    previousSecret: fc.option(text),
    previousSecretExpiresAt: fc.option(time),
    enabled: fc.boolean(),
    disabledReason: fc.option(text),
    createdAt: time,
    updatedAt: time,
    secret: text,
  }),
  now: time,
});
const delivery: fc.Arbitrary<DeliveryFields> = fc.record({
  id: text,
  webhookId: text,
  eventId: text,
  eventType: text,
  status: fc.constantFrom('pending', 'succeeded', 'failed'),
  attemptCount: fc.integer(),
  nextAttemptAt: fc.option(time),
  createdAt: time,
  updatedAt: time,
  attempts: fc.array(
    fc.record({
      attempt: fc.integer(),
      startedAt: time,
      durationMs: fc.integer(),
      statusCode: fc.option(fc.integer()),
      error: fc.option(text),
      responseBody: fc.option(text),
    }),
    { maxLength: 4 },
  ),
});

/** A webhook's answer with its secret, less the secret: the Webhook as the list shows it. */
const withoutSecret = (raw: string): string => {
  const at = raw.lastIndexOf(',"secret":');
  assert.ok(at > 0 && raw.endsWith('"}'), raw);
  return `${raw.slice(0, at)}}`;
};

describe('webhook and delivery JSON built by hand', () => {
  let webhookReference: Awaited<ReturnType<typeof schemaSerializer<Secreted>>>;
  let deliveryReference: Awaited<ReturnType<typeof schemaSerializer<DeliveryFields>>>;
  before(async () => {
    webhookReference = await schemaSerializer<Secreted>(
      { ...WebhookWithSecret, $id: 'WebhookWithSecret' },
      ({ w, now }) => ({ ...toWebhook(w, now), secret: w.secret }),
    );
    deliveryReference = await schemaSerializer(DeliverySchema, toDelivery);
  });
  after(async () => {
    await webhookReference.app.close();
    await deliveryReference.app.close();
  });

  test('a webhook with its secret equals the schema serializer byte for byte, for any record', async () => {
    await fc.assert(
      fc.asyncProperty(webhook, async (s) => {
        assert.equal(webhookWithSecretJson(s.w, s.now), await webhookReference.serialize(s));
      }),
      { numRuns: 300 },
    );
  });

  test('a delivery equals the schema serializer byte for byte, for any record', async () => {
    await fc.assert(
      fc.asyncProperty(delivery, async (d) => {
        assert.equal(deliveryJson(d), await deliveryReference.serialize(d));
      }),
      { numRuns: 300 },
    );
  });

  describe('through the routes', () => {
    let t: TestApp;
    let receiver: TestReceiver;
    before(async () => {
      // One attempt and no retry: a delivery fails at once and is finished, ready to be retried.
      t = await buildTestApp({ dispatcher: { maxRetries: 0 } });
      receiver = await TestReceiver.start();
      receiver.always({ status: 500, body: 'not "now"\n é 😀' });
    });
    after(async () => {
      await receiver.close();
      await t.close();
    });

    const post = (url: string, body: unknown, key: string) =>
      t.api.request('POST', url, body, { 'idempotency-key': key });

    test('create and rotate-secret answer the listed webhook with its secret; a replay, the same bytes', async () => {
      const body = { url: `${receiver.url}/in`, events: ['customer.created'], description: 'a "quoted"\n é' };
      const created = await post('/api/webhooks', body, 'json-create');
      assert.equal(created.status, 201, created.raw);
      const id = created.body.id as string;
      const listed = async () => (await t.api.get('/api/webhooks')).raw;
      assert.equal(await listed(), `{"webhooks":[${withoutSecret(created.raw)}]}`);
      const account = (await t.store.ensureAccount('default', 0)).id;
      const stored = await t.store.getWebhook(account, id);
      assert.ok(stored);
      assert.equal(created.raw, await webhookReference.serialize({ w: stored, now: Date.now() }));
      const replay = await post('/api/webhooks', body, 'json-create');
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.raw, created.raw);

      // With an overlap: previous_secret_expires_at is a time, not null.
      const rotate = { expire_previous_in: 3600 };
      const rotated = await post(`/api/webhooks/${id}/rotate-secret`, rotate, 'json-rotate');
      assert.equal(rotated.status, 200, rotated.raw);
      assert.notEqual(rotated.body.secret, created.body.secret);
      assert.equal(typeof rotated.body.previous_secret_expires_at, 'string');
      assert.equal(await listed(), `{"webhooks":[${withoutSecret(rotated.raw)}]}`);
      const again = await post(`/api/webhooks/${id}/rotate-secret`, rotate, 'json-rotate');
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.raw, rotated.raw);
      assert.equal((await t.store.getWebhook(account, id))?.secret, rotated.body.secret, 'rotated once');
    });

    test('test and retry answer the listed delivery; a replay, the same bytes', async () => {
      const hook = await t.api.post('/api/webhooks', {
        url: `${receiver.url}/d`,
        events: ['customer.created'],
      });
      assert.equal(hook.status, 201, hook.raw);
      const id = hook.body.id as string;
      const sent = await post(`/api/webhooks/${id}/test`, undefined, 'json-test');
      assert.equal(sent.status, 200, sent.raw);
      assert.equal((await post(`/api/webhooks/${id}/test`, undefined, 'json-test')).raw, sent.raw);
      await waitForDelivery(t.api, id, (d) => d.id === sent.body.id && d.status === 'failed');
      // Nothing sends from here on: what the routes answer stays what is stored.
      await t.dispatcher?.stop();
      const account = (await t.store.ensureAccount('default', 0)).id;
      const listed = async () => (await t.api.get(`/api/webhooks/${id}/deliveries`)).raw;
      const [failed] = (await t.store.listDeliveries(account, id, { limit: 10 })).data;
      assert.ok(failed && failed.attempts.length === 1, JSON.stringify(failed));
      assert.equal(deliveryJson(failed), await deliveryReference.serialize(failed));
      assert.equal(await listed(), `{"data":[${deliveryJson(failed)}],"has_more":false}`);

      const retried = await post(
        `/api/webhooks/${id}/deliveries/${sent.body.id}/retry`,
        undefined,
        'json-retry',
      );
      assert.equal(retried.status, 200, retried.raw);
      assert.equal(retried.body.status, 'pending');
      assert.equal(await listed(), `{"data":[${retried.raw}],"has_more":false}`);
      const again = await post(
        `/api/webhooks/${id}/deliveries/${sent.body.id}/retry`,
        undefined,
        'json-retry',
      );
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.raw, retried.raw);

      // A test event while nothing sends stays as it was answered.
      const pending = await post(`/api/webhooks/${id}/test`, undefined, 'json-test-2');
      assert.equal(pending.status, 200, pending.raw);
      assert.equal(await listed(), `{"data":[${pending.raw},${retried.raw}],"has_more":false}`);
    });
  });
});
