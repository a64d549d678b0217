// Store factories per backend: a fresh database for each caller, removed when it is done.
// SQLite: a file in a new temp directory. PostgreSQL: CREATE DATABASE vitals_test_<random> on
// the server at VITALS_TEST_POSTGRES_URL, dropped afterwards.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';

export type Backend = Store['backend'];

export const POSTGRES_URL = process.env.VITALS_TEST_POSTGRES_URL || undefined;

/** Every backend. Register one suite per backend with `{ skip: backendSkip(backend) }`, so that a run
 *  without VITALS_TEST_POSTGRES_URL reports the PostgreSQL suites as skipped, by name. */
export const ALL_BACKENDS: Backend[] = ['sqlite', 'postgres'];

/** Why a backend's suite cannot run here (a node:test `skip` reason), or false when it can. */
export function backendSkip(backend: Backend): string | false {
  return backend === 'postgres' && !POSTGRES_URL ? 'VITALS_TEST_POSTGRES_URL is not set' : false;
}

/** The backend of the HTTP tests: VITALS_TEST_BACKEND=postgres (with VITALS_TEST_POSTGRES_URL), else SQLite. */
export function appBackend(): Backend {
  const wanted = process.env.VITALS_TEST_BACKEND || 'sqlite';
  if (wanted !== 'sqlite' && wanted !== 'postgres') {
    throw new Error(`VITALS_TEST_BACKEND must be sqlite or postgres, not '${wanted}'.`);
  }
  if (wanted === 'postgres' && !POSTGRES_URL) {
    throw new Error(
      'VITALS_TEST_BACKEND=postgres needs VITALS_TEST_POSTGRES_URL (a server where it may create databases).',
    );
  }
  return wanted;
}

/**
 * The tests' own writes (beyond src/writes/): a store's threads may run them because the store
 * is told of their modules (src/store/write.ts).
 */
export const TEST_WRITE_MODULES = [
  new URL('./heavy-probe.ts', import.meta.url).href,
  new URL('../store/contract/writes.ts', import.meta.url).href,
];

export interface TestDatabase {
  backend: Backend;
  /** The temp directory (SQLite) that holds the database file; PostgreSQL gets one too, for symmetry. */
  dir: string;
  /** PostgreSQL: the database's URL, for a process of its own (DATABASE_URL). */
  url?: string;
  /** Another store on this database, as another process would open it (not migrated). */
  open(): Store;
  /** Closes every store opened here and removes the database. */
  drop(): Promise<void>;
}

export async function createTestDatabase(backend: Backend): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'vitals-test-'));
  const stores: Store[] = [];
  const closeAll = async () => {
    await Promise.all(stores.map((s) => s.close()));
  };
  if (backend === 'sqlite') {
    return {
      backend,
      dir,
      open: () => {
        const store = new SqliteStore({
          path: join(dir, 'vitals.db'),
          synchronous: 'normal',
          writeModules: TEST_WRITE_MODULES,
        });
        stores.push(store);
        return store;
      },
      drop: async () => {
        await closeAll();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (!POSTGRES_URL) throw new Error('VITALS_TEST_POSTGRES_URL is not set.');
  const name = `vitals_test_${randomBytes(8).toString('hex')}`;
  await admin((sql) => sql.unsafe(`CREATE DATABASE ${name}`));
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    backend,
    dir,
    url: url.toString(),
    open: () => {
      const store = new PostgresStore({ url: url.toString(), poolSize: 4, writeModules: TEST_WRITE_MODULES });
      stores.push(store);
      return store;
    },
    drop: async () => {
      await closeAll();
      await admin((sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function admin(fn: (sql: postgres.Sql) => Promise<unknown>): Promise<void> {
  const sql = postgres(POSTGRES_URL as string, { max: 1, onnotice: () => {} });
  try {
    await fn(sql);
  } finally {
    await sql.end();
  }
}
