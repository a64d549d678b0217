// How a claim shares free slots (src/webhooks/fair-share.ts; docs/webhooks.md, "Throughput and
// fairness"): pure, so each rule is checked on its own here; the stores' contract tests check the
// same through real claims on both backends.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type InFlight,
  inServingOrder,
  quotas,
  type Ready,
  settleRound,
  shareSlots,
} from '../../src/webhooks/fair-share.ts';

const r = (accountId: string, webhookId: string): Ready => ({ accountId, webhookId });
const names = (list: Ready[]) => list.map((x) => `${x.accountId}/${x.webhookId}`);
const open = { perWebhook: { default: 100 }, perAccount: 100 };

describe('sharing free slots', () => {
  test('one per account in turn, then one per webhook within each account', () => {
    const ready = [r('b', 'b1'), r('a', 'a2'), r('a', 'a1'), r('c', 'c1')];
    assert.deepEqual(names(shareSlots(ready, [], { ...open, limit: 7 })), [
      'a/a1',
      'b/b1',
      'c/c1',
      'a/a2',
      'b/b1',
      'c/c1',
      'a/a1',
    ]);
  });

  test('carries on after the account and the webhook served last', () => {
    const ready = [r('a', 'a1'), r('a', 'a2'), r('b', 'b1'), r('c', 'c1')];
    const after = { account: 'a', webhooks: { a: 'a1' } };
    assert.deepEqual(names(shareSlots(ready, [], { ...open, limit: 4, after })), [
      'b/b1',
      'c/c1',
      'a/a2',
      'b/b1',
    ]);
    const wrapped = { account: 'c', webhooks: { a: 'a2' } };
    assert.deepEqual(names(shareSlots(ready, [], { ...open, limit: 2, after: wrapped })), ['a/a1', 'b/b1']);
  });

  test('what is in flight counts against each webhook’s and each account’s limit; their turns go to the others', () => {
    const ready = [r('a', 'a1'), r('a', 'a2'), r('b', 'b1')];
    const inFlight = [
      { accountId: 'a', webhookId: 'a1', n: 3 },
      { accountId: 'a', webhookId: 'a2', n: 1 },
      { accountId: 'a', webhookId: 'a1', n: 1 }, // the same webhook twice adds up
    ];
    const share = shareSlots(ready, inFlight, {
      limit: 10,
      perWebhook: { default: 4, byWebhook: { b1: 2 } },
      perAccount: 6,
    });
    assert.deepEqual(names(share), ['a/a2', 'b/b1', 'b/b1'], 'a1 is full (4), a has 6 after a2; b1 has 2');
  });

  test('nothing to share: no ready webhooks, no free slots, or every limit reached', () => {
    assert.deepEqual(shareSlots([], [], { ...open, limit: 5 }), []);
    assert.deepEqual(shareSlots([r('a', 'a1')], [], { ...open, limit: 0 }), []);
    assert.deepEqual(
      shareSlots([r('a', 'a1')], [], { perWebhook: { default: 0 }, perAccount: 5, limit: 5 }),
      [],
    );
  });

  test('quotas count each webhook’s slots; the chosen come back in the order the slots were served', () => {
    const served = [r('a', 'a1'), r('b', 'b1'), r('a', 'a1')];
    assert.deepEqual(quotas(served), [
      { accountId: 'a', webhookId: 'a1', quota: 2 },
      { accountId: 'b', webhookId: 'b1', quota: 1 },
    ]);
    const chosen = [
      { accountId: 'b', webhookId: 'b1', id: 'd3' },
      { accountId: 'a', webhookId: 'a1', id: 'd1' },
      { accountId: 'a', webhookId: 'a1', id: 'd2' },
    ];
    assert.deepEqual(
      inServingOrder(served, chosen).map((c) => c.id),
      ['d1', 'd3', 'd2'],
    );
    assert.deepEqual(
      inServingOrder(served, chosen.slice(0, 2)).map((c) => c.id),
      ['d1', 'd3'],
      'a webhook that had fewer due than its share',
    );
  });

  test('after a round, what was taken is in flight; only the webhooks that took all of their quota share the rest', () => {
    const wanted = [
      { accountId: 'a', webhookId: 'a1', quota: 2 },
      { accountId: 'b', webhookId: 'b1', quota: 2 },
      { accountId: 'b', webhookId: 'b2', quota: 1 },
    ];
    const inFlight: InFlight[] = [];
    const full = settleRound(wanted, [r('a', 'a1'), r('a', 'a1'), r('b', 'b1')], inFlight);
    assert.deepEqual(names(full), ['a/a1'], 'b1 had fewer due than its quota, b2 none');
    assert.deepEqual(inFlight, [
      { accountId: 'a', webhookId: 'a1', n: 2 },
      { accountId: 'b', webhookId: 'b1', n: 1 },
    ]);
  });
});
