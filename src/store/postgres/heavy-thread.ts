// The thread PostgreSQL's heavy writes run on (heavy-writes.ts starts it): a PostgresStore of its
// own, with a small pool, that runs each write it is sent (found by its name in the registry, as
// the SQLite writer thread finds them) in a transaction, and answers its result and whether the
// commit made deliveries due. Its NOTIFY carries the payload of the store that started it, so
// other processes' dispatchers wake and that store wakes its own listeners once (on the answer).
import { parentPort, workerData } from 'node:worker_threads';
import { WRITES } from '../../writes/index.ts';
import { resultToWire, toWire } from '../wire.ts';
import { findWrite, threadRegistry } from '../write.ts';
import type { HeavyReply, HeavyRequest, HeavyThreadData } from './heavy-writes.ts';
import { PostgresStore } from './postgres-store.ts';

const port = parentPort;
if (!port) throw new Error('heavy-thread.ts runs as a worker thread (heavy-writes.ts starts it)');
const data = workerData as HeavyThreadData;
const store = new PostgresStore({
  url: data.url,
  poolSize: data.poolSize,
  instance: data.instance,
  heavy: 'here',
});
/** The writes this thread runs, by name (../../writes/index.ts, and a test's own). */
const writes = threadRegistry(WRITES, data.writeModules);
const running = new Set<Promise<unknown>>();
const post = (reply: HeavyReply) => port.postMessage(reply);

port.on('message', (m: HeavyRequest) => {
  if (m.op === 'close') {
    // Every write received is let finish first (one that had not begun its transaction yet would
    // otherwise meet a closed pool); a stop is bounded by VITALS_SHUTDOWN_TIMEOUT, after which the
    // process exits and PostgreSQL rolls back what was still running.
    void Promise.allSettled(running)
      .then(() => store.close())
      .then(
        () => post({ id: m.id, ok: true, value: undefined, due: false }),
        (error) => post({ id: m.id, ok: false, error: toWire(error) }),
      );
    return;
  }
  const work = writes
    .then((all) => store.runHere(findWrite(all, m.name), m.args))
    .then(
      ({ value, due }): HeavyReply => ({ id: m.id, ok: true, value: resultToWire(value), due }),
      (error): HeavyReply => ({ id: m.id, ok: false, error: toWire(error) }),
    )
    .then((reply) => {
      try {
        post(reply);
      } catch (error) {
        // A result that does not cross (structured clone refused it): the caller gets why.
        post({ id: m.id, ok: false, error: toWire(error) });
      }
    });
  running.add(work);
  void work.finally(() => running.delete(work));
});
