// postgres.js as installed (patches/postgres+3.4.9.patch): a query nobody refers to any more dies
// in V8's young generation. Before the patch each query kept a closure over its constructor's
// scope on itself, and every query, with its parameters and rows, was promoted to the old
// generation: at 200 metric writes a second that was 6 MB a second, and a 20-35 ms pause in every
// young collection (docs/postgresql.md, "Queries and the garbage collector").
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

test('20,000 dropped queries leave the old generation as it was after two young collections', async () => {
  const helper = fileURLToPath(new URL('../helpers/query-garbage.ts', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', helper]);
  const grown = Number(stdout.trim());
  // Unpatched, the old generation grew by 5.3-7.0 MB here; patched, by about 10 kB.
  assert.ok(Number.isFinite(grown), stdout);
  assert.ok(grown < 1_000_000, `the old generation grew by ${grown} bytes`);
});
