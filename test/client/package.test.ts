// `vitals/client` as a consumer gets it: the JavaScript that `npm run build:client` (run by
// `npm install` / `npm ci` through the prepare script) writes to dist/client, imported by package
// self-reference from a plain .mjs file in a process of its own, against the real app.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from '../helpers/server.ts';
import { type ClientApp, clientApp } from './harness.ts';

const SOURCE = join(ROOT, 'src', 'client');
const BUILT = join(ROOT, 'dist', 'client');
const built = (file: string) => join(BUILT, file);

let app: ClientApp;
before(async () => {
  app = await clientApp();
});
after(() => app.close());

test('dist/client is built, and not older than the client sources', () => {
  const hint = 'run `npm run build:client`';
  assert.ok(statSync(built('index.js'), { throwIfNoEntry: false }), `dist/client is not built: ${hint}`);
  const builtAt = statSync(built('index.js')).mtimeMs;
  for (const file of readdirSync(SOURCE).filter((f) => f.endsWith('.ts') && f !== 'build.ts')) {
    assert.ok(
      statSync(join(SOURCE, file)).mtimeMs <= builtAt,
      `src/client/${file} changed since the build: ${hint}`,
    );
  }
});

test('the built JavaScript imports only its own files and node: modules, nothing of the server', () => {
  for (const file of readdirSync(BUILT).filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(built(file), 'utf8');
    const specifiers = [...text.matchAll(/^(?:import|export)\b[^'"]*?from\s*['"]([^'"]+)['"]/gm)].map(
      (m) => m[1],
    );
    for (const specifier of specifiers) {
      assert.match(String(specifier), /^(\.\/[\w-]+\.js|node:\w+)$/, `${file} imports ${specifier}`);
    }
  }
});

test("a plain .mjs file imports 'vitals/client' and uses it against a real Vitals", async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(ROOT, 'test/client/fixtures/consumer.mjs')],
    {
      env: { ...process.env, VITALS_URL: app.url, VITALS_KEY: app.key },
    },
  );
  assert.deepEqual(JSON.parse(stdout), {
    created: 'pkg',
    listed: ['pkg'],
    missing: 'customer_not_found',
    refused: true,
  });
});
