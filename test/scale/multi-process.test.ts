// Scale-out on PostgreSQL (docs/postgresql.md, "Several processes"): two API processes and two
// dispatchers share one database. 1,000 score updates spread over both APIs with a subscribed
// webhook: every event is delivered, no attempt is sent twice by two dispatchers, and the history
// is complete. Then one dispatcher is SIGKILLed mid-load and the other finishes its claimed
// deliveries.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setImmediate } from 'node:timers/promises';
import { newId } from '../../src/domain/ids.ts';
import { createApiKey } from '../../src/keys.ts';
import { customerBody } from '../helpers/app.ts';
import { type Received, TestReceiver } from '../helpers/receiver.ts';
import { killAll, serverEnv, VitalsProcess } from '../helpers/server.ts';
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from '../helpers/stores.ts';

const CUSTOMERS = 50;
const UPDATES = 1000;

describe('several processes on one PostgreSQL', {
  skip: !POSTGRES_URL && 'VITALS_TEST_POSTGRES_URL is not set',
  timeout: 120_000,
}, () => {
  let db: TestDatabase;
  let key: string;
  const receivers: TestReceiver[] = [];
  before(async () => {
    db = await createTestDatabase('postgres');
    const store = db.open();
    await store.migrate();
    key = newId.apiKey();
    await createApiKey(store, 'default', key);
  });
  after(async () => {
    killAll();
    for (const r of receivers) await r.close();
    await db?.drop();
  });

  const start = (roles: string) =>
    VitalsProcess.start(
      serverEnv({
        DATABASE_URL: db.url as string,
        VITALS_DATA_DIR: db.dir,
        VITALS_API_KEY: key,
        VITALS_ROLES: roles,
        VITALS_RATE_LIMIT: 'off',
        VITALS_WEBHOOK_TIMEOUT: '1s',
        VITALS_WEBHOOK_BACKOFF: '50ms,100ms,200ms',
      }),
    );
  const eventId = (r: Received) => r.headers['x-vitals-event-id'] as string;

  /** Score updates spread over the APIs, 20 at a time; returns the acknowledged count per customer. */
  async function updates(apis: VitalsProcess[], n: number, offset: number): Promise<Map<string, number>> {
    const acked = new Map<string, number>();
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < n; i = next++) {
        const customer = `cus_${i % CUSTOMERS}`;
        const api = apis[i % apis.length] as VitalsProcess;
        const res = await api.request('POST', `/api/customers/${customer}/health-score`, {
          factors: { usage: ((i + offset) % 101) / 100 },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        acked.set(customer, (acked.get(customer) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 20 }, worker));
    return acked;
  }

  async function scoreEventIds(api: VitalsProcess): Promise<string[]> {
    const ids: string[] = [];
    let after = '';
    for (;;) {
      const res = await api.request(
        'GET',
        `/api/events?type=customer.health_score.updated&limit=100${after}`,
      );
      ids.push(...res.body.data.map((e: { id: string }) => e.id));
      if (!res.body.has_more) return ids;
      after = `&starting_after=${res.body.data.at(-1).id}`;
    }
  }

  /**
   * The score events once the feed holds `n` of them: on PostgreSQL it shows an event once every
   * older transaction in the database has ended (docs/api.md, "Events"), and a dispatcher's claim
   * may still be running when the last update is acknowledged. More than `n` never comes.
   */
  async function settledEventIds(api: VitalsProcess, n: number): Promise<string[]> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const ids = await scoreEventIds(api);
      if (ids.length >= n || Date.now() > deadline) return ids;
      await setImmediate();
    }
  }

  test('two APIs, two dispatchers: every event delivered, no attempt sent twice, history complete', async () => {
    const receiver = await TestReceiver.start();
    receivers.push(receiver);
    const apis = [await start('api'), await start('api')];
    const dispatchers = [await start('dispatcher'), await start('dispatcher')];
    const hook = await apis[0]?.request('POST', '/api/webhooks', {
      url: receiver.url,
      events: ['customer.health_score.updated'],
    });
    assert.equal(hook?.status, 201);
    for (let c = 0; c < CUSTOMERS; c++) {
      assert.equal(
        (await apis[c % 2]?.request('POST', '/api/customers', customerBody(`cus_${c}`)))?.status,
        201,
      );
    }
    const acked = await updates(apis, UPDATES, 0);

    const events = await settledEventIds(apis[1] as VitalsProcess, UPDATES);
    assert.equal(events.length, UPDATES);
    await receiver.until((got) => new Set(got.map(eventId)).size >= UPDATES, 60_000, `${UPDATES} events`);
    assert.deepEqual([...new Set(receiver.requests.map(eventId))].sort(), [...events].sort());
    const attempts = receiver.requests.map((r) => `${eventId(r)} #${r.headers['x-vitals-delivery-attempt']}`);
    assert.equal(new Set(attempts).size, attempts.length, 'no attempt was sent by two dispatchers');

    for (const [customer, n] of acked) {
      const history = await apis[0]?.request(
        'GET',
        `/api/customers/${customer}/health-score/history?limit=100`,
      );
      assert.equal(history?.body.data.length, n, `${customer}: one history entry per acknowledged update`);
    }
    for (const d of dispatchers) await d.stop();
    for (const a of apis) await a.stop();
  });

  test('a dispatcher killed mid-load: the other one finishes its claimed deliveries', async () => {
    // A slow receiver keeps deliveries in flight, so the killed dispatcher dies holding some.
    const receiver = (await TestReceiver.start()).always({ status: 200, delayMs: 20 });
    receivers.push(receiver);
    const api = await start('api');
    const doomed = await start('dispatcher');
    const survivor = await start('dispatcher');
    const hook = await api.request('POST', '/api/webhooks', {
      url: receiver.url,
      events: ['customer.health_score.updated'],
    });
    assert.equal(hook.status, 201);
    const before = new Set(await scoreEventIds(api));
    await updates([api], 300, 7);
    await receiver.waitFor(30, 30_000);
    await doomed.kill();

    const events = (await settledEventIds(api, before.size + 300)).filter((id) => !before.has(id));
    assert.equal(events.length, 300);
    // The survivor takes over the killed one's leases once they lapse (timeout 1 s + 5 s).
    await receiver.until(
      (got) => {
        const seen = new Set(got.map(eventId));
        return events.every((id) => seen.has(id));
      },
      60_000,
      'every event, including those the killed dispatcher held',
    );
    await survivor.stop();
    await api.stop();
  });
});
