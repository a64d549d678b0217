// The pure parts of webhook delivery (docs/webhooks.md): when to retry, which URLs and addresses a
// webhook may reach, and how deliveries are signed — checked against independent
// implementations (node:crypto, the `standardwebhooks` library).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { newId } from '../../src/domain/ids.ts';
import { standardSignature, verifyVitalsSignature, vitalsSignature } from '../../src/domain/signing.ts';
import {
  jittered,
  MAX_RETRY_AFTER_MS,
  nextAttemptAt,
  parseRetryAfter,
  type RetryPolicy,
} from '../../src/webhooks/backoff.ts';
import { addressRefusal, MAX_URL_LENGTH, urlRefusal } from '../../src/webhooks/url-guard.ts';

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);
const DEFAULT: RetryPolicy = { backoffMs: [1000, 5000, 25_000], maxRetries: 3 };

describe('backoff', () => {
  test('retries follow the schedule, one entry per retry (no jitter at random = 0.5)', () => {
    assert.equal(nextAttemptAt(DEFAULT, 1, NOW, 0.5), NOW + 1000);
    assert.equal(nextAttemptAt(DEFAULT, 2, NOW, 0.5), NOW + 5000);
    assert.equal(nextAttemptAt(DEFAULT, 3, NOW, 0.5), NOW + 25_000);
  });

  test('after the last retry there is no next attempt', () => {
    assert.equal(nextAttemptAt(DEFAULT, 4, NOW, 0.5), null);
    assert.equal(nextAttemptAt(DEFAULT, 4, NOW, 0.5, 60_000), null, 'not even with a Retry-After');
    assert.equal(nextAttemptAt({ backoffMs: [1000], maxRetries: 0 }, 1, NOW, 0.5), null);
  });

  test('with more retries than schedule entries the last delay repeats', () => {
    const policy: RetryPolicy = { backoffMs: [100, 200], maxRetries: 5 };
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map((n) => nextAttemptAt(policy, n, NOW, 0.5)),
      [NOW + 100, NOW + 200, NOW + 200, NOW + 200, NOW + 200, null],
    );
  });

  test('jitter stays within ±10% of the delay and spans that range', () => {
    assert.equal(jittered(1000, 0), 900);
    assert.equal(jittered(1000, 0.5), 1000);
    assert.equal(jittered(1000, 1), 1100);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 86_400_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (ms, r) => {
          const j = jittered(ms, r);
          return Number.isInteger(j) && j >= Math.floor(ms * 0.9) && j <= Math.ceil(ms * 1.1);
        },
      ),
    );
    for (const attempt of [1, 2, 3]) {
      const base = DEFAULT.backoffMs[attempt - 1] as number;
      const low = nextAttemptAt(DEFAULT, attempt, NOW, 0) as number;
      const high = nextAttemptAt(DEFAULT, attempt, NOW, 0.999_999) as number;
      assert.equal(low - NOW, Math.round(base * 0.9));
      assert.equal(high - NOW, Math.round(base * 1.1));
    }
  });

  test('Retry-After in seconds', () => {
    assert.equal(parseRetryAfter('120', NOW), 120_000);
    assert.equal(parseRetryAfter(' 7 ', NOW), 7000);
    assert.equal(parseRetryAfter('0', NOW), 0);
  });

  test('Retry-After as an HTTP date; a date in the past means now', () => {
    assert.equal(parseRetryAfter(new Date(NOW + 30_000).toUTCString(), NOW), 30_000);
    assert.equal(parseRetryAfter('Sat, 21 Nov 2026 12:01:00 GMT', NOW), 60_000);
    assert.equal(parseRetryAfter(new Date(NOW - 30_000).toUTCString(), NOW), 0);
  });

  test('a missing or unreadable Retry-After is ignored', () => {
    assert.equal(parseRetryAfter(undefined, NOW), null);
    assert.equal(parseRetryAfter('', NOW), null);
    assert.equal(parseRetryAfter('soon', NOW), null);
  });

  test('a Retry-After longer than the backoff wins; a shorter one does not', () => {
    assert.equal(nextAttemptAt(DEFAULT, 1, NOW, 0.5, 30_000), NOW + 30_000);
    assert.equal(nextAttemptAt(DEFAULT, 1, NOW, 0.5, 200), NOW + 1000);
    assert.equal(nextAttemptAt(DEFAULT, 2, NOW, 1, 5400), NOW + 5500, 'jittered backoff still longer');
    assert.equal(nextAttemptAt(DEFAULT, 1, NOW, 0.5, null), NOW + 1000);
  });
});

describe('Retry-After is capped at 1 hour', () => {
  const HOUR = 3_600_000;
  /** The delay a 503 with this Retry-After header gets after attempt 1 (no jitter). */
  const delayFor = (header: string, attempt = 1) =>
    (nextAttemptAt(DEFAULT, attempt, NOW, 0.5, parseRetryAfter(header, NOW)) as number) - NOW;

  test('the cap is the documented hour (docs/webhooks.md)', () => {
    assert.equal(MAX_RETRY_AFTER_MS, HOUR);
  });

  test('a Retry-After of a year, or more than a number can hold, waits 1 hour', () => {
    assert.equal(parseRetryAfter('31536000', NOW), 31_536_000_000, 'parsed as given');
    for (const attempt of [1, 2, 3]) assert.equal(delayFor('31536000', attempt), HOUR, `attempt ${attempt}`);
    assert.equal(delayFor('86400'), HOUR);
    assert.equal(delayFor('99999999999999999999999'), HOUR);
  });

  test('an HTTP date far in the future waits 1 hour', () => {
    assert.equal(delayFor(new Date(NOW + 86_400_000).toUTCString()), HOUR);
    assert.equal(delayFor('Fri, 31 Dec 9999 23:59:59 GMT'), HOUR);
  });

  test('exactly at the cap and just under it, the Retry-After is honoured as given; just over, it is cut', () => {
    assert.equal(delayFor('3600'), HOUR);
    assert.equal(delayFor(new Date(NOW + HOUR).toUTCString()), HOUR);
    assert.equal(delayFor('3599'), HOUR - 1000);
    assert.equal(delayFor(new Date(NOW + HOUR - 1000).toUTCString()), HOUR - 1000);
    assert.equal(nextAttemptAt(DEFAULT, 1, NOW, 0.5, HOUR - 1), NOW + HOUR - 1);
    assert.equal(nextAttemptAt(DEFAULT, 1, NOW, 0.5, HOUR + 1), NOW + HOUR);
    assert.equal(delayFor('3601'), HOUR);
  });

  test('the cap applies to Retry-After only: a longer step of the schedule still applies', () => {
    const slow: RetryPolicy = { backoffMs: [2 * HOUR], maxRetries: 1 };
    assert.equal(nextAttemptAt(slow, 1, NOW, 0.5, 365 * 24 * HOUR), NOW + 2 * HOUR);
    assert.equal(nextAttemptAt(DEFAULT, 4, NOW, 0.5, 365 * 24 * HOUR), null, 'no retry left: still none');
  });

  test('any Retry-After: the delay is the longer of the jittered step and the Retry-After, at most 1 hour', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.oneof(fc.integer({ min: 0, max: 2 * HOUR }), fc.double({ min: 0, max: 1e300, noNaN: true })),
        (attempt, r, retryAfter) => {
          const at = nextAttemptAt(DEFAULT, attempt, NOW, r, retryAfter);
          const step = jittered(DEFAULT.backoffMs[attempt - 1] as number, r);
          return at === NOW + Math.max(step, Math.min(retryAfter, HOUR)) && at <= NOW + HOUR;
        },
      ),
    );
  });
});

describe('url guard: always', () => {
  const refused = (url: string, blockPrivate = false) => {
    const reason = urlRefusal(url, blockPrivate);
    assert.ok(reason, `${url} is refused`);
    return reason;
  };

  test('http and https URLs to public hosts are accepted', () => {
    for (const url of [
      'https://example.com/hooks/vitals',
      'http://example.com:8080/x?y=1',
      'https://93.184.215.14/',
      'https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/',
    ]) {
      assert.equal(urlRefusal(url, false), null, url);
      assert.equal(urlRefusal(url, true), null, url);
    }
  });

  test('only absolute http and https URLs', () => {
    for (const url of [
      'ftp://example.com/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'example.com/hook',
      '/hook',
      '',
    ]) {
      assert.match(refused(url), /absolute http or https URL/, url);
    }
  });

  test(`at most ${MAX_URL_LENGTH} characters`, () => {
    const base = 'https://example.com/';
    assert.equal(urlRefusal(base + 'a'.repeat(MAX_URL_LENGTH - base.length), false), null);
    assert.match(refused(base + 'a'.repeat(MAX_URL_LENGTH - base.length + 1)), /at most 2048 characters/);
  });

  test('no credentials in the URL', () => {
    for (const url of [
      'https://user:pass@example.com/',
      'https://user@example.com/',
      'https://:pass@example.com/',
    ]) {
      assert.match(refused(url), /credentials/, url);
    }
  });

  test('link-local, metadata and unspecified addresses are refused even without blockPrivate', () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://169.254.0.1/',
      'http://[fe80::1]/',
      'http://[febf::1]/',
      'http://0.0.0.0/',
      'http://0.0.0.0:3000/',
      'http://0/',
      'http://[::]/',
      'http://[::ffff:169.254.1.1]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[::ffff:0.0.0.0]/',
      'http://2852039166/',
      'http://0xa9fea9fe/',
      'http://0xa9.0xfe.0xa9.0xfe/',
      'http://0251.0376.0251.0376/',
    ]) {
      assert.match(refused(url), /link-local, metadata or unspecified/, url);
      assert.match(refused(url, true), /link-local, metadata or unspecified/, url);
    }
  });

  test('the reason is a readable sentence that names the normalised address', () => {
    assert.equal(
      urlRefusal('http://0xa9fea9fe/', false),
      'must not point at a link-local, metadata or unspecified address (169.254.169.254)',
    );
    assert.equal(
      urlRefusal('http://2130706433/', true),
      'must not point at a loopback or private address (127.0.0.1)',
    );
  });
});

describe('url guard: blockPrivate', () => {
  const privateUrls = [
    'http://127.0.0.1:3000/',
    'http://127.1.2.3/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://0x7f000001/',
    'http://017700000001/',
    'http://10.0.0.5/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.20/',
    'http://100.64.0.1/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:10.0.0.1]/',
    'http://[fc00::1]/',
    'http://[fd12:3456::1]/',
  ];

  test('loopback and private addresses are accepted by default (self-hosted receivers)', () => {
    for (const url of [...privateUrls, 'http://localhost:8080/hook'])
      assert.equal(urlRefusal(url, false), null, url);
  });

  test('loopback and private addresses, in any spelling, are refused with blockPrivate', () => {
    for (const url of privateUrls) {
      assert.match(urlRefusal(url, true) ?? '', /loopback or private address/, url);
    }
  });

  test('localhost and its subdomains are refused with blockPrivate', () => {
    for (const url of [
      'http://localhost/',
      'http://LOCALHOST:3000/',
      'http://localhost./',
      'http://api.localhost/',
    ]) {
      assert.equal(urlRefusal(url, true), 'must not point at localhost', url);
    }
  });

  test('addresses next to the private ranges stay allowed', () => {
    for (const url of [
      'http://172.32.0.1/',
      'http://172.15.255.255/',
      'http://192.169.0.1/',
      'http://11.0.0.1/',
    ]) {
      assert.equal(urlRefusal(url, true), null, url);
    }
  });

  test('resolved addresses are judged the same way at connect time', () => {
    assert.match(addressRefusal('169.254.169.254', false) ?? '', /link-local/);
    assert.match(addressRefusal('::ffff:169.254.169.254', false) ?? '', /link-local/);
    assert.match(addressRefusal('fe80::abcd', false) ?? '', /link-local/);
    assert.equal(addressRefusal('127.0.0.1', false), null);
    assert.match(addressRefusal('127.0.0.1', true) ?? '', /loopback or private/);
    assert.match(addressRefusal('::ffff:192.168.0.1', true) ?? '', /loopback or private/);
    assert.equal(addressRefusal('93.184.215.14', true), null);
    assert.equal(addressRefusal('example.com', true), null, 'names are resolved first, then judged');
  });
});

describe('signing', () => {
  const secret = newId.webhookSecret();
  const body = '{"type":"customer.updated","data":{"id":"cus_1","name":"Zoë – ünïcödé ✓"}}';

  test('secrets are whsec_ + base64 of 32 random bytes', () => {
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(secret.slice('whsec_'.length), 'base64').length, 32);
    assert.notEqual(newId.webhookSecret(), secret);
  });

  test('X-Vitals-Signature is the lowercase hex HMAC-SHA256 of the raw body, keyed with the secret string', () => {
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(Buffer.from(body, 'utf8'))
      .digest('hex');
    const signature = vitalsSignature(secret, body);
    assert.equal(signature, expected);
    assert.match(signature, /^[0-9a-f]{64}$/);
  });

  test('the hex signature changes with any byte of the body or the secret', () => {
    const signature = vitalsSignature(secret, body);
    assert.notEqual(vitalsSignature(secret, `${body} `), signature);
    assert.notEqual(vitalsSignature(newId.webhookSecret(), body), signature);
  });

  test('verifyVitalsSignature accepts exactly the right signature', () => {
    const signature = vitalsSignature(secret, body);
    assert.equal(verifyVitalsSignature(secret, body, signature), true);
    assert.equal(verifyVitalsSignature(secret, body, signature.toUpperCase()), false);
    assert.equal(verifyVitalsSignature(secret, body, signature.slice(1)), false);
    assert.equal(verifyVitalsSignature(secret, `${body}x`, signature), false);
    assert.equal(verifyVitalsSignature(secret, body, ''), false);
  });

  test('the Standard Webhooks signature verifies with the standardwebhooks library', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const msgId = newId.event();
    const signature = standardSignature(secret, msgId, timestamp, body);
    assert.match(signature, /^v1,[A-Za-z0-9+/]{43}=$/);
    const headers = {
      'webhook-id': msgId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
    };
    assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
    assert.equal(new Webhook(secret).sign(msgId, new Date(timestamp * 1000), body), signature);
  });

  test('the library rejects a Standard Webhooks signature over another body, id, timestamp or secret', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const msgId = newId.event();
    const headers = (sig: string, id = msgId, ts = timestamp) => ({
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': sig,
    });
    const signature = standardSignature(secret, msgId, timestamp, body);
    const wh = new Webhook(secret);
    assert.throws(() => wh.verify(`${body} `, headers(signature)));
    assert.throws(() => wh.verify(body, headers(signature, newId.event())));
    assert.throws(() => wh.verify(body, headers(signature, msgId, timestamp - 1)));
    assert.throws(() => new Webhook(newId.webhookSecret()).verify(body, headers(signature)));
    const stale = timestamp - 3600;
    assert.throws(
      () => wh.verify(body, headers(standardSignature(secret, msgId, stale, body), msgId, stale)),
      'a replay an hour later is refused',
    );
  });
});
