// A refused write, asserted the same way by every suite that tries one: its status, the error's
// code and param and a message, and proof that what `stored` reads did not change.
import assert from 'node:assert/strict';
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
  assert.equal(res.body.error.param, param, res.raw);
  assert.ok(typeof res.body.error.message === 'string' && res.body.error.message.length > 0, res.raw);
  assert.deepEqual(await stored(), before, 'stored data must not change');
  return res;
}
