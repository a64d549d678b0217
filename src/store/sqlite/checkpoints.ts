// The writer thread's side of checkpoint-thread.ts: the writer tells the checkpoint thread of
// each commit, and checkpoints itself only once the WAL holds BACKSTOP_PAGES. A checkpoint beside
// the writer cannot finish while the writer keeps appending, and SQLite starts the WAL over only
// after one has: under a steady stream of commits the WAL would grow without bound. The writer's
// own checkpoint, run between its batches, always finishes. It runs after the batch's answers
// have gone, not inside its COMMIT (SQLite's wal_autocheckpoint): a whole-account rescore that
// writes 230 MB of WAL in one commit is answered before those pages are copied. Should the
// thread end unexpectedly, the writer checkpoints in its commits as SQLite does by default.
// docs/operations.md, "The SQLite writer thread".
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Connection } from './connection.ts';

/** SQLite's default: a commit that leaves 1,000 pages or more in the WAL checkpoints. */
const AUTOCHECKPOINT_PAGES = 1000;
/** The writer checkpoints itself past this many pages (40 MB of 4 KB pages) of WAL. */
const BACKSTOP_PAGES = 10_000;
/** SQLite's page size, which Vitals does not change. */
const PAGE_BYTES = 4096;

/** The WAL file's size (0: none); the writer truncates it to the backstop when it starts it over. */
export function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

export class Checkpoints {
  readonly #worker: Worker;
  readonly #conn: Connection;
  readonly #path: string;
  #running = true;

  constructor(conn: Connection, path: string, synchronous: string) {
    this.#conn = conn;
    this.#path = path;
    this.#worker = new Worker(new URL('./checkpoint-thread.ts', import.meta.url), {
      workerData: { path, synchronous, backstopBytes: BACKSTOP_PAGES * PAGE_BYTES },
    });
    // No checkpoint inside a COMMIT: the writer's own runs after its batch is answered (catchUp).
    conn.db.exec('PRAGMA wal_autocheckpoint = 0');
    // The WAL file shrinks back to the backstop when the writer starts it over, so its size tells
    // the thread whether the writer's checkpoints are due (checkpoint-thread.ts).
    conn.db.exec(`PRAGMA journal_size_limit = ${BACKSTOP_PAGES * PAGE_BYTES}`);
    const fallBack = () => {
      if (!this.#running) return;
      this.#running = false;
      conn.db.exec(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    };
    this.#worker.on('error', fallBack);
    this.#worker.on('exit', fallBack);
  }

  /** PRAGMA synchronous of the thread's connection (it writes the database file); null when the thread is not running. */
  synchronous(): Promise<number | null> {
    if (!this.#running) return Promise.resolve(null);
    const answered = new Promise<number | null>((resolve) => {
      const onMessage = (m: unknown) => {
        if (typeof m !== 'object' || m === null || !('synchronous' in m)) return;
        this.#worker.off('message', onMessage);
        this.#worker.off('exit', onExit);
        resolve(m.synchronous as number);
      };
      const onExit = () => {
        this.#worker.off('message', onMessage);
        resolve(null);
      };
      this.#worker.on('message', onMessage);
      this.#worker.once('exit', onExit);
    });
    this.#worker.postMessage('synchronous');
    return answered;
  }

  /** A commit has added to the WAL. */
  committed(): void {
    if (this.#running) this.#worker.postMessage('commit');
  }

  /**
   * The writer's own checkpoint, between two of its batches (never inside a transaction), once
   * the WAL has passed the backstop: it copies what the thread's checkpoints have not, so the
   * next write starts the WAL over. A failure (a full disk) loses nothing: the frames stay, durable.
   */
  catchUp(): void {
    if (!this.#running || walBytes(this.#path) <= BACKSTOP_PAGES * PAGE_BYTES) return;
    try {
      this.#conn.db.exec('PRAGMA wal_checkpoint(PASSIVE)');
    } catch {
      // The next batch's catch-up takes it up.
    }
  }

  /** Ends the thread, after the checkpoint it may be running. */
  async close(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    const exited = new Promise((resolve) => this.#worker.once('exit', resolve));
    this.#worker.postMessage('close');
    await exited;
  }
}
