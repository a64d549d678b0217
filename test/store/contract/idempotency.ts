import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { transaction } from '../../helpers/transaction.ts';
import { type ContractContext, T0 } from './context.ts';

/** Claims made at T0 + 1000 forget what was created before T0 and retake work begun before T0 + 500. */
const WINDOW = { expiresBefore: T0, staleBefore: T0 + 500 };

export function idempotencyContract(c: ContractContext): void {
  describe('idempotency keys', () => {
    test('a new key is claimed; the same request again is in progress until completed, then replayed', async () => {
      const store = c.store();
      const a = await c.account();
      assert.deepEqual(await store.claimIdempotencyKey(a, 'k1', 'fp', T0 + 900, WINDOW), { state: 'new' });
      assert.deepEqual(await store.claimIdempotencyKey(a, 'k1', 'fp', T0 + 1000, WINDOW), {
        state: 'in_progress',
      });
      await store.completeIdempotencyKey(a, 'k1', 201, '{"id":"x"}');
      assert.deepEqual(await store.claimIdempotencyKey(a, 'k1', 'fp', T0 + 1000, WINDOW), {
        state: 'replay',
        status: 201,
        body: '{"id":"x"}',
      });
      assert.deepEqual(await store.claimIdempotencyKey(a, 'k1', 'other', T0 + 1000, WINDOW), {
        state: 'mismatch',
      });
    });

    test('a key is per account', async () => {
      const store = c.store();
      const [a, b] = [await c.account(), await c.account()];
      assert.equal((await store.claimIdempotencyKey(a, 'same', 'fp', T0 + 900, WINDOW)).state, 'new');
      assert.equal((await store.claimIdempotencyKey(b, 'same', 'other', T0 + 900, WINDOW)).state, 'new');
    });

    test('an expired claim is forgotten; an abandoned one in progress is taken over; a finished one is not', async () => {
      const store = c.store();
      const a = await c.account();
      await store.claimIdempotencyKey(a, 'old', 'fp', T0 - 1, WINDOW);
      await store.completeIdempotencyKey(a, 'old', 200, 'old answer');
      assert.deepEqual(await store.claimIdempotencyKey(a, 'old', 'new-fp', T0 + 1000, WINDOW), {
        state: 'new',
      });

      await store.claimIdempotencyKey(a, 'stuck', 'fp', T0 + 100, WINDOW);
      assert.deepEqual(await store.claimIdempotencyKey(a, 'stuck', 'fp', T0 + 1000, WINDOW), {
        state: 'new',
      });

      await store.claimIdempotencyKey(a, 'done', 'fp', T0 + 100, WINDOW);
      await store.completeIdempotencyKey(a, 'done', 200, 'ok');
      assert.equal((await store.claimIdempotencyKey(a, 'done', 'fp', T0 + 1000, WINDOW)).state, 'replay');
    });

    test('release forgets a claim in progress (a retry runs again) but never a finished one', async () => {
      const store = c.store();
      const a = await c.account();
      await store.claimIdempotencyKey(a, 'r1', 'fp', T0 + 900, WINDOW);
      await store.releaseIdempotencyKey(a, 'r1');
      assert.equal((await store.claimIdempotencyKey(a, 'r1', 'fp', T0 + 900, WINDOW)).state, 'new');
      await store.completeIdempotencyKey(a, 'r1', 200, 'ok');
      await store.releaseIdempotencyKey(a, 'r1');
      assert.equal((await store.claimIdempotencyKey(a, 'r1', 'fp', T0 + 900, WINDOW)).state, 'replay');
    });

    test('an answer stored in the transaction of the writes commits with them, or not at all', async () => {
      const store = c.store();
      const a = await c.account();
      await store.claimIdempotencyKey(a, 'tx1', 'fp', T0 + 900, WINDOW);
      const answer = { status: 201, body: '{"id":"tx1"}' };
      await assert.rejects(
        transaction(store, async (tx) => {
          assert.equal(await tx.recordIdempotentAnswer(a, 'tx1', T0 + 900, answer), true);
          throw new Error('the writes fail after the answer was stored');
        }),
        /the writes fail/,
      );
      assert.deepEqual(await store.claimIdempotencyKey(a, 'tx1', 'fp', T0 + 1000, WINDOW), {
        state: 'in_progress',
      });
      assert.equal(
        await transaction(store, (tx) => tx.recordIdempotentAnswer(a, 'tx1', T0 + 900, answer)),
        true,
      );
      assert.deepEqual(await store.claimIdempotencyKey(a, 'tx1', 'fp', T0 + 1000, WINDOW), {
        state: 'replay',
        ...answer,
      });
      // Answered once: a second answer for the same claim changes nothing.
      const other = { status: 200, body: 'other' };
      assert.equal(
        await transaction(store, (tx) => tx.recordIdempotentAnswer(a, 'tx1', T0 + 900, other)),
        false,
      );
      assert.deepEqual(await store.claimIdempotencyKey(a, 'tx1', 'fp', T0 + 1000, WINDOW), {
        state: 'replay',
        ...answer,
      });
    });

    test('a claim taken over as stale cannot be answered by the request that made it', async () => {
      const store = c.store();
      const a = await c.account();
      await store.claimIdempotencyKey(a, 'slow', 'fp', T0 + 100, WINDOW);
      // The first request ran past staleBefore; its retry takes the key over at T0 + 1000.
      assert.deepEqual(await store.claimIdempotencyKey(a, 'slow', 'fp', T0 + 1000, WINDOW), { state: 'new' });
      const late = { status: 201, body: 'late' };
      assert.equal(
        await transaction(store, (tx) => tx.recordIdempotentAnswer(a, 'slow', T0 + 100, late)),
        false,
      );
      assert.equal(
        await transaction(store, (tx) => tx.recordIdempotentAnswer(a, 'other', T0 + 100, late)),
        false,
      );
      assert.deepEqual(await store.claimIdempotencyKey(a, 'slow', 'fp', T0 + 1000, WINDOW), {
        state: 'in_progress',
      });
      const retry = { status: 201, body: 'retry' };
      assert.equal(
        await transaction(store, (tx) => tx.recordIdempotentAnswer(a, 'slow', T0 + 1000, retry)),
        true,
      );
      assert.deepEqual(await store.claimIdempotencyKey(a, 'slow', 'fp', T0 + 1000, WINDOW), {
        state: 'replay',
        ...retry,
      });
    });

    test('prune removes the claims created before a time and says how many', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      await store.claimIdempotencyKey(a, 'p1', 'fp', T0, WINDOW);
      await store.claimIdempotencyKey(a, 'p2', 'fp', T0 + 1, WINDOW);
      await store.claimIdempotencyKey(a, 'p3', 'fp', T0 + 2, WINDOW);
      assert.equal(await store.pruneIdempotencyKeys(T0 + 2), 2);
      assert.equal(await store.pruneIdempotencyKeys(T0 + 2), 0);
      const keep = { expiresBefore: 0, staleBefore: 0 };
      assert.equal((await store.claimIdempotencyKey(a, 'p3', 'fp', T0 + 3, keep)).state, 'in_progress');
      assert.equal(
        (await store.claimIdempotencyKey(a, 'p1', 'fp', T0 + 3, keep)).state,
        'new',
        'p1 was pruned',
      );
    });

    test('claims of one key made at once: exactly one is new, the others see it in progress', async () => {
      const store = c.store();
      const a = await c.account();
      const claims = await Promise.all(
        Array.from({ length: 6 }, () => store.claimIdempotencyKey(a, 'race', 'fp', T0 + 900, WINDOW)),
      );
      assert.deepEqual(claims.map((x) => x.state).sort(), [
        'in_progress',
        'in_progress',
        'in_progress',
        'in_progress',
        'in_progress',
        'new',
      ]);
    });
  });
}
