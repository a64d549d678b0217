// `vitals/client` installed as docs/client.md says, into a project that has never seen Vitals: from
// `npm pack`'s tarball and from a git URL. The working tree (uncommitted work included) is copied
// and committed in a repository of its own, so what is installed is what is being tested, and the
// working tree's own dist/ is never rebuilt under the other tests. Slow (npm installs the
// dependencies twice, from its cache where it can): one test.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from '../helpers/server.ts';
import { type ClientApp, clientApp } from './harness.ts';

const run = promisify(execFile);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const CONSUMER_MJS = join(ROOT, 'test', 'client', 'fixtures', 'consumer.mjs');

// A TypeScript consumer: strict, no @types/node, no skipLibCheck. Each @ts-expect-error fails the
// check if the types it tests were `any`.
const CONSUMER_TS = `import { type Customer, type HealthScore, type Status, VitalsClient, VitalsError, verifyWebhook } from 'vitals/client';

const vitals = new VitalsClient({ url: 'http://localhost:3000', key: 'vk_test' });

export async function firstAtRisk(): Promise<string | undefined> {
  for await (const score of vitals.healthScores.list({ status: 'at_risk' })) {
    const status: Status = score.status;
    return \`\${score.customer_id} \${status} \${score.health_score.toFixed(2)}\`;
  }
  return undefined;
}
export const rename = (id: string): Promise<Customer> => vitals.customers.update(id, { name: 'Renamed' });
export const scoreOf = (s: HealthScore): number => s.health_score;
export const isMissing = (e: unknown) => e instanceof VitalsError && e.code === 'customer_not_found';
export const eventType = (body: string) => verifyWebhook('whsec_x', body, {}).type;
// @ts-expect-error: no such status
export const wrong: Status = 'fine';
export async function misspelt(): Promise<unknown> {
  // @ts-expect-error: a Customer has no nmae
  return (await vitals.customers.retrieve('x')).nmae;
}
`;
const TSCONFIG = {
  compilerOptions: {
    strict: true,
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    lib: ['es2022', 'dom'],
    types: [],
    skipLibCheck: false,
    noEmit: true,
  },
  files: ['consumer.ts'],
};

/** The environment without what npm or node:test set for this process (npm reads npm_config_*). */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(npm_|NODE_TEST_CONTEXT$|NODE_OPTIONS$|VITALS_)/i.test(name)) env[name] = value;
  }
  return env;
}

async function sh(cwd: string, file: string, args: string[], env: NodeJS.ProcessEnv = cleanEnv()) {
  try {
    return await run(file, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`, { cause: err });
  }
}

let app: ClientApp;
let dir: string;
before(async () => {
  app = await clientApp();
  dir = mkdtempSync(join(tmpdir(), 'vitals-install-'));
});
after(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The working tree as it is now (tracked and new files, not ignored ones), committed in a repository of its own. */
async function snapshot(): Promise<string> {
  const repo = join(dir, 'vitals');
  const { stdout } = await sh(ROOT, 'git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z']);
  for (const file of stdout.split('\0').filter((f) => f && existsSync(join(ROOT, f)))) {
    mkdirSync(dirname(join(repo, file)), { recursive: true });
    cpSync(join(ROOT, file), join(repo, file));
  }
  const git = ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'commit.gpgsign=false'];
  await sh(repo, 'git', ['init', '--quiet']);
  await sh(repo, 'git', ['add', '--all']);
  await sh(repo, 'git', [...git, 'commit', '--quiet', '--message', 'snapshot']);
  return repo;
}

/** A fresh project that installs `spec`, then runs a plain .mjs against Vitals and type-checks a .ts. */
async function consumer(name: string, spec: string) {
  const project = join(dir, name);
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  await sh(project, 'npm', [
    'install',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
    spec,
  ]);

  const installed = join(project, 'node_modules', 'vitals');
  const files = listFiles(installed);
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  const bins = Object.values<string>(manifest.bin ?? {}).map((f) => f.replace(/^\.\//, ''));
  // npm always adds package.json, the README and the licence, and the `bin` entries' files.
  const alwaysPacked = (f: string) =>
    /^(package\.json|(README|LICEN[CS]E)(\.\w+)?)$/i.test(f) || bins.includes(f);
  const outside = files.filter((f) => !f.startsWith('dist/client/') && !alwaysPacked(f));
  assert.deepEqual(outside, [], `${name}: the package holds files besides the client`);
  assert.ok(files.includes('dist/client/index.js') && files.includes('dist/client/types.d.ts'), name);

  const { key } = await app.t.newAccount(name);
  writeFileSync(join(project, 'consumer.mjs'), readFileSync(CONSUMER_MJS, 'utf8'));
  const env = { ...cleanEnv(), VITALS_URL: app.url, VITALS_KEY: key };
  const { stdout } = await sh(project, process.execPath, ['consumer.mjs'], env);
  assert.deepEqual(
    JSON.parse(stdout),
    { created: 'pkg', listed: ['pkg'], missing: 'customer_not_found', refused: true },
    name,
  );

  writeFileSync(join(project, 'consumer.ts'), CONSUMER_TS);
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  await sh(project, process.execPath, [TSC, '-p', 'tsconfig.json']);
}

function listFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort();
}

// The package does not change with the backend: CI's second `npm test`, on PostgreSQL, skips it.
const skip = process.env.VITALS_TEST_BACKEND === 'postgres' && 'the package is the same on both backends';

test('the client installs from npm pack and from a git URL into a new project, and works and type-checks there', {
  skip,
  timeout: 15 * 60_000,
}, async () => {
  const repo = await snapshot();
  // The tarball is packed from the snapshot: its prepack builds the client there, with this
  // checkout's dependencies (a git install installs its own, in npm's clone).
  symlinkSync(join(ROOT, 'node_modules'), join(repo, 'node_modules'), 'dir');
  const { stdout } = await sh(repo, 'npm', ['pack', '--silent', '--pack-destination', dir]);
  const tarball = join(dir, stdout.trim().split('\n').at(-1) as string);
  await Promise.all([consumer('from-tarball', tarball), consumer('from-git', `git+file://${repo}`)]);
});
