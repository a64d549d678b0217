// A real local HTTP server that plays a webhook receiver: it records every request (raw body
// bytes included) and answers as scripted. Tests await arrivals as events, never by sleeping.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

/** What to do with a request: answer a status, hang, reset the connection, or act by hand. */
export type Script =
  | number
  | { status: number; headers?: Record<string, string>; body?: string; delayMs?: number }
  | 'hang'
  | 'reset'
  | ((res: ServerResponse, req: Received) => void);

export class TestReceiver {
  readonly requests: Received[] = [];
  #server: Server;
  #sockets = new Set<Socket>();
  #scripts: Script[] = [];
  #fallback: Script = 200;
  #waiters: { done: (requests: Received[]) => boolean; resolve: () => void }[] = [];

  private constructor(server: Server) {
    this.#server = server;
  }

  /** Listens on 127.0.0.1, on `port` when given (a receiver coming back where one was down). */
  static async start(opts: { port?: number } = {}): Promise<TestReceiver> {
    const server = createServer();
    const receiver = new TestReceiver(server);
    server.on('connection', (s) => {
      receiver.#sockets.add(s);
      s.on('close', () => receiver.#sockets.delete(s));
    });
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const received: Received = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: Date.now(),
        };
        receiver.requests.push(received);
        receiver.#answer(res, received, receiver.#scripts.shift() ?? receiver.#fallback);
        receiver.#notify();
      });
    });
    server.listen(opts.port ?? 0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Answers for the next requests, in order; after them, `always` (default 200). */
  script(...scripts: Script[]): this {
    this.#scripts.push(...scripts);
    return this;
  }

  always(script: Script): this {
    this.#fallback = script;
    return this;
  }

  /** Resolves once `n` requests have arrived in all, or rejects after `timeoutMs`. */
  async waitFor(n: number, timeoutMs = 10_000): Promise<Received[]> {
    await this.until((requests) => requests.length >= n, timeoutMs, `${n} requests`);
    return this.requests.slice(0, n);
  }

  /** Resolves once `done` holds for the requests received so far (checked on every arrival). */
  until(
    done: (requests: Received[]) => boolean,
    timeoutMs = 10_000,
    what = 'the expected requests',
  ): Promise<void> {
    if (done(this.requests)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(
          new Error(`receiver got ${this.requests.length} requests, not yet ${what}, in ${timeoutMs} ms`),
        );
      }, timeoutMs);
      const waiter = {
        done,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.#waiters.push(waiter);
    });
  }

  #notify(): void {
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.done(this.requests)) return true;
      w.resolve();
      return false;
    });
  }

  #answer(res: ServerResponse, req: Received, script: Script): void {
    if (typeof script === 'function') {
      script(res, req);
      return;
    }
    if (script === 'hang') return; // never answers; the socket is destroyed on close()
    if (script === 'reset') {
      res.socket?.destroy();
      return;
    }
    const s = typeof script === 'number' ? { status: script } : script;
    const send = () => {
      res.writeHead(s.status, { 'content-type': 'text/plain', ...s.headers });
      res.end(s.body ?? 'ok');
    };
    if (s.delayMs) setTimeout(send, s.delayMs);
    else send();
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    this.#server.close();
    await once(this.#server, 'close');
  }
}
