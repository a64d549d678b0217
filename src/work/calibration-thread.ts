// A calibration thread (docs/operations.md, "The calibration threads"): the report's arithmetic, seconds of
// CPU over a large account, away from the main thread that answers every other request. It
// receives the judged outcomes packed (../domain/calibration-pack.ts) and answers the report
// calibrate() makes of them, so the answer is the one the main thread would have computed.
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { calibrate } from '../domain/calibration.ts';
import { unpackJudged } from '../domain/calibration-pack.ts';
import type { CalibrationReply, CalibrationRequest } from './calibration-threads.ts';

const port = parentPort;
if (!port) throw new Error('calibration-thread.ts runs as a worker thread');
// This thread yields the CPU to the main thread (on Linux a priority is per thread): on a machine
// whose cores the calibrations fill, the requests of every other account still come first.
try {
  setPriority(10);
} catch {}
port.on('message', (m: CalibrationRequest) => {
  let reply: CalibrationReply;
  try {
    reply = { id: m.id, ok: true, report: calibrate(unpackJudged(m.judged), m.settings) };
  } catch (error) {
    reply = { id: m.id, ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});
