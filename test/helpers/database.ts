// SQL on a test app's database over a connection of the test's own: triggers that make the
// database refuse a write, locks that hold a batch in flight, settings read from outside.
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import postgres from 'postgres';
import type { TestApp } from './app.ts';

/** Runs the statement for the app's backend and closes the connection again. */
export async function onDatabase(t: TestApp, sql: { sqlite: string; postgres: string }): Promise<void> {
  if (t.databaseUrl) {
    const pg = postgres(t.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await pg.unsafe(sql.postgres);
    } finally {
      await pg.end();
    }
  } else {
    const db = new DatabaseSync(join(t.dir, 'vitals.db'));
    try {
      db.exec(sql.sqlite);
    } finally {
      db.close();
    }
  }
}
