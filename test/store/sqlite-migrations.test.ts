// Upgrading a SQLite database made by an earlier version: migration 7 adds each customer's API
// JSON to its row and fills it for the customers already stored (docs/operations.md, "Upgrades");
// migration 20 moves the history into a table in written order with its key as an index.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { customerJson } from '../../src/api/customers.ts';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { CustomerRecord } from '../../src/store/store.ts';
import { tempDir } from '../helpers/app.ts';
import { transaction } from '../helpers/transaction.ts';

/** A database at schema version 6, as the release before migration 7 left it, with `n` customers. */
function databaseAtVersion6(path: string, n: number): void {
  const db = new DatabaseSync(path);
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  for (let v = 1; v <= 6; v++) {
    db.exec(MIGRATIONS[v - 1] as string);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(v, 0);
  }
  db.prepare("INSERT INTO accounts VALUES ('acc_old', 'default', 0)").run();
  db.prepare("INSERT INTO accounts VALUES ('acc_other', 'other', 0)").run();
  const insert = db.prepare('INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?)');
  db.exec('BEGIN');
  for (let i = 0; i < n; i++) {
    const metadata = JSON.stringify({ i, text: 'é "q" \n', nested: { list: [1, null, true] } });
    insert.run(
      i % 2 ? 'acc_other' : 'acc_old',
      `c${String(i).padStart(5, '0')}`,
      `N ${i} "x"`,
      `${i}@e.co`,
      metadata,
      i,
      i + 1,
    );
  }
  db.exec('COMMIT');
  db.close();
}

test('migration 7 fills every stored customer with the JSON the API sends for it, across batches and accounts', async () => {
  const path = join(tempDir(), 'vitals.db');
  databaseAtVersion6(path, 12_001); // more than two batches of 5,000
  const store = new SqliteStore({ path });
  assert.equal(await store.migrate(), MIGRATIONS.length);
  for (const account of ['acc_old', 'acc_other']) {
    let after: string | undefined;
    let seen = 0;
    for (;;) {
      const records = await store.listCustomers(account, { limit: 100, startingAfter: after });
      const page = await store.listCustomersJson(account, { limit: 100, startingAfter: after });
      assert.equal(page.json, records.data.map(customerJson).join(','));
      assert.equal(page.hasMore, records.hasMore);
      seen += records.data.length;
      if (!records.hasMore) break;
      after = records.data.at(-1)?.id;
    }
    assert.equal(seen, account === 'acc_old' ? 6001 : 6000);
  }
  const one = await store.getCustomer('acc_other', 'c00001');
  assert.ok(one);
  assert.deepEqual(one.metadata, { i: 1, text: 'é "q" \n', nested: { list: [1, null, true] } });
  assert.equal((await store.listCustomersJson('acc_other', { limit: 1 })).json, customerJson(one));
  await store.close();
});

test('a database already at the latest version is not migrated again, and its customers keep their JSON', async () => {
  const path = join(tempDir(), 'vitals.db');
  databaseAtVersion6(path, 3);
  const first = new SqliteStore({ path });
  await first.migrate();
  const before = await first.listCustomersJson('acc_old', { limit: 10 });
  await first.close();
  const second = new SqliteStore({ path });
  assert.equal(await second.migrate(), MIGRATIONS.length);
  assert.deepEqual(await second.listCustomersJson('acc_old', { limit: 10 }), before);
  const versions = new DatabaseSync(path).prepare('SELECT COUNT(*) AS n FROM schema_migrations').get();
  assert.equal(versions?.n, MIGRATIONS.length);
  await second.close();
});

test('customers written by the previous version (no JSON, or JSON it left stale) are read and listed as they are stored', async () => {
  const path = join(tempDir(), 'vitals.db');
  databaseAtVersion6(path, 3);
  const store = new SqliteStore({ path });
  await store.migrate();
  // The previous version's statements, run against the new schema (a rollback, then forward again).
  const old = new DatabaseSync(path);
  old
    .prepare(
      'INSERT INTO customers (account_id, id, name, email, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    .run('acc_old', 'c00001', 'Inserted by v6', 'v6@e.co', '{"v":6}', 10, 10);
  old
    .prepare('UPDATE customers SET name = ?, metadata = ?, updated_at = ? WHERE account_id = ? AND id = ?')
    .run('Updated by v6', '{"stale":false}', 20, 'acc_old', 'c00000');
  old.close();
  const records = await store.listCustomers('acc_old', { limit: 10 });
  assert.deepEqual(
    records.data.map((c) => [c.id, c.name]),
    [
      ['c00000', 'Updated by v6'],
      ['c00001', 'Inserted by v6'],
      ['c00002', 'N 2 "x"'],
    ],
  );
  const page = await store.listCustomersJson('acc_old', { limit: 10 });
  assert.equal(page.json, records.data.map(customerJson).join(','));
  for (const c of records.data)
    assert.equal(await store.getCustomerJson('acc_old', c.id), customerJson(c), c.id);
  // Each on a page of its own: the updated one, the inserted one.
  for (const [i, after] of [
    [0, undefined],
    [1, 'c00000'],
  ] as const) {
    const one = await store.listCustomersJson('acc_old', { limit: 1, startingAfter: after });
    assert.equal(one.json, customerJson(records.data[i] as CustomerRecord));
  }
  // The current version's update writes the JSON again, and the page is read the fast way.
  await transaction(store, async (tx) => {
    for (const c of records.data)
      await tx.updateCustomer('acc_old', {
        id: c.id,
        name: c.name,
        email: c.email,
        metadata: c.metadata,
        createdAt: c.createdAt,
        updatedAt: c.updatedAt + 1,
      });
  });
  const stored = new DatabaseSync(path).prepare("SELECT COUNT(*) AS n FROM customers WHERE json = ''").get();
  assert.equal(stored?.n, 0);
  const updated = await store.listCustomers('acc_old', { limit: 10 });
  assert.equal(
    (await store.listCustomersJson('acc_old', { limit: 10 })).json,
    updated.data.map(customerJson).join(','),
  );
  await store.close();
});

/** A database at schema version 19, with `versions` history entries for each of `customers` customers. */
function databaseAtVersion19(path: string, customers: number, versions: number): void {
  const db = new DatabaseSync(path);
  db.exec('PRAGMA foreign_keys = ON');
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  for (let v = 1; v <= 19; v++) {
    const step = MIGRATIONS[v - 1];
    if (typeof step === 'string') db.exec(step);
    else step?.(db);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?)').run(v, 0);
  }
  db.prepare("INSERT INTO accounts VALUES ('acc_old', 'default', 0)").run();
  const customer = db.prepare(
    "INSERT INTO customers (account_id, id, name, email, metadata, created_at, updated_at) VALUES ('acc_old', ?, ?, ?, '{}', 0, 0)",
  );
  const score = db.prepare(
    "INSERT INTO health_scores (account_id, customer_id, score, band, factors, version, updated_at) VALUES ('acc_old', ?, ?, 2, ?, ?, ?)",
  );
  const history = db.prepare(
    `INSERT INTO score_history (account_id, customer_id, version, score, status, factors, reason, created_at,
       computed, override, weights, inputs) VALUES ('acc_old', ?, ?, ?, 'healthy', ?, 'factors_updated', ?, ?, ?, ?, ?)`,
  );
  db.exec('BEGIN');
  for (let c = 0; c < customers; c++) {
    const id = `c${String(c).padStart(3, '0')}`;
    customer.run(id, `N ${c}`, `${c}@e.co`);
    score.run(
      id,
      0.7 + versions / 100,
      JSON.stringify({ usage: 0.7 + versions / 100 }),
      versions,
      1_000 * versions + c,
    );
    for (let v = 1; v <= versions; v++) {
      history.run(
        id,
        v,
        0.7 + v / 100,
        JSON.stringify({ usage: 0.7 + v / 100 }),
        1_000 * v + c,
        v === versions ? 0.5 : null,
        v === versions ? JSON.stringify({ score: 0.7 + v / 100, reason: 'kept' }) : null,
        JSON.stringify({ usage: 1 }),
        v % 2 ? JSON.stringify({ usage: { metric: 'logins', value: v } }) : null,
      );
    }
  }
  db.exec('COMMIT');
  db.close();
}

test('migration 20 keeps every history version, readable as before; versions stay unique and go with their customer', async () => {
  const path = join(tempDir(), 'vitals.db');
  databaseAtVersion19(path, 30, 4);
  const columns =
    'customer_id, version, score, status, factors, reason, created_at, computed, override, weights, inputs';
  const read = (db: DatabaseSync) =>
    db.prepare(`SELECT ${columns} FROM score_history ORDER BY customer_id, version`).all();
  const before = read(new DatabaseSync(path));
  const store = new SqliteStore({ path });
  assert.equal(await store.migrate(), MIGRATIONS.length);
  const page = await store.listHistory('acc_old', 'c007', { limit: 3 });
  assert.deepEqual(
    page.data.map((h) => [h.version, h.score, h.createdAt]),
    [
      [4, 0.74, 4_007],
      [3, 0.73, 3_007],
      [2, 0.72, 2_007],
    ],
  );
  assert.equal(page.hasMore, true);
  const [explained] = await store.explainedVersions('acc_old', 'c007', [4]);
  assert.equal(explained?.computed, 0.5);
  assert.deepEqual(explained?.override, { score: 0.74, reason: 'kept' });
  assert.equal(await transaction(store, (tx) => tx.deleteCustomer('acc_old', 'c001')), true);
  // A version is written only over the one before it: the history's versions stay unique.
  const current = await store.getScore('acc_old', 'c002');
  assert.ok(current);
  const again = { ...current, factors: { usage: 0.1 }, score: 0.1, status: 'critical' as const };
  delete again.factorsJson;
  await assert.rejects(
    transaction(store, (tx) => tx.writeScores('acc_old', [again], 'factors_updated')),
    /version 4 of c002 does not follow the stored 4/,
  );
  await transaction(store, (tx) => tx.writeScores('acc_old', [{ ...again, version: 5 }], 'factors_updated'));
  assert.deepEqual(
    (await store.listHistory('acc_old', 'c002', { limit: 2 })).data.map((h) => [h.version, h.score]),
    [
      [5, 0.1],
      [4, 0.74],
    ],
  );
  await store.close();

  const db = new DatabaseSync(path);
  db.exec('PRAGMA foreign_keys = ON');
  assert.deepEqual(
    read(db).filter((r) => !(r.customer_id === 'c002' && r.version === 5)),
    before.filter((r) => r.customer_id !== 'c001'),
  );
  assert.throws(
    () =>
      db
        .prepare(
          "INSERT INTO score_history (account_id, customer_id, version, score, status, factors, reason, created_at) VALUES ('acc_old', 'c001', 1, 1, 'healthy', '{}', 'factors_updated', 0)",
        )
        .run(),
    /FOREIGN KEY constraint failed/,
  );
  db.close();
});
