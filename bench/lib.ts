// Shared bench plumbing: start a real Vitals server in its own process on a fresh data dir.
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { newId } from '../src/domain/ids.ts';
import { tempDir } from '../test/helpers/app.ts';
import type { TestDatabase } from '../test/helpers/stores.ts';

export interface Server {
  url: string;
  key: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/**
 * One JSON request to a Vitals with the Authorization header given (`Bearer vk_…`, or a source's
 * `Basic …`): the parsed answer, or a throw naming the request and what came back.
 */
export async function callApi(
  url: string,
  authorization: string,
  method: string,
  path: string,
  body?: unknown,
) {
  const res = await fetch(url + path, {
    method,
    headers: { authorization, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

export async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as { port: number }).port;
  probe.close();
  await once(probe, 'close');
  return port;
}

/**
 * Starts `node src/cli.ts serve` and resolves once /readyz answers 200, migrated and serving (/healthz
 * answers while it migrates, and its API 503s then).
 * Without VITALS_DATA_DIR in `env` it gets a fresh one, removed on stop.
 */
export async function startServer(env: Record<string, string> = {}): Promise<Server> {
  const ownDir = env.VITALS_DATA_DIR === undefined;
  const dir = env.VITALS_DATA_DIR ?? tempDir();
  const key = env.VITALS_API_KEY ?? newId.apiKey();
  const port = await freePort();
  const proc = spawn(process.execPath, ['src/cli.ts', 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      VITALS_DATA_DIR: dir,
      VITALS_API_KEY: key,
      VITALS_LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode} before listening`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {}
    if (i > 300) throw new Error('server did not start within 30 s');
    await sleep(100); // polling a process we do not control; it has no event to await
  }
  return {
    url,
    key,
    proc,
    async stop() {
      proc.kill('SIGTERM');
      if (proc.exitCode === null) await once(proc, 'exit');
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * CPU seconds spent so far (Linux): by process `pid` (all its threads), and by the whole machine
 * (every process, the database's included; /proc/stat's busy time). A difference of two readings
 * is the work a scenario cost, which is steadier than its wall time on a shared 2-core machine.
 */
export function cpuSeconds(pid: number): { process: number; machine: number } {
  const TICK = 100; // USER_HZ
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const processTicks = Number(fields[11]) + Number(fields[12]); // utime, stime
  const cpu =
    readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const busy = cpu.slice(0, 8).reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0); // less idle, iowait
  return { process: processTicks / TICK, machine: busy / TICK };
}

/**
 * The V8 heap a server still uses once a full garbage collection has run, in MB, asked through the
 * inspector of a process started with `--inspect=127.0.0.1:<port>`. Heap used without a collection
 * counts the garbage V8 has not collected yet (70-230 MB of it under the load test's mix), so only
 * this tells a leak from a heap that has not been swept.
 */
export async function liveHeapMb(inspectPort: number): Promise<number> {
  const [target] = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  if (!target) throw new Error('the inspector lists no target');
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await once(ws, 'open');
  const answers = new Map<number, (result: any) => void>();
  ws.addEventListener('message', (m) => {
    const { id, result } = JSON.parse(String(m.data));
    answers.get(id)?.(result);
  });
  let nextId = 0;
  const call = (method: string, params: object = {}) =>
    new Promise<any>((resolve) => {
      const id = ++nextId;
      answers.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  try {
    await call('HeapProfiler.collectGarbage');
    const { result } = await call('Runtime.evaluate', {
      expression: 'process.memoryUsage().heapUsed',
      returnByValue: true,
    });
    return result.value / 2 ** 20;
  } finally {
    ws.close();
  }
}

/** Resident memory of a process in MB (Linux). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

/** The most resident memory a process has had so far, in MB (Linux: VmHWM). */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return percentile(sorted, 50);
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/**
 * Runs `work` while `clients` loops GET `base + path()` one request after another, and answers
 * the latencies (ms) of the GETs that started before `work` finished. Any non-2xx GET throws.
 */
export async function probeDuring<T>(
  work: () => Promise<T>,
  base: string,
  path: () => string,
  headers: Record<string, string>,
  clients = 4,
): Promise<{ result: T; latencies: number[] }> {
  const latencies: number[] = [];
  let done = false;
  const loop = async () => {
    while (!done) {
      const t0 = performance.now();
      const res = await fetch(base + path(), { headers });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`GET during work: ${res.status}`);
      latencies.push(performance.now() - t0);
    }
  };
  const loops = Array.from({ length: clients }, loop);
  try {
    return { result: await work(), latencies };
  } finally {
    done = true;
    await Promise.all(loops);
  }
}

/**
 * Calls `request(i)` at a fixed `rate` a second, the i-th when it is due, whatever the earlier ones
 * answer (open loop: a slow answer does not hold the next request back), while `more(i)`; answers
 * each one's latency (ms), timed from the instant it was due or from when it was sent, once all
 * have settled.
 */
export async function openLoop(
  rate: number,
  request: (i: number) => Promise<void>,
  more: (i: number) => boolean,
  timedFrom: 'due' | 'sent',
): Promise<number[]> {
  const latencies: number[] = [];
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; more(i); i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (!more(i)) break;
    const start = timedFrom === 'due' ? due : performance.now();
    pending.push(
      request(i).then(() => {
        latencies.push(performance.now() - start);
      }),
    );
  }
  await Promise.all(pending);
  return latencies;
}

/**
 * Runs `work` while GETs of `base + path()` go out at a fixed `rate` a second (openLoop), and
 * answers the latencies (ms) of those sent before `work` finished, each from the instant it was
 * due. A closed loop (probeDuring) reads as fast as the server answers: on 2 shared cores its
 * readers then take whatever CPU the work leaves, and the work's time measures that share.
 */
export async function probeAtRate<T>(
  work: () => Promise<T>,
  base: string,
  path: () => string,
  headers: Record<string, string>,
  rate: number,
): Promise<{ result: T; latencies: number[] }> {
  let done = false;
  const read = async () => {
    const res = await fetch(base + path(), { headers });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`GET during work: ${res.status}`);
  };
  const reads = openLoop(rate, read, () => !done, 'due');
  try {
    const result = await work();
    done = true;
    return { result, latencies: await reads };
  } finally {
    done = true;
    await reads;
  }
}

/**
 * A Vitals as shipped on a test database (its data dir, and DATABASE_URL on PostgreSQL), logging at
 * warn, the key cache at 2 s, a fresh key (`server.key`); `env` over that (the rate limit, say).
 */
export function serveDatabase(db: TestDatabase, env: Record<string, string> = {}): Promise<Server> {
  return startServer({
    VITALS_DATA_DIR: db.dir,
    VITALS_API_KEY: newId.apiKey(),
    VITALS_LOG_LEVEL: 'warn',
    VITALS_KEY_CACHE_TTL: '2s',
    ...(db.url ? { DATABASE_URL: db.url } : {}),
    ...env,
  });
}

/**
 * After a bulk load on PostgreSQL, VACUUM ANALYZE, as autovacuum would before long in production:
 * without it the figures are of dead rows and a planner with no statistics. SQLite: nothing.
 */
export async function settleAfterLoad(db: TestDatabase): Promise<void> {
  if (!db.url) return;
  const sql = postgres(db.url, { onnotice: () => {} });
  await sql`VACUUM ANALYZE`;
  await sql.end();
}

export interface LoadResult {
  errors: number;
  non2xx: number;
  requests: { average: number };
}

/**
 * autocannon with these options in a process of its own (bench/blast.ts), its requests already
 * copied there: `run()` starts it and answers its result. Prepare it before measuring latency, so
 * the copy (tens of MB of bodies) holds up nothing measured; a non-2xx answer throws.
 */
export async function preparedLoad(opts: object): Promise<{ run(): Promise<LoadResult> }> {
  const child = fork('bench/blast.ts');
  child.send(opts);
  await once(child, 'message');
  return {
    async run() {
      child.send('go');
      const [result] = (await once(child, 'message')) as [LoadResult];
      if (result.errors > 0 || result.non2xx > 0) {
        throw new Error(`${result.errors} errors, ${result.non2xx} non-2xx answers`);
      }
      return result;
    },
  };
}
