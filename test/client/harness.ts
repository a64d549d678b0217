// The real app listening on a real port, and a VitalsClient that talks to it over HTTP. Retry
// waits are recorded instead of slept, so retry paths run in milliseconds.
import { type ClientOptions, VitalsClient } from '../../src/client/index.ts';
import { buildTestApp, type TestApp, type TestAppOptions } from '../helpers/app.ts';

export interface ClientApp {
  t: TestApp;
  url: string;
  key: string;
  client: VitalsClient;
  /** A client for a new account of its own (tests in one file keep apart). */
  newClient(name: string, opts?: Partial<ClientOptions>): Promise<VitalsClient>;
  close(): Promise<void>;
}

export const noWait = async (_ms: number) => {};

export async function clientApp(opts: TestAppOptions = {}): Promise<ClientApp> {
  const t = await buildTestApp(opts);
  const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    t,
    url,
    key: t.api.key,
    client: new VitalsClient({ url, key: t.api.key, sleep: noWait }),
    newClient: async (name, extra = {}) => {
      const { key } = await t.newAccount(name);
      return new VitalsClient({ url, key, sleep: noWait, ...extra });
    },
    close: () => t.close(),
  };
}

/** Everything an async iterator yields. */
export async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** `read()` once `done` holds for it: for what the dispatcher records, which has no event to await. */
export async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
