import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from '../config.ts';
import { PostgresStore } from './postgres/postgres-store.ts';
import { SqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

type StoreConfig = Pick<
  Config,
  'dataDir' | 'sqliteSynchronous' | 'sqliteCacheMb' | 'databaseUrl' | 'dbPoolSize'
>;

/** Where the SQLite database lives under VITALS_DATA_DIR. */
export const sqlitePath = (dataDir: string): string => join(dataDir, 'vitals.db');

/** The backend comes from configuration; nothing else in Vitals knows which one it is. */
export function openStore(config: StoreConfig): Store {
  if (config.databaseUrl) return new PostgresStore({ url: config.databaseUrl, poolSize: config.dbPoolSize });
  return new SqliteStore({
    path: sqlitePath(config.dataDir),
    synchronous: config.sqliteSynchronous,
    cacheMb: config.sqliteCacheMb,
  });
}

/** Why Vitals cannot start, in words a person acts on (docs/operations.md, "When Vitals does not start"). */
export class StartError extends Error {
  override name = 'StartError';
}

/**
 * openStore, once the database is known to be usable: SQLite's data directory exists (it is
 * created if it can be) and can be written, or PostgreSQL answers. Otherwise a StartError, before
 * anything listens or writes.
 */
export async function openReachable(config: StoreConfig): Promise<Store> {
  if (!config.databaseUrl) checkDataDir(config.dataDir);
  const store = openStore(config);
  try {
    await store.ping();
  } catch (err) {
    await store.close().catch(() => {});
    if (!config.databaseUrl) throw err;
    throw new StartError(
      `Vitals cannot reach PostgreSQL at ${whereTo(config.databaseUrl)} (DATABASE_URL): ${(err as Error).message}. ` +
        'Check that the server runs and accepts connections from here, and that the URL, user and password are right.',
    );
  }
  return store;
}

function checkDataDir(dataDir: string): void {
  const dir = resolve(dataDir);
  const user = typeof process.getuid === 'function' ? ` (uid ${process.getuid()})` : '';
  const refuse = (why: string) =>
    new StartError(
      `Vitals cannot use its data directory ${dir} (VITALS_DATA_DIR): ${why}. It must be a directory ` +
        `that the user Vitals runs as${user} can write; in a container, mount a volume at /data.`,
    );
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw refuse('it is not a directory');
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw refuse(`it does not exist and cannot be created (${(err as NodeJS.ErrnoException).code})`);
  }
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    const db = sqlitePath(dir);
    if (existsSync(db)) accessSync(db, constants.R_OK | constants.W_OK);
  } catch (err) {
    throw refuse(`it cannot be written (${(err as NodeJS.ErrnoException).code})`);
  }
}

/** The URL without its user and password: host, port and database. */
function whereTo(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'the configured URL';
  }
}
