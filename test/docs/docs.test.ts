// The docs cannot go stale: every ```sh / ```bash block of README.md and docs/*.md runs here,
// in document order, against a real Vitals, and every relative link must resolve.
//
// Each doc file gets one bash (`set -euo pipefail`, cwd the repository root) that runs its blocks
// one after another, so later blocks see the variables and the state that earlier ones made, as
// in a reader's terminal. Its environment has VITALS and KEY (the URL and API key of a Vitals
// process of the file's own, started for files that use $VITALS or $KEY; SQLite, rate limit off),
// VITALS_DATA_DIR (that process's data, so `npx vitals …` works on the same database), PORT=0 and
// HOST=127.0.0.1 (for servers a block starts), and TMPDIR (a scratch directory, so `mktemp` leaves
// nothing behind). The first command that fails fails its block, naming the file, the line and
// the output; the file's later blocks are then skipped, since they build on it. Output samples in
// the docs are comments (`# {...}`) or ```text / ```json blocks, which are not run.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { after, describe, type TestContext, test } from 'node:test';
import { EVENT_TYPES } from '../../src/domain/events.ts';
import { newId } from '../../src/domain/ids.ts';
import { buildTestApp } from '../helpers/app.ts';
import {
  anchors,
  Background,
  type Block,
  blockName,
  type Exception,
  fencedBlocks,
  relativeLinks,
  Shell,
  type Step,
  splitSteps,
} from '../helpers/docs.ts';
import { killAll, ROOT, serverEnv, VitalsProcess } from '../helpers/server.ts';
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from '../helpers/stores.ts';

// ---------------------------------------------------------------------------------------------
// Every command that is not run as written, and why. A command is a line of a block (with its
// `\` continuations) split at ` && `, without its trailing `# comment`.
// ---------------------------------------------------------------------------------------------
const EXCEPTIONS: Exception[] = [
  {
    // .ci/run runs them (and `npm test` here would run this file again).
    rule: 'run by CI',
    matches: (c) => ['npm install', 'npm ci', 'npm run check', 'npm test'].includes(c),
    action: 'skip',
  },
  {
    // `export VITALS=http://localhost:3000`, `export KEY=vk_…`, `export DATABASE_URL=postgres://…`
    // are the reader's own values; the test has exported its own.
    rule: 'reader setup: the test sets VITALS, KEY and DATABASE_URL itself',
    matches: (c) => /^export (VITALS|KEY|DATABASE_URL)=\S*$/.test(c),
    action: 'skip',
  },
  {
    // `npm start` or `npx vitals serve`, after any VAR=value, runs until stopped. The test starts
    // it with the block's environment (not variables an earlier command set without exporting),
    // waits for "Server listening" (VITALS then points at it) and stops it when the block ends.
    // Its own Vitals is stopped before such a block and started again after it on the same data:
    // one Vitals per data directory, as for a reader.
    rule: 'server',
    matches: (c) => /^(?:[A-Z][A-Z0-9_]*=\S+ +)*(?:npm start|npx vitals serve)$/.test(c),
    action: 'serve',
  },
];

/** A block that mentions DATABASE_URL needs PostgreSQL. With VITALS_TEST_POSTGRES_URL set it runs
 *  with DATABASE_URL exported, pointing at a fresh database of its file with the Vitals schema
 *  (dropped afterwards); without, it is reported as skipped, by name. */
const NEEDS_POSTGRES = /\bDATABASE_URL\b/;

/** A block that uses $VITALS or $KEY needs the file's Vitals. */
const NEEDS_SERVER = /\$\{?(VITALS|KEY)\b/;

/** Doc files run two at a time; files whose commands name the same fixed port (a receiver on
 *  localhost:4000, PORT=3001) take turns. */
const FILES_AT_ONCE = 2;

/** What other test files running beside this one create in the repository (the browser tests' screenshots). */
const WRITTEN_BY_OTHER_TESTS = new Set(['test-artifacts']);

const STEP_TIMEOUT_MS = 30_000;
const LISTEN_TIMEOUT_MS = 20_000;
/** DOCS_TEST_OUTPUT=1 shows what every command printed, to compare with the samples in the docs. */
const SHOW_OUTPUT = process.env.DOCS_TEST_OUTPUT === '1';

// ---------------------------------------------------------------------------------------------

const DOC_FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const isShell = (b: Block) => b.lang === 'sh' || b.lang === 'bash';

/** One doc file's run: its Vitals, its shell, its PostgreSQL database. */
class DocRun {
  /** The file whose blocks run now (a run in sequence moves on to the next). */
  file: string;
  readonly scratch = mkdtempSync(join(tmpdir(), 'vitals-docs-'));
  readonly dataDir = join(this.scratch, 'data');
  readonly key = newId.apiKey();
  server: VitalsProcess | undefined;
  shell: Shell | undefined;
  pg: TestDatabase | undefined;
  /** Where the file's first failure was. */
  failedAt: string | undefined;

  constructor(file: string) {
    this.file = file;
    mkdirSync(this.dataDir);
    mkdirSync(join(this.scratch, 'tmp'));
  }

  get env(): NodeJS.ProcessEnv {
    return serverEnv({
      KEY: this.key,
      VITALS_DATA_DIR: this.dataDir,
      TMPDIR: join(this.scratch, 'tmp'),
      ...(this.server ? { VITALS: this.server.url } : {}),
    });
  }

  async startServer(): Promise<void> {
    this.server = await VitalsProcess.start(
      serverEnv({ VITALS_DATA_DIR: this.dataDir, VITALS_API_KEY: this.key, VITALS_RATE_LIMIT: 'off' }),
    );
    this.shell?.export('VITALS', this.server.url);
  }

  async run(block: Block, steps: Step[], t: TestContext): Promise<void> {
    if (!this.server && NEEDS_SERVER.test(block.text)) await this.startServer();
    this.shell ??= new Shell(this.env, this.scratch, STEP_TIMEOUT_MS);
    const postgres = NEEDS_POSTGRES.test(block.text);
    if (postgres) {
      if (!this.pg) {
        // A reader's DATABASE_URL is a Vitals database: fresh, with the schema.
        this.pg = await createTestDatabase('postgres');
        await this.pg.open().migrate();
      }
      this.shell.export('DATABASE_URL', this.pg.url);
    }
    const serves = steps.some((s) => s.kind === 'serve');
    const restart = serves && this.server !== undefined;
    if (restart) await this.server?.stop();
    const started: Background[] = [];
    try {
      for (const step of steps) {
        const where = `${this.file}:${step.line}`;
        if (step.kind === 'skip') {
          t.diagnostic(`${where}: not run: ${step.command} (${step.rule})`);
        } else if (step.kind === 'shell') {
          const { ok, output } = await this.shell.run(this.file, step.line, step.text);
          if (!ok) this.fail(where, `a command failed:\n${output}`);
          if (SHOW_OUTPUT) t.diagnostic(`${where}:\n${output}`);
        } else {
          const server = new Background(step.command, {
            ...this.env,
            ...(postgres ? { DATABASE_URL: this.pg?.url } : {}),
          });
          started.push(server);
          const url = await server
            .listening(LISTEN_TIMEOUT_MS)
            .catch((err: Error) => this.fail(where, `${step.command}: ${err.message}:\n${server.output}`));
          this.shell.export('VITALS', url.replace('//0.0.0.0:', '//127.0.0.1:'));
          t.diagnostic(`${where}: ${step.command} listened at ${url}, until the end of its block`);
        }
      }
    } finally {
      await Promise.all(started.map((s) => s.stop()));
      if (postgres) this.shell.export('DATABASE_URL', undefined);
      if (restart) await this.startServer();
      else if (serves && this.server) this.shell.export('VITALS', this.server.url);
    }
  }

  fail(where: string, message: string): never {
    this.failedAt = where;
    throw new Error(`${where}: ${message}`);
  }

  async close(): Promise<void> {
    await this.shell?.close();
    await this.server?.stop();
    await this.pg?.drop();
    rmSync(this.scratch, { recursive: true, force: true });
  }
}

/** The fixed ports that the commands run from these blocks name. */
function fixedPorts(blocks: Block[]): number[] {
  const text = blocks
    .flatMap((b) => splitSteps(b, EXCEPTIONS))
    .map((s) => (s.kind === 'shell' ? s.text : s.kind === 'serve' ? s.command : ''))
    .join('\n');
  const ports = [...text.matchAll(/(?:localhost:|127\.0\.0\.1:|PORT=)(\d{2,5})\b/g)].map((m) => Number(m[1]));
  return [...new Set(ports)].sort((a, b) => a - b);
}

const portsHeld = new Map<number, Promise<void>>();

/** Waits for the ports to be free of other doc files, then holds them (in order, so no two wait on each other). */
async function holdPorts(ports: number[]): Promise<() => void> {
  const releases: (() => void)[] = [];
  for (const port of ports) {
    while (portsHeld.has(port)) await portsHeld.get(port);
    let release = () => {};
    portsHeld.set(
      port,
      new Promise<void>((done) => {
        release = () => {
          portsHeld.delete(port);
          done();
        };
      }),
    );
    releases.push(release);
  }
  return () => {
    for (const release of releases) release();
  };
}

after(() => killAll());

/** Runs the file's blocks in `run` (its server, shell and data), each a subtest of `t`. */
async function runBlocks(run: DocRun, file: string, t: TestContext): Promise<void> {
  run.file = file;
  for (const block of fencedBlocks(file, read(file)).filter(isShell)) {
    const steps = splitSteps(block, EXCEPTIONS);
    const name = blockName(block);
    const skipped = steps.flatMap((s) => (s.kind === 'skip' ? [`${s.command} (${s.rule})`] : []));
    if (run.failedAt) {
      await t.test(name, { skip: `it builds on ${run.failedAt}, which failed` }, () => {});
    } else if (skipped.length === steps.length) {
      await t.test(name, { skip: `not run: ${skipped.join('; ')}` }, () => {});
    } else if (NEEDS_POSTGRES.test(block.text) && !POSTGRES_URL) {
      await t.test(name, { skip: 'needs PostgreSQL: set VITALS_TEST_POSTGRES_URL' }, () => {});
    } else {
      await t.test(name, (st) => run.run(block, steps, st));
    }
  }
}

/** Runs `files` one after another in one DocRun; fails if they leave files in the repository. */
async function runInSequence(files: string[], t: TestContext): Promise<void> {
  const release = await holdPorts(fixedPorts(files.flatMap((f) => fencedBlocks(f, read(f)).filter(isShell))));
  const run = new DocRun(files[0] as string);
  const rootBefore = new Set(readdirSync(ROOT));
  try {
    for (const file of files) {
      if (files.length === 1) await runBlocks(run, file, t);
      else await t.test(file, (st) => runBlocks(run, file, st));
    }
  } finally {
    await run.close();
    release();
  }
  const left = readdirSync(ROOT).filter((f) => !rootBefore.has(f) && !WRITTEN_BY_OTHER_TESTS.has(f));
  assert.deepEqual(left, [], `the commands of ${files.join(', ')} left files in the repository`);
  assert.equal(run.failedAt, undefined, `${run.failedAt} failed`);
}

describe('every shell block in the docs runs', { concurrency: FILES_AT_ONCE }, () => {
  for (const file of DOC_FILES) {
    if (fencedBlocks(file, read(file)).filter(isShell).length === 0) continue;
    test(file, (t) => runInSequence([file], t));
  }
});

/**
 * A reader follows several guides against the one Vitals they started: each must run after the
 * others, in either order (its own customer ids, and settings it changes for a demonstration put back).
 */
const GUIDES = ['README.md', 'docs/walkthrough.md', 'docs/client.md', 'docs/api.md', 'docs/people.md'];

describe('the guides run one after another on one Vitals, in either order', { concurrency: 1 }, () => {
  test('in reading order', (t) => runInSequence(GUIDES, t));
  test('in reverse', (t) => runInSequence([...GUIDES].reverse(), t));
});

/**
 * The webhook recipes of docs/sources.md ("Recipes"): each is a source (the body of POST /api/sources),
 * a delivery as the tool sends it and the result, each a ```json block after a `<!-- recipe TOOL: PART -->`
 * line. Each source is created on a Vitals of its own, its delivery sent to its ingest URL, and the
 * log entries and points compared with the result. "Connect Zendesk" creates its source from a
 * copy of the recipe, which must stay the same.
 */
describe('the webhook recipes of docs/sources.md map their deliveries as they say', () => {
  const file = 'docs/sources.md';
  const text = read(file);
  const lines = text.split('\n');
  const recipes = new Map<string, Record<string, string>>();
  for (const block of fencedBlocks(file, text)) {
    const marker = /^<!-- recipe (\w+): (\w+) -->$/.exec(lines[block.line - 2]?.trim() ?? '');
    if (!marker) continue;
    const [, tool = '', part = ''] = marker;
    recipes.set(tool, { ...recipes.get(tool), [part]: block.text });
  }

  test('Zendesk, Intercom and HubSpot have theirs', () => {
    assert.deepEqual([...recipes.keys()], ['zendesk', 'intercom', 'hubspot']);
  });

  type Point = { metric: string; value: number; at: string };
  const sorted = (points: Point[]) =>
    points
      .map(({ metric, value, at }) => ({ metric, value, at }))
      .sort((a, b) => a.metric.localeCompare(b.metric));

  for (const [tool, parts] of recipes) {
    test(tool, async () => {
      const { source, delivery, result, connect } = parts as Record<string, string>;
      const expected = JSON.parse(result as string) as {
        log: { customer_id: string | null; result: string; reason: string | null }[];
        points: Record<string, Point[]>;
      };
      const body = JSON.parse(source as string);
      if (connect !== undefined) {
        const copy = /<<'EOF'\n([\s\S]*?)\nEOF/.exec(connect)?.[1] ?? 'null';
        assert.deepEqual(JSON.parse(copy), body, 'Connect Zendesk posts the recipe as it is');
      }
      // The day after the delivery's last point: its instants are then neither ahead nor too old.
      const latest = Math.max(
        ...Object.values(expected.points).flatMap((ps) => ps.map((p) => Date.parse(p.at))),
      );
      const t = await buildTestApp({ now: () => latest + 86_400_000 });
      try {
        for (const id of Object.keys(expected.points)) {
          const made = await t.api.post('/api/customers', {
            customer_id: id,
            name: id,
            email: 'ops@example.com',
          });
          assert.equal(made.status, 201, made.raw);
        }
        const created = await t.api.post('/api/sources', body);
        assert.equal(created.status, 201, created.raw);
        const res = await t.inject({
          method: 'POST',
          url: new URL(created.body.ingest_url).pathname,
          headers: { 'content-type': 'application/json' },
          payload: delivery,
        });
        assert.equal(res.status, 202, res.raw);
        assert.deepEqual(
          res.body.log.map((e: Record<string, unknown>) => ({
            customer_id: e.customer_id,
            result: e.result,
            reason: e.reason,
          })),
          expected.log,
        );
        for (const [id, points] of Object.entries(expected.points)) {
          const got = await t.api.get(`/api/customers/${encodeURIComponent(id)}/metrics?limit=100`);
          assert.deepEqual(sorted(got.body.data), sorted(points), id);
        }
      } finally {
        await t.close();
      }
    });
  }
});

test('every relative link in the docs points at a file, and every #anchor at a heading', () => {
  const broken: string[] = [];
  for (const file of DOC_FILES) {
    for (const { target, line } of relativeLinks(read(file))) {
      const [path = '', anchor] = target.split('#');
      const resolved = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURI(path));
      if (!existsSync(resolved)) {
        broken.push(`${file}:${line}: ${target}: there is no ${relative(ROOT, resolved)}`);
      } else if (anchor && !anchors(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))) {
        broken.push(`${file}:${line}: ${target}: ${relative(ROOT, resolved)} has no heading #${anchor}`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

test('the event lists of docs/api.md and docs/webhooks.md name every event type Vitals emits', () => {
  const api = read('docs/api.md');
  const types = /- \*\*Types:\*\*([\s\S]*?)\n- \*\*/.exec(api)?.[1] ?? '';
  const payloads = /- \*\*Payloads \(`data`\):\*\*([\s\S]*?)\n- \*\*/.exec(api)?.[1] ?? '';
  const webhooks = read('docs/webhooks.md');
  for (const type of EVENT_TYPES) {
    assert.ok(types.includes(`\`${type}\``), `docs/api.md's Types leave out ${type}`);
    assert.ok(payloads.includes(`\`${type}\``), `docs/api.md's Payloads leave out ${type}`);
    assert.ok(webhooks.includes(`\`${type}\``), `docs/webhooks.md leaves out ${type}`);
  }
});

test('the docs test reads blocks, commands and headings as intended', () => {
  const markdown = [
    '# T',
    '```sh',
    'npm install && npm start   # serves on port 3000',
    'export KEY=vk_…',
    'curl -fsS "$VITALS/healthz" \\',
    '  -H "X-Request-Id: a"',
    "node - <<'EOF' &",
    'npm start',
    'EOF',
    '# a comment',
    '```',
    '```json',
    '{}',
    '```',
  ].join('\n');
  const [block, json] = fencedBlocks('t.md', markdown);
  assert.ok(block && json);
  assert.equal(json.lang, 'json');
  assert.deepEqual(
    splitSteps(block, EXCEPTIONS).map((s) => [s.kind, s.line]),
    [
      ['skip', 3],
      ['serve', 3],
      ['skip', 4],
      ['shell', 5],
    ],
  );
  assert.throws(
    () => splitSteps({ ...block, text: 'npm test && echo hi' }, EXCEPTIONS),
    /mixes an exception/,
  );
  assert.deepEqual(splitSteps({ ...block, text: 'npm test --watch' }, EXCEPTIONS)[0]?.kind, 'shell');
  const ids = anchors('## Backups and upgrades\n## `vitals backup` (SQLite)\n## A\n## A\n<a id="x"></a>');
  assert.deepEqual([...ids].sort(), ['a', 'a-1', 'backups-and-upgrades', 'vitals-backup-sqlite', 'x']);
  assert.deepEqual(relativeLinks('[a](docs/x.md#y) `[b](c.md)` [d](https://e.example)'), [
    { target: 'docs/x.md#y', line: 1 },
  ]);
});

test('the README stays a page a newcomer reads through: at most 250 lines', () => {
  const lines = read('README.md').split('\n').length - 1;
  assert.ok(lines <= 250, `README.md has ${lines} lines; move detail into docs/`);
});
