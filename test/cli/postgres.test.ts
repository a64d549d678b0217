// DATABASE_URL switches the CLI to PostgreSQL (runs when VITALS_TEST_POSTGRES_URL is set): each
// test gets a database of its own, made and dropped around it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MIGRATIONS } from '../../src/store/postgres/migrations.ts';
import { runCli, serverEnv } from '../helpers/server.ts';
import { createTestDatabase, POSTGRES_URL } from '../helpers/stores.ts';

const cli = (args: string[], databaseUrl: string, dir: string) =>
  runCli(args, serverEnv({ DATABASE_URL: databaseUrl, VITALS_DATA_DIR: dir }));

describe('the CLI on PostgreSQL', { skip: !POSTGRES_URL && 'VITALS_TEST_POSTGRES_URL is not set' }, () => {
  test('`migrate` with DATABASE_URL brings the PostgreSQL schema up to date, twice over', async (t) => {
    const db = await createTestDatabase('postgres');
    t.after(() => db.drop());
    for (let i = 0; i < 2; i++) {
      const out = await cli(['migrate'], db.url as string, db.dir);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, `Database schema is at version ${MIGRATIONS.length}.\n`);
    }
  });

  test('`keys create` and `keys list` keep the keys in PostgreSQL, not in the data dir', async (t) => {
    const db = await createTestDatabase('postgres');
    t.after(() => db.drop());
    const created = await cli(['keys', 'create', '--account', 'pg'], db.url as string, db.dir);
    assert.equal(created.code, 0, created.stderr);
    const store = db.open();
    const [key] = await store.listApiKeys();
    assert.equal(key?.accountName, 'pg');
    assert.equal(created.stdout.slice(0, 7), key?.prefix);
    const listed = await cli(['keys', 'list'], db.url as string, db.dir);
    assert.match(listed.stdout, /\tpg\t/);
  });
});
