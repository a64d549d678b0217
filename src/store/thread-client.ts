// The main thread's side of a store's worker thread (PostgreSQL's heavy writes, SQLite's heavy
// reads): each message carries an id, the thread answers each with that id. The thread starts with
// the first request and stays, holding the process only while a request waits on it; if it dies,
// the requests waiting on it fail and the next one starts another.
import { Worker } from 'node:worker_threads';

/** A message before its id is given (each member of a union without its id). */
type Unsent<M> = M extends unknown ? Omit<M, 'id'> : never;

interface Running<Reply> {
  worker: Worker;
  waiting: Map<number, { resolve: (reply: Reply) => void; reject: (error: unknown) => void }>;
}

export class ThreadClient<Request extends { id: number; op: string }, Reply extends { id: number }> {
  readonly #script: URL;
  readonly #data: unknown;
  /** How an error names the thread: "the SQLite heavy-read thread". */
  readonly #what: string;
  #running: Running<Reply> | undefined;
  #next = 1;
  #closed = false;

  constructor(script: URL, data: unknown, what: string) {
    this.#script = script;
    this.#data = data;
    this.#what = what;
  }

  /** `message` to the thread, answered by its reply (rejected if the thread goes first). */
  request(message: Unsent<Request>): Promise<Reply> {
    if (this.#closed) return Promise.reject(new Error('the store is closed'));
    this.#running ??= this.#start();
    return this.#send(this.#running, message);
  }

  /** The thread running now, if any: a test ends it as a crash would. */
  get worker(): Worker | undefined {
    return this.#running?.worker;
  }

  /** Sends `{op: 'close'}` (the thread finishes what it was sent, then answers) and ends the thread. */
  async close(): Promise<void> {
    this.#closed = true;
    const running = this.#running;
    if (!running) return;
    await this.#send(running, { op: 'close' } as Unsent<Request>).catch(() => {});
    await running.worker.terminate();
  }

  #start(): Running<Reply> {
    const worker = new Worker(this.#script, { workerData: this.#data });
    const running: Running<Reply> = { worker, waiting: new Map() };
    worker.unref(); // held only while a request is waiting on it (#send)
    worker.on('message', (m: Reply) => {
      const waiting = running.waiting.get(m.id);
      if (!waiting) return;
      running.waiting.delete(m.id);
      if (running.waiting.size === 0) worker.unref();
      waiting.resolve(m);
    });
    const gone = (error: Error) => {
      if (this.#running === running) this.#running = undefined;
      for (const waiting of running.waiting.values()) waiting.reject(error);
      running.waiting.clear();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`${this.#what} exited (code ${code})`)));
    return running;
  }

  #send(running: Running<Reply>, message: Unsent<Request>): Promise<Reply> {
    const id = this.#next++;
    return new Promise<Reply>((resolve, reject) => {
      if (running.waiting.size === 0) running.worker.ref();
      running.waiting.set(id, { resolve, reject });
      running.worker.postMessage({ id, ...message });
    });
  }
}
