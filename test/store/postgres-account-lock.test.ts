// PostgreSQL's account lock is sent without waiting for it (src/store/postgres/tx.ts; docs/postgresql.md,
// "Round trips of a write"): the statements after it wait for it on the connection, and a lock that
// fails still fails its transaction, even when nothing was sent after it. And a transaction
// PostgreSQL rolls back to break a deadlock runs again, whole (docs/postgresql.md).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import postgres from 'postgres';
import { LOCKS } from '../../src/store/postgres/connection.ts';
import type { PgTx } from '../../src/store/postgres/tx.ts';
import { backendSkip } from '../helpers/stores.ts';
import { transaction } from '../helpers/transaction.ts';
import { customer, isolatedDatabase } from './contract/context.ts';

describe('PostgreSQL account locks', { skip: backendSkip('postgres') }, () => {
  test('a lock not waited for still fails its transaction: its error comes back and nothing commits', async (t) => {
    const { db, store, account } = await isolatedDatabase('postgres', t);
    const a = await account();
    await transaction(store, (tx) => tx.insertCustomer(a, customer('c1')));
    const holder = postgres(db.url as string, { max: 1, onnotice: () => {} });
    t.after(() => holder.end());
    await holder.begin(async (sql) => {
      // Another process holds the account exclusively (a settings change in flight).
      await sql`SELECT pg_advisory_xact_lock(${LOCKS.account}, hashtext(${a}))`;
      const rename = (name: string, lockLast: boolean) =>
        transaction(store, async (tx) => {
          const raw = (tx as PgTx).sql;
          await raw`SET LOCAL lock_timeout = '150ms'`;
          if (lockLast) {
            // A change written without the account lock, then a call that sends the lock and
            // nothing after it (a NUL in the id answers at once): the lock is the last statement.
            await raw`UPDATE customers SET name = ${name} WHERE account_id = ${a} AND id = 'c1'`;
            await tx.updateCustomer(a, customer('c\u0000x'));
          } else {
            await tx.updateCustomer(a, customer('c1', { name }));
          }
        });
      for (const lockLast of [false, true]) {
        await assert.rejects(rename(`renamed ${lockLast}`, lockLast), (err: { code?: string }) => {
          assert.equal(err.code, '55P03', String(err)); // lock_not_available: the lock's own error
          return true;
        });
      }
    });
    assert.equal((await store.getCustomer(a, 'c1'))?.name, 'Customer c1', 'nothing committed');
    // Once the account is free, the same transaction commits.
    await transaction(store, (tx) => tx.updateCustomer(a, customer('c1', { name: 'renamed' })));
    assert.equal((await store.getCustomer(a, 'c1'))?.name, 'renamed');
  });

  test('two transactions that deadlock both commit: the one PostgreSQL rolls back runs again, whole', async (t) => {
    const { store, account } = await isolatedDatabase('postgres', t);
    const a = await account();
    await transaction(store, async (tx) => {
      await tx.insertCustomer(a, customer('x'));
      await tx.insertCustomer(a, customer('y'));
    });
    // Each locks its first customer, waits until the other has locked its own, then asks for the
    // other's: a cycle PostgreSQL breaks within deadlock_timeout by failing one of them with 40P01.
    let locked = 0;
    let bothLocked: () => void = () => {};
    const both = new Promise<void>((resolve) => {
      bothLocked = resolve;
    });
    const runs: string[] = [];
    const cross = (first: string, second: string) =>
      transaction(store, async (tx) => {
        runs.push(first);
        await tx.getCustomer(a, first);
        if (++locked === 2) bothLocked();
        await both;
        await tx.getCustomer(a, second);
        await tx.updateCustomer(a, customer(first, { name: `by ${first}` }));
      });
    await Promise.all([cross('x', 'y'), cross('y', 'x')]);
    assert.equal(runs.length, 3, `one of the two ran again: ${runs.join(', ')}`);
    assert.equal((await store.getCustomer(a, 'x'))?.name, 'by x');
    assert.equal((await store.getCustomer(a, 'y'))?.name, 'by y');
  });
});
