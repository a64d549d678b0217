// Hostile requests for the property tests: methods, path ids, query strings and headers
// (content types, broken credentials, odd values), around the bodies of bodies.ts.
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { EVENT_TYPES } from '../../src/domain/events.ts';
import type { Response, TestApp } from '../helpers/app.ts';
import { anyString, jsonText } from './bodies.ts';

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

export function describeRequest(r: FuzzRequest): string {
  const body = r.body === undefined ? '(none)' : `${r.body.length} chars: ${r.body.slice(0, 200)}`;
  return `${r.method} ${r.url.slice(0, 300)} headers=${JSON.stringify(r.headers).slice(0, 300)} body=${body}`;
}

export async function send(t: TestApp, r: FuzzRequest): Promise<Response> {
  const opts: InjectOptions = { method: r.method as InjectOptions['method'], url: r.url, headers: r.headers };
  if (r.body !== undefined) opts.payload = r.body;
  return t.inject(opts);
}

export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json;charset=UTF-16',
  'APPLICATION/JSON',
  'Application/Json; Charset=UTF-8',
  'application/json;',
  'application/json, text/plain',
  'application/jsonx',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/vnd.api+json',
  'text/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'multipart/form-data',
  'application/octet-stream',
  '*/*',
  '',
  ' ',
  ';',
  'application/json; boundary=x; charset=utf-8; charset=latin1',
];

/** Header values a client can send (visible Latin-1 and tabs; no CR/LF, which no client sends). */
const headerValue = fc.oneof(
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: 300,
  }),
  fc.string({
    unit: fc.oneof(
      fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)),
      fc.constantFrom('\t', 'a', ' ', '"', ','),
    ),
    maxLength: 40,
  }),
  fc.constantFrom('', ' ', 'x'.repeat(8000), 'req_ok-1', '__proto__'),
);

/**
 * Headers: mostly the valid key and a JSON content type (so that bodies reach validation),
 * sometimes another content type, none, or a broken Authorization; plus odd extra headers.
 */
export function headersArb(key: string): fc.Arbitrary<Record<string, string>> {
  const auth = fc.oneof(
    { weight: 30, arbitrary: fc.constant(`Bearer ${key}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        `bearer  ${key}`,
        `Bearer ${key.slice(0, -1)}`,
        `Bearer ${key}x`,
        `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
        'Bearer vk_00000000000000000000000000000000',
        'Bearer',
        '',
      ),
    },
    { weight: 1, arbitrary: headerValue.map((v) => `Bearer ${v}`) },
  );
  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/json') },
    { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  const extra = fc.dictionary(
    fc.constantFrom(
      'idempotency-key',
      'x-request-id',
      'accept',
      'accept-encoding',
      'x-forwarded-for',
      'origin',
      'cookie',
      'x-http-method-override',
      'x-vitals-signature',
      'prefer',
    ),
    headerValue,
    { maxKeys: 3 },
  );
  return fc.tuple(auth, contentType, extra).map(([authorization, type, more]) => {
    const headers: Record<string, string> = { ...more };
    if (authorization !== undefined) headers.authorization = authorization;
    if (type !== undefined) headers['content-type'] = type;
    return headers;
  });
}

/** A string as a path segment or query value: percent-encoded UTF-8, or raw bytes that are not UTF-8. */
const encoded = fc.oneof(
  { weight: 4, arbitrary: anyString.map((s) => encodeURIComponent(s.toWellFormed())) },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ minLength: 1, maxLength: 12 })
      .map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '%00',
      '%ZZ',
      '%',
      '%E0%A4%A',
      '%ED%A0%80',
      '%C0%AE%C0%AE',
      '%2e%2e',
      '..',
      '.',
      '%2F',
      '%2f..%2f',
      '%5C',
      '__proto__',
      'constructor',
      'prototype',
      'hasOwnProperty',
      '%F0%9F%98%80',
      'a'.repeat(999),
      'a'.repeat(1001),
      'b'.repeat(5000),
      '*',
      'null',
      'undefined',
      '-1',
      '0',
    ),
  },
);

/**
 * An id in a path: an existing one (so that hostile bodies meet a real resource), now and then
 * one of another account's (which must stay out of reach), or any text.
 */
export function idArb(existing: () => string[], foreign: () => string[] = () => []): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.nat().map((i) => encodeURIComponent(pick(existing(), i))) },
    { weight: 1, arbitrary: fc.nat().map((i) => encodeURIComponent(pick(foreign(), i))) },
    { weight: 6, arbitrary: encoded },
  );
}

function pick(list: string[], i: number): string {
  return list.length === 0 ? 'none' : (list[i % list.length] as string);
}

/** A query string from the route's own parameter names and stray ones, with hostile values. */
export function queryArb(names: string[]): fc.Arbitrary<string> {
  const name = fc.oneof(
    { weight: 4, arbitrary: names.length > 0 ? fc.constantFrom(...names) : fc.constant('limit') },
    {
      weight: 1,
      arbitrary: fc.constantFrom('__proto__', 'constructor', 'a[b]', 'limit[]', 'x', '', 'LIMIT', '%00'),
    },
  );
  const value = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '1',
        '10',
        '100',
        '101',
        '0',
        '-1',
        '-0',
        '1.5',
        '1e1',
        '0x10',
        '+5',
        '%205',
        '99999999999999999999999',
        '9007199254740993',
        '2147483648',
        'NaN',
        'Infinity',
        '',
        'true',
        'healthy',
        'at_risk',
        'critical',
        'HEALTHY',
        'pending',
        'failed',
        'succeeded',
        ...EVENT_TYPES,
        'evt_',
        'WyJoZWFsdGh5IiwwLjUsImEiXQ',
        'WyJoZWFsdGh5IiwxZTMwOCwiXHUwMDAwIl0',
        'WyJoZWFsdGh5IiwiMC41IiwxXQ',
        'bnVsbA',
        '%%%',
      ),
    },
    { weight: 2, arbitrary: encoded },
    { weight: 1, arbitrary: jsonText.map((v) => encodeURIComponent(v.toWellFormed()).slice(0, 4000)) },
  );
  return fc
    .array(fc.tuple(name, fc.option(value, { nil: undefined })), { maxLength: 4 })
    .map((pairs) =>
      pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join('&')}`,
    );
}

/** The path's own method most of the time; now and then one it does not have. */
export function methodArb(method: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(method) },
    { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS', 'HEAD') },
  );
}
