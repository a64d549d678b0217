// Everything the fuzz harness holds still around a request: all that the watched accounts have
// stored (customers, current scores and the whole score history of every customer, settings,
// the whole event feed, webhooks with their secrets, every delivery with its attempts), read
// through the real Store rather than the API so that nothing is paged or shaped away; every API
// key; and the row count of every table in the database, so that a write no account's view
// shows (an orphan row, a row under another account id, an idempotency claim) is caught too.
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import postgres from 'postgres';
import type {
  CustomerRecord,
  DeliveryRecord,
  EventRecord,
  HistoryRecord,
  MetricPointRecord,
  Page,
  ScoreRecord,
  Store,
} from '../../src/store/store.ts';
import type { TestApp } from '../helpers/app.ts';

/** Rows per read: more than the fuzz runs ever store, so a list is almost always one query. */
const PAGE = 1000;

/** Every page of a list: `read` gets the last item of the page before (undefined at first). */
async function all<T>(read: (after: T | undefined) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  for (let after: T | undefined; ; ) {
    const page = await read(after);
    items.push(...page.data);
    if (!page.hasMore || page.data.length === 0) return items;
    after = page.data.at(-1);
  }
}

/** One account's stored data, everything that a request could change. */
export async function accountState(store: Store, accountId: string) {
  const [customers, scores, byStatus, settings, events, webhooks] = await Promise.all([
    all<CustomerRecord>((after) =>
      store.listCustomers(accountId, { limit: PAGE, ...(after ? { startingAfter: after.id } : {}) }),
    ),
    all<ScoreRecord>((after) =>
      store.listScores(accountId, {
        limit: PAGE,
        ...(after
          ? { after: { status: after.status, score: after.score, customerId: after.customerId } }
          : {}),
      }),
    ),
    store.countScoresByStatus(accountId),
    store.getSettings(accountId),
    // Newest first: an event a request should not have written shows at the top.
    all<EventRecord>((after) =>
      store.listEvents(accountId, { limit: PAGE, ...(after ? { startingAfter: after.id } : {}) }),
    ),
    store.listWebhooks(accountId),
  ]);
  const rules = await store.listFactorRules(accountId);
  const metrics = await Promise.all(
    customers.map(async (c) => ({
      customerId: c.id,
      points: await all<MetricPointRecord>((after) =>
        store.listMetricPoints(accountId, c.id, {
          limit: PAGE,
          ...(after ? { after: { at: after.at, metric: after.metric } } : {}),
        }),
      ),
    })),
  );
  const history = await Promise.all(
    customers.map(async (c) => ({
      customerId: c.id,
      versions: await all<HistoryRecord>((after) =>
        store.listHistory(accountId, c.id, { limit: PAGE, ...(after ? { before: after.version } : {}) }),
      ),
    })),
  );
  const deliveries = await Promise.all(
    webhooks.map(async (w) => ({
      webhookId: w.id,
      deliveries: await all<DeliveryRecord>((after) =>
        store.listDeliveries(accountId, w.id, { limit: PAGE, ...(after ? { startingAfter: after.id } : {}) }),
      ),
    })),
  );
  return { customers, scores, byStatus, settings, history, events, webhooks, deliveries, rules, metrics };
}

export type AccountState = Awaited<ReturnType<typeof accountState>>;

/** Row counts of every table, read over a connection of the test's own. */
export interface TableCounts {
  read(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export function tableCounts(t: TestApp): TableCounts {
  if (t.databaseUrl === undefined) {
    // SQLite in WAL mode: a second connection sees every commit, and never takes a write lock.
    const db = new DatabaseSync(join(t.dir, 'vitals.db'), { readOnly: true });
    let query: ReturnType<DatabaseSync['prepare']> | undefined;
    return {
      read: async () => {
        if (!query) {
          const tables = db
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            .all()
            .map((r) => r.name as string);
          query = db.prepare(
            `SELECT ${tables.map((n) => `(SELECT count(*) FROM "${n}") AS "${n}"`).join(', ')}`,
          );
        }
        return { ...(query.get() as Record<string, number>) };
      },
      close: async () => db.close(),
    };
  }
  const sql = postgres(t.databaseUrl, { max: 1, onnotice: () => {} });
  let tables: string[] | undefined;
  return {
    read: async () => {
      tables ??= (
        await sql<{ name: string }[]>`
          SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) AS name FROM pg_tables
          WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`
      ).map((r) => r.name);
      const [row] = await sql.unsafe(
        `SELECT ${tables.map((n, i) => `(SELECT count(*) FROM ${n})::int AS c${i}`).join(', ')}`,
      );
      return Object.fromEntries(tables.map((n, i) => [n, row?.[`c${i}`] as number]));
    },
    close: () => sql.end(),
  };
}
