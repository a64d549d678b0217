// The mapping threads (docs/sources.md, "Webhooks"): a webhook source's JSONata mapping runs on a
// small pool of worker threads with a budget per message (MAPPING_BUDGET_MS). JSONata's evaluation
// never yields, so an expression that loops would hold whatever thread runs it: on the main thread,
// every request of every account. Here a message over its budget is refused (`mapping_timeout`)
// and its thread is ended and replaced, while the main thread answered all along. As with the
// calibration threads (calibration-threads.ts), threads start on use, end after IDLE_MS without
// work, and the accounts waiting take turns, so one account's flood of slow messages never holds
// another's behind all of it.
import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { WebhookMapping } from '../domain/sources.ts';

/** The budget of one message's evaluation (docs/sources.md, "Webhooks"). */
export const MAPPING_BUDGET_MS = 50;
/** However busy the machine, a message's evaluation ends after this much of the clock. */
export const MAPPING_WALL_MS = 1000;
/** A thread idle this long ends; starting one again costs tens of ms, which the budget does not count. */
const IDLE_MS = 10_000;

export interface MappingRequest {
  id: number;
  /** The cache key of the source's compiled expressions: its id and updated_at. */
  key: string;
  mapping: WebhookMapping;
  input: { body: unknown; headers: Record<string, unknown> };
}

export type MappingReply =
  | { id: number; ok: true; values: Record<string, unknown>; ms: number }
  | { id: number; ok: false; field: string; message: string; ms: number };

/** What a message's mapping gave: each expression's value (absent when it gave nothing), or why not. */
export type MappingOutcome = { ok: true; values: Record<string, unknown> } | { ok: false; reason: string };

interface Task {
  request: Omit<MappingRequest, 'id'>;
  resolve: (outcome: MappingOutcome) => void;
}

interface Thread {
  worker: Worker;
  replies: MessagePort;
  ready: boolean;
  task: Task | undefined;
  timer: NodeJS.Timeout | undefined;
  idle: NodeJS.Timeout | undefined;
}

/** The thread's CPU time so far (µs), where Node tells it (Worker#cpuUsage, Node 24), else null: the clock alone counts. */
async function cpuOf(worker: Worker): Promise<number | null> {
  const usage = (worker as { cpuUsage?: () => Promise<{ user: number; system: number }> }).cpuUsage;
  if (typeof usage !== 'function') return null;
  try {
    const { user, system } = await usage.call(worker);
    return user + system;
  } catch {
    return null; // the thread ended meanwhile
  }
}

const timedOut = (): MappingOutcome => ({
  ok: false,
  reason: `mapping_timeout: the mapping took more than ${MAPPING_BUDGET_MS} ms for this message`,
});

export class MappingThreads {
  readonly #size: number;
  readonly #threads = new Set<Thread>();
  /** Each account's messages waiting, in the accounts' turn order: an account served moves to the end. */
  readonly #queues = new Map<string, Task[]>();
  #next = 1;
  #closed = false;

  constructor(opts: { threads?: number } = {}) {
    this.#size = Math.max(1, opts.threads ?? Math.min(2, availableParallelism()));
  }

  /** The mapping's values for one message of the account's source; never rejects. */
  evaluate(
    accountId: string,
    key: string,
    mapping: WebhookMapping,
    input: MappingRequest['input'],
  ): Promise<MappingOutcome> {
    if (this.#closed) return Promise.resolve({ ok: false, reason: 'mapping_failed: Vitals is stopping' });
    return new Promise((resolve) => {
      const task: Task = { request: { key, mapping: { ...mapping }, input }, resolve };
      const queue = this.#queues.get(accountId);
      if (queue) queue.push(task);
      else this.#queues.set(accountId, [task]);
      this.#pump();
    });
  }

  /** Ends the threads; messages waiting or evaluating are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    const stopping: MappingOutcome = { ok: false, reason: 'mapping_failed: Vitals is stopping' };
    for (const queue of this.#queues.values()) for (const task of queue) task.resolve(stopping);
    this.#queues.clear();
    await Promise.all([...this.#threads].map((t) => this.#end(t, stopping)));
  }

  /** Gives waiting messages to ready idle threads (starting threads up to the pool's size), account by account. */
  #pump(): void {
    while (!this.#closed && this.#queues.size > 0) {
      let thread: Thread | undefined;
      for (const t of this.#threads) if (t.ready && !t.task) thread = t;
      if (!thread) {
        // A starting thread takes the next message once it is ready.
        const starting = [...this.#threads].some((t) => !t.ready);
        if (!starting && this.#threads.size < this.#size) this.#start();
        return;
      }
      const [accountId, queue] = this.#queues.entries().next().value as [string, Task[]];
      const task = queue.shift() as Task;
      this.#queues.delete(accountId);
      if (queue.length > 0) this.#queues.set(accountId, queue);
      this.#give(thread, task);
    }
  }

  #give(thread: Thread, task: Task): void {
    thread.task = task;
    clearTimeout(thread.idle);
    thread.worker.ref();
    thread.worker.postMessage({ id: this.#next++, ...task.request } satisfies MappingRequest);
    const given = performance.now();
    const start = cpuOf(thread.worker);
    const check = async (): Promise<void> => {
      // A reply that arrived while the main thread was busy is taken now: the budget is the
      // thread's time, not the main thread's delay in reading the answer.
      const waiting = receiveMessageOnPort(thread.replies);
      if (waiting) return this.#replied(thread, waiting.message as MappingReply);
      // The budget is the thread's CPU: on a machine whose cores are busy, a thread that was
      // given less than its 50 ms gets the rest, up to MAPPING_WALL_MS of the clock.
      const [before, now] = await Promise.all([start, cpuOf(thread.worker)]);
      if (thread.task !== task) return;
      const used = before && now ? (now - before) / 1000 : MAPPING_BUDGET_MS;
      const left = MAPPING_WALL_MS - (performance.now() - given);
      if (used < MAPPING_BUDGET_MS && left > 0) {
        thread.timer = setTimeout(check, Math.min(left, Math.max(2, MAPPING_BUDGET_MS - used)));
        return;
      }
      void this.#end(thread, timedOut());
      // Replaced at once, so the next message does not wait for a thread to start.
      this.#start();
      this.#pump();
    };
    thread.timer = setTimeout(check, MAPPING_BUDGET_MS);
  }

  #replied(thread: Thread, reply: MappingReply | { ready: true }): void {
    if (!this.#threads.has(thread)) return;
    if ('ready' in reply) {
      thread.ready = true;
      this.#pump();
      if (!thread.task) this.#idle(thread);
      return;
    }
    clearTimeout(thread.timer);
    const task = thread.task;
    thread.task = undefined;
    thread.worker.unref();
    if (reply.ms > MAPPING_BUDGET_MS) task?.resolve(timedOut());
    else if (reply.ok) task?.resolve({ ok: true, values: reply.values });
    else task?.resolve({ ok: false, reason: `mapping_error: ${reply.field}: ${reply.message}` });
    this.#pump();
    if (!thread.task) this.#idle(thread);
  }

  #idle(thread: Thread): void {
    clearTimeout(thread.idle);
    thread.idle = setTimeout(() => {
      if (!thread.task) void this.#end(thread);
    }, IDLE_MS);
    thread.idle.unref();
  }

  #start(): void {
    if (this.#closed || this.#threads.size >= this.#size) return;
    const { port1: replies, port2 } = new MessageChannel();
    const worker = new Worker(new URL('./mapping-thread.ts', import.meta.url), {
      workerData: { port: port2 },
      transferList: [port2],
      // No heap limit of its own: V8 aborts the whole process, not the thread, when one large array
      // outgrows a worker's limit (JSONata's [1..10000000] does at 64 MB). The CPU budget bounds
      // what a mapping can build instead: JSONata allocates some 100 MB in 50 ms at most.
    });
    const thread: Thread = {
      worker,
      replies,
      ready: false,
      task: undefined,
      timer: undefined,
      idle: undefined,
    };
    this.#threads.add(thread);
    worker.unref(); // held only while it evaluates (#give)
    replies.unref();
    replies.on('message', (reply: MappingReply | { ready: true }) => this.#replied(thread, reply));
    const gone = (error: Error) =>
      void this.#end(thread, {
        ok: false,
        reason: `mapping_failed: the mapping's thread stopped (${error.message}); the message was not applied`,
      }).then(() => this.#pump());
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`exit code ${code}`)));
  }

  /** Ends the thread; its message, if any, gets `outcome`. */
  async #end(thread: Thread, outcome?: MappingOutcome): Promise<void> {
    if (!this.#threads.delete(thread)) return;
    clearTimeout(thread.timer);
    clearTimeout(thread.idle);
    const task = thread.task;
    thread.task = undefined;
    if (task && outcome) task.resolve(outcome);
    thread.replies.close();
    await thread.worker.terminate();
  }
}
