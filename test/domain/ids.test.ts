// Random tokens from the id module's pool (session ids, one-time links): the right size and
// alphabet, never the same twice, every character of the alphabet in use, and the key hash as
// the stored keys were hashed.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { hashApiKey, randomToken } from '../../src/domain/ids.ts';
import { hashToken, newToken } from '../../src/domain/people.ts';

test('a token of 32 pooled bytes is 43 base64url characters; 5,000 are all different and use the whole alphabet', () => {
  const tokens = Array.from({ length: 5000 }, newToken);
  for (const t of tokens) assert.match(t, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(new Set(tokens).size, tokens.length);
  assert.equal(new Set(tokens.join('')).size, 64);
  assert.equal(Buffer.from(randomToken(7), 'base64url').length, 7);
});

test('keys and tokens hash as SHA-256 hex, as they always were stored', () => {
  const key = 'vk_0123456789abcdefghijABCDEFGHIJ01';
  assert.equal(hashApiKey(key), createHash('sha256').update(key).digest('hex'));
  assert.equal(hashToken('abc'), createHash('sha256').update('abc').digest('hex'));
});
