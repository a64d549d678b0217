// A refused write, asserted the same way by every suite that tries one: its status, the error's
// type (as docs/errors.md pairs it with the code), code and param, a message that names no SQL or
// source line, and proof that what `stored` reads did not change.
import assert from 'node:assert/strict';
import { ERRORS, type ErrorCode } from '../../src/domain/errors.ts';
import type { Response } from './app.ts';

export async function refusedWithoutChange(
  stored: () => Promise<unknown>,
  send: () => Promise<Response>,
  status: number,
  code: string,
  param: string | undefined,
): Promise<Response> {
  const before = await stored();
  const res = await send();
  assert.equal(res.status, status, res.raw);
  assert.equal(res.body.error.code, code, res.raw);
  assert.equal(res.body.error.type, ERRORS[code as ErrorCode]?.type, res.raw);
  assert.equal(res.body.error.param, param, res.raw);
  assert.ok(typeof res.body.error.message === 'string' && res.body.error.message.length > 0, res.raw);
  assert.doesNotMatch(res.body.error.message, /SELECT|sqlite|at .*\.ts:\d+/i);
  assert.deepEqual(await stored(), before, 'stored data must not change');
  return res;
}
