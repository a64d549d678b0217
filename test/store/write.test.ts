// A write is referenced by value and found again by name by the threads that run writes
// (src/store/write.ts): every write of src/writes/ is in the registry as itself, a name is
// written once, and nothing else may be run as a write.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { findWrite, registry, threadRegistry, write } from '../../src/store/write.ts';
import { WRITES } from '../../src/writes/index.ts';

test('every write exported by src/writes/ is in the registry as itself', async () => {
  const dir = new URL('../../src/writes/', import.meta.url);
  let exported = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && f !== 'index.ts')) {
    const module = (await import(new URL(file, dir).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      if (typeof value !== 'function' || !('heavy' in value)) continue;
      exported++;
      assert.equal(
        findWrite(WRITES, name),
        value,
        `${file} exports ${name}, which src/writes/index.ts lacks`,
      );
    }
  }
  assert.equal(exported, WRITES.size);
  // The count of `write(` in the sources agrees: no write hides from the walk above.
  const written = readdirSync(dir)
    .map((f) => readFileSync(new URL(f, dir), 'utf8').match(/= write\(/g)?.length ?? 0)
    .reduce((a, b) => a + b, 0);
  assert.equal(written, WRITES.size);
});

test('an unknown name is refused, and two writes of one name are a mistake', async () => {
  assert.throws(() => findWrite(WRITES, 'changeWeights'), /no write is named 'changeWeights'/);
  const twin = write(async function applyWeights() {});
  assert.throws(() => registry([...WRITES.values(), twin]), /two writes are named 'applyWeights'/);
  await assert.rejects(
    threadRegistry(WRITES, [new URL('../helpers/heavy-probe.ts', import.meta.url).href]).then((all) =>
      registry([...all.values(), twin]),
    ),
    /two writes are named 'applyWeights'/,
  );
});

test("a test's own module adds its writes, and only its writes", async () => {
  const all = await threadRegistry(WRITES, [new URL('./contract/writes.ts', import.meta.url).href]);
  assert.equal(all.size, WRITES.size + 3);
  assert.equal(typeof findWrite(all, 'insertCustomers'), 'function');
  assert.equal(findWrite(all, 'applyFactorUpdates'), WRITES.get('applyFactorUpdates'));
});
