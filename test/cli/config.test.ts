// Configuration from the environment (docs/configuration.md): the database settings
// (docs/postgresql.md), the rules and the list of variables.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, configVariables, loadConfig } from '../../src/config.ts';

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

describe('the variables', () => {
  test('docs/configuration.md lists every variable with its default, and no other', async () => {
    const docs = await readFile(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const rows = [...docs.matchAll(/^\| `([A-Z_]+)` \| (?:`([^`]*)`|unset) \|/gm)].map(([, env, def]) => ({
      env,
      default: def,
    }));
    const byName = (a: { env?: string }, b: { env?: string }) => String(a.env).localeCompare(String(b.env));
    assert.deepEqual(
      rows.sort(byName),
      configVariables()
        .map((v) => ({ env: v.env, default: v.default }))
        .sort(byName),
    );
  });

  test('a bad value is named with the rule it breaks; a secret one is named but not echoed', () => {
    const fails = (env: NodeJS.ProcessEnv, message: string) =>
      assert.throws(() => loadConfig(env), { name: 'ConfigError', message });
    fails({ PORT: 'x' }, 'PORT="x" is invalid: must be a whole number from 0 to 65535.');
    fails(
      { VITALS_API_KEY: 'vk_short' },
      'VITALS_API_KEY is invalid: must be vk_ followed by 32 letters or digits.',
    );
    fails(
      { VITALS_KEY_CACHE_TTL: '2d' },
      'VITALS_KEY_CACHE_TTL="2d" is invalid: must be a duration such as 500ms, 10s or 2m.',
    );
    fails({ VITALS_WEBHOOK_TIMEOUT: '25h' }, 'VITALS_WEBHOOK_TIMEOUT="25h" is invalid: must be at most 24h.');
    fails(
      { VITALS_LOG_LEVEL: 'loud' },
      'VITALS_LOG_LEVEL="loud" is invalid: must be one of fatal, error, warn, info, debug, trace, silent.',
    );
    fails(
      { VITALS_WEBHOOK_BLOCK_PRIVATE: 'maybe' },
      'VITALS_WEBHOOK_BLOCK_PRIVATE="maybe" is invalid: must be true or false.',
    );
    fails(
      { VITALS_WEBHOOK_BACKOFF: Array(21).fill('1s').join(',') },
      `VITALS_WEBHOOK_BACKOFF="${Array(21).fill('1s').join(',')}" is invalid: must list 1 to 20 durations, such as 1s,5s,25s.`,
    );
    fails(
      { VITALS_RATE_LIMIT: '0/s' },
      'VITALS_RATE_LIMIT="0/s" is invalid: must be a rate such as 1000/s, 6000/min or 100000/h, or off.',
    );
    fails(
      { VITALS_ROLES: 'api,web' },
      'VITALS_ROLES="api,web" is invalid: must be api, dispatcher or api,dispatcher.',
    );
  });

  test('each variable decodes into its typed value', () => {
    const config = loadConfig({
      VITALS_DATA_DIR: 'some/dir',
      VITALS_KEY_CACHE_TTL: '1.5s',
      VITALS_RATE_LIMIT: '6000/min',
      VITALS_ROLES: ' dispatcher , dispatcher ',
      VITALS_EVENT_RETENTION: 'off',
      VITALS_WEBHOOK_BACKOFF: '250ms,2m',
      VITALS_WEBHOOK_BLOCK_PRIVATE: 'Yes',
    });
    assert.equal(config.dataDir, resolve('some/dir'));
    assert.equal(config.keyCacheTtlMs, 1500);
    assert.deepEqual(config.rateLimit, { max: 6000, windowMs: 60_000 });
    assert.deepEqual(config.roles, ['dispatcher']);
    assert.equal(config.eventRetentionMs, null);
    assert.deepEqual(config.webhook.backoffMs, [250, 120_000]);
    assert.equal(config.webhook.blockPrivate, true);
  });
});
