// Pipelined pages (docs/development.md, "The store"): a whole-account rescore reads page N+1 before
// it computes page N and sends page N's writes without waiting for page N-1's. What it promises:
// every page once, in order, at most two pages' writes pending, and a failure thrown, never lost.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pipelined, pages as readPages } from '../../src/writes/pipeline.ts';

/** Pages of keys 'a'…: page i holds keys [i*size, (i+1)*size) of `total`. */
function pages(total: number, size: number) {
  const keys = Array.from({ length: total }, (_, i) => `k${String(i).padStart(4, '0')}`);
  return (after: string | null) => {
    const from = after === null ? 0 : keys.indexOf(after) + 1;
    const page = keys.slice(from, from + size);
    return page.length === 0 ? null : { page, after: page.length < size ? null : (page.at(-1) as string) };
  };
}

/** A promise the test settles by hand: what a statement queued on a connection looks like. */
function deferred() {
  let resolve = () => {};
  let reject = (_: Error) => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

test('every page is read, planned and written once, in order, with the next read sent before the plan', async () => {
  const log: string[] = [];
  const page = pages(25, 10);
  await pipelined(
    async (after) => {
      log.push(`read ${after}`);
      return page(after);
    },
    (keys) => {
      log.push(`plan ${keys[0]}`);
      return keys;
    },
    async (keys) => {
      log.push(`write ${keys[0]}..${keys.at(-1)}`);
    },
  );
  assert.deepEqual(log, [
    'read null',
    'read k0009',
    'plan k0000',
    'write k0000..k0009',
    'read k0019',
    'plan k0010',
    'write k0010..k0019',
    'plan k0020',
    'write k0020..k0024',
  ]);
});

test('at most two pages of writes are pending; it answers only once every write has finished', async () => {
  const page = pages(50, 10);
  const writes: ReturnType<typeof deferred>[] = [];
  let pending = 0;
  let most = 0;
  let done = false;
  const run = pipelined(
    async (after) => page(after),
    (keys) => keys,
    (_keys) => {
      const d = deferred();
      writes.push(d);
      pending++;
      most = Math.max(most, pending);
      return d.promise.then(() => {
        pending--;
      });
    },
  ).then(() => {
    done = true;
  });
  // Settle the writes one at a time, oldest first, as a connection would, each once the next is
  // pending too (the pipeline lets the event loop turn between a page's steps: pipeline.ts, turn).
  const turn = () => new Promise<void>((r) => setImmediate(r));
  for (let settled = 0; settled < 5; settled++) {
    const sent = Math.min(settled + 2, 5);
    while (writes.length < sent) await turn();
    // Given turns enough to read, plan and send another page, it sends no third while two are pending.
    for (let i = 0; i < 10; i++) await turn();
    assert.equal(writes.length, sent);
    assert.ok(!done, 'answered before its writes finished');
    writes[settled]?.resolve();
  }
  await run;
  assert.equal(writes.length, 5);
  assert.equal(most, 2);
});

test('a failed write is thrown, with the statements queued behind it failing too and none unhandled', async () => {
  const page = pages(40, 10);
  let failed = false;
  const error = new Error('current transaction is aborted');
  await assert.rejects(
    pipelined(
      async (after) => {
        // Once a write has failed, the transaction refuses every later statement.
        if (failed) throw new Error('refused: the transaction is aborted');
        return page(after);
      },
      (keys) => keys,
      async (keys) => {
        if (keys[0] === 'k0010') {
          failed = true;
          throw error;
        }
      },
    ),
    (thrown) => thrown === error,
  );
});

test('a failed read is thrown after the writes already sent have finished', async () => {
  const page = pages(30, 10);
  const written: string[] = [];
  const error = new Error('connection lost');
  await assert.rejects(
    pipelined(
      async (after) => {
        if (after === 'k0019') throw error;
        return page(after);
      },
      (keys) => keys,
      async (keys) => {
        await new Promise<void>((r) => setImmediate(r));
        written.push(keys[0] as string);
      },
    ),
    (thrown) => thrown === error,
  );
  assert.deepEqual(written, ['k0000', 'k0010']);
});

test('pages reads every page once, in order, each read after the one before', async () => {
  const page = pages(25, 10);
  const log: string[] = [];
  const seen: string[][] = [];
  for await (const keys of readPages(async (after) => {
    log.push(`read ${after}`);
    return page(after);
  })) {
    seen.push(keys);
  }
  assert.deepEqual(log, ['read null', 'read k0009', 'read k0019']);
  assert.deepEqual(
    seen.map((keys) => `${keys[0]}..${keys.at(-1)}`),
    ['k0000..k0009', 'k0010..k0019', 'k0020..k0024'],
  );
});
