import { join } from 'node:path';
import type { Config } from '../config.ts';
import { PostgresStore } from './postgres/postgres-store.ts';
import { SqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './store.ts';

/** Where the SQLite database lives under VITALS_DATA_DIR. */
export const sqlitePath = (dataDir: string): string => join(dataDir, 'vitals.db');

/** The backend comes from configuration; nothing else in Vitals knows which one it is. */
export function openStore(
  config: Pick<Config, 'dataDir' | 'sqliteSynchronous' | 'sqliteCacheMb' | 'databaseUrl' | 'dbPoolSize'>,
): Store {
  if (config.databaseUrl) return new PostgresStore({ url: config.databaseUrl, poolSize: config.dbPoolSize });
  return new SqliteStore({
    path: sqlitePath(config.dataDir),
    synchronous: config.sqliteSynchronous,
    cacheMb: config.sqliteCacheMb,
  });
}
