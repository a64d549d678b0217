// Folds the SQLite WAL back into the database on a thread of its own (docs/operations.md, "The
// SQLite writer thread"), so the writer's commits mostly do not. Started by the writer thread
// (checkpoints.ts), told of each commit; it runs a PASSIVE checkpoint, which never waits for the
// writer nor holds it up, at most every CHECKPOINT_EVERY_MS while commits come, and none while
// none do. What it copies is already durable in the WAL: a checkpoint that fails (a full disk)
// loses nothing, and the next one takes it up.
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import { walBytes } from './checkpoints.ts';

/** At most one checkpoint in this many ms: SQLite's own (every 1,000 pages) came about as often under a write load. */
const CHECKPOINT_EVERY_MS = 100;

const port = parentPort;
if (!port) throw new Error('checkpoint-thread.ts runs as a worker thread (checkpoints.ts starts it)');
const { path, synchronous, backstopBytes } = workerData as {
  path: string;
  synchronous: string;
  backstopBytes: number;
};
const db = new DatabaseSync(path, { timeout: 5000 });
// The checkpoint's sync of the database file follows this connection's setting, as the writer's did.
db.exec(`PRAGMA synchronous = ${synchronous}`);
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

let last = 0;
let scheduled: NodeJS.Timeout | undefined;

function run(): void {
  scheduled = undefined;
  last = performance.now();
  // Past the backstop the writer checkpoints between its batches, and only one checkpoint runs at a
  // time: one of this thread's beside it would make the writer's fail, and the WAL grow on.
  if (walBytes(path) > backstopBytes) return;
  try {
    checkpoint.get();
  } catch {
    // Busy or a full disk: the frames stay in the WAL, durable, for the next commit's checkpoint.
  }
}

port.on('message', (m: 'commit' | 'synchronous' | 'close') => {
  if (m === 'synchronous') {
    port.postMessage({
      synchronous: (db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous,
    });
    return;
  }
  if (m === 'commit') {
    scheduled ??= setTimeout(run, Math.max(0, last + CHECKPOINT_EVERY_MS - performance.now()));
    return;
  }
  clearTimeout(scheduled);
  db.close();
  port.close();
});
