// An upgrade from the previous release keeps every object (issue 55; docs/operations.md,
// "Upgrades"). fixtures/ holds release 0.1.0's databases, written by that release's own code
// (make-fixtures.sh): a SQLite file and a PostgreSQL dump with customers (owner, ARR, renewal,
// parent), history, metrics and a factor rule, an outcome, an override, a webhook with its
// deliveries, keys, a person with a password and a saved view, sources, a playbook, tasks and a
// note, and that release's answer to every read of them. A copy of each is opened with today's
// code, migrated, and every answer read again through the API must still hold all it held.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import postgres from 'postgres';
import { buildApp } from '../../src/http/app.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { tempDir } from '../helpers/app.ts';
import { ALL_BACKENDS, type Backend, backendSkip, createTestDatabase } from '../helpers/stores.ts';

const RELEASE = '0.1.0';
const FIXTURES = new URL('fixtures/', import.meta.url);
const SCHEMA_OF_RELEASE = 32;

interface Manifest {
  made_at: string;
  key: string;
  reads: Record<string, unknown>;
}

/** `before` is contained in `after`: every field it has, equal; every item of a list, found by its
 *  id (or version), else at its place. Fields and items added since are allowed. */
function assertContains(before: unknown, after: unknown, where: string): void {
  if (Array.isArray(before)) {
    assert.ok(Array.isArray(after), `${where}: no longer a list`);
    before.forEach((item, i) => {
      const key =
        item && typeof item === 'object'
          ? 'id' in item
            ? 'id'
            : 'version' in item
              ? 'version'
              : null
          : null;
      const found = key ? after.find((x) => x?.[key] === item[key]) : after[i];
      assert.ok(found !== undefined, `${where}[${key ? `${key}=${item[key]}` : i}]: missing`);
      assertContains(item, found, `${where}[${key ? item[key] : i}]`);
    });
  } else if (before && typeof before === 'object') {
    assert.ok(after && typeof after === 'object', `${where}: no longer an object`);
    for (const [k, v] of Object.entries(before)) {
      // A list's has_more may only change where newer entries (from this test's own sign-in) arrived.
      if (k === 'has_more' || k === 'next_cursor') continue;
      assertContains(v, (after as Record<string, unknown>)[k], `${where}.${k}`);
    }
  } else if (typeof before === 'string' && where.endsWith('.ingest_url')) {
    // A source's ingest URL is made from the request's own host: its path is what is kept.
    assert.equal(new URL(String(after)).pathname, new URL(before).pathname, where);
  } else {
    assert.deepEqual(after, before, where);
  }
}

/** A copy of the release's database for `backend`, unmigrated. */
async function releaseDatabase(backend: Backend, t: { after: (fn: () => unknown) => void }): Promise<Store> {
  if (backend === 'sqlite') {
    const dir = join(tempDir(), 'data');
    mkdirSync(dir);
    copyFileSync(new URL(`${RELEASE}.sqlite`, FIXTURES), join(dir, 'vitals.db'));
    const store = new SqliteStore({ path: join(dir, 'vitals.db') });
    t.after(() => store.close());
    return store;
  }
  const db = await createTestDatabase('postgres');
  t.after(() => db.drop());
  const sql = postgres(db.url as string, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(readFileSync(new URL(`${RELEASE}.postgres.sql`, FIXTURES), 'utf8'));
  } finally {
    await sql.end();
  }
  return db.open();
}

for (const backend of ALL_BACKENDS) {
  describe(`upgrading ${RELEASE}'s ${backend} database`, { skip: backendSkip(backend) }, () => {
    test('it migrates, and every object of the release reads back as it did', async (t) => {
      const manifest: Manifest = JSON.parse(
        readFileSync(new URL(`${RELEASE}.${backend}.json`, FIXTURES), 'utf8'),
      );
      const store = await releaseDatabase(backend, t);
      const status = await store.migrationStatus();
      assert.equal(status.applied, SCHEMA_OF_RELEASE);
      assert.equal(await store.migrate(), status.latest);
      assert.deepEqual(await store.migrationStatus(), { applied: status.latest, latest: status.latest });

      // The clock of the day the fixture was made: reads that depend on time (an override's
      // expiry, the trend) answer as then, and no job runs.
      const madeAt = Date.parse(manifest.made_at);
      const app = await buildApp({
        store,
        config: { keyCacheTtlMs: 0, logLevel: 'silent', webhook: { blockPrivate: false } },
        now: () => madeAt,
      });
      t.after(() => app.close());
      const auth = { authorization: `Bearer ${manifest.key}` };
      // The person's password still signs in; their session reads their own views.
      const login = await app.inject({
        method: 'POST',
        url: '/auth/login',
        payload: { email: 'ana@example.com', password: 'a long enough password' },
      });
      assert.equal(login.statusCode, 200, login.body);
      const cookie = String(login.headers['set-cookie']).split(';')[0] as string;

      const paths = Object.keys(manifest.reads);
      assert.ok(paths.length >= 30);
      for (const path of paths) {
        const session = path === '/api/views' || path === '/api/me';
        const res = await app.inject({ method: 'GET', url: path, headers: session ? { cookie } : auth });
        assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
        assertContains(manifest.reads[path], JSON.parse(res.body), path);
      }

      // Every kind of object is in there, so nothing above was compared against nothing.
      const reads = manifest.reads as Record<string, { data: unknown[] } & Record<string, unknown>>;
      // A list answer's first array (data, customers, webhooks…).
      const count = (path: string) =>
        (Object.values(reads[path] ?? {}).find(Array.isArray) as unknown[] | undefined)?.length ?? 0;
      assert.equal(count('/api/customers?limit=100'), 3);
      assert.equal((reads['/api/customers/initech_eu'] as Record<string, unknown>).parent_id, 'initech');
      assert.equal((reads['/api/customers/initech'] as Record<string, unknown>).arr, 180000);
      assert.ok(count('/api/customers/initech/health-score/history?limit=100') >= 2);
      assert.ok(count('/api/customers/globex/metrics?limit=100') >= 2);
      assert.equal(count('/api/settings/health-score/factors'), 1);
      assert.equal(count('/api/customers/initech/outcomes'), 1);
      assert.ok((reads['/api/customers/initech_eu/health-score'] as Record<string, unknown>).override);
      assert.equal(count('/api/webhooks'), 1);
      const deliveries = paths.find((p) => /^\/api\/webhooks\/whk_\w+\/deliveries/.test(p)) as string;
      assert.ok(count(deliveries) >= 3);
      assert.equal(count('/api/sources'), 2);
      assert.equal(count('/api/playbooks'), 1);
      assert.equal(count('/api/tasks?status=all'), 2, 'one made by hand, one by the playbook');
      assert.equal(count('/api/customers/initech/notes'), 1);
      assert.equal(count('/api/users'), 1);
      assert.equal(count('/api/views'), 1);

      // And it takes writes on the migrated schema.
      const created = await app.inject({
        method: 'POST',
        url: '/api/customers',
        headers: auth,
        payload: {
          customer_id: 'after_upgrade',
          name: 'After',
          email: 'a@example.com',
          parent_id: 'initech',
        },
      });
      assert.equal(created.statusCode, 201, created.body);
    });
  });
}
