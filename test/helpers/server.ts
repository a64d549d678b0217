// A real `vitals serve` in its own process, for tests that crash, restart or multiply it.
// Its port is read from Fastify's "Server listening at" line (PORT=0).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'src', 'cli.ts');

/** Processes still running when a test file ends are killed by `killAll`. */
const running = new Set<ChildProcess>();

export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** The parent's environment without anything of ours, plus `extra` (keep the log level at info: the port is read from the log). */
export function serverEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(VITALS_|PORT$|HOST$|DATABASE_URL$|NODE_TEST_CONTEXT$|NODE_OPTIONS$)/.test(name))
      base[name] = value;
  }
  return { ...base, HOST: '127.0.0.1', PORT: '0', VITALS_LOG_LEVEL: 'info', ...extra };
}

export class VitalsProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<unknown>;
  readonly key: string;
  port = 0;
  #stdout = '';

  private constructor(environment: NodeJS.ProcessEnv) {
    this.key = environment.VITALS_API_KEY ?? '';
    this.child = spawn(process.execPath, [CLI, 'serve'], {
      cwd: ROOT,
      env: environment,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(this.child);
    this.exited = once(this.child, 'close').then(() => running.delete(this.child));
    this.child.stderr?.resume();
  }

  static async start(environment: NodeJS.ProcessEnv): Promise<VitalsProcess> {
    const server = new VitalsProcess(environment);
    server.port = await new Promise<number>((resolve, reject) => {
      server.child.stdout?.on('data', (d) => {
        server.#stdout += d;
        // It listens before it migrates (503 meanwhile); "vitals started" follows once it serves.
        const m = /"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/.exec(server.#stdout);
        if (m && server.#stdout.includes('"msg":"vitals started"')) resolve(Number(m[1]));
      });
      server.child.once('close', () =>
        reject(new Error(`serve exited before listening:\n${server.#stdout}`)),
      );
    });
    return server;
  }

  /** What the process has written to stdout so far. */
  get stdout(): string {
    return this.#stdout;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async request<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }

  async stop(): Promise<void> {
    this.child.kill('SIGTERM');
    await this.exited;
  }
}

/** Runs one CLI command (`vitals …`) to its end, `stdin` written to its standard input. */
export async function runCli(
  args: string[],
  environment: NodeJS.ProcessEnv,
  stdin: string | Buffer = '',
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: environment,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end(stdin);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** A port nobody listens on: bound, then released (a receiver can come back on it later). */
export async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}
