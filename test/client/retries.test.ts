// The client's retries and failures (docs/client.md, "Idempotency keys and retries"), against a real local HTTP server
// that answers as scripted (test/helpers/receiver.ts) and counts what it gets. Waits between
// attempts are recorded, not slept.
import assert from 'node:assert/strict';
import { after, before, beforeEach, test } from 'node:test';
import { type ClientOptions, VitalsClient, VitalsError } from '../../src/client/index.ts';
import { type Script, TestReceiver } from '../helpers/receiver.ts';

let server: TestReceiver;
before(async () => {
  server = await TestReceiver.start();
});
after(() => server.close());

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req_test' };
const page = { status: 200, headers: JSON_TYPE, body: '{"customers":[],"has_more":false}' };
const failure = (status: number, code: string, headers: Record<string, string> = {}): Script => ({
  status,
  headers: { ...JSON_TYPE, ...headers },
  body: JSON.stringify({ error: { type: 'api_error', code, message: `${code} here` } }),
});

let waits: number[];
let requestsBefore: number;
beforeEach(() => {
  waits = [];
  requestsBefore = server.requests.length;
  server.always(page);
});
const requests = () => server.requests.slice(requestsBefore);

function client(opts: Partial<ClientOptions> = {}) {
  return new VitalsClient({
    url: `${server.url}/`,
    key: 'vk_test',
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...opts,
  });
}

test('a 429 is retried after its Retry-After: 0, and the answer that follows is returned', async () => {
  server.script(failure(429, 'rate_limited', { 'retry-after': '0' }));
  assert.deepEqual(await client().customers.listPage(), { customers: [], has_more: false });
  assert.equal(requests().length, 2);
  assert.deepEqual(waits, [0]);
});

test('Retry-After in seconds and as an HTTP date are both honoured', async () => {
  const inThreeSeconds = new Date(Date.now() + 3000).toUTCString();
  server.script(
    failure(429, 'rate_limited', { 'retry-after': '2' }),
    failure(503, 'service_unavailable', { 'retry-after': inThreeSeconds }),
  );
  await client().customers.listPage();
  assert.equal(waits[0], 2000);
  assert.ok(waits[1] !== undefined && waits[1] > 1000 && waits[1] <= 3000, String(waits[1]));
});

test('a 503 without Retry-After is retried with growing, jittered backoff', async () => {
  server.script(...Array(3).fill(failure(503, 'service_unavailable')));
  await client().customers.listPage();
  assert.equal(requests().length, 4);
  assert.equal(waits.length, 3);
  for (const [i, wait] of waits.entries()) {
    const full = 500 * 2 ** i;
    assert.ok(wait >= full / 2 && wait <= full, `wait ${i}: ${wait}`);
  }
});

test('after maxRetries the last error is thrown', async () => {
  server.script(...Array(3).fill(failure(503, 'service_unavailable')));
  await assert.rejects(client({ maxRetries: 2 }).customers.listPage(), {
    status: 503,
    code: 'service_unavailable',
    requestId: 'req_test',
  });
  assert.equal(requests().length, 3);
});

test('a Retry-After over a minute is not waited for: the error is thrown at once', async () => {
  server.script(failure(429, 'rate_limited', { 'retry-after': '3600' }));
  await assert.rejects(client().customers.listPage(), { status: 429 });
  assert.equal(requests().length, 1);
  assert.deepEqual(waits, []);
});

test('a 400 is not retried', async () => {
  server.script(failure(400, 'parameter_invalid'));
  await assert.rejects(client().customers.create({ customer_id: 'a', name: 'A', email: 'a@b.co' }), {
    status: 400,
  });
  assert.equal(requests().length, 1);
});

test('a POST retried after a 503 carries the same generated Idempotency-Key', async () => {
  server.script(failure(503, 'service_unavailable'), failure(503, 'service_unavailable'));
  server.always({ status: 201, headers: JSON_TYPE, body: '{"id":"a"}' });
  await client().customers.create({ customer_id: 'a', name: 'A', email: 'a@b.co' });
  const keys = requests().map((r) => r.headers['idempotency-key']);
  assert.equal(keys.length, 3);
  assert.match(String(keys[0]), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.ok(keys.every((k) => k === keys[0]));
  // Another call is another request, with a key of its own.
  await client().customers.create({ customer_id: 'b', name: 'B', email: 'b@b.co' });
  assert.notEqual(requests()[3]?.headers['idempotency-key'], keys[0]);
});

test('requests carry the key, JSON and a given Idempotency-Key; a GET carries no Idempotency-Key', async () => {
  server.always({ status: 200, headers: JSON_TYPE, body: '{}' });
  await client().customers.update('a b', { name: 'A' }, { idempotencyKey: 'mine' });
  await client().customers.retrieve('a');
  const [patch, get] = requests();
  assert.equal(patch?.method, 'PATCH');
  assert.equal(patch?.path, '/api/customers/a%20b');
  assert.equal(patch?.headers.authorization, 'Bearer vk_test');
  assert.equal(patch?.headers['content-type'], 'application/json');
  assert.equal(patch?.headers['idempotency-key'], 'mine');
  assert.equal(patch?.body, '{"name":"A"}');
  assert.equal(get?.headers['idempotency-key'], undefined);
  assert.equal(get?.headers['content-type'], undefined);
});

test('a 409 idempotency_request_in_progress is retried: the first attempt is still running', async () => {
  server.script(failure(409, 'idempotency_request_in_progress'));
  server.always({ status: 200, headers: JSON_TYPE, body: '{"id":"whk_1"}' });
  await client().webhooks.rotateSecret('whk_1');
  assert.equal(requests().length, 2);
});

test('a dropped connection is retried for a GET and for a POST, which always has a key', async () => {
  server.script('reset');
  await client().customers.listPage();
  assert.equal(requests().length, 2);
  server.script('reset');
  server.always({ status: 200, headers: JSON_TYPE, body: '{}' });
  await client().webhooks.test('whk_1');
  assert.equal(requests().length, 4);
});

test('a dropped connection is not retried for a PATCH or a DELETE: Vitals ignores their keys', async () => {
  for (const call of [
    (c: VitalsClient) => c.customers.update('a', { name: 'A' }, { idempotencyKey: 'k' }),
    (c: VitalsClient) => c.customers.delete('a'),
  ]) {
    const before = requests().length;
    server.script('reset');
    const err = await call(client()).catch((e: unknown) => e);
    assert.ok(err instanceof VitalsError);
    assert.equal(err.status, 0);
    assert.equal(err.type, 'connection_error');
    assert.equal(err.code, 'connection_error');
    assert.ok(err.cause instanceof Error);
    assert.equal(requests().length, before + 1);
  }
});

test('nobody listening: status 0 connection_error after the retries', async () => {
  const closed = await TestReceiver.start();
  const url = closed.url;
  await closed.close();
  const err = await client({ url })
    .customers.listPage()
    .catch((e: unknown) => e);
  assert.ok(err instanceof VitalsError);
  assert.equal(err.status, 0);
  assert.equal(err.code, 'connection_error');
  assert.match(err.message, /Could not reach Vitals at http:\/\/127\.0\.0\.1:\d+\/api\/customers/);
  assert.equal(waits.length, 3);
});

test('an attempt that takes longer than timeoutMs is a timeout, retried only when safe', async () => {
  server.script('hang', 'hang');
  const err = await client({ timeoutMs: 50, maxRetries: 1 })
    .customers.listPage()
    .catch((e: unknown) => e);
  assert.ok(err instanceof VitalsError);
  assert.equal(err.status, 0);
  assert.equal(err.code, 'timeout');
  assert.equal(requests().length, 2);
  server.script('hang');
  await assert.rejects(client({ timeoutMs: 50 }).settings.updateThresholds({ healthy: 0.8 }), {
    code: 'timeout',
  });
  assert.equal(requests().length, 3);
});

test('an error answer that is not JSON is still a VitalsError, saying what came', async () => {
  server.script({ status: 502, headers: { 'content-type': 'text/html' }, body: '<h1>Bad Gateway</h1>' });
  const err = await client()
    .customers.listPage()
    .catch((e: unknown) => e);
  assert.ok(err instanceof VitalsError);
  assert.equal(err.status, 502);
  assert.equal(err.type, 'api_error');
  assert.equal(err.code, 'unexpected_response');
  assert.match(err.message, /502 with text\/html.*<h1>Bad Gateway<\/h1>/);
  assert.equal(requests().length, 1);
});

test('a success that is not JSON is an unexpected_response too', async () => {
  server.script({ status: 200, headers: { 'content-type': 'text/plain' }, body: 'ok' });
  await assert.rejects(client().customers.listPage(), { status: 200, code: 'unexpected_response' });
});
