// Shown once, kept only as a hash (docs/people.md, "Adding people"; docs/api.md, "Idempotency
// keys"): after people are added over the API, with and without an Idempotency-Key and with a
// replay, and keys are made, no table holds a sign-in token or an API key in plain text, and
// on SQLite neither does any byte of the database files. A replay answers without the link.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { createApiKey, createUser } from '../../src/keys.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { appBackend } from '../helpers/stores.ts';

let t: TestApp;
/** Every token and key shown once in this test. */
const shown: string[] = [];

const tokenOf = (link: string) => {
  const token = /#token=([A-Za-z0-9_-]+)$/.exec(link)?.[1];
  assert.ok(token, link);
  return token;
};

/** Every row of every table of the app's database, as text. */
async function everyRow(): Promise<string> {
  if (t.databaseUrl) {
    const pg = postgres(t.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const tables = await pg<{ name: string }[]>`
        SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'`;
      let text = '';
      for (const { name } of tables) {
        const rows = await pg.unsafe(`SELECT row_to_json(r)::text AS j FROM "${name}" r`);
        text += rows.map((r) => r.j).join('\n');
      }
      return text;
    } finally {
      await pg.end();
    }
  }
  const db = new DatabaseSync(join(t.dir, 'vitals.db'), { readOnly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all();
    return tables
      .map(({ name }) => JSON.stringify(db.prepare(`SELECT * FROM "${name as string}"`).all()))
      .join('\n');
  } finally {
    db.close();
  }
}

/** The same person added with the same Idempotency-Key: the first time, then its replay. */
const addKeyed = () =>
  t.api.request(
    'POST',
    '/api/users',
    { email: 'keyed@example.com', role: 'editor' },
    { 'idempotency-key': 'add-keyed' },
  );

before(async () => {
  t = await buildTestApp();
  const plain = await t.api.post('/api/users', { email: 'plain@example.com', role: 'viewer' });
  assert.equal(plain.status, 201, plain.raw);
  shown.push(tokenOf(plain.body.sign_in_link));
  const keyed = await addKeyed();
  assert.equal(keyed.status, 201, keyed.raw);
  shown.push(tokenOf(keyed.body.sign_in_link));
  const made = await createUser(t.store, { email: 'cli@example.com', accountName: 'default', role: 'admin' });
  assert.ok(made);
  shown.push(made.token);
  shown.push(t.api.key, (await createApiKey(t.store, 'default')).key);
  shown.push((await createApiKey(t.store, 'other', undefined, { scope: 'read' })).key);
});
after(() => t.close());

describe('what is shown once is not kept', () => {
  test('a replayed Idempotency-Key answer has the user but not the link', async () => {
    const first = await t.api.get('/api/users');
    const replay = await addKeyed();
    assert.equal(replay.status, 201, replay.raw);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body.user.email, 'keyed@example.com');
    assert.equal('sign_in_link' in replay.body, false, replay.raw);
    assert.deepEqual((await t.api.get('/api/users')).body, first.body, 'the replay added no one');
  });

  test('no table holds a token or a key in plain text', async () => {
    const rows = await everyRow();
    assert.ok(rows.includes('keyed@example.com'), 'the walk reads the tables');
    for (const secret of shown)
      assert.equal(rows.includes(secret), false, `${secret.slice(0, 6)}… is stored`);
  });

  const onPostgres = appBackend() === 'postgres' && 'PostgreSQL keeps its files on the server';
  test('on SQLite, no byte of the database files holds one', { skip: onPostgres }, () => {
    const files = readdirSync(t.dir).filter((f) => f.startsWith('vitals.db'));
    assert.ok(files.includes('vitals.db'), files.join(' '));
    const bytes = Buffer.concat(files.map((f) => readFileSync(join(t.dir, f))));
    assert.ok(bytes.includes('keyed@example.com'), 'the files hold the rows');
    for (const secret of shown) assert.equal(bytes.includes(secret), false, `${secret.slice(0, 6)}… on disk`);
  });
});
