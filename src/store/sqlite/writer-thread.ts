// The SQLite write connection on a thread of its own (docs/operations.md, "The SQLite writer
// thread"). The group commit runs here: the jobs that arrive while a batch commits share the
// next BEGIN … COMMIT, and the commit's fsync holds up this thread, never the main one, which
// goes on parsing, authenticating and answering. A job is a write found by its module and name
// (../write.ts: the score batch, a rescore; ../shared-writes.ts: the people, keys and idempotency
// writes), a store write of write-ops.ts by name, each one message with plain data, or a
// transaction the main thread drives statement by statement ('open', 'tx' …, 'end'). Started by
// writer-client.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { findSharedWrite } from '../shared-writes.ts';
import { resultToWire, toWire } from '../wire.ts';
import { findWrite } from '../write.ts';
import { Checkpoints } from './checkpoints.ts';
import { Connection } from './connection.ts';
import { LocalWriter } from './local-writer.ts';
import { WRITE_OPS } from './write-ops.ts';
import type { Reply, Request } from './writer-protocol.ts';

const port = parentPort;
if (!port) throw new Error('writer-thread.ts runs as a worker thread (writer-client.ts starts it)');
const { path, synchronous } = workerData as { path: string; synchronous: string };
// A page cache of 128 MB (filled as used): a whole-account rescore rewrites pages of the scores,
// their index, the history and the events, and with 16 MB it evicted and read them again
// (a weights change of 100,000 scores, four rounds: 4.1–5.4 s, 3.2–4.9 s with this; docs/operations.md, "Memory").
const conn = new Connection(path, synchronous, 128);
const post = (reply: Reply) => port.postMessage(reply);
// Checkpoints run on a thread of their own (checkpoints.ts): folding the WAL back into the
// database held up the commit that crossed 1,000 pages, and every write queued behind it.
const checkpoints = new Checkpoints(conn, path, synchronous);
const local = new LocalWriter(
  conn,
  () => post({ due: true }),
  () => checkpoints.committed(),
  () => checkpoints.catchUp(),
);
const { writer } = local;
/** By name, with the arguments as they came: which name is which, WRITE_OPS says. */
const runOp = local.op.bind(local) as (name: string, ...args: unknown[]) => Promise<unknown>;

/** The transaction the main thread is driving: its 'tx' calls run now, its 'end' settles it. */
let session: { id: number; end: (ok: boolean) => void } | undefined;
const txMethods = writer.tx as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;

function answer(id: number, work: Promise<unknown>): void {
  work.then(
    (value) => post({ id, ok: true, value }),
    (error) => post({ id, ok: false, error: toWire(error) }),
  );
}

port.on('message', (m: Request) => {
  switch (m.op) {
    case 'job': {
      const work =
        m.name in WRITE_OPS ? runOp(m.name, ...m.args) : Promise.reject(new Error(`no write op '${m.name}'`));
      return answer(m.id, work);
    }
    case 'write': {
      const { module, name, args } = m;
      const work =
        m.kind === 'tx'
          ? findWrite(module, name).then((write) => local.job(write, ...args).then(resultToWire))
          : Promise.resolve().then(() => local.shared(findSharedWrite(module, name), ...args));
      return answer(m.id, work);
    }
    case 'open':
      return answer(
        m.id,
        local.transaction(
          () =>
            new Promise<void>((resolve, reject) => {
              session = {
                id: m.id,
                end: (ok) => (ok ? resolve() : reject(new Error('the transaction was undone by its caller'))),
              };
              post({ id: m.id, opened: true });
            }),
        ),
      );
    case 'tx': {
      // Only inside the open transaction: a call that comes too late must not write outside it.
      const method = session && txMethods[m.name];
      if (!method)
        return post({ id: m.id, ok: false, error: toWire(new Error(`no open transaction for ${m.name}`)) });
      let work: Promise<unknown>;
      try {
        work = Promise.resolve(method.apply(writer.tx, m.args));
      } catch (error) {
        work = Promise.reject(error);
      }
      return answer(m.id, work);
    }
    case 'end':
      if (session?.id === m.id) {
        const { end } = session;
        session = undefined;
        end(m.ok);
      }
      return;
    case 'migrate':
      return answer(m.id, local.migrate());
    case 'synchronous':
      return answer(m.id, local.synchronous());
    case 'checkpointerSynchronous':
      return answer(m.id, checkpoints.synchronous());
    case 'close':
      return answer(
        m.id,
        local.close().finally(() => checkpoints.close()),
      );
  }
});
