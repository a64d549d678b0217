// A PostgreSQL dump restored into another cluster (docs/operations.md, "PostgreSQL: pg_dump"): its
// events carry the old cluster's transaction ids, which may lie ahead of the new cluster's. The
// feed shows only events below the oldest running transaction, so without more they would stay
// hidden until the new cluster's ids caught up; the store's start gives them id 0 instead, and the
// feed lists them in the order they were written, the new ones after them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import postgres from 'postgres';
import { event } from '../../src/domain/events.ts';
import { backendSkip } from '../helpers/stores.ts';
import { transaction } from '../helpers/transaction.ts';
import { customer, isolatedDatabase, T0 } from './contract/context.ts';

describe('PostgreSQL: events restored from another cluster', { skip: backendSkip('postgres') }, () => {
  test('events whose transaction ids lie ahead are listed after the next start, in order, the new ones after', async (t) => {
    const { db, store, account } = await isolatedDatabase('postgres', t);
    const a = await account();
    const written = [];
    for (const id of ['c1', 'c2', 'c3']) {
      const e = event('customer.created', { id }, T0);
      written.push(e.id);
      await transaction(store, async (tx) => {
        await tx.insertCustomer(a, customer(id));
        await tx.insertEvents(a, [e]);
      });
    }
    // As a dump from a busier cluster restores them: ids 100,000 ahead, in the order written there.
    const sql = postgres(db.url as string, { max: 1, onnotice: () => {} });
    t.after(() => sql.end());
    await sql`UPDATE events SET xid = ((pg_current_xact_id()::text::bigint + 100000 + seq)::text)::xid8`;
    const ids = async () => (await store.listEvents(a, { limit: 10 })).data.map((e) => e.id);
    assert.deepEqual(await ids(), [], 'hidden: every id is ahead of the horizon');

    assert.equal(await store.migrate(), (await store.migrationStatus()).latest);
    assert.deepEqual(await ids(), [...written].reverse());
    const later = event('customer.updated', { id: 'c1' }, T0 + 1);
    await transaction(store, (tx) => tx.insertEvents(a, [later]));
    assert.deepEqual(await ids(), [later.id, ...[...written].reverse()]);
    // A cursor from before the restore still pages from where it was.
    const after = await store.listEvents(a, { limit: 10, startingAfter: written[2] });
    assert.deepEqual(
      after.data.map((e) => e.id),
      [written[1], written[0]],
    );

    // A start with nothing restored changes nothing.
    const before = await sql`SELECT id, xid::text FROM events ORDER BY seq`;
    await store.migrate();
    assert.deepEqual(await sql`SELECT id, xid::text FROM events ORDER BY seq`, before);
  });
});
