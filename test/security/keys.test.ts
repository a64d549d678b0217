// API keys at rest and at revocation (docs/api.md, "General"; VITALS_KEY_CACHE_TTL in
// docs/configuration.md): the database holds only SHA-256 hashes of the keys (every text column
// of every table is searched for the raw keys, and so are the database files' bytes), and a
// revoked key stops working within 5 s under the production key cache.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApiKey } from '../../src/keys.ts';
import { buildTestApp, customerBody, type TestApp } from '../helpers/app.ts';
import { appBackend } from '../helpers/stores.ts';

const sqliteOnly = { skip: appBackend() === 'sqlite' ? false : 'reads the SQLite file' };

describe('keys at rest', sqliteOnly, () => {
  let t: TestApp;
  const keys: string[] = [];
  before(async () => {
    t = await buildTestApp();
    keys.push(t.api.key);
    for (const name of ['second', 'third']) {
      const client = await t.newAccount(name);
      keys.push(client.key);
      // Use every key, so whatever a request might write about its key has been written.
      assert.equal((await client.post('/api/customers', customerBody(`cus_${name}`))).status, 201);
      assert.equal((await client.get('/api/customers')).status, 200);
    }
    const revoked = await createApiKey(t.store, 'default');
    keys.push(revoked.key);
    assert.equal((await t.as(`Bearer ${revoked.key}`).get('/api/customers')).status, 200);
    assert.equal(await t.store.revokeApiKey(revoked.id, Date.now()), true);
    // A key that was only ever presented, never issued.
    keys.push('vk_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ');
    assert.equal((await t.as(`Bearer ${keys.at(-1)}`).get('/api/customers')).status, 401);
  });
  after(() => t.close());

  /** Every value of every column of every table, as text. */
  function everyValue(): { table: string; column: string; text: string }[] {
    const db = new DatabaseSync(join(t.dir, 'vitals.db'), { readOnly: true });
    try {
      const out: { table: string; column: string; text: string }[] = [];
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
        name: string;
      }[];
      assert.ok(tables.length > 3, 'found the tables');
      for (const { name } of tables) {
        for (const row of db.prepare(`SELECT * FROM "${name}"`).all()) {
          for (const [column, value] of Object.entries(row)) {
            if (value === null) continue;
            const text = value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : String(value);
            out.push({ table: name, column, text });
          }
        }
      }
      return out;
    } finally {
      db.close();
    }
  }

  test('no table holds a raw key; the keys table holds their SHA-256 hashes', () => {
    const values = everyValue();
    for (const key of keys) {
      const found = values.find((v) => v.text.includes(key) || v.text.includes(key.slice(3)));
      assert.equal(found, undefined, `a raw key in ${found?.table}.${found?.column}`);
    }
    for (const key of keys.slice(0, 4)) {
      const hash = createHash('sha256').update(key).digest('hex');
      assert.ok(
        values.some((v) => v.text === hash),
        'the hash of every issued key is stored',
      );
    }
  });

  test('no database file holds a raw key, not even in free pages or the WAL', () => {
    const files = ['vitals.db', 'vitals.db-wal', 'vitals.db-shm']
      .map((f) => join(t.dir, f))
      .filter((f) => existsSync(f));
    assert.equal(files.length, 3, 'the store is open in WAL mode: the database, its WAL and shared memory');
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const key of keys) assert.equal(bytes.includes(key), false, `${key.slice(0, 7)}… in ${file}`);
    }
  });
});

describe('revoking a key', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ keyCacheTtlMs: 2000 });
  });
  after(() => t.close());

  test('with the production key cache, a revoked key stops working within 5 s; its siblings keep working', async () => {
    const { id, key } = await createApiKey(t.store, 'default');
    const client = t.as(`Bearer ${key}`);
    assert.equal((await client.get('/api/customers')).status, 200, 'the key is now cached');
    assert.equal((await client.get('/api/customers')).status, 200);

    assert.equal(await t.store.revokeApiKey(id, Date.now()), true);
    const revokedAt = performance.now();
    let res = await client.get('/api/customers');
    // Poll the API until the cache entry runs out; the loop ends on the 401 or fails at 5 s.
    while (res.status === 200 && performance.now() - revokedAt < 5000) {
      await sleep(25);
      res = await client.get('/api/customers');
    }
    const took = performance.now() - revokedAt;
    assert.equal(res.status, 401, `still accepted after ${Math.round(took)} ms`);
    assert.ok(took < 5000, `took ${Math.round(took)} ms`);
    assert.equal(res.body.error.code, 'api_key_invalid');
    assert.equal(res.headers['www-authenticate'], 'Bearer');

    for (const path of ['/api/customers', '/api/webhooks', '/api/events', '/api/health-scores/summary']) {
      assert.equal((await client.get(path)).status, 401, `${path} after revocation`);
    }
    const write = await client.post('/api/customers', customerBody('cus_after_revoke'));
    assert.equal(write.status, 401);
    assert.equal(
      (await t.api.get('/api/customers/cus_after_revoke')).status,
      404,
      'the write did not happen',
    );
    assert.equal((await t.api.get('/api/customers')).status, 200, 'another key of the account still works');
  });

  test('revoking an unknown key id changes nothing', async () => {
    assert.equal(await t.store.revokeApiKey('key_doesnotexist000000', Date.now()), false);
    assert.equal((await t.api.get('/api/customers')).status, 200);
  });
});
