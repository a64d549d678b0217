// Reading a webhook's deliveries through the API, and waiting for the dispatcher to record an
// attempt. Recording has no event a test can await (the receiver sees the request before the
// attempt is written), so this polls the API in a bounded loop, yielding between reads.
import assert from 'node:assert/strict';
import { setImmediate } from 'node:timers/promises';
import type { Client } from './app.ts';

export interface Attempt {
  attempt: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_body: string | null;
}

export interface Delivery {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
  attempts: Attempt[];
}

/** Every delivery of a webhook (up to 100), newest first. */
export async function deliveries(api: Client, webhookId: string, query = ''): Promise<Delivery[]> {
  const res = await api.get(`/api/webhooks/${webhookId}/deliveries?limit=100${query ? `&${query}` : ''}`);
  assert.equal(res.status, 200, res.raw);
  return res.body.data;
}

/** Resolves with the deliveries once `done` holds for them; fails after `timeoutMs`. */
export async function waitForDeliveries(
  api: Client,
  webhookId: string,
  done: (list: Delivery[]) => boolean,
  timeoutMs = 5000,
): Promise<Delivery[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await deliveries(api, webhookId);
    if (done(list)) return list;
    if (Date.now() > deadline) {
      assert.fail(
        `deliveries did not reach the expected state in ${timeoutMs} ms:\n${JSON.stringify(list, null, 2)}`,
      );
    }
    await setImmediate();
  }
}

/** The one delivery of a webhook that satisfies `done`, once it does. */
export async function waitForDelivery(
  api: Client,
  webhookId: string,
  done: (d: Delivery) => boolean,
  timeoutMs?: number,
): Promise<Delivery> {
  const list = await waitForDeliveries(api, webhookId, (l) => l.some(done), timeoutMs);
  return list.find(done) as Delivery;
}
