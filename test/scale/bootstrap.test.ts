// Processes that start at the same moment on one empty database create at most one bootstrap
// key between them (docs/operations.md): the check for a key and the insert of the first are
// one step, under SQLite's write lock or a PostgreSQL advisory lock.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { killAll, runCli, serverEnv, VitalsProcess } from '../helpers/server.ts';
import { ALL_BACKENDS, backendSkip, createTestDatabase, type TestDatabase } from '../helpers/stores.ts';

const PROCESSES = 4;
const KEY = /^\s+(vk_[0-9A-Za-z]{32})$/m;

for (const backend of ALL_BACKENDS) {
  describe(`bootstrap key on ${backend}`, { skip: backendSkip(backend) }, () => {
    const dbs: TestDatabase[] = [];
    after(async () => {
      killAll();
      for (const db of dbs) await db.drop();
    });

    test(`${PROCESSES} processes starting together on an empty database print one key between them`, async () => {
      const db = await createTestDatabase(backend);
      dbs.push(db);
      const env = serverEnv({
        VITALS_DATA_DIR: db.dir,
        ...(db.url ? { DATABASE_URL: db.url } : {}),
        VITALS_RATE_LIMIT: 'off',
      });
      const servers = await Promise.all(Array.from({ length: PROCESSES }, () => VitalsProcess.start(env)));
      const printed = servers.map((s) => KEY.exec(s.stdout)?.[1]).filter((k) => k !== undefined);
      assert.equal(printed.length, 1, `keys printed: ${printed.length}`);
      const list = await runCli(['keys', 'list'], env);
      assert.equal(list.code, 0, list.stderr);
      assert.equal(list.stdout.trim().split('\n').length, 1, list.stdout);
      // The one key works on every process.
      for (const s of servers) {
        const res = await fetch(`${s.url}/api/customers`, {
          headers: { authorization: `Bearer ${printed[0]}` },
        });
        assert.equal(res.status, 200);
      }
      await Promise.all(servers.map((s) => s.stop()));
    });
  });
}
