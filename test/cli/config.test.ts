// Configuration from the environment: the database settings (docs/configuration.md,
// docs/postgresql.md).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('database configuration', () => {
  test('without DATABASE_URL the store is SQLite; the pool size defaults to 10', () => {
    const config = loadConfig({});
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.dbPoolSize, 10);
  });

  test('DATABASE_URL takes postgres:// and postgresql:// URLs as given', () => {
    for (const url of [
      'postgres://vitals:pw@db.internal:5432/vitals',
      'postgresql://db/vitals?sslmode=require',
      'postgres://u@h1:5432,h2:5433/vitals',
    ]) {
      assert.equal(loadConfig({ DATABASE_URL: url }).databaseUrl, url);
    }
  });

  test('a DATABASE_URL that is not a PostgreSQL URL is named, and never echoed (it holds a password)', () => {
    for (const url of ['mysql://root:hunter2@db/vitals', 'db.internal:5432', 'postgres://u:hunter2@h/db x']) {
      assert.throws(
        () => loadConfig({ DATABASE_URL: url }),
        (err: Error) =>
          err instanceof ConfigError &&
          /^DATABASE_URL is invalid/.test(err.message) &&
          !err.message.includes('hunter2'),
      );
    }
  });

  test('VITALS_DB_POOL_SIZE: a whole number from 1 to 1000', () => {
    assert.equal(loadConfig({ VITALS_DB_POOL_SIZE: '25' }).dbPoolSize, 25);
    for (const bad of ['0', '1001', '2.5', 'many', '-1']) {
      assert.throws(() => loadConfig({ VITALS_DB_POOL_SIZE: bad }), /^ConfigError: VITALS_DB_POOL_SIZE="/);
    }
  });
});
