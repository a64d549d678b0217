// Nothing acknowledged is lost (issue 7): with the receiver down, concurrent score updates run
// against the real server; it is SIGKILLed mid-load and restarted on the same database; then
// the receiver comes up. Every update that was answered 200 is in the history, and its event
// reaches the receiver at least once. On SQLite, and on PostgreSQL when it is configured.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.ts';
import { customerBody } from '../helpers/app.ts';
import { TestReceiver } from '../helpers/receiver.ts';
import { closedPort, killAll, serverEnv, VitalsProcess } from '../helpers/server.ts';
import { ALL_BACKENDS, backendSkip, createTestDatabase, type TestDatabase } from '../helpers/stores.ts';

const CUSTOMERS = 20;
const WORKERS = 8;
/** SIGKILL once this many updates have been acknowledged; the workers are still sending. */
const KILL_AFTER = 120;

const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  killAll();
  for (const fn of cleanup) await fn();
});

interface Ack {
  customer: string;
  updatedAt: string;
  score: number;
}

function env(db: TestDatabase, key: string) {
  return serverEnv({
    VITALS_DATA_DIR: db.dir,
    ...(db.url ? { DATABASE_URL: db.url } : {}),
    VITALS_API_KEY: key,
    VITALS_WEBHOOK_BACKOFF: '50ms,100ms,200ms,500ms',
    VITALS_WEBHOOK_TIMEOUT: '1s',
    VITALS_WEBHOOK_MAX_RETRIES: '20',
  });
}

for (const backend of ALL_BACKENDS) {
  describe(`crash durability on ${backend}`, { timeout: 60_000, skip: backendSkip(backend) }, () => {
    test('every acknowledged update survives SIGKILL: in the history, and its event delivered', async () => {
      const db = await createTestDatabase(backend);
      cleanup.push(() => db.drop());
      const key = newId.apiKey();
      const port = await closedPort();
      const first = await VitalsProcess.start(env(db, key));
      const hook = await first.request('POST', '/api/webhooks', {
        url: `http://127.0.0.1:${port}/hook`,
        events: ['customer.health_score.updated'],
      });
      assert.equal(hook.status, 201);
      for (let c = 0; c < CUSTOMERS; c++) {
        assert.equal((await first.request('POST', '/api/customers', customerBody(`cus_${c}`))).status, 201);
      }

      const acks: Ack[] = [];
      let killed: Promise<void> | undefined;
      const worker = async (w: number) => {
        for (let i = 0; !killed; i++) {
          const customer = `cus_${(w * 7 + i) % CUSTOMERS}`;
          try {
            const res = await first.request('POST', `/api/customers/${customer}/health-score`, {
              factors: { usage: ((w * 13 + i) % 100) / 100, support: (i % 10) / 10 },
            });
            if (res.status === 200) {
              acks.push({ customer, updatedAt: res.body.updated_at, score: res.body.health_score });
            }
          } catch {
            return; // the connection died with the server: this update was never acknowledged
          }
          if (acks.length >= KILL_AFTER && !killed) killed = first.kill();
        }
      };
      await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
      await killed;
      assert.ok(acks.length >= KILL_AFTER);

      const second = await VitalsProcess.start(env(db, key));
      const receiver = await TestReceiver.start({ port });
      cleanup.push(() => receiver.close());

      // Every acknowledged update is in its customer's history.
      for (let c = 0; c < CUSTOMERS; c++) {
        const customer = `cus_${c}`;
        const res = await second.request('GET', `/api/customers/${customer}/health-score/history?limit=100`);
        assert.equal(res.status, 200);
        const seen = new Set(
          res.body.data.map(
            (h: { created_at: string; health_score: number }) => `${h.created_at} ${h.health_score}`,
          ),
        );
        for (const ack of acks.filter((a) => a.customer === customer)) {
          assert.ok(
            seen.has(`${ack.updatedAt} ${ack.score}`),
            `${customer} lost the update of ${ack.updatedAt}`,
          );
        }
      }

      // And each one's event reaches the receiver at least once.
      const key_ = (customer: string, updatedAt: string) => `${customer} ${updatedAt}`;
      const wanted = new Set(acks.map((a) => key_(a.customer, a.updatedAt)));
      const delivered = () =>
        new Set(
          receiver.requests.map((r) => {
            const data = JSON.parse(r.body).data;
            return key_(data.customer_id, data.updated_at);
          }),
        );
      await receiver.until(
        () => [...wanted].every((k) => delivered().has(k)),
        40_000,
        'every acknowledged event',
      );
      await second.stop();
    });
  });
}
