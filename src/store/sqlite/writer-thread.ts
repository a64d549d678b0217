// The SQLite write connection on a thread of its own (docs/operations.md, "The SQLite writer
// thread"). The group commit runs here: the jobs that arrive while a batch commits share the
// next BEGIN … COMMIT, and the commit's fsync holds up this thread, never the main one, which
// goes on parsing, authenticating and answering. A job is either named (JOBS: the score batch,
// the store's own writes), sent as one message with plain data, or a transaction the main
// thread drives statement by statement ('open', 'tx' …, 'end'). Started by writer-client.ts.
import { parentPort, workerData } from 'node:worker_threads';
import { JOBS } from '../../writes/jobs.ts';
import type { Tx } from '../store.ts';
import { Connection } from './connection.ts';
import { GroupCommit } from './group-commit.ts';
import { DirectWriter } from './write-connection.ts';
import { migrate, WRITE_OPS, type WriteOpName } from './write-ops.ts';
import { type Reply, type Request, resultToWire, toWire } from './writer-protocol.ts';

const port = parentPort;
if (!port) throw new Error('writer-thread.ts runs as a worker thread (writer-client.ts starts it)');
const { path, synchronous } = workerData as { path: string; synchronous: string };
const conn = new Connection(path, synchronous, 16);
const writer = new DirectWriter(conn);
const post = (reply: Reply) => port.postMessage(reply);
const commits = new GroupCommit(writer, (due) => {
  if (due) post({ due: true });
});

type Job = (tx: Tx, args: unknown[]) => Promise<unknown> | unknown;
const jobs: Record<string, Job> = {};
for (const [name, job] of Object.entries(JOBS) as [string, (tx: Tx, ...a: unknown[]) => Promise<unknown>][]) {
  jobs[name] = async (tx, args) => resultToWire(name, await job(tx, ...args));
}
for (const name of Object.keys(WRITE_OPS) as WriteOpName[]) {
  const op = WRITE_OPS[name] as (c: Connection, ...a: unknown[]) => unknown;
  jobs[name] = (_tx, args) => op(conn, ...args);
}

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
      const job = jobs[m.name];
      if (!job) return post({ id: m.id, ok: false, error: toWire(new Error(`no job '${m.name}'`)) });
      return answer(
        m.id,
        commits.run(async (tx) => job(tx, m.args)),
      );
    }
    case 'open':
      return answer(
        m.id,
        commits.run(
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
      return answer(
        m.id,
        Promise.resolve().then(() => migrate(conn)),
      );
    case 'synchronous':
      return answer(
        m.id,
        Promise.resolve().then(() => WRITE_OPS.synchronous(conn)),
      );
    case 'close':
      return answer(
        m.id,
        commits.idle().then(() => conn.db.close()),
      );
  }
});
