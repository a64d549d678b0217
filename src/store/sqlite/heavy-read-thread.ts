// The thread SQLite's heavy reads run on (heavy-reads.ts starts it): a read connection of its own
// to the store's file, under WAL seeing what is committed as the main thread's does, and the same
// reader the main thread has (../sql-reader.ts with reader.ts), so an answer is the one the main
// thread would have given. One read at a time, in the order they come.
import { parentPort, workerData } from 'node:worker_threads';
import { SqlReader } from '../sql-reader.ts';
import { toWire } from '../wire.ts';
import { Connection } from './connection.ts';
import { driverOf } from './driver.ts';
import {
  HEAVY_READS,
  type HeavyReadData,
  type HeavyReadReply,
  type HeavyReadRequest,
} from './heavy-reads.ts';
import { sqliteReads } from './reader.ts';

const port = parentPort;
if (!port) throw new Error('heavy-read-thread.ts runs as a worker thread (heavy-reads.ts starts it)');
const { path } = workerData as HeavyReadData;
// `synchronous` only matters to a connection that writes; this one cannot (query_only).
const conn = new Connection(path, 'normal', 8);
conn.db.exec('PRAGMA query_only = ON');
const reader = new SqlReader(driverOf(conn), sqliteReads(conn));
const allowed = new Set<string>(HEAVY_READS);
const post = (reply: HeavyReadReply) => port.postMessage(reply);

async function run(m: Extract<HeavyReadRequest, { op: 'read' }>): Promise<unknown> {
  if (!allowed.has(m.name)) throw new Error(`'${m.name}' is not a heavy read`);
  const method = reader[m.name] as (...args: unknown[]) => Promise<unknown>;
  return method.apply(reader, m.args);
}

port.on('message', (m: HeavyReadRequest) => {
  if (m.op === 'close') {
    // Messages come in order and each read runs whole before the next: those sent before are answered.
    conn.db.close();
    post({ id: m.id, ok: true, value: undefined });
    return;
  }
  run(m).then(
    (value) => {
      try {
        post({ id: m.id, ok: true, value });
      } catch (error) {
        // An answer that does not cross (structured clone refused it): the caller gets why.
        post({ id: m.id, ok: false, error: toWire(error) });
      }
    },
    (error) => post({ id: m.id, ok: false, error: toWire(error) }),
  );
});
