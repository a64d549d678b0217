// What one claim of due deliveries costs with a huge backlog, right after the burst that queued it
// and before any ANALYZE (on PostgreSQL autovacuum is switched off for the table, so statistics
// stay as stale as a burst leaves them): ACCOUNTS accounts with one webhook each, PENDING
// deliveries in all, queued through the store as the API queues them; then CLAIMS claims of 64
// (at most 8 per webhook), one after another, each recorded as delivered before the next, as a
// dispatcher makes them. Prints p50, p99 and max.
//   ./node_modules/.bin/node bench/webhook-claim.ts [--pending 1000000] [--backend sqlite|postgres]
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { newId } from '../src/domain/ids.ts';
import type { EventRecord } from '../src/store/store.ts';
import { createTestDatabase } from '../test/helpers/stores.ts';
import { transaction } from '../test/helpers/transaction.ts';

const { values } = parseArgs({
  options: {
    pending: { type: 'string', default: '1000000' },
    backend: { type: 'string', default: 'sqlite' },
    accounts: { type: 'string', default: '20' },
    claims: { type: 'string', default: '200' },
  },
});
const PENDING = Number(values.pending);
const ACCOUNTS = Number(values.accounts);
const CLAIMS = Number(values.claims);
const backend = values.backend === 'postgres' ? 'postgres' : 'sqlite';
const BATCH = 10_000;

const db = await createTestDatabase(backend);
const store = db.open();
try {
  await store.migrate();
  if (db.url) {
    const sql = postgres(db.url, { max: 1, onnotice: () => {} });
    await sql`ALTER TABLE deliveries SET (autovacuum_enabled = false)`;
    await sql.end();
  }
  const now = Date.now();
  const accounts: string[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const account = await store.ensureAccount(`acct${a}`, now);
    accounts.push(account.id);
    await transaction(store, (tx) =>
      tx.insertWebhook(account.id, {
        id: newId.webhook(),
        url: 'http://127.0.0.1:9/hook',
        events: ['customer.created'],
        description: null,
        format: 'standard',
        secret: newId.webhookSecret(),
        previousSecret: null,
        previousSecretExpiresAt: null,
        enabled: true,
        disabledReason: null,
        createdAt: now,
        updatedAt: now,
      }),
    );
  }
  const queueStarted = performance.now();
  const per = Math.ceil(PENDING / ACCOUNTS);
  for (const account of accounts) {
    for (let done = 0; done < per; done += BATCH) {
      const events: EventRecord[] = Array.from({ length: Math.min(BATCH, per - done) }, (_, i) => ({
        id: newId.event(),
        type: 'customer.created',
        data: { id: `cus_${done + i}`, name: 'Acme' },
        createdAt: now - PENDING + done + i,
      }));
      await transaction(store, (tx) => tx.insertEvents(account, events));
    }
  }
  // (countPendingDeliveries: the store before issue 25, so the same bench measures the code before it.)
  const old = store as unknown as { countPendingDeliveries?: () => Promise<number> };
  const queued = old.countPendingDeliveries
    ? await old.countPendingDeliveries()
    : (await store.backlogByAccount()).reduce((n, b) => n + b.pending, 0);
  console.log(`${backend}: ${queued} pending in ${((performance.now() - queueStarted) / 1000).toFixed(0)} s`);
  if (db.url) {
    const sql = postgres(db.url, { max: 1, onnotice: () => {} });
    const [stats] = await sql`
      SELECT last_analyze, last_autoanalyze, n_live_tup FROM pg_stat_user_tables WHERE relname = 'deliveries'`;
    console.log(`  never analyzed: ${stats?.last_analyze === null && stats?.last_autoanalyze === null}`);
    await sql.end();
  }
  const times: number[] = [];
  let claimed = 0;
  for (let i = 0; i < CLAIMS; i++) {
    const at = Date.now();
    const t0 = performance.now();
    const got = await store.claimDeliveries({
      owner: 'bench',
      now: at,
      leaseUntil: at + 60_000,
      limit: 64,
      // 8 per webhook (20 webhooks could take 160), so a claim shares its 64 among them as the
      // dispatcher's do; the shape before issue 25 too, so the same bench measures the code before it.
      perWebhook: { default: 8 },
      perAccount: 128,
      ...{ slots: { default: 8 } },
    });
    times.push(performance.now() - t0);
    claimed += got.length;
    // Finished, as a dispatcher would record them: what is in flight stays what it would be.
    await store.recordAttempts(
      got.map((d) => ({
        deliveryId: d.id,
        accountId: d.accountId,
        webhookId: d.webhookId,
        owner: 'bench',
        attempt: d.attempt,
        startedAt: at,
        durationMs: 1,
        statusCode: 200,
        error: null,
        responseBody: null,
        next: { status: 'succeeded' },
        disableWebhook: false,
      })),
    );
  }
  times.sort((x, y) => x - y);
  const q = (p: number) =>
    (times[Math.min(times.length - 1, Math.floor(p * times.length))] as number).toFixed(2);
  console.log(
    `  ${CLAIMS} claims of 64 (${claimed} leased): p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms`,
  );
} finally {
  await store.close();
  await db.drop();
}
