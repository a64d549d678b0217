// The main thread's side of the SQLite writer thread (writer-thread.ts): a write (../write.ts)
// goes over as one message, by its name (../write.ts); a transaction written as a function here ('open') gets a Tx whose every
// call is a message. Either is answered once the COMMIT holding it has returned. Calls made
// before the thread is up wait in its queue.
import { Worker } from 'node:worker_threads';
import { reviveCustomer } from '../rows.ts';
import { nameOf, type SharedWrite } from '../shared-writes.ts';
import type { CustomerRecord, Page, Tx } from '../store.ts';
import { fromWire, resultFromWire } from '../wire.ts';
import type { Write } from '../write.ts';
import { SqliteTx } from './tx.ts';
import type { OpArgs, OpResult, WriteOpName } from './write-ops.ts';
import type { Reply, Request } from './writer-protocol.ts';

/**
 * Results that lose something in the structured clone, restored: a customer's metadata is a
 * getter over its stored JSON text (reader.ts), and a getter does not cross.
 */
const REVIVE: Record<string, (value: never) => unknown> = {
  getCustomer: (c: CustomerRecord | null) => c && reviveCustomer(c),
  listCustomers: (page: Page<CustomerRecord>) => ({ ...page, data: page.data.map(reviveCustomer) }),
};

/** The method names of SqliteTx and the reader it extends: what the Tx proxy forwards. */
function txMethods(): string[] {
  const names = new Set<string>();
  for (let p = SqliteTx.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const name of Object.getOwnPropertyNames(p)) {
      if (name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(p, name)?.value === 'function') {
        names.add(name);
      }
    }
  }
  return [...names];
}

interface Waiting {
  opened?: () => void;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Message = Request extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

export class ThreadWriter {
  readonly #worker: Worker;
  readonly #tx: Tx;
  readonly #waiting = new Map<number, Waiting>();
  #next = 1;
  /** Writes waiting for the end of this turn of the event loop (#post). */
  #outbox: Request[] = [];
  /** Set when the thread has gone: every call fails with it. */
  #gone: Error | undefined;

  /** `onDue`: deliveries became due in a commit. */
  /**
   * `on.due`: deliveries became due in a commit; `on.batch`: calls of a batched write were written
   * together; `writeModules`: modules of writes beyond src/writes/ (a test's own; ../write.ts).
   */
  constructor(
    path: string,
    synchronous: string,
    on: { due: () => void; batch: (write: string, size: number) => void },
    writeModules: readonly string[] = [],
  ) {
    const worker = new Worker(new URL('./writer-thread.ts', import.meta.url), {
      workerData: { path, synchronous, writeModules },
    });
    this.#worker = worker;
    worker.unref(); // held only while a call is waiting (#send)
    const tx: Record<string, unknown> = {};
    for (const name of txMethods()) {
      const revive = REVIVE[name] as ((value: unknown) => unknown) | undefined;
      const call = (...args: unknown[]) => this.#send({ op: 'tx', name, args });
      tx[name] = revive ? async (...args: unknown[]) => revive(await call(...args)) : call;
    }
    this.#tx = tx as unknown as Tx;
    worker.on('message', (m: Reply | Reply[]) => {
      if (Array.isArray(m)) for (const one of m) this.#receive(one, on);
      else this.#receive(m, on);
    });
    const gone = (error: Error) => {
      this.#gone ??= error;
      for (const waiting of this.#waiting.values()) waiting.reject(this.#gone);
      this.#waiting.clear();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`the SQLite writer thread exited (code ${code})`)));
  }

  #receive(m: Reply, on: { due: () => void; batch: (write: string, size: number) => void }): void {
    if ('due' in m) {
      on.due();
      return;
    }
    if ('batch' in m) {
      on.batch(m.batch, m.size);
      return;
    }
    const waiting = this.#waiting.get(m.id);
    if (!waiting) return;
    if ('opened' in m) {
      waiting.opened?.();
      return;
    }
    this.#waiting.delete(m.id);
    if (this.#waiting.size === 0) this.#worker.unref();
    if (m.ok) waiting.resolve(m.value);
    else waiting.reject(fromWire(m.error));
  }

  #send<T>(message: Message, opened?: () => void, id = this.#next++): Promise<T> {
    if (this.#gone) return Promise.reject(this.#gone);
    return new Promise<T>((resolve, reject) => {
      if (this.#waiting.size === 0) this.#worker.ref();
      this.#waiting.set(id, { opened, resolve: resolve as (v: unknown) => void, reject });
      this.#post({ id, ...message } as Request);
    });
  }

  /**
   * Writes go over in one message per turn of the event loop: the requests answered in one turn
   * send theirs together (a message costs more than its contents). Anything else goes at once,
   * after the writes queued before it, so the thread sees every message in the order sent.
   */
  #post(message: Request): void {
    if (message.op === 'write') {
      if (this.#outbox.length === 0) setImmediate(() => this.#flush());
      this.#outbox.push(message);
      return;
    }
    this.#flush();
    this.#worker.postMessage(message);
  }

  #flush(): void {
    if (this.#outbox.length === 0) return;
    const messages = this.#outbox;
    this.#outbox = [];
    this.#worker.postMessage(messages.length === 1 ? messages[0] : messages);
  }

  /** `fn` runs here; its Tx calls run on the thread, inside a savepoint of the batch it joins. */
  async transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    const id = this.#next++;
    const { promise: open, resolve: opened } = Promise.withResolvers<void>();
    const committed = this.#send<void>({ op: 'open' } as Message, opened, id);
    // The batch may fail before the transaction opens (BEGIN refused): then so does this.
    await Promise.race([open, committed]);
    let value: T;
    try {
      value = await fn(this.#tx);
    } catch (error) {
      this.#post({ op: 'end', id, ok: false });
      await committed.catch(() => {});
      throw error;
    }
    this.#post({ op: 'end', id, ok: true });
    await committed;
    return value;
  }

  op<K extends WriteOpName>(name: K, ...args: OpArgs<K>): Promise<OpResult<K>> {
    return this.#send({ op: 'write', kind: 'op', name, args });
  }

  /** A write, run whole on the thread, which finds it by its name in the registry (../write.ts). */
  async job<A extends unknown[], R>(write: Write<A, R>, ...args: A): Promise<R> {
    return resultFromWire(await this.#send({ op: 'write', kind: 'tx', name: write.name, args }));
  }

  /** A shared write (../shared-writes.ts), found on the thread the same way. */
  shared<A extends unknown[], R>(fn: SharedWrite<A, R>, ...args: A): Promise<R> {
    return this.#send({ op: 'write', kind: 'db', name: nameOf(fn), args });
  }

  migrate = (): Promise<number> => this.#send({ op: 'migrate' });
  synchronous = (): Promise<number> => this.#send({ op: 'synchronous' });
  /** The checkpoint thread's connection's (checkpoints.ts); null when that thread is not running. */
  checkpointerSynchronous = (): Promise<number | null> => this.#send({ op: 'checkpointerSynchronous' });

  /** Waits for what is queued, closes the connection and ends the thread. */
  async close(): Promise<void> {
    if (!this.#gone) await this.#send({ op: 'close' });
    await this.#worker.terminate();
  }
}
