// Fairness between accounts (docs/webhooks.md, "Throughput and fairness"): account A has ten
// webhooks to a receiver that never answers and 1,000 events queued for each; account B's
// deliveries each arrive within one attempt timeout of the write that made them, and A never has
// more in flight than its account's limit. On PostgreSQL with two dispatchers on one database
// (two stores, as two processes would have), so the limits hold over both.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Dispatcher } from '../../src/webhooks/dispatcher.ts';
import { buildTestApp, customerBody, TEST_WEBHOOK_CONFIG, type TestApp } from '../helpers/app.ts';
import { TestReceiver } from '../helpers/receiver.ts';
import { appBackend } from '../helpers/stores.ts';

const TIMEOUT_MS = 2000;
const PER_ACCOUNT = 12;
const CONFIG = {
  ...TEST_WEBHOOK_CONFIG,
  timeoutMs: TIMEOUT_MS,
  concurrency: 16,
  perWebhookConcurrency: 4,
  perAccountConcurrency: PER_ACCOUNT,
};
const HANGING_WEBHOOKS = 10;
const A_EVENTS = 1000;
const B_EVENTS = 20;

describe('webhook fairness: one account’s hanging receivers never hold up another’s', () => {
  let t: TestApp;
  let second: Dispatcher | undefined;
  const receivers: TestReceiver[] = [];
  before(async () => {
    t = await buildTestApp({ dispatcher: CONFIG });
    if (appBackend() === 'postgres') {
      second = new Dispatcher({ store: t.openStore(), config: CONFIG, log: t.app.log });
      second.start();
    }
  });
  after(async () => {
    await second?.stop();
    await Promise.all(receivers.map((r) => r.close()));
    await t.close();
  });

  test(`A: ${HANGING_WEBHOOKS} hanging webhooks × ${A_EVENTS} events; every one of B’s deliveries within one attempt timeout`, async () => {
    let open = 0;
    let maxOpen = 0;
    const opened: (() => void)[] = [];
    const hang = (res: ServerResponse) => {
      maxOpen = Math.max(maxOpen, ++open);
      res.on('close', () => open--);
      for (const f of opened.splice(0)) f();
    };
    const hanging = (await TestReceiver.start()).always(hang);
    const healthy = await TestReceiver.start();
    receivers.push(hanging, healthy);

    const a = await t.newAccount('hangs');
    for (let i = 0; i < HANGING_WEBHOOKS; i++) {
      const res = await a.post('/api/webhooks', {
        url: `${hanging.url}/hook/${i}`,
        events: ['customer.created'],
      });
      assert.equal(res.status, 201, res.raw);
    }
    const b = await t.newAccount('healthy');
    const res = await b.post('/api/webhooks', { url: `${healthy.url}/hook`, events: ['customer.created'] });
    assert.equal(res.status, 201, res.raw);

    const batch = await a.post('/api/customers/batch', {
      customers: Array.from({ length: A_EVENTS }, (_, i) => customerBody(`cus_a${i}`)),
    });
    assert.equal(batch.status, 200, batch.raw);
    // Wait until A holds every slot it may: its account's limit, over both dispatchers.
    while (open < PER_ACCOUNT) await new Promise<void>((resolve) => opened.push(resolve));

    const writtenAt = new Map<string, number>();
    for (let i = 0; i < B_EVENTS; i++) {
      const id = `cus_b${i}`;
      writtenAt.set(id, Date.now());
      const created = await b.post('/api/customers', customerBody(id));
      assert.equal(created.status, 201, created.raw);
    }
    await healthy.waitFor(B_EVENTS, 4 * TIMEOUT_MS);
    for (const r of healthy.requests) {
      const id = JSON.parse(r.body).data.id as string;
      const waited = r.receivedAt - (writtenAt.get(id) ?? Number.NaN);
      assert.ok(waited < TIMEOUT_MS, `${id} arrived ${waited} ms after it was written`);
    }
    assert.equal(new Set(healthy.requests.map((r) => r.headers['x-vitals-event-id'])).size, B_EVENTS);
    assert.ok(maxOpen <= PER_ACCOUNT, `A had ${maxOpen} attempts open at once; its limit is ${PER_ACCOUNT}`);
  });
});

describe('webhook fairness: a receiver that keeps timing out, or asks to slow down, gets fewer slots', () => {
  let t: TestApp;
  const receivers: TestReceiver[] = [];
  before(async () => {
    t = await buildTestApp({ dispatcher: { timeoutMs: 500, maxRetries: 0, perWebhookConcurrency: 4 } });
  });
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await t.close();
  });

  const cases: [string, (res: ServerResponse) => void][] = [
    ['time out', () => {}],
    ['are answered 503 (after 300 ms)', (res) => setTimeout(() => res.writeHead(503).end(), 300)],
    ['are answered 429 (after 300 ms)', (res) => setTimeout(() => res.writeHead(429).end(), 300)],
  ];
  for (const [what, answer] of cases) {
    test(`it starts with 4 in flight; once they ${what}, it has at most 2 at once`, async () => {
      let open = 0;
      let firstWave = 0;
      let afterwards = 0;
      let ended = false;
      const receiver = (await TestReceiver.start()).always((res: ServerResponse) => {
        open++;
        if (ended) afterwards = Math.max(afterwards, open);
        else firstWave = Math.max(firstWave, open);
        res.on('close', () => {
          open--;
          ended = true;
        });
        answer(res);
      });
      receivers.push(receiver);
      const a = await t.newAccount(`slow-${receivers.length}`);
      const res = await a.post('/api/webhooks', {
        url: `${receiver.url}/hook`,
        events: ['customer.created'],
      });
      assert.equal(res.status, 201, res.raw);
      const batch = await a.post('/api/customers/batch', {
        customers: Array.from({ length: 8 }, (_, i) => customerBody(`cus_${i}`)),
      });
      assert.equal(batch.status, 200, batch.raw);
      await receiver.waitFor(8, 10_000);
      assert.equal(firstWave, 4, 'the first slots');
      assert.ok(afterwards >= 1 && afterwards <= 2, `${afterwards} open at once afterwards`);
    });
  }
});
