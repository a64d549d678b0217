// Hostile receivers against the real dispatcher (docs/webhooks.md, "Delivery and retries"): one
// that never answers, one that drip-feeds a byte every 100 ms, one that resets mid-answer,
// redirects, a 50 MB answer, and raw TCP servers that stall or speak no HTTP. Every attempt ends
// within the timeout (as its recorded duration shows), is recorded as a failure with at most 1 KiB
// of the answer, and a healthy receiver subscribed to the same events gets every delivery promptly
// all the while.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  buildTestApp,
  type Client,
  customerBody,
  TEST_WEBHOOK_CONFIG,
  type TestApp,
} from '../helpers/app.ts';
import { type Delivery, waitForDeliveries } from '../helpers/deliveries.ts';
import { TestReceiver } from '../helpers/receiver.ts';

const TIMEOUT_MS = 800;
/** How much later than the timeout an attempt may end: timers, scheduling, a loaded CI machine. */
const SLACK_MS = 400;
const EVENTS = 6; // more than the per-webhook slots (4), so the hostile webhook queues
const MiB = 1024 * 1024;

/** A local server with a hostile request handler; counts requests and how many are open at once. */
class Hostile {
  readonly server: Server;
  requests = 0;
  open = 0;
  maxOpen = 0;
  readonly #sockets = new Set<Socket>();

  private constructor(server: Server) {
    this.server = server;
    server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
  }

  static async http(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Hostile> {
    const h = new Hostile(createHttpServer());
    h.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      h.requests++;
      h.maxOpen = Math.max(h.maxOpen, ++h.open);
      res.on('close', () => h.open--);
      req.resume(); // read the body, then misbehave
      handler(req, res);
    });
    return h.listen();
  }

  /** A raw TCP server: `onData` gets the socket once the request's first bytes arrive. */
  static async tcp(onData: (socket: Socket) => void): Promise<Hostile> {
    const h = new Hostile(createTcpServer());
    h.server.on('connection', (s: Socket) => {
      s.once('data', () => {
        h.requests++;
        onData(s);
      });
      s.on('error', () => {});
    });
    return h.listen();
  }

  async listen(): Promise<this> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    this.server.close();
    await once(this.server, 'close');
  }
}

describe('webhook delivery to hostile receivers', () => {
  let t: TestApp;
  let accounts = 0;
  const cleanup: (() => Promise<void>)[] = [];
  before(async () => {
    // One attempt per delivery (no retries), so each delivery ends after one hostile answer;
    // pollMs is an hour, so every attempt is driven by a commit or a freed slot.
    t = await buildTestApp({ dispatcher: { timeoutMs: TIMEOUT_MS, maxRetries: 0, pollMs: 3_600_000 } });
  });
  after(async () => {
    for (const close of cleanup) await close();
    await t.close();
  });

  interface Run {
    api: Client;
    hostileWebhook: string;
    healthy: TestReceiver;
    /** ms from the first commit until the healthy receiver had every event. */
    healthyMs: number;
  }

  /**
   * A new account with two webhooks on customer.created: the hostile URL and a healthy receiver.
   * Creates EVENTS customers and waits for the healthy receiver to get all of them.
   */
  async function run(hostileUrl: string): Promise<Run> {
    const api = await t.newAccount(`faults${++accounts}`);
    const healthy = await TestReceiver.start();
    cleanup.push(() => healthy.close());
    const hostile = await api.post('/api/webhooks', { url: hostileUrl, events: ['customer.created'] });
    assert.equal(hostile.status, 201, hostile.raw);
    const good = await api.post('/api/webhooks', { url: `${healthy.url}/ok`, events: ['customer.created'] });
    assert.equal(good.status, 201, good.raw);
    const started = performance.now();
    for (let i = 0; i < EVENTS; i++) {
      assert.equal((await api.post('/api/customers', customerBody(`cus_${i}`))).status, 201);
    }
    await healthy.waitFor(EVENTS, 10_000);
    return { api, hostileWebhook: hostile.body.id, healthy, healthyMs: performance.now() - started };
  }

  /** Every hostile delivery, once each has its one attempt recorded. */
  const settled = (r: Run) =>
    waitForDeliveries(
      r.api,
      r.hostileWebhook,
      (list) => list.length === EVENTS && list.every((d) => d.status !== 'pending'),
      20_000,
    );

  function assertAllFailedWithin(list: Delivery[], error: RegExp | null, timedOut: boolean): void {
    for (const d of list) {
      assert.equal(d.status, 'failed', JSON.stringify(d));
      assert.equal(d.attempts.length, 1);
      const a = d.attempts[0];
      assert.ok(a);
      if (error) assert.match(a.error ?? '', error, JSON.stringify(a));
      assert.ok(a.duration_ms <= TIMEOUT_MS + SLACK_MS, `attempt took ${a.duration_ms} ms`);
      if (timedOut) assert.ok(a.duration_ms >= TIMEOUT_MS - 50, `timed out after only ${a.duration_ms} ms`);
      assert.ok(a.response_body === null || Buffer.byteLength(a.response_body) <= 1024);
    }
  }

  /** The healthy receiver got every event once, long before a hung attempt could have ended. */
  function assertHealthyPrompt(r: Run): void {
    assert.ok(r.healthyMs < TIMEOUT_MS, `the healthy receiver waited ${Math.round(r.healthyMs)} ms`);
    const ids = new Set(r.healthy.requests.map((q) => q.headers['x-vitals-event-id']));
    assert.equal(ids.size, EVENTS, 'every event, each once');
  }

  test('a receiver that never answers: each attempt times out at the timeout, at most 4 open at once', async () => {
    const hostile = await Hostile.http(() => {});
    cleanup.push(() => hostile.close());
    const r = await run(hostile.url);
    assertHealthyPrompt(r);
    const list = await settled(r);
    assertAllFailedWithin(list, /^timeout: /, true);
    for (const d of list) assert.equal(d.attempts[0]?.status_code, null);
    assert.equal(hostile.requests, EVENTS);
    assert.ok(
      hostile.maxOpen <= TEST_WEBHOOK_CONFIG.perWebhookConcurrency,
      `${hostile.maxOpen} requests open at once`,
    );
  });

  test('a receiver that drip-feeds one byte every 100 ms is cut off at the timeout', async () => {
    const hostile = await Hostile.http((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      const drip = setInterval(() => res.write('x'), 100);
      res.on('close', () => clearInterval(drip));
    });
    cleanup.push(() => hostile.close());
    const r = await run(hostile.url);
    assertHealthyPrompt(r);
    const list = await settled(r);
    assertAllFailedWithin(list, /^timeout: /, true);
  });

  test('a receiver that resets the connection mid-answer: a connection error, recorded at once', async () => {
    const hostile = await Hostile.http((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
      res.write('partial answer', () => res.socket?.destroy());
    });
    cleanup.push(() => hostile.close());
    const r = await run(hostile.url);
    assertHealthyPrompt(r);
    const list = await settled(r);
    assertAllFailedWithin(list, /socket|closed|reset|terminated/i, false);
    for (const d of list) assert.equal(d.attempts[0]?.status_code, null);
  });

  for (const status of [301, 302, 307, 308]) {
    test(`a ${status} redirect is not followed and counts as a failure`, async () => {
      const target = await TestReceiver.start();
      cleanup.push(() => target.close());
      const hostile = await Hostile.http((_req, res) => {
        res.writeHead(status, { location: `${target.url}/redirected` });
        res.end();
      });
      cleanup.push(() => hostile.close());
      const r = await run(hostile.url);
      assertHealthyPrompt(r);
      const list = await settled(r);
      assertAllFailedWithin(list, null, false);
      for (const d of list) assert.equal(d.attempts[0]?.status_code, status);
      assert.equal(target.requests.length, 0, 'the Location got nothing');
    });
  }

  test('a 50 MB answer: the attempt keeps 1 KiB, the rest is never read, and memory does not grow by it', async (ctx) => {
    const total = 50 * MiB;
    let written = 0;
    const chunk = Buffer.alloc(64 * 1024, 'v');
    const hostile = await Hostile.http((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(total) });
      const pump = () => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => {});
      pump();
    });
    cleanup.push(() => hostile.close());
    const rssBefore = process.memoryUsage().rss;
    const r = await run(hostile.url);
    const list = await settled(r);
    const grown = process.memoryUsage().rss - rssBefore;

    assertHealthyPrompt(r);
    for (const d of list) {
      assert.equal(d.status, 'succeeded', 'a 200 is a success, however long the answer');
      const a = d.attempts[0];
      assert.ok(a);
      assert.equal(a.status_code, 200);
      assert.equal(a.response_body, 'v'.repeat(1024));
      assert.ok(a.duration_ms <= TIMEOUT_MS + SLACK_MS, `attempt took ${a.duration_ms} ms`);
    }
    ctx.diagnostic(
      `receivers wrote ${Math.round(written / MiB)} of ${(EVENTS * total) / MiB} MiB; rss grew ${Math.round(grown / 1024)} KiB`,
    );
    assert.ok(
      written < (EVENTS * total) / 4,
      `the receivers wrote ${written} bytes: the answers were read on`,
    );
    assert.ok(grown < 25 * MiB, `memory grew by ${Math.round(grown / MiB)} MiB`);
  });

  test('a TCP server that sends a status line and then nothing times out', async () => {
    const hostile = await Hostile.tcp((s) => s.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n'));
    cleanup.push(() => hostile.close());
    const r = await run(hostile.url);
    assertHealthyPrompt(r);
    assertAllFailedWithin(await settled(r), /^timeout: /, true);
  });

  test('a TCP server that answers bytes that are not HTTP: a parse error, recorded at once', async (ctx) => {
    const hostile = await Hostile.tcp((s) => s.end('\u0000\u00ffSSH-2.0-OpenSSH_9.6\r\n\r\n'));
    cleanup.push(() => hostile.close());
    const r = await run(hostile.url);
    assertHealthyPrompt(r);
    const list = await settled(r);
    assertAllFailedWithin(list, /./, false);
    ctx.diagnostic(`recorded: ${list[0]?.attempts[0]?.error}`);
    for (const d of list) assert.equal(d.attempts[0]?.status_code, null);
  });
});
