// The SQLite write connection on a thread of its own (docs/operations.md, "The SQLite writer
// thread"). The group commit runs here: the jobs that arrive while a batch commits share the
// next BEGIN … COMMIT, and the commit's fsync holds up this thread, never the main one, which
// goes on parsing, authenticating and answering. A job is one message with plain data: a write
// sent by its name (writer-protocol.ts) — one of src/writes/ (the score batch, a rescore), a
// shared write of the store (../shared-writes.ts: the people, keys and idempotency writes) or
// one of SQLite's own queue writes (write-ops.ts). Started by sqlite-store.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { WRITES } from '../../writes/index.ts';
import { findSharedWrite } from '../shared-writes.ts';
import { resultToWire, toWire } from '../wire.ts';
import { findWrite, threadRegistry } from '../write.ts';
import { Checkpoints } from './checkpoints.ts';
import { Connection } from './connection.ts';
import { GroupCommit } from './group-commit.ts';
import { DirectWriter } from './write-connection.ts';
import { WRITE_OPS } from './write-ops.ts';
import type { Reply, Request } from './writer-protocol.ts';

const port = parentPort;
if (!port) throw new Error('writer-thread.ts runs as a worker thread (sqlite-store.ts starts it)');
const { path, synchronous, cacheMb, writeModules } = workerData as {
  path: string;
  synchronous: string;
  cacheMb: number;
  writeModules: string[];
};
/** The writes this thread runs, by name (../../writes/index.ts, and a test's own). */
const writes = threadRegistry(WRITES, writeModules);
// A page cache of 128 MB by default (filled as used; VITALS_SQLITE_CACHE_MB): a whole-account
// rescore rewrites pages of the scores, their index, the history and the events, and with 16 MB it
// evicted and read them again (a weights change of 100,000 scores, four rounds: 4.1–5.4 s,
// 3.2–4.9 s with this; docs/operations.md, "Memory").
const conn = new Connection(path, synchronous, cacheMb);
/** Replies of one turn, sent together once its callbacks have run (a commit answers many at once). */
let outbox: Reply[] = [];
const post = (reply: Reply) => {
  if (outbox.length === 0) {
    queueMicrotask(() => {
      const replies = outbox;
      outbox = [];
      port.postMessage(replies.length === 1 ? replies[0] : replies);
    });
  }
  outbox.push(reply);
};
// Checkpoints run on a thread of their own (checkpoints.ts): folding the WAL back into the
// database in the commit that crosses 1,000 pages would hold it up, and every write queued behind it.
const checkpoints = new Checkpoints(conn, path, synchronous);
const writer = new DirectWriter(conn);
const commits = new GroupCommit(
  writer,
  (due) => {
    checkpoints.committed();
    if (due) post({ due: true });
  },
  { between: () => checkpoints.catchUp(), onBatch: (write, size) => post({ batch: write, size }) },
);
/** By name, with the arguments as they came: which name is which, WRITE_OPS says. */
const runOp = commits.op.bind(commits) as (name: string, ...args: unknown[]) => Promise<unknown>;

function answer(id: number, work: Promise<unknown>): void {
  work.then(
    (value) => post({ id, ok: true, value }),
    (error) => post({ id, ok: false, error: toWire(error) }),
  );
}

port.on('message', (m: Request | Request[]) => {
  if (Array.isArray(m)) for (const one of m) receive(one);
  else receive(m);
});

/** A write by its name, from the table of its kind (writer-protocol.ts). */
async function run(kind: 'tx' | 'db' | 'op', name: string, args: unknown[]): Promise<unknown> {
  if (kind === 'tx') return resultToWire(await commits.job(findWrite(await writes, name), ...args));
  if (kind === 'db') return commits.shared(findSharedWrite(name), ...args);
  if (!(name in WRITE_OPS)) throw new Error(`no write op '${name}'`);
  return runOp(name, ...args);
}

function receive(m: Request) {
  switch (m.op) {
    case 'write':
      return answer(m.id, run(m.kind, m.name, m.args));
    case 'migrate':
      return answer(m.id, commits.migrate());
    case 'synchronous':
      return answer(m.id, commits.synchronous());
    case 'checkpointerSynchronous':
      return answer(m.id, checkpoints.synchronous());
    case 'close':
      return answer(
        m.id,
        commits.close().finally(() => checkpoints.close()),
      );
  }
}
