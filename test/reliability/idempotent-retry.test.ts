// A retry with the same Idempotency-Key never runs a write twice, even across a crash
// (docs/api.md, "Idempotency keys"): concurrent score updates, each with a key of its own,
// run against the real server; it is SIGKILLed mid-load and restarted on the same database,
// and every request sent is retried with its key. The answer to a key is stored in the
// transaction of its write, so for each key exactly one of these holds afterwards:
// - the write is in the history once, and the retry replays its answer (200, replayed);
// - the write never happened (the process died before its commit): the retry finds the key
//   still claimed (409, until the claim goes stale) or runs it now, once.
// Were the answer stored after the commit, a kill between the two would leave a write in the
// history whose key is still "in progress": the test counts those and fails.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.ts';
import { customerBody } from '../helpers/app.ts';
import { killAll, serverEnv, VitalsProcess } from '../helpers/server.ts';
import { ALL_BACKENDS, backendSkip, createTestDatabase } from '../helpers/stores.ts';

const CUSTOMERS = 10;
const WORKERS = 8;
/** SIGKILL once this many updates have been acknowledged; the workers are still sending. */
const KILL_AFTER = 150;

const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  killAll();
  for (const fn of cleanup) await fn();
});

interface Sent {
  key: string;
  customer: string;
  /** A factor only this request sets: finds its write in the history. */
  marker: string;
  body: string;
  /** The answer before the kill, if there was one. */
  answer?: string;
}

async function post(
  server: VitalsProcess,
  sent: Sent,
): Promise<{ status: number; raw: string; replayed: boolean }> {
  const res = await fetch(`${server.url}/api/customers/${sent.customer}/health-score`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${server.key}`,
      'content-type': 'application/json',
      'idempotency-key': sent.key,
    },
    body: sent.body,
  });
  return {
    status: res.status,
    raw: await res.text(),
    replayed: res.headers.get('idempotent-replayed') === 'true',
  };
}

for (const backend of ALL_BACKENDS) {
  describe(`idempotent retries across a crash on ${backend}`, {
    timeout: 60_000,
    skip: backendSkip(backend),
  }, () => {
    test('after SIGKILL, every key retried: no write twice, every acknowledged one replayed', async () => {
      const db = await createTestDatabase(backend);
      cleanup.push(() => db.drop());
      const env = serverEnv({
        VITALS_DATA_DIR: db.dir,
        ...(db.url ? { DATABASE_URL: db.url } : {}),
        VITALS_API_KEY: newId.apiKey(),
      });
      const first = await VitalsProcess.start(env);
      for (let c = 0; c < CUSTOMERS; c++) {
        assert.equal((await first.request('POST', '/api/customers', customerBody(`cus_${c}`))).status, 201);
      }

      const sent: Sent[] = [];
      let acknowledged = 0;
      let killed: Promise<void> | undefined;
      // Workers keep sending until the process is gone, so requests are in flight when it dies.
      let dead = false;
      const worker = async (w: number) => {
        for (let i = 0; !dead; i++) {
          const n = sent.length;
          const request: Sent = {
            key: `retry-${w}-${i}`,
            customer: `cus_${(w * 3 + i) % CUSTOMERS}`,
            marker: `m${n}`,
            body: JSON.stringify({ factors: { usage: (n % 100) / 100, [`m${n}`]: 0.5 } }),
          };
          sent.push(request);
          try {
            const res = await post(first, request);
            assert.equal(res.status, 200, res.raw);
            request.answer = res.raw;
            acknowledged++;
          } catch (err) {
            if (err instanceof assert.AssertionError) throw err;
            return; // the connection died with the server: never answered
          }
          if (acknowledged >= KILL_AFTER && !killed) {
            killed = first.kill().then(() => {
              dead = true;
            });
          }
        }
      };
      await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
      await killed;

      const second = await VitalsProcess.start(env);
      const retried = await Promise.all(sent.map((s) => post(second, s)));

      // Which markers made it into a history, and how often.
      const written = new Map<string, number>();
      for (let c = 0; c < CUSTOMERS; c++) {
        const res = await second.request('GET', `/api/customers/cus_${c}/health-score/history?limit=100`);
        assert.equal(res.body.has_more, false);
        for (const h of res.body.data as { factors: Record<string, number> }[]) {
          for (const name of Object.keys(h.factors).filter((f) => f.startsWith('m'))) {
            written.set(name, (written.get(name) ?? 0) + 1);
          }
        }
      }

      let unanswered = 0;
      let stillClaimed = 0;
      for (const [i, s] of sent.entries()) {
        const retry = retried[i] as { status: number; raw: string; replayed: boolean };
        const times = written.get(s.marker) ?? 0;
        if (s.answer !== undefined) {
          assert.equal(times, 1, `${s.key}: acknowledged, so written once`);
          assert.equal(retry.status, 200, `${s.key}: ${retry.raw}`);
          assert.equal(retry.replayed, true, `${s.key} is replayed, not run again`);
          assert.equal(retry.raw, s.answer, `${s.key} replays the first answer`);
          continue;
        }
        unanswered++;
        if (retry.status === 409) {
          stillClaimed++;
          assert.equal(JSON.parse(retry.raw).error.code, 'idempotency_request_in_progress');
          assert.equal(times, 0, `${s.key}: written, but its key was never answered`);
        } else {
          assert.equal(retry.status, 200, `${s.key}: ${retry.raw}`);
          assert.equal(times, 1, `${s.key}: written ${times} times`);
        }
      }
      // The kill came while requests were in flight: the retries above covered that case.
      assert.notEqual(unanswered, 0, 'no request was in flight at the kill');
      assert.ok(stillClaimed <= unanswered);
      await second.stop();
    });
  });
}
