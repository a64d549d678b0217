// The real CLI in real processes: `serve` on a temp data dir while `keys …` and `migrate`
// run beside it. Every wait is on an event (a log line, a socket, a process exit), never a timer.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { customerBody, tempDir } from '../helpers/app.ts';
import { runCli } from '../helpers/server.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'src', 'cli.ts');
// The Node that runs the tests (node_modules/.bin/node under `npm test`) runs the CLI too.
const NODE = process.execPath;
const KEY = /\bvk_[0-9A-Za-z]{32}\b/;
// A guard against a hang, not a speed target: a suite of a dozen CLI runs takes 10 s alone and
// over 30 s beside the rest of `npm test` on 2 cores.
const LIMIT = { timeout: 120_000 };

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = tempDir();
  dirs.push(dir);
  return dir;
}

/** The environment a user would give the CLI: nothing inherited that configures Vitals. */
function env(dir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(VITALS_|PORT$|HOST$|DATABASE_URL$|NODE_TEST_CONTEXT$|NODE_OPTIONS$)/.test(name))
      base[name] = value;
  }
  return { ...base, VITALS_DATA_DIR: dir, HOST: '127.0.0.1', PORT: '0', VITALS_LOG_LEVEL: 'info', ...extra };
}

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

const cli = (args: string[], environment: NodeJS.ProcessEnv): Promise<Result> => runCli(args, environment);

/** A running `vitals serve`, ready once Fastify has logged that it listens. */
class Server {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  port = 0;
  readonly exited: Promise<number | null>;
  #watchers: (() => void)[] = [];

  private constructor(environment: NodeJS.ProcessEnv, command: string[]) {
    this.child = spawn(command[0] as string, command.slice(1), {
      cwd: ROOT,
      env: environment,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout?.on('data', (d) => {
      this.stdout += d;
      for (const w of this.#watchers) w();
    });
    this.child.stderr?.on('data', (d) => {
      this.stderr += d;
    });
    this.exited = once(this.child, 'close').then(([code]) => {
      for (const w of this.#watchers) w();
      return code as number | null;
    });
  }

  /** `vitals serve`, or another `command` that runs it (`npm start`). */
  static async start(environment: NodeJS.ProcessEnv, command = [NODE, CLI, 'serve']): Promise<Server> {
    const server = new Server(environment, command);
    const line = await server.waitFor(/"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/);
    server.port = Number(line[1]);
    // It listens before it migrates (503 meanwhile); "vitals started" follows once it serves.
    await server.waitFor(/"msg":"vitals started"/);
    return server;
  }

  /** Resolves with the match once stdout matches; rejects if the process ends first. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(this.stdout);
        if (match) {
          this.#watchers = this.#watchers.filter((w) => w !== check);
          resolve(match);
        } else if (this.child.exitCode !== null || this.child.signalCode !== null) {
          reject(new Error(`serve exited before ${pattern}:\n${this.stdout}\n${this.stderr}`));
        }
      };
      this.#watchers.push(check);
      check();
    });
  }

  fetch(path: string, key: string | undefined, init: { method?: string; body?: unknown } = {}) {
    const headers: Record<string, string> = {};
    if (key) headers.authorization = `Bearer ${key}`;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    return fetch(`http://127.0.0.1:${this.port}${path}`, {
      method: init.method ?? 'GET',
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    }).catch((err: Error) => {
      // Say why the server is not there: its exit and its last words.
      const { exitCode, signalCode } = this.child;
      const tail = (text: string) => text.slice(-4000);
      throw new Error(
        `${path}: ${err.message} (serve exit code ${exitCode}, signal ${signalCode})\nstdout: ${tail(this.stdout)}\nstderr: ${tail(this.stderr)}`,
        { cause: err },
      );
    });
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}

const generatedKey = (stdout: string): string | undefined =>
  /No API key existed[\s\S]*?\b(vk_[0-9A-Za-z]{32})\b/.exec(stdout)?.[1];

describe('vitals serve with keys managed beside it', LIMIT, () => {
  const dir = dataDir();
  let server: Server;
  let firstKey: string;

  test('the first start on an empty data dir prints a generated key once, and it works', async () => {
    server = await Server.start(env(dir, { VITALS_KEY_CACHE_TTL: '0' }));
    const key = generatedKey(server.stdout);
    assert.ok(key, `a generated key is printed:\n${server.stdout}`);
    firstKey = key;
    assert.equal(server.stdout.split(key).length - 1, 2, 'shown in the notice and in the usage line only');
    const res = await server.fetch('/api/customers', firstKey, {
      method: 'POST',
      body: customerBody('cus_default'),
    });
    assert.equal(res.status, 201);
  });

  test('`keys create` prints a vk_ key on stdout that the running server accepts', async () => {
    const out = await cli(['keys', 'create'], env(dir));
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^vk_[0-9A-Za-z]{32}\n$/);
    assert.match(out.stderr, /Created key key_[0-9A-Za-z]+ for account 'default'/);
    const key = out.stdout.trim();
    const res = await server.fetch('/api/customers/cus_default', key);
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { id: string }).id, 'cus_default');
  });

  test("`keys create --account other` makes an account whose key sees none of the default's customers", async () => {
    const out = await cli(['keys', 'create', '--account', 'other'], env(dir));
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stderr, /for account 'other'/);
    const key = out.stdout.trim();
    assert.match(key, KEY);

    const list = await server.fetch('/api/customers', key);
    assert.equal(list.status, 200);
    assert.deepEqual(await list.json(), { customers: [], has_more: false });
    assert.equal((await server.fetch('/api/customers/cus_default', key)).status, 404);
    const own = await server.fetch('/api/customers', key, {
      method: 'POST',
      body: customerBody('cus_default'),
    });
    assert.equal(own.status, 201, 'the same id is free in another account');
  });

  test('`keys create --account` refuses a bad account name', async () => {
    const out = await cli(['keys', 'create', '--account', 'has space'], env(dir));
    assert.equal(out.code, 2);
    assert.match(out.stderr, /--account/);
    assert.equal(out.stdout, '');
  });

  test('`keys create --scope read` makes a key the running server lets read and refuses to write', async () => {
    const out = await cli(['keys', 'create', '--scope', 'read', '--account', 'reader'], env(dir));
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stderr, /for account 'reader' \(read\)/);
    const key = out.stdout.trim();
    const id = /Created key (key_[0-9A-Za-z]+)/.exec(out.stderr)?.[1] as string;
    assert.equal((await server.fetch('/api/customers', key)).status, 200);
    const write = await server.fetch('/api/customers', key, { method: 'POST', body: customerBody('cus_r') });
    assert.equal(write.status, 403);
    assert.equal(((await write.json()) as { error: { code: string } }).error.code, 'permission_denied');
    const listed = await cli(['keys', 'list'], env(dir));
    assert.match(listed.stdout, new RegExp(`^${id}\\treader\\tread\\t`, 'm'));
    const bad = await cli(['keys', 'create', '--scope', 'admin'], env(dir));
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--scope must be read/);
    assert.equal(bad.stdout, '');
  });

  test('`keys list` shows ids, account names and prefixes, never a whole key', async () => {
    const created = await cli(['keys', 'create', '--account', 'listed'], env(dir));
    const key = created.stdout.trim();
    const id = /Created key (key_[0-9A-Za-z]+)/.exec(created.stderr)?.[1] as string;

    const out = await cli(['keys', 'list'], env(dir));
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.trim().split('\n');
    assert.equal(lines.length, 5, out.stdout);
    const line = lines.find((l) => l.startsWith(`${id}\t`));
    assert.ok(line, `${id} is listed:\n${out.stdout}`);
    assert.match(line, /\tlisted\twrite\t/);
    assert.ok(line.includes(key.slice(0, 7)), 'the prefix identifies the key');
    assert.match(line, /\tactive$/);
    assert.equal(lines.filter((l) => /\tdefault\t/.test(l)).length, 2);
    assert.equal(lines.filter((l) => /\tother\t/.test(l)).length, 1);
    for (const whole of [key, firstKey]) {
      assert.equal(out.stdout.includes(whole), false);
      assert.equal(out.stdout.includes(whole.slice(8)), false);
    }
    assert.doesNotMatch(out.stdout, KEY);
  });

  test('`keys revoke ID` makes the key fail with 401 on the running server', async () => {
    const created = await cli(['keys', 'create'], env(dir));
    const key = created.stdout.trim();
    const id = /Created key (key_[0-9A-Za-z]+)/.exec(created.stderr)?.[1] as string;
    assert.equal((await server.fetch('/api/customers', key)).status, 200);

    const out = await cli(['keys', 'revoke', id], env(dir));
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, new RegExp(`Revoked ${id}`));

    const res = await server.fetch('/api/customers', key);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer');
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'api_key_invalid');
    assert.equal((await server.fetch('/api/customers', firstKey)).status, 200, 'other keys still work');

    const listed = await cli(['keys', 'list'], env(dir));
    assert.match(listed.stdout, new RegExp(`${id}\\t.*\\trevoked `));
  });

  test('`keys revoke` of an unknown or already revoked id exits 1', async () => {
    const out = await cli(['keys', 'revoke', 'key_doesnotexist'], env(dir));
    assert.equal(out.code, 1);
    assert.match(out.stderr, /No active key with id 'key_doesnotexist'/);
  });

  test('`users create` prints a one-time link the running server takes; `users list` and `remove` manage them', async () => {
    const out = await cli(
      ['users', 'create', 'Ana@Example.com', '--role', 'editor', '--url', 'https://vitals.example/'],
      env(dir),
    );
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stderr, /Added Ana@Example.com \(editor\) to account 'default'/);
    const token = /^https:\/\/vitals\.example\/set-password#token=([A-Za-z0-9_-]{43})\n$/.exec(
      out.stdout,
    )?.[1];
    assert.ok(token, out.stdout);
    const set = await server.fetch('/auth/password', undefined, {
      method: 'POST',
      body: { token, password: 'a long enough password' },
    });
    assert.equal(set.status, 200);
    const listed = await cli(['users', 'list'], env(dir));
    assert.match(listed.stdout, /^ana@example\.com\tdefault\teditor\tpassword set\t/m);
    assert.equal(listed.stdout.includes(token), false);
    const twice = await cli(['users', 'create', 'ana@example.com'], env(dir));
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /exists already/);
    for (const bad of [
      ['users', 'create', 'x@y.z', '--role', 'owner'],
      ['users', 'create', 'not-an-email'],
    ]) {
      const refused = await cli(bad, env(dir));
      assert.equal(refused.code, 2, bad.join(' '));
      assert.equal(refused.stdout, '');
    }
    assert.equal((await cli(['users', 'remove', 'ana@example.com'], env(dir))).code, 0);
    const gone = await cli(['users', 'remove', 'ana@example.com'], env(dir));
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /No user with the email/);
  });

  test('`migrate` beside the running server prints the schema version', async () => {
    const out = await cli(['migrate'], env(dir));
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, `Database schema is at version ${MIGRATIONS.length}.\n`);
    assert.equal((await server.fetch('/readyz', undefined)).status, 200);
  });

  test('a second start on the same data dir prints no key; the first key still works', async () => {
    assert.equal(await server.stop(), 0);
    server = await Server.start(env(dir));
    assert.equal(generatedKey(server.stdout), undefined, server.stdout);
    assert.doesNotMatch(server.stdout, KEY);
    assert.equal((await server.fetch('/api/customers/cus_default', firstKey)).status, 200);
    assert.equal(await server.stop(), 0);
  });

  after(() => server?.stop());
});

describe('vitals configuration', LIMIT, () => {
  test('`migrate` on an empty data dir creates the database and prints the version', async () => {
    const out = await cli(['migrate'], env(dataDir()));
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /^Database schema is at version \d+\.\n$/);
    assert.equal(out.stdout, `Database schema is at version ${MIGRATIONS.length}.\n`);
  });

  test('VITALS_API_KEY makes that key work, and no other key is generated', async () => {
    const key = `vk_${'k'.repeat(16)}${'7'.repeat(16)}`;
    const server = await Server.start(env(dataDir(), { VITALS_API_KEY: key }));
    try {
      assert.equal(generatedKey(server.stdout), undefined);
      assert.equal(server.stdout.includes(key), false, 'the configured key is not echoed');
      assert.equal((await server.fetch('/api/customers', key)).status, 200);
      assert.equal((await server.fetch('/api/customers', `vk_${'x'.repeat(32)}`)).status, 401);
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });

  const bad: [string, Record<string, string>, string][] = [
    ['PORT=abc', { PORT: 'abc' }, 'PORT'],
    ['PORT=70000', { PORT: '70000' }, 'PORT'],
    ['VITALS_API_KEY=nope', { VITALS_API_KEY: 'nope' }, 'VITALS_API_KEY'],
    ['VITALS_KEY_CACHE_TTL=soon', { VITALS_KEY_CACHE_TTL: 'soon' }, 'VITALS_KEY_CACHE_TTL'],
    ['VITALS_LOG_LEVEL=loud', { VITALS_LOG_LEVEL: 'loud' }, 'VITALS_LOG_LEVEL'],
  ];
  for (const [what, extra, name] of bad) {
    test(`${what}: serve exits non-zero with a message naming ${name}`, async () => {
      const dir = dataDir();
      const out = await cli(['serve'], env(dir, extra));
      assert.notEqual(out.code, 0);
      assert.match(out.stderr, new RegExp(`Configuration error: ${name}\\b`));
      assert.doesNotMatch(out.stdout, /Server listening/);
    });
  }

  test('a malformed VITALS_API_KEY is named but not echoed (it may be a real key with a typo)', async () => {
    const almost = `vk_${'s'.repeat(31)}`;
    const out = await cli(['serve'], env(dataDir(), { VITALS_API_KEY: almost }));
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /VITALS_API_KEY/);
    assert.equal(out.stderr.includes(almost), false, out.stderr);
  });

  test('an unknown command exits 2 with the usage', async () => {
    const out = await cli(['frobnicate'], env(dataDir()));
    assert.equal(out.code, 2);
    assert.match(out.stderr, /Usage: vitals/);
  });
});

describe('`users create` without a server', LIMIT, () => {
  const linkDir = dataDir();
  test('`users create` links to the port the server is told to serve on (PORT), or 3000; --url wins', async () => {
    const link = async (email: string, extra: Record<string, string>, args: string[] = []) => {
      const out = await cli(['users', 'create', email, ...args], env(linkDir, extra));
      assert.equal(out.code, 0, out.stderr);
      return out.stdout;
    };
    assert.match(
      await link('port@example.com', { PORT: '8080' }),
      /^http:\/\/localhost:8080\/set-password#token=/,
    );
    const base = env(linkDir);
    delete base.PORT;
    const out = await cli(['users', 'create', 'default-port@example.com'], base);
    assert.match(out.stdout, /^http:\/\/localhost:3000\/set-password#token=/);
    assert.match(
      await link('url@example.com', { PORT: '8080' }, ['--url', 'https://cs.example']),
      /^https:\/\/cs\.example\/set-password#token=/,
    );
  });
});

describe('vitals serve shutdown', LIMIT, () => {
  const key = `vk_${'S'.repeat(32)}`;

  test('SIGTERM with nothing in flight exits 0', async () => {
    const server = await Server.start(env(dataDir(), { VITALS_API_KEY: key }));
    assert.equal(await server.stop(), 0);
    assert.match(server.stdout, /"signal":"SIGTERM","msg":"shutting down"/);
  });

  test('npm start passes SIGTERM on: the server stops with npm, and nothing is left running', async () => {
    // As `npm test` runs it (npm_execpath), or the npm on the PATH.
    const npm = process.env.npm_execpath ? [NODE, process.env.npm_execpath] : ['npm'];
    const server = await Server.start(env(dataDir(), { VITALS_API_KEY: key }), [...npm, 'start']);
    const pid = Number(/"pid":(\d+)/.exec(server.stdout)?.[1]);
    assert.ok(pid > 0 && pid !== server.child.pid, `the server runs under npm: ${server.stdout}`);
    server.child.kill('SIGTERM'); // the signal a process manager or `kill` sends to the pid it started
    assert.equal(await server.exited, 0, server.stderr);
    assert.match(server.stdout, /"signal":"SIGTERM","msg":"shutting down"/);
    assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'no server left running without npm');
    await assert.rejects(fetch(`http://127.0.0.1:${server.port}/healthz`), 'nothing listens any more');
  });

  test('SIGTERM during a request: it completes, new connections are refused, the process exits 0', async () => {
    const dir = dataDir();
    const server = await Server.start(env(dir, { VITALS_API_KEY: key }));
    const body = JSON.stringify(customerBody('cus_inflight'));

    // Headers first, with Expect: 100-continue: the server's "100 Continue" proves the request
    // is in flight before the signal, and the body follows only after shutdown has begun.
    const socket = connect(server.port, '127.0.0.1');
    await once(socket, 'connect');
    let received = '';
    let closed = false;
    const notify: (() => void)[] = [];
    socket.on('data', (d: Buffer) => {
      received += d;
      for (const n of notify) n();
    });
    socket.on('close', () => {
      closed = true;
      for (const n of notify) n();
    });
    const arrived = (text: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (received.includes(text)) resolve();
          else if (closed)
            reject(new Error(`connection closed before ${JSON.stringify(text)}:\n${received}`));
        };
        notify.push(check);
        check();
      });
    const ended = once(socket, 'end');
    socket.write(
      [
        'POST /api/customers HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Bearer ${key}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Expect: 100-continue',
        'Connection: close',
        '',
        '',
      ].join('\r\n'),
    );
    await arrived('HTTP/1.1 100 Continue');

    server.child.kill('SIGTERM');
    await server.waitFor(/"msg":"shutting down"/);
    await connectionRefused(server.port);

    const response = arrived('"id":"cus_inflight"');
    socket.write(body);
    await response;
    await ended;
    assert.match(received, /HTTP\/1\.1 201 Created/);
    assert.equal(await server.exited, 0);

    // The write committed before the database closed.
    const store = new SqliteStore({ path: join(dir, 'vitals.db') });
    try {
      const [apiKey] = await store.listApiKeys();
      assert.ok(apiKey);
      assert.equal((await store.getCustomer(apiKey.accountId, 'cus_inflight'))?.id, 'cus_inflight');
    } finally {
      await store.close();
    }
  });
});

/**
 * Resolves once the port refuses connections. Each attempt waits for its own outcome; a
 * connection accepted while the server is still closing is dropped and tried again.
 */
async function connectionRefused(port: number): Promise<void> {
  for (;;) {
    const socket = connect(port, '127.0.0.1');
    const outcome = await new Promise<'refused' | 'accepted'>((resolve) => {
      socket.once('error', () => resolve('refused'));
      socket.once('connect', () => resolve('accepted'));
    });
    socket.destroy();
    if (outcome === 'refused') return;
    await once(socket, 'close');
  }
}
