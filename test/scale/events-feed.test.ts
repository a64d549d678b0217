// The events feed while many processes write (docs/api.md, "Events"): four API processes take
// score writes on one database while a reader pages back from the newest event and then follows
// forward with ending_before. At the end the reader has seen every event in the table exactly once.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { newId } from '../../src/domain/ids.ts';
import { createApiKey } from '../../src/keys.ts';
import { customerBody } from '../helpers/app.ts';
import { killAll, serverEnv, VitalsProcess } from '../helpers/server.ts';
import { ALL_BACKENDS, backendSkip, createTestDatabase, type TestDatabase } from '../helpers/stores.ts';

const WRITERS = 4;
const LOOPS_PER_WRITER = 4;
const WRITE_MS = 3000;
const CUSTOMERS = 40;

async function tableIds(db: TestDatabase): Promise<string[]> {
  if (db.backend === 'sqlite') {
    const raw = new DatabaseSync(join(db.dir, 'vitals.db'), { readOnly: true });
    try {
      return (raw.prepare('SELECT id FROM events').all() as { id: string }[]).map((r) => r.id);
    } finally {
      raw.close();
    }
  }
  const sql = postgres(db.url as string, { max: 1 });
  try {
    return (await sql<{ id: string }[]>`SELECT id FROM events`).map((r) => r.id);
  } finally {
    await sql.end();
  }
}

for (const backend of ALL_BACKENDS) {
  describe(`events feed under ${WRITERS} writer processes on ${backend}`, {
    skip: backendSkip(backend),
    timeout: 90_000,
  }, () => {
    const dbs: TestDatabase[] = [];
    after(async () => {
      killAll();
      for (const db of dbs) await db.drop();
    });

    test('paging back and following forward sees every event exactly once', async () => {
      const db = await createTestDatabase(backend);
      dbs.push(db);
      const store = db.open();
      await store.migrate();
      const key = newId.apiKey();
      await createApiKey(store, 'default', key);
      await store.close();
      const env = serverEnv({
        VITALS_DATA_DIR: db.dir,
        ...(db.url ? { DATABASE_URL: db.url } : {}),
        VITALS_API_KEY: key,
        VITALS_ROLES: 'api',
        VITALS_RATE_LIMIT: 'off',
        VITALS_LOG_LEVEL: 'warn',
      });
      // The port is read from the info log line; warn keeps the load's request lines out.
      const servers = await Promise.all(
        Array.from({ length: WRITERS }, () => VitalsProcess.start({ ...env, VITALS_LOG_LEVEL: 'info' })),
      );
      const [first] = servers as [VitalsProcess];
      for (let i = 0; i < CUSTOMERS; i++) {
        assert.equal((await first.request('POST', '/api/customers', customerBody(`cus_${i}`))).status, 201);
      }

      let writing = true;
      let acked = 0;
      const loop = async (server: VitalsProcess, n: number) => {
        for (let i = 0; writing; i++) {
          const res = await server.request(
            'POST',
            `/api/customers/cus_${(n * 7 + i) % CUSTOMERS}/health-score`,
            {
              factors: { usage: ((n + i) % 100) / 100 },
            },
          );
          assert.equal(res.status, 200);
          acked++;
        }
      };
      const load = servers.flatMap((s, w) =>
        Array.from({ length: LOOPS_PER_WRITER }, (_, l) => loop(s, w * LOOPS_PER_WRITER + l)),
      );
      const stopAt = Date.now() + WRITE_MS;

      // Each reader: the newest event now, everything before it by paging back, then forward.
      const read = async (reader: VitalsProcess) => {
        const seen: string[] = [];
        const top = (await reader.request('GET', '/api/events?limit=1')).body.data[0].id as string;
        seen.push(top);
        for (let cursor = top; ; ) {
          const page = await reader.request('GET', `/api/events?limit=7&starting_after=${cursor}`);
          assert.equal(page.status, 200);
          seen.push(...page.body.data.map((e: { id: string }) => e.id));
          if (!page.body.has_more) break;
          cursor = page.body.data.at(-1).id;
        }
        let newest = top;
        let pages = 0;
        /** One page forward; true while newer events remain. */
        const follow = async () => {
          const page = await reader.request('GET', `/api/events?limit=100&ending_before=${newest}`);
          assert.equal(page.status, 200);
          pages++;
          const ids = page.body.data.map((e: { id: string }) => e.id).reverse();
          seen.push(...ids);
          if (ids.length > 0) newest = ids.at(-1);
          return page.body.has_more as boolean;
        };
        while (Date.now() < stopAt) await follow();
        await finished;
        while (await follow()) {}
        return { seen, pages };
      };
      const finished = (async () => {
        // The writers run for WRITE_MS: a duration, not a wait for something to happen.
        await sleep(WRITE_MS);
        writing = false;
        await Promise.all(load);
      })();
      const readers = await Promise.all(servers.slice(-2).map(read));
      const table = await tableIds(db);
      assert.ok(acked > 100, `only ${acked} writes were acknowledged`);
      for (const { seen, pages } of readers) {
        // The reader must have followed while the writers wrote (many pages, not one read at the end). How many
        // pages fit in WRITE_MS depends on the machine's load: 18 was seen on a busy CI run, so the bar is 10.
        assert.ok(pages > 10, `a reader followed in only ${pages} pages`);
        assert.equal(new Set(seen).size, seen.length, 'no event was seen twice');
        assert.deepEqual(
          [...seen].sort(),
          [...table].sort(),
          'the reader saw exactly the events in the table',
        );
      }
      await Promise.all(servers.map((s) => s.stop()));
    });
  });
}
