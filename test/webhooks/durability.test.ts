// The outbox survives a crash (docs/webhooks.md, "Delivery and retries"): the real `vitals serve`
// in a real process, killed with SIGKILL while deliveries are pending, restarted on the same data
// dir. Every event still reaches the receiver at least once; a delivery that was in flight at the
// crash is taken over once its lease (timeout + 5 s) runs out, and not before.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { setImmediate } from 'node:timers/promises';
import { verifyVitalsSignature } from '../../src/domain/signing.ts';
import { customerBody, tempDir } from '../helpers/app.ts';
import { type Received, TestReceiver } from '../helpers/receiver.ts';
import { closedPort, killAll, VitalsProcess as Server, serverEnv } from '../helpers/server.ts';

const KEY = `vk_${'D'.repeat(16)}${'9'.repeat(16)}`;
// Two server starts, a SIGKILL and a 5 s lease each: 20 s alone at a load average of 5, so 30 s left no room
// when the suite shares two cores with the rest of the run.
const LIMIT = { timeout: 90_000 };
/** VITALS_WEBHOOK_TIMEOUT below, plus the dispatcher's 5 s lease margin. */
const LEASE_MS = 1000 + 5000;

const dirs: string[] = [];
const receivers: TestReceiver[] = [];
after(async () => {
  killAll();
  await Promise.all(receivers.map((r) => r.close()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const env = (dir: string) =>
  serverEnv({
    VITALS_DATA_DIR: dir,
    VITALS_API_KEY: KEY,
    // Quick retries, then every 500 ms: 20 retries last ~9 s, so none runs out while the receiver is down.
    VITALS_WEBHOOK_BACKOFF: '50ms,100ms,200ms,500ms',
    VITALS_WEBHOOK_TIMEOUT: '1s',
    VITALS_WEBHOOK_MAX_RETRIES: '20',
  });

interface Delivery {
  status: string;
  attempts: { status_code: number | null; error: string | null }[];
}

/** Polls `read` (a bounded loop, yielding between reads) until it returns a value. */
async function eventually<T>(read: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    assert.ok(Date.now() < deadline, `not reached in ${timeoutMs} ms`);
    await setImmediate();
  }
}

const eventId = (r: Received) => r.headers['x-vitals-event-id'] as string;
const distinct = (requests: Received[]) => new Set(requests.map(eventId));

async function subscribe(server: Server, port: number): Promise<{ id: string; secret: string }> {
  const res = await server.request('POST', '/api/webhooks', {
    url: `http://127.0.0.1:${port}/hook`,
    events: ['customer.health_score.updated'],
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

/** `perCustomer` score updates for each of `customers` customers: one event each. */
async function scoreUpdates(server: Server, customers: number, perCustomer: number): Promise<void> {
  for (let c = 0; c < customers; c++) {
    const id = `cus_${c}`;
    assert.equal((await server.request('POST', '/api/customers', customerBody(id))).status, 201);
    for (let i = 0; i < perCustomer; i++) {
      const res = await server.request('POST', `/api/customers/${id}/health-score`, {
        factors: { usage: (i + 1) / (perCustomer + 1) },
      });
      assert.equal(res.status, 200);
    }
  }
}

async function scoreEventIds(server: Server): Promise<string[]> {
  const res = await server.request<{ data: { id: string }[]; has_more: boolean }>(
    'GET',
    '/api/events?type=customer.health_score.updated&limit=100',
  );
  assert.equal(res.status, 200);
  assert.equal(res.body.has_more, false);
  return res.body.data.map((e) => e.id);
}

describe('webhook delivery across a crash', LIMIT, () => {
  test('every event is delivered at least once after SIGKILL and a restart', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const port = await closedPort();

    const first = await Server.start(env(dir));
    const webhook = await subscribe(first, port);
    await scoreUpdates(first, 10, 5);
    const events = await scoreEventIds(first);
    assert.equal(events.length, 50);
    const pending = await first.request(
      'GET',
      `/api/webhooks/${webhook.id}/deliveries?status=pending&limit=100`,
    );
    assert.equal(pending.body.data.length, 50, 'the receiver is down: every delivery is pending');
    await first.kill();

    const second = await Server.start(env(dir));
    const receiver = await TestReceiver.start({ port });
    receivers.push(receiver);
    await receiver.until((got) => distinct(got).size >= 50, 20_000, 'all 50 events');

    assert.deepEqual([...distinct(receiver.requests)].sort(), [...events].sort());
    for (const r of receiver.requests) {
      assert.equal(
        verifyVitalsSignature(webhook.secret, r.body, r.headers['x-vitals-signature'] as string),
        true,
      );
      assert.equal(JSON.parse(r.body).type, 'customer.health_score.updated');
    }
    assert.deepEqual(
      (await second.request('GET', '/api/events?type=customer.health_score.updated&limit=100')).body.data
        .map((e: { id: string }) => e.id)
        .sort(),
      [...events].sort(),
      'no event was lost or invented',
    );

    // Attempts made while the receiver was down were recorded; each delivery then succeeded.
    const list = await eventually(async () => {
      const res = await second.request('GET', `/api/webhooks/${webhook.id}/deliveries?limit=100`);
      const data: Delivery[] = res.body.data;
      return data.length === 50 && data.every((d) => d.status === 'succeeded') ? data : undefined;
    });
    const errors = list.flatMap((d) => d.attempts.map((a) => a.error)).filter((e) => e !== null);
    assert.ok(errors.length > 0 && errors.every((e) => /ECONNREFUSED/.test(e)), errors.join('\n'));
    await second.stop();
  });

  test('a delivery in flight at the crash is sent again once its lease runs out, not before', async () => {
    const dir = tempDir();
    dirs.push(dir);
    // The receiver takes the requests and never answers: three attempts are in flight, leased.
    const stuck = (await TestReceiver.start()).always('hang');
    const port = Number(new URL(stuck.url).port);

    const first = await Server.start(env(dir));
    await subscribe(first, port);
    await scoreUpdates(first, 1, 3);
    const inFlight = await stuck.waitFor(3);
    await first.kill();
    await stuck.close();

    const second = await Server.start(env(dir));
    const receiver = await TestReceiver.start({ port });
    receivers.push(receiver);
    await receiver.until((got) => distinct(got).size >= 3, 15_000, 'the 3 events');

    assert.deepEqual([...distinct(receiver.requests)].sort(), [...distinct(inFlight)].sort());
    for (const again of receiver.requests) {
      const before = inFlight.find((r) => eventId(r) === eventId(again)) as Received;
      const waited = again.receivedAt - before.receivedAt;
      assert.ok(waited >= LEASE_MS - 100, `resent ${waited} ms after the lost attempt, after the lease`);
      // The lost attempt never recorded an outcome, so the resend carries the same attempt number.
      assert.equal(again.headers['x-vitals-delivery-attempt'], before.headers['x-vitals-delivery-attempt']);
    }
    await second.stop();
  });
});
