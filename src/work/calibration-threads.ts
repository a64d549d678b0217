// The calibration threads (docs/operations.md, "The calibration threads"). The report over
// 20,000 outcomes of 50 factors is seconds of CPU; on the main thread twelve of them from one
// account would hold another account's list for 21.8 s. Here it runs on a small pool of worker threads,
// started with the first report, held by the process only while one computes, and ended after
// IDLE_MS without work. The accounts waiting take turns (round robin), so one account's queue
// never holds another's report behind all of it. A thread that dies fails the report it was
// computing (a 500, never a hang), and the next report starts another. Each thread runs at a
// lower priority than the main thread (calibration-thread.ts).
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Calibration } from '../domain/calibration.ts';
import type { PackedJudged } from '../domain/calibration-pack.ts';
import type { Thresholds, Weights } from '../domain/scoring.ts';

export interface CalibrationSettings {
  weights: Weights;
  thresholds: Thresholds;
}

export interface CalibrationRequest {
  id: number;
  judged: PackedJudged;
  settings: CalibrationSettings;
}

export type CalibrationReply =
  | { id: number; ok: true; report: Calibration }
  | { id: number; ok: false; message: string };

export interface CalibrationThreadOptions {
  /** Threads at most; min(2, the machine's parallelism) unless given. */
  threads?: number;
  /** Each thread's heap in MB (V8's default unless given): past it the thread dies and its report fails. */
  heapMb?: number;
  /** A report was computed. */
  onComputed?: () => void;
}

interface Task {
  judged: PackedJudged;
  transfer: ArrayBuffer[];
  settings: CalibrationSettings;
  resolve: (report: Calibration) => void;
  reject: (error: Error) => void;
}

interface Thread {
  worker: Worker;
  task: Task | undefined;
  idle: NodeJS.Timeout | undefined;
}

/**
 * A thread idle this long ends: a report over 20,000 outcomes of 50 factors leaves a few hundred
 * MB in its heap that an idle thread never collects, and starting one again costs tens of ms.
 */
const IDLE_MS = 10_000;

export class CalibrationThreads {
  readonly #size: number;
  readonly #heapMb: number | undefined;
  readonly #onComputed: (() => void) | undefined;
  readonly #threads = new Set<Thread>();
  /** Each account's reports waiting, in the accounts' turn order: an account served moves to the end. */
  readonly #queues = new Map<string, Task[]>();
  #next = 1;
  #closed = false;

  constructor(opts: CalibrationThreadOptions = {}) {
    this.#size = Math.max(1, opts.threads ?? Math.min(2, availableParallelism()));
    this.#heapMb = opts.heapMb;
    this.#onComputed = opts.onComputed;
  }

  /** calibrate() of the packed outcomes, on a thread; `transfer` (their buffers) moves there. */
  compute(
    accountId: string,
    judged: PackedJudged,
    transfer: ArrayBuffer[],
    settings: CalibrationSettings,
  ): Promise<Calibration> {
    if (this.#closed) return Promise.reject(new Error('the calibration threads are closed'));
    return new Promise((resolve, reject) => {
      const task: Task = { judged, transfer, settings, resolve, reject };
      const queue = this.#queues.get(accountId);
      if (queue) queue.push(task);
      else this.#queues.set(accountId, [task]);
      this.#pump();
    });
  }

  /** Fails the reports waiting and ends the threads (the ones computing fail too). */
  async close(): Promise<void> {
    this.#closed = true;
    const error = new Error('the calibration threads are closed');
    for (const queue of this.#queues.values()) for (const task of queue) task.reject(error);
    this.#queues.clear();
    await Promise.all([...this.#threads].map((t) => t.worker.terminate()));
  }

  /** Gives waiting reports to idle threads (starting threads up to the pool's size), account by account. */
  #pump(): void {
    while (!this.#closed && this.#queues.size > 0) {
      let thread: Thread | undefined;
      for (const t of this.#threads) if (!t.task) thread = t;
      if (!thread) {
        if (this.#threads.size >= this.#size) return;
        thread = this.#start();
      }
      const [accountId, queue] = this.#queues.entries().next().value as [string, Task[]];
      const task = queue.shift() as Task;
      this.#queues.delete(accountId);
      if (queue.length > 0) this.#queues.set(accountId, queue);
      thread.task = task;
      clearTimeout(thread.idle);
      thread.worker.ref();
      const request: CalibrationRequest = { id: this.#next++, judged: task.judged, settings: task.settings };
      thread.worker.postMessage(request, task.transfer);
    }
  }

  #start(): Thread {
    const worker = new Worker(
      new URL('./calibration-thread.ts', import.meta.url),
      this.#heapMb === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: this.#heapMb } },
    );
    const thread: Thread = { worker, task: undefined, idle: undefined };
    this.#threads.add(thread);
    worker.unref(); // held only while it computes (#pump)
    worker.on('message', (reply: CalibrationReply) => {
      const task = thread.task;
      thread.task = undefined;
      worker.unref();
      if (reply.ok) {
        this.#onComputed?.();
        task?.resolve(reply.report);
      } else task?.reject(new Error(`the calibration failed: ${reply.message}`));
      this.#pump();
      if (!thread.task) {
        thread.idle = setTimeout(() => {
          if (thread.task || !this.#threads.delete(thread)) return;
          void worker.terminate();
        }, IDLE_MS);
        thread.idle.unref();
      }
    });
    const gone = (error: Error) => {
      clearTimeout(thread.idle);
      if (!this.#threads.delete(thread)) return;
      thread.task?.reject(error);
      thread.task = undefined;
      this.#pump();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`a calibration thread exited (code ${code})`)));
    return thread;
  }
}
