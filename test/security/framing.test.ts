// Requests Node's HTTP parser refuses before any route sees them (docs/errors.md, "Malformed
// requests"): conflicting Transfer-Encoding and Content-Length, a bad chunk, headers over 16 KiB.
// Each answers the error envelope with an X-Request-Id and closes its connection; nothing is
// stored and the server goes on serving. Written byte for byte on a socket: no client library
// sends these.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ERRORS } from '../../src/domain/errors.ts';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';
import { type RawResponse, rawExchange, rawRequest } from '../helpers/raw-http.ts';

let t: TestApp;
let port = 0;
let key = '';

before(async () => {
  t = await buildTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  key = t.api.key;
  assert.equal((await t.api.post('/api/customers', customerBody('cus_kept'))).status, 201);
});
after(() => t.close());

const stored = async () => (await t.api.get('/api/customers?limit=100')).body;

/** A POST whose head is `head` (lines after the request line), then `rest` as sent. */
const post = (path: string, head: string[], rest: string) =>
  [`POST ${path} HTTP/1.1`, `host: 127.0.0.1:${port}`, `authorization: Bearer ${key}`, ...head]
    .join('\r\n')
    .concat('\r\n\r\n', rest);

const customer = JSON.stringify(customerBody('cus_framed'));
const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

function assertEnvelope(res: RawResponse, status: number, code: string): void {
  assert.equal(res.status, status, res.body);
  assert.match(res.headers['content-type'] ?? '', /^application\/json/);
  assert.equal(res.headers.connection, 'close');
  assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body));
  assert.match(res.headers['x-request-id'] ?? '', /^req_[0-9A-Za-z]{20}$/);
  const { error, ...rest } = JSON.parse(res.body);
  assert.deepEqual(rest, {});
  assert.deepEqual(Object.keys(error), ['type', 'code', 'message']);
  assert.equal(error.code, code);
  assert.equal(error.type, ERRORS[code as keyof typeof ERRORS].type);
  assert.ok(error.message.length > 0);
}

describe('malformed HTTP framing', () => {
  // Built when run: the port and the key are known only then.
  const cases: [string, () => string, RegExp][] = [
    [
      'both Transfer-Encoding and Content-Length',
      () =>
        post(
          '/api/customers',
          [
            'content-type: application/json',
            'transfer-encoding: chunked',
            `content-length: ${customer.length}`,
          ],
          `${chunk(customer)}0\r\n\r\n`,
        ),
      /Transfer-Encoding/,
    ],
    [
      'a chunk size that is not hexadecimal',
      () =>
        post(
          '/api/customers',
          ['content-type: application/json', 'transfer-encoding: chunked'],
          `zz\r\n${customer}\r\n0\r\n\r\n`,
        ),
      /chunk size/,
    ],
    [
      'a chunk longer than its size',
      () =>
        post(
          '/api/customers',
          ['content-type: application/json', 'transfer-encoding: chunked'],
          `5\r\n${customer}\r\n0\r\n\r\n`,
        ),
      /chunk/i,
    ],
    [
      'two different Content-Length headers',
      () =>
        post(
          '/api/customers',
          ['content-type: application/json', `content-length: ${customer.length}`, 'content-length: 2'],
          customer,
        ),
      /Content-Length/,
    ],
  ];
  for (const [what, request, reason] of cases) {
    test(`${what}: 400 invalid_request in the envelope, nothing stored`, async () => {
      const before = await stored();
      const res = await rawExchange(port, request());
      assertEnvelope(res, 400, 'invalid_request');
      assert.match(JSON.parse(res.body).error.message, reason);
      assert.deepEqual(await stored(), before);
    });
  }

  test('headers of 20 KB: 431 headers_too_large in the envelope, the limit named, nothing stored', async () => {
    const before = await stored();
    const res = await rawExchange(
      port,
      post(
        '/api/customers',
        [
          'content-type: application/json',
          `content-length: ${customer.length}`,
          `x-filler: ${'a'.repeat(20_000)}`,
        ],
        customer,
      ),
    );
    assertEnvelope(res, 431, 'headers_too_large');
    assert.match(JSON.parse(res.body).error.message, /16 KiB/);
    assert.deepEqual(await stored(), before);
  });

  test('headers too large on a path without a key (GET /healthz): 431 all the same', async () => {
    const res = await rawExchange(
      port,
      `GET /healthz HTTP/1.1\r\nhost: x\r\ncookie: ${'c'.repeat(20_000)}\r\n\r\n`,
    );
    assertEnvelope(res, 431, 'headers_too_large');
  });

  test('each refusal has a request id of its own, and the log line names it', async () => {
    const bad = post('/api/customers', ['transfer-encoding: chunked'], 'zz\r\n');
    const [a, b] = await Promise.all([rawExchange(port, bad), rawExchange(port, bad)]);
    assert.notEqual(a.headers['x-request-id'], b.headers['x-request-id']);
    for (const res of [a, b]) assert.ok(t.logs().includes(`"reqId":"${res.headers['x-request-id']}"`));
  });

  test('the server goes on serving, on new connections, after every kind of refusal', async () => {
    for (const [, request] of cases) await rawExchange(port, request());
    const ok = await rawRequest(port, 'GET', '/api/customers/cus_kept', { authorization: `Bearer ${key}` });
    assert.equal(ok.status, 200, ok.body);
    const created = await rawRequest(
      port,
      'POST',
      '/api/customers',
      { authorization: `Bearer ${key}` },
      JSON.stringify(customerBody('cus_after')),
    );
    assert.equal(created.status, 201, created.body);
    assert.equal((await t.api.get('/api/customers/cus_framed')).status, 404);
  });
});

describe('the OpenAPI document declares what the framing refusals answer', () => {
  test('every operation declares 400 and 431, each with X-Request-Id', () => {
    const doc = t.app.swagger() as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, any> }>>;
    };
    let operations = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const what = `${method.toUpperCase()} ${path}`;
        for (const status of ['400', '431']) {
          assert.ok(op.responses[status], `${what}: ${status}`);
          assert.ok(op.responses[status].headers?.['X-Request-Id'], `${what} ${status}: X-Request-Id`);
        }
        operations++;
      }
    }
    assert.ok(operations > 40, `${operations} operations`);
  });
});
