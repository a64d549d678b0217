// A PostgreSQL server of one test file's own, for tests that stop, crash and restart the
// database (the shared server at VITALS_TEST_POSTGRES_URL must never be stopped). initdb into a
// fresh temp directory, started on a free port of 127.0.0.1 with its socket in that directory.
// initdb refuses to run as root; as root (tests do here and in CI) the binaries run as the
// `postgres` user, which owns the directory.
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const RUN_AS = 'postgres';

/** VITALS_TEST_PG_BINDIR, else the highest /usr/lib/postgresql/<version>/bin that has initdb and pg_ctl. */
function binDir(): string | undefined {
  const wanted = process.env.VITALS_TEST_PG_BINDIR;
  const usable = (dir: string) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'));
  if (wanted) return usable(wanted) ? wanted : undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const dir = join(root, v, 'bin');
    if (usable(dir)) return dir;
  }
  return undefined;
}

const asRoot = () => process.getuid?.() === 0;

/** uid and gid of the `postgres` user (root only). */
function runAsIds(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', RUN_AS], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', RUN_AS], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

/** Why a private server cannot run here, or false when it can (a `skip` reason). */
export function privatePostgresAvailable(): string | false {
  if (!binDir()) return 'PostgreSQL binaries (initdb, pg_ctl) not found; set VITALS_TEST_PG_BINDIR';
  if (asRoot() && (!runAsIds() || !existsSync('/usr/sbin/runuser'))) {
    return `running as root needs the '${RUN_AS}' user and runuser for initdb`;
  }
  return false;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Every private server not destroyed when the test process exits is stopped and removed with it
 * (pg_ctl starts it detached: it would outlive us). Also on SIGINT and SIGTERM (a cancelled run),
 * which are then raised again, so the process ends as it would have.
 */
const created = new Set<PrivatePostgres>();
const stopAll = () => {
  for (const pg of created) pg.destroySync();
  created.clear();
};
process.once('exit', stopAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopAll();
    process.kill(process.pid, signal);
  });
}

export class PrivatePostgres {
  readonly root: string;
  readonly data: string;
  readonly port: number;
  readonly #bin: string;

  private constructor(bin: string, root: string, port: number) {
    this.#bin = bin;
    this.root = root;
    this.data = join(root, 'data');
    this.port = port;
  }

  /** A new cluster, initialised and started. */
  static async create(): Promise<PrivatePostgres> {
    const bin = binDir();
    if (!bin) throw new Error('PostgreSQL binaries not found (set VITALS_TEST_PG_BINDIR)');
    const root = mkdtempSync(join(tmpdir(), 'vitals-pg-'));
    if (asRoot()) {
      const ids = runAsIds();
      if (!ids) throw new Error(`no '${RUN_AS}' user to run PostgreSQL as`);
      chownSync(root, ids.uid, ids.gid);
    }
    const pg = new PrivatePostgres(bin, root, await freePort());
    created.add(pg);
    try {
      await pg.#exec('initdb', ['-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync', '-D', pg.data]);
      await pg.start();
    } catch (err) {
      await pg.destroy();
      throw err;
    }
    return pg;
  }

  /** The `postgres` database as the superuser, over TCP. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  get log(): string {
    return join(this.root, 'postgres.log');
  }

  /** Starts the server and waits until it accepts connections (after crash recovery, when there is one). */
  async start(): Promise<void> {
    await this.#exec('pg_ctl', [
      'start',
      '-w',
      '-D',
      this.data,
      '-l',
      this.log,
      '-o',
      `-p ${this.port} -k ${this.root} -c listen_addresses=127.0.0.1`,
    ]);
  }

  /** `fast`: a clean shutdown (sessions terminated, checkpoint); `immediate`: a crash, recovered from WAL at the next start. */
  async stop(mode: 'fast' | 'immediate'): Promise<void> {
    await this.#exec('pg_ctl', ['stop', '-w', '-D', this.data, '-m', mode]);
  }

  /** A postmaster runs (or one that died left its pid file: pg_ctl stop then says so, harmlessly). */
  get #running(): boolean {
    return existsSync(join(this.data, 'postmaster.pid'));
  }

  /** Stops the server if it runs and removes its directory. */
  async destroy(): Promise<void> {
    if (this.#running) await this.stop('immediate').catch(() => {});
    rmSync(this.root, { recursive: true, force: true });
    created.delete(this);
  }

  /** destroy() for the exit hook, where nothing asynchronous runs. */
  destroySync(): void {
    if (this.#running) {
      try {
        execFileSync(...this.#command('pg_ctl', ['stop', '-w', '-D', this.data, '-m', 'immediate']), {
          stdio: 'ignore',
        });
      } catch {}
    }
    rmSync(this.root, { recursive: true, force: true });
  }

  #command(tool: string, args: string[]): [string, string[]] {
    const path = join(this.#bin, tool);
    return asRoot() ? ['runuser', ['-u', RUN_AS, '--', path, ...args]] : [path, args];
  }

  async #exec(tool: string, args: string[]): Promise<void> {
    const [file, argv] = this.#command(tool, args);
    try {
      await run(file, argv, { cwd: this.root, timeout: 60_000 });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`${tool} ${args[0]} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    }
  }
}
