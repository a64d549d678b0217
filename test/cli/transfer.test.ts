// `vitals import` and `vitals export` (docs/cli.md, "Import and export"): the real CLI in its own
// process, against the real app on a real port, with real files. Each test has an account of its
// own; what was stored is read back through the API.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { VitalsClient } from '../../src/client/index.ts';
import { plainLine } from '../../src/transfer/progress.ts';
import { all, type ClientApp, clientApp } from '../client/harness.ts';
import { tempDir } from '../helpers/app.ts';
import { ROOT, runCli, serverEnv } from '../helpers/server.ts';

let app: ClientApp;
let dir: string;
before(async () => {
  app = await clientApp();
  dir = tempDir();
});
after(() => app.close());

let accounts = 0;
async function account(): Promise<{ key: string; client: VitalsClient }> {
  const { key } = await app.t.newAccount(`transfer ${++accounts}`);
  return { key, client: new VitalsClient({ url: app.url, key }) };
}
/** `vitals ARGS --url …` with the key in VITALS_API_KEY, `stdin` written to its standard input. */
const vitals = (key: string, args: string[], stdin?: string | Buffer) =>
  runCli([...args, '--url', app.url], serverEnv({ VITALS_API_KEY: key }), stdin);

let files = 0;
function file(name: string, content: string | Buffer): string {
  const path = join(dir, `${++files}-${name}`);
  writeFileSync(path, content);
  return path;
}

const rejected = (path: string) =>
  readFileSync(`${path}.rejected.ndjson`, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

const customers = (client: VitalsClient) => all(client.customers.list({ limit: 100 }));

describe('import customers', () => {
  test('the example file: every row created, exit 0, a summary on stderr', async () => {
    const { key, client } = await account();
    const run = await vitals(key, ['import', 'customers', join(ROOT, 'examples', 'customers.csv')]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /Imported customers: 5 rows in .*: 5 created, 0 updated, 0 refused\./);
    const stored = await customers(client);
    assert.deepEqual(
      stored.map((c) => c.id),
      ['acme', 'globex', 'hooli', 'initech', 'umbrella'],
    );
    const hooli = stored.find((c) => c.id === 'hooli');
    // An empty cell is a field not sent: hooli has no csm.
    assert.deepEqual(hooli?.metadata, { plan: 'pro', region: 'us' });
    assert.equal(hooli?.email, 'team@hooli.example');
  });

  test('refused rows go to FILE.rejected.ndjson with their line and error; the others are imported; exit 1', async () => {
    const { key, client } = await account();
    const path = file(
      'customers.csv',
      [
        'customer_id,name,email,metadata.plan',
        'good1,Good One,one@example.com,pro',
        'bad,Bad,not-an-email,pro',
        'good2,"Two, with a comma",two@example.com,',
        'ragged,Only two cells',
        'noemail,No Email,,starter',
        '',
      ].join('\n'),
    );
    const run = await vitals(key, ['import', 'customers', path]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /3 refused \(see .*rejected\.ndjson\)/);
    // Written as the answers come: rows refused before sending come first.
    const refusals = rejected(path).sort((a, b) => a.line - b.line);
    assert.deepEqual(
      refusals.map((r) => [r.line, r.error.code, r.error.param ?? null]),
      [
        [3, 'parameter_invalid', 'email'],
        [5, 'parameter_invalid', null],
        [6, 'parameter_missing', 'email'],
      ],
    );
    assert.match(refusals[1].error.message, /one cell per header column/);
    assert.deepEqual(refusals[0].item, {
      customer_id: 'bad',
      name: 'Bad',
      email: 'not-an-email',
      metadata: { plan: 'pro' },
    });
    assert.deepEqual(
      (await customers(client)).map((c) => [c.id, c.name]),
      [
        ['good1', 'Good One'],
        ['good2', 'Two, with a comma'],
      ],
    );
    // Fixed and run again: everything is in, and the stale rejected file is gone.
    writeFileSync(path, 'customer_id,name,email\nbad,Bad,bad@example.com\n');
    const again = await vitals(key, ['import', 'customers', path]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(existsSync(`${path}.rejected.ndjson`), false);
  });

  test('rows of one customer apply in file order, across batches in flight', async () => {
    const { key, client } = await account();
    const rows = ['customer_id,name,email'];
    for (let i = 1; i <= 40; i++)
      rows.push(`same,Name ${i},n${i}@example.com`, `other${i},Other,o@example.com`);
    const path = file('order.csv', `${rows.join('\n')}\n`);
    const run = await vitals(key, ['import', 'customers', path, '--batch-size', '3', '--concurrency', '4']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /41 created, 39 updated/);
    assert.equal((await client.customers.retrieve('same')).name, 'Name 40');
  });

  test('NDJSON from standard input; refused rows on stderr; a row the server refuses whole is found alone', async () => {
    const { key, client } = await account();
    const lines = [
      JSON.stringify({ customer_id: 'n1', name: 'N1', email: 'n1@example.com', metadata: { tier: 2 } }),
      '{"customer_id":"n2","name":"lone \\ud800 surrogate","email":"n2@example.com"}',
      'not json',
      JSON.stringify({
        id: 'n3',
        name: 'From an export',
        email: 'n3@example.com',
        created_at: '2020-01-01T00:00:00.000Z',
      }),
    ];
    const run = await vitals(
      key,
      ['import', 'customers', '-', '--format', 'ndjson'],
      `${lines.join('\n')}\n`,
    );
    assert.equal(run.code, 1, run.stderr);
    const refusals = run.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    assert.deepEqual(refusals.map((r) => [r.line, r.error.code]).sort(), [
      [2, 'invalid_json'],
      [3, 'parameter_invalid'],
    ]);
    assert.deepEqual(
      (await customers(client)).map((c) => c.id),
      ['n1', 'n3'],
    );
  });
});

describe('import customers: the book fields', () => {
  test('CSV columns set them; a parent after its child in the file is set in the second pass', async () => {
    const { key, client } = await account();
    const path = file(
      'book.csv',
      [
        'customer_id,name,email,owner,arr,renewal_at,lifecycle,parent_id',
        'kid,Kid,kid@example.com,Owner@Example.com,99.995,2027-01-31T09:00:00+01:00,churned,mum',
        'grandkid,Grandkid,gk@example.com,,,,,kid',
        'mum,Mum,mum@example.com,,1000000000000,,active,',
        '',
      ].join('\n'),
    );
    const run = await vitals(key, ['import', 'customers', path]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /3 rows in .*: 3 created, 0 updated, 0 refused\./);
    const byId = new Map((await customers(client)).map((c) => [c.id, c]));
    const book = (id: string) => {
      const c = byId.get(id);
      return c && [c.owner, c.arr, c.renewal_at, c.lifecycle, c.parent_id];
    };
    assert.deepEqual(book('kid'), ['Owner@Example.com', 100, '2027-01-31T08:00:00.000Z', 'churned', 'mum']);
    assert.deepEqual(book('grandkid'), [null, null, null, 'active', 'kid']);
    assert.deepEqual(book('mum'), [null, 1e12, null, 'active', null]);
  });

  test('bad values are refused rows naming the field; nothing of them is stored; a cycle is refused in the second pass', async () => {
    const { key, client } = await account();
    const path = file(
      'book-bad.csv',
      [
        'customer_id,name,email,owner,arr,renewal_at,lifecycle,parent_id',
        'ok,Ok,ok@example.com,,,,,',
        'b1,B,b@example.com,not-an-email,,,,',
        'b2,B,b@example.com,,NaN,,,',
        'b3,B,b@example.com,,-5,,,',
        'b4,B,b@example.com,,1000000000001,,,',
        'b5,B,b@example.com,,,2027-02-30T00:00:00Z,,',
        'b6,B,b@example.com,,,1969-12-31T00:00:00Z,,',
        'b7,B,b@example.com,,,,paused,',
        'b8,B,b@example.com,,,,,nobody',
        'b9,B,b@example.com,,,,,b9',
        'c1,C,c@example.com,,,,,c2',
        'c2,C,c@example.com,,,,,c1',
        '',
      ].join('\n'),
    );
    const run = await vitals(key, ['import', 'customers', path]);
    assert.equal(run.code, 1, run.stderr);
    const refusals = rejected(path).sort((a, b) => a.line - b.line);
    assert.deepEqual(
      refusals.map((r) => [r.line, r.error.code, r.error.param]),
      [
        [3, 'parameter_invalid', 'owner'],
        [4, 'parameter_invalid', 'arr'],
        [5, 'parameter_invalid', 'arr'],
        [6, 'parameter_invalid', 'arr'],
        [7, 'parameter_invalid', 'renewal_at'],
        [8, 'parameter_invalid', 'renewal_at'],
        [9, 'parameter_invalid', 'lifecycle'],
        [10, 'parameter_invalid', 'parent_id'],
        [11, 'parameter_invalid', 'parent_id'],
        [13, 'parameter_invalid', 'parent_id'],
      ],
    );
    // A row whose parent is refused counts as refused, though its other fields are stored: b8,
    // b9 and c2 exist. c1 -> c2 was set first, so c2 -> c1 would close a cycle.
    assert.match(run.stderr, /12 rows in .*: 2 created, 0 updated, 10 refused/);
    const stored = new Map((await customers(client)).map((c) => [c.id, c.parent_id]));
    assert.deepEqual([...stored.entries()].sort(), [
      ['b8', null],
      ['b9', null],
      ['c1', 'c2'],
      ['c2', null],
      ['ok', null],
    ]);
  });
});

describe('export and import customers as NDJSON: the book fields', () => {
  test('Customer objects import into another account as they were, a parent after its child', async () => {
    const source = await account();
    await source.client.customers.batch([
      { customer_id: 'p', name: 'P', email: 'p@example.com', owner: 'Boss@Example.com', arr: 0.01 },
      {
        customer_id: 'a',
        name: 'A',
        email: 'a@example.com',
        renewal_at: '2031-12-31T23:00:00-01:00',
        lifecycle: 'churned',
        parent_id: 'p',
      },
    ]);
    const run = await vitals(source.key, ['export', 'customers', '--format', 'ndjson']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout.split('\n')[0] as string).parent_id, 'p');
    const target = await account();
    const imported = await vitals(target.key, ['import', 'customers', file('export.ndjson', run.stdout)]);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stderr, /2 rows in .*: 2 created, 0 updated, 0 refused\./);
    const strip = (cs: { created_at: string; updated_at: string }[]) =>
      cs.map(({ created_at: _c, updated_at: _u, ...rest }) => rest);
    assert.deepEqual(strip(await customers(target.client)), strip(await customers(source.client)));
  });
});

describe('import scores', () => {
  test('replaces factors (an empty cell is a factor not sent), or merges them with --merge', async () => {
    const { key, client } = await account();
    assert.equal(
      (await vitals(key, ['import', 'customers', join(ROOT, 'examples', 'customers.csv')])).code,
      0,
    );
    const run = await vitals(key, ['import', 'scores', join(ROOT, 'examples', 'scores.csv')]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /5 scored, 0 refused/);
    assert.deepEqual((await client.healthScores.retrieve('umbrella')).factors, {
      usage: 0.75,
      billing: 0.95,
    });
    const merge = file('merge.csv', 'customer_id,support\numbrella,0.5\nnobody,0.5\nacme,high\n');
    const merged = await vitals(key, ['import', 'scores', merge, '--merge']);
    assert.equal(merged.code, 1, merged.stderr);
    assert.deepEqual((await client.healthScores.retrieve('umbrella')).factors, {
      usage: 0.75,
      billing: 0.95,
      support: 0.5,
    });
    assert.deepEqual(
      rejected(merge).map((r) => [r.line, r.status, r.error.code, r.error.param ?? null]),
      [
        [3, 404, 'customer_not_found', null],
        [4, 400, 'parameter_invalid', 'factors.support'],
      ],
    );
    assert.deepEqual((await client.healthScores.retrieve('acme')).factors, {
      usage: 0.92,
      support: 0.8,
      billing: 1,
    });
  });
});

describe('import and export metrics', () => {
  test('a CSV of metric columns: each row one write at its instant, refused rows alone; exported and imported back', async () => {
    const { key, client } = await account();
    for (const id of ['acme', 'globex']) {
      await client.customers.create({ customer_id: id, name: id, email: `${id}@example.com` });
    }
    const rule = {
      metric: 'logins',
      aggregate: 'sum' as const,
      scale: { type: 'linear' as const, from: 0, to: 10 },
    };
    await client.settings.putFactorRule('usage', rule);
    const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
    const path = file(
      'metrics.csv',
      `customer_id,at,logins,tickets\nacme,${day(2)},3,1\nacme,${day(1)},4,\nglobex,${day(1)},2,5\nnobody,${day(1)},1,1\nglobex,yesterday,1,1\n`,
    );
    const run = await vitals(key, ['import', 'metrics', path]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /Imported metrics: 5 rows in .*: 3 recorded, 2 refused/);
    assert.deepEqual(
      // A row whose `at` is no instant is refused before sending, so it may be written first.
      rejected(path)
        .sort((a, b) => a.line - b.line)
        .map((r) => [r.line, r.error.code, r.error.param ?? null]),
      [
        [5, 'customer_not_found', null],
        [6, 'parameter_invalid', 'at'],
      ],
    );
    assert.deepEqual((await client.healthScores.retrieve('acme')).factors, { usage: 0.7 });
    const acme = await all(client.metrics.list('acme'));
    assert.deepEqual(
      acme.map((p) => [p.metric, p.value]),
      [
        ['logins', 4],
        ['logins', 3],
        ['tickets', 1],
      ],
    );

    const out = join(dir, `${++files}-metrics.ndjson`);
    const exported = await vitals(key, ['export', 'metrics', out]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stderr, /Exported 3 metrics\./);
    const other = await account();
    for (const id of ['acme', 'globex']) {
      await other.client.customers.create({ customer_id: id, name: id, email: `${id}@example.com` });
    }
    const back = await vitals(other.key, ['import', 'metrics', out]);
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(await all(other.client.metrics.list('acme')), acme);
    assert.deepEqual(
      await all(other.client.metrics.list('globex')),
      await all(client.metrics.list('globex')),
    );
  });
});

describe('import: one customer, one instant, one version', () => {
  test('a metrics file with a row per source makes one version per customer and instant, wherever the rows are', async () => {
    const { key, client } = await account();
    const rule = (metric: string, from: number, to: number) => ({
      metric,
      aggregate: 'last' as const,
      scale: { type: 'linear' as const, from, to },
    });
    await client.settings.putFactorRule('usage', rule('logins', 0, 10));
    await client.settings.putFactorRule('support', rule('tickets', 10, 0));
    const ids = ['c1', 'c2', 'c3', 'c4'];
    for (const id of ids)
      await client.customers.create({ customer_id: id, name: id, email: `${id}@example.com` });
    const dayAgo = new Date(Date.now() - 86_400_000).toISOString();
    await client.metrics.batch(
      ids.map((id) => ({ customer_id: id, values: { logins: 10, tickets: 2 }, at: dayAgo })),
    );
    // Every customer healthy at 0.9. The file: logins from one source, then tickets from another,
    // for the same instants; alone, each logins row would make an at_risk 0.65 for a moment.
    const at = new Date(Date.now() - 60_000).toISOString();
    const rows = [
      'customer_id,at,logins,tickets',
      ...ids.map((id) => `${id},${at},5,`),
      ...ids.map((id) => `${id},${at},,0`),
    ];
    const path = file('sources.csv', `${rows.join('\n')}\n`);
    const run = await vitals(key, ['import', 'metrics', path, '--batch-size', '3', '--concurrency', '4']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /8 rows in .*: 8 recorded, 0 refused/);
    for (const id of ids) {
      const history = await all(client.healthScores.history(id));
      assert.deepEqual(
        history.map((h) => [h.health_score, h.status]),
        [
          [0.75, 'healthy'],
          [0.9, 'healthy'],
        ],
        `${id}: one version for its two rows`,
      );
    }
    const statuses = await all(client.events.list({ type: 'customer.status.changed' }));
    assert.equal(statuses.length, ids.length, 'only the first scores changed a status');
  });

  test('a scores file with a row per source, merged: one version per customer', async () => {
    const { key, client } = await account();
    for (const id of ['s1', 's2'])
      await client.customers.create({ customer_id: id, name: id, email: `${id}@example.com` });
    const path = file('scores.csv', 'customer_id,usage,support\ns1,0.2,\ns2,0.9,\ns1,,0.6\ns2,,0.1\n');
    const run = await vitals(key, ['import', 'scores', path, '--merge', '--batch-size', '2']);
    assert.equal(run.code, 0, run.stderr);
    for (const [id, factors] of [
      ['s1', { usage: 0.2, support: 0.6 }],
      ['s2', { usage: 0.9, support: 0.1 }],
    ] as const) {
      const history = await all(client.healthScores.history(id));
      assert.deepEqual(
        history.map((h) => h.factors),
        [factors],
        `${id}: one version`,
      );
    }
  });
});

describe('import and export outcomes', () => {
  const now = Date.now();
  const day = (n: number) => new Date(now - n * 86_400_000).toISOString();
  const soon = () => new Date(Date.now() + 86_400_000).toISOString();
  /** What an outcome says, without what the server set (its id and when it was recorded). */
  const said = (o: { customer_id: string; outcome: string; at: string; note: string | null }) => ({
    customer_id: o.customer_id,
    outcome: o.outcome,
    at: o.at,
    note: o.note,
  });
  async function withCustomers(...ids: string[]) {
    const made = await account();
    for (const id of ids) {
      await made.client.customers.create({ customer_id: id, name: id, email: `${id}@example.com` });
    }
    return made;
  }

  test('a CSV: each row one outcome, refused rows alone in FILE.rejected.ndjson; exported and imported back', async () => {
    const { key, client } = await withCustomers('acme', 'globex');
    const path = file(
      'outcomes.csv',
      [
        'customer_id,outcome,at,note',
        `acme,retained,${day(400)},"renewed, 2 more seats"`,
        `acme,churned,${day(1)},`,
        `globex,lost,${day(2)},not a kind`,
        `globex,churned,${soon()},in the future`,
        `nobody,churned,${day(1)},`,
        'globex,retained,,',
        '',
      ].join('\n'),
    );
    const run = await vitals(key, ['import', 'outcomes', path]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /Imported outcomes: 6 rows in .*: 3 recorded, 3 refused \(see .*rejected\.ndjson\)\./,
    );
    const refusals = rejected(path).sort((a, b) => a.line - b.line);
    assert.deepEqual(
      refusals.map((r) => [r.line, r.customer_id, r.status, r.error.code, r.error.param ?? null]),
      [
        [4, 'globex', 400, 'parameter_invalid', 'outcome'],
        [5, 'globex', 400, 'parameter_invalid', 'at'],
        [6, 'nobody', 404, 'customer_not_found', null],
      ],
    );
    assert.deepEqual(refusals[0].item, {
      customer_id: 'globex',
      outcome: 'lost',
      at: day(2),
      note: 'not a kind',
    });
    const acme = await all(client.outcomes.list('acme'));
    assert.deepEqual(acme.map(said), [
      { customer_id: 'acme', outcome: 'churned', at: day(1), note: null },
      { customer_id: 'acme', outcome: 'retained', at: day(400), note: 'renewed, 2 more seats' },
    ]);
    const globex = await all(client.outcomes.list('globex'));
    assert.deepEqual(
      globex.map((o) => [o.outcome, o.note]),
      [['retained', null]],
      'an empty at is now, an empty note none',
    );

    // Export as CSV and as NDJSON; each imports into another account as it was (ids are new).
    for (const ext of ['csv', 'ndjson']) {
      const out = join(dir, `${++files}-outcomes.${ext}`);
      const exported = await vitals(key, ['export', 'outcomes', out]);
      assert.equal(exported.code, 0, exported.stderr);
      assert.match(exported.stderr, /Exported 3 outcomes\./);
      if (ext === 'csv')
        assert.match(readFileSync(out, 'utf8'), /^customer_id,outcome,at,note,id,created_at\n/);
      const other = await withCustomers('acme', 'globex');
      const back = await vitals(other.key, ['import', 'outcomes', out]);
      assert.equal(back.code, 0, back.stderr);
      assert.match(back.stderr, /3 recorded, 0 refused\./);
      assert.deepEqual((await all(other.client.outcomes.list('acme'))).map(said), acme.map(said));
      assert.deepEqual((await all(other.client.outcomes.list('globex'))).map(said), globex.map(said));
    }
  });

  test('a misspelt column stops the import before anything is sent, naming the columns', async () => {
    const { key, client } = await withCustomers('acme');
    const path = file('typo.csv', `customer_id,result,at\nacme,churned,${day(1)}\n`);
    const run = await vitals(key, ['import', 'outcomes', path]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /line 1: column 2 \('result'\) is not an outcomes column; the columns are customer_id, outcome \(churned or retained\), at .*, note\. Nothing was imported\./,
    );
    assert.deepEqual(await all(client.outcomes.list('acme')), []);
  });

  test('NDJSON: batch items or Outcome objects as the API answers them; refused lines alone', async () => {
    const { key, client } = await withCustomers('acme', 'globex');
    const answered = await client.outcomes.create('globex', { outcome: 'retained', at: day(30) });
    const path = file(
      'outcomes.ndjson',
      [
        JSON.stringify({ customer_id: 'acme', outcome: 'retained', at: day(10), note: 'three-year deal' }),
        JSON.stringify({ customer_id: 'acme', outcome: 'churned', at: soon() }),
        // An Outcome as the API answers it: its id, created_at and null note are read past.
        JSON.stringify({ ...answered, at: day(20) }),
        JSON.stringify({ customer_id: 'nobody', outcome: 'retained' }),
        JSON.stringify({ customer_id: 'acme', outcome: 'renewed', at: day(5) }),
        JSON.stringify({ customer_id: 'acme', outcome: 'churned', reason: 'price' }),
        'not json',
        JSON.stringify({ customer_id: 'acme', outcome: 'churned', at: day(1) }),
      ].join('\n'),
    );
    const run = await vitals(key, ['import', 'outcomes', path, '--batch-size', '2']);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /Imported outcomes: 8 rows in .*: 3 recorded, 5 refused/);
    assert.deepEqual(
      rejected(path)
        .sort((a, b) => a.line - b.line)
        .map((r) => [r.line, r.status ?? null, r.error.code, r.error.param ?? null]),
      [
        [2, 400, 'parameter_invalid', 'at'],
        [4, 404, 'customer_not_found', null],
        [5, 400, 'parameter_invalid', 'outcome'],
        [6, 400, 'parameter_unknown', 'reason'],
        [7, null, 'parameter_invalid', null],
      ],
    );
    assert.deepEqual(
      (await all(client.outcomes.list('acme'))).map((o) => [o.outcome, o.at, o.note]),
      [
        ['churned', day(1), null],
        ['retained', day(10), 'three-year deal'],
      ],
    );
    assert.deepEqual(
      (await all(client.outcomes.list('globex'))).map((o) => [o.outcome, o.at, o.note, o.id === answered.id]),
      [
        ['retained', day(20), null, false],
        ['retained', day(30), null, true],
      ],
    );
  });
});

describe('standard input without --format: NDJSON if its first non-blank character is {, else CSV', () => {
  test('NDJSON scores and customers are imported, exit 0', async () => {
    const { key, client } = await account();
    const people = [
      { customer_id: 'p1', name: 'P1', email: 'p1@example.com' },
      { customer_id: 'p2', name: 'P2', email: 'p2@example.com' },
    ];
    const added = await vitals(
      key,
      ['import', 'customers', '-'],
      `\n  \n${people.map((p) => JSON.stringify(p)).join('\n')}\n`,
    );
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stderr, /2 created/);
    assert.deepEqual(
      (await customers(client)).map((c) => [c.id, c.email]),
      [
        ['p1', 'p1@example.com'],
        ['p2', 'p2@example.com'],
      ],
    );
    const scores = [
      { customer_id: 'p1', factors: { usage: 0.9 } },
      { customer_id: 'p2', factors: { usage: 0.2, support: 0.4 } },
    ];
    const scored = await vitals(
      key,
      ['import', 'scores', '-'],
      scores.map((s) => JSON.stringify(s)).join('\n'),
    );
    assert.equal(scored.code, 0, scored.stderr);
    assert.match(scored.stderr, /2 scored, 0 refused/);
    assert.deepEqual((await client.healthScores.retrieve('p2')).factors, { usage: 0.2, support: 0.4 });
  });

  test('CSV is still read as CSV', async () => {
    const { key, client } = await account();
    const run = await vitals(
      key,
      ['import', 'customers', '-'],
      'customer_id,name,email\nc1,"C, One",c1@example.com\n',
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      (await customers(client)).map((c) => [c.id, c.name]),
      [['c1', 'C, One']],
    );
  });

  test('--format wins over what the input looks like', async () => {
    const { key, client } = await account();
    const run = await vitals(
      key,
      ['import', 'customers', '-', '--format', 'csv'],
      '{"customer_id":"j1","name":"J1","email":"j1@example.com"}\n',
    );
    assert.equal(run.code, 1, run.stderr);
    fileErrorLine(run.stderr, /line 1: Invalid Opening Quote/);
    assert.deepEqual(await customers(client), []);
  });
});

/** The one line that says why the file stopped: no error object dumped, no stack. */
function fileErrorLine(stderr: string, message: RegExp): void {
  const naming = stderr.split('\n').filter((l) => /line \d+/.test(l));
  assert.equal(naming.length, 1, stderr);
  assert.match(naming[0] ?? '', message);
  assert.match(naming[0] ?? '', /^vitals import: .*(nothing after it was read|Nothing was imported)\.$/);
  assert.doesNotMatch(stderr, /code:|CsvError|^\s+at |\{$/m);
}

describe('files that cannot be read', () => {
  const cases: [string, string | Buffer, RegExp][] = [
    [
      'an unknown column',
      'customer_id,name,emial\na,A,a@example.com\n',
      /line 1: column 3 \('emial'\) is not a customers column/,
    ],
    [
      'no customer_id column',
      'name,email\nA,a@example.com\n',
      /line 1: the header has no 'customer_id' column/,
    ],
    ['a column twice', 'customer_id,name,name\na,A,B\n', /line 1: column 3 \('name'\) appears twice/],
    [
      'Latin-1 bytes',
      Buffer.concat([
        Buffer.from('customer_id,name,email\na,A,a@example.com\nb,Caf'),
        Buffer.from([0xe9]),
        Buffer.from(',b@example.com\n'),
      ]),
      /line 3: the file is not UTF-8/,
    ],
    ['an unclosed quote', 'customer_id,name,email\na,"A,a@example.com\n', /line 2: Quote Not Closed/],
    ['an empty file', '', /the file is empty/],
  ];
  for (const [what, content, message] of cases) {
    test(`${what}: a message naming the line, exit 1`, async () => {
      const { key, client } = await account();
      const path = file('bad.csv', content);
      const run = await vitals(key, ['import', 'customers', path]);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, message);
      if (what !== 'Latin-1 bytes') {
        assert.deepEqual(await customers(client), []);
        // Nothing imported: that is said once, and no summary of zero rows comes before it.
        assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
        assert.match(run.stderr, new RegExp(`^vitals import: ${path}: .*\\. Nothing was imported\\.\n$`));
      }
    });
  }

  // Each breaks line 3, after a good row: that row is imported, and one line says why the rest is not.
  const header = 'customer_id,name,email\nok,OK,ok@example.com\n';
  const broken: [string, string, string | Buffer, RegExp][] = [
    [
      'a quote opened and never closed (a file)',
      'file',
      `${header}b,"B,b@example.com\nc,C,c@example.com\n`,
      /line 3: Quote Not Closed/,
    ],
    [
      'a quote inside a cell (stdin)',
      'stdin',
      `${header}b,B"ee,b@example.com\nc,C,c@example.com\n`,
      /line 3: Invalid Opening Quote: a quote is found in column 2, value is "B"/,
    ],
    [
      'text after a closing quote (stdin)',
      'stdin',
      `${header}b,"B"ee,b@example.com\nc,C,c@example.com\n`,
      /line 3: Invalid Closing Quote: got "e" instead of delimiter/,
    ],
    [
      'NDJSON that is not UTF-8 (stdin)',
      'stdin',
      Buffer.concat([
        Buffer.from(
          '{"customer_id":"ok","name":"OK","email":"ok@example.com"}\n\n{"customer_id":"b","name":"Caf',
        ),
        Buffer.from([0xe9]),
        Buffer.from('","email":"b@example.com"}\n'),
      ]),
      /line 3: the file is not UTF-8/,
    ],
  ];
  for (const [what, from, content, message] of broken) {
    test(`${what}: one line naming line 3 and the reason, exit 1`, async () => {
      const { key, client } = await account();
      const run =
        from === 'file'
          ? await vitals(key, ['import', 'customers', file('broken.csv', content)])
          : await vitals(key, ['import', 'customers', '-'], content);
      assert.equal(run.code, 1, run.stderr);
      fileErrorLine(run.stderr, message);
      assert.deepEqual(
        (await customers(client)).map((c) => c.id),
        ['ok'],
      );
    });
  }

  test('every row before the bad line is imported, also those the parser held when it found it', async () => {
    const { key, client } = await account();
    const rows = Array.from({ length: 150 }, (_, i) => `r${i},R,r@example.com`);
    const run = await vitals(
      key,
      ['import', 'customers', '-'],
      `customer_id,name,email\n${rows.join('\n')}\nbad,B"ad,b@example.com\n`,
    );
    assert.equal(run.code, 1, run.stderr);
    fileErrorLine(run.stderr, /line 152: Invalid Opening Quote/);
    assert.equal((await customers(client)).length, 150);
  });

  test('a 50 MB line stops the import with a message, without reading it all', async () => {
    const { key, client } = await account();
    const huge = Buffer.alloc(50 * 1024 * 1024, 'x');
    const path = file(
      'huge.csv',
      Buffer.concat([
        Buffer.from('customer_id,name,email\nok,OK,ok@example.com\nbig,'),
        huge,
        Buffer.from('\n'),
      ]),
    );
    const run = await vitals(key, ['import', 'customers', path]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /line 3: a record is longer than 1048576 bytes/);
    assert.deepEqual(
      (await customers(client)).map((c) => c.id),
      ['ok'],
    );
    const ndjson = file(
      'huge.ndjson',
      Buffer.concat([Buffer.from('{"customer_id":"x",'), huge, Buffer.from('\n')]),
    );
    const lines = await vitals(key, ['import', 'customers', ndjson]);
    assert.equal(lines.code, 1, lines.stderr);
    assert.match(lines.stderr, /line 1: the line is longer than 1048576 bytes/);
  });
});

describe('export', () => {
  test('customers as CSV import into another account as they were', async () => {
    const source = await account();
    await source.client.customers.batch([
      { customer_id: 'x2', name: 'Line\nbreak', email: 'x2@example.com' },
      {
        customer_id: 'x1',
        name: 'Quote " and, comma',
        email: 'x1@example.com',
        // The book fields, the parent after its child in the file (ids in order).
        owner: 'Csm@Example.com',
        arr: 1234.5,
        renewal_at: '2027-06-30T00:00:00Z',
        lifecycle: 'churned',
        parent_id: 'x2',
        metadata: { n: 1, nested: { a: [1, 2] } },
      },
    ]);
    const run = await vitals(source.key, ['export', 'customers']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.stdout.split('\n')[0],
      'customer_id,name,email,owner,arr,renewal_at,lifecycle,parent_id,metadata,created_at,updated_at',
    );
    assert.match(run.stdout, /^x1,.*,Csm@Example\.com,1234\.5,2027-06-30T00:00:00\.000Z,churned,x2,/m);
    const target = await account();
    const imported = await vitals(target.key, ['import', 'customers', file('export.csv', run.stdout)]);
    assert.equal(imported.code, 0, imported.stderr);
    const strip = (cs: { created_at: string; updated_at: string }[]) =>
      cs.map(({ created_at: _c, updated_at: _u, ...rest }) => rest);
    assert.deepEqual(strip(await customers(target.client)), strip(await customers(source.client)));
  });

  test('scores as NDJSON to a file, in the portfolio order, and back in with import', async () => {
    const source = await account();
    await source.client.customers.batch([
      { customer_id: 'a', name: 'A', email: 'a@example.com' },
      { customer_id: 'b', name: 'B', email: 'b@example.com' },
    ]);
    await source.client.healthScores.batch([
      { customer_id: 'a', factors: { usage: 0.9 } },
      { customer_id: 'b', factors: { usage: 0.1, support: 0.2 } },
    ]);
    const out = join(dir, 'scores.ndjson');
    const run = await vitals(source.key, ['export', 'scores', out]);
    assert.equal(run.code, 0, run.stderr);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((s) => [s.customer_id, s.status]),
      [
        ['b', 'critical'],
        ['a', 'healthy'],
      ],
    );
    const target = await account();
    await target.client.customers.batch([
      { customer_id: 'a', name: 'A', email: 'a@example.com' },
      { customer_id: 'b', name: 'B', email: 'b@example.com' },
    ]);
    assert.equal((await vitals(target.key, ['import', 'scores', out])).code, 0);
    assert.deepEqual((await target.client.healthScores.retrieve('b')).factors, { usage: 0.1, support: 0.2 });
  });
});

test('export to a reader that stops early (| head) ends quietly with status 0', async () => {
  const { key, client } = await account();
  const many = Array.from({ length: 1000 }, (_, i) => ({
    customer_id: `c${i}`,
    name: `C ${i}`,
    email: 'c@example.com',
  }));
  for (let i = 0; i < 3; i++) {
    await client.customers.batch(
      many.map((c) => ({ ...c, customer_id: `${c.customer_id}-${i}`, metadata: { pad: 'x'.repeat(100) } })),
    );
  }
  const child = spawn(
    process.execPath,
    [join(ROOT, 'src', 'cli.ts'), 'export', 'customers', '--url', app.url],
    {
      cwd: ROOT,
      env: serverEnv({ VITALS_API_KEY: key }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const [first] = (await once(child.stdout, 'data')) as [Buffer];
  assert.match(first.toString(), /^customer_id,name,email,owner,arr,renewal_at,lifecycle,parent_id,metadata/);
  child.stdout.destroy();
  const [code] = (await once(child, 'close')) as [number | null];
  assert.equal(code, 0, stderr);
  assert.doesNotMatch(stderr, /EPIPE|Error/);
});

describe('usage', () => {
  const cases: [string, string[], string | undefined, RegExp][] = [
    ['no key', ['import', 'customers', 'x.csv'], '', /give an API key/],
    [
      'an unknown kind',
      ['import', 'webhooks', 'x.csv'],
      'vk_x',
      /'customers', 'scores', 'metrics' or 'outcomes'/,
    ],
    ['no file', ['import', 'customers'], 'vk_x', /give the file/],
    ['a bad --format', ['export', 'customers', '--format', 'xml'], 'vk_x', /--format must be/],
    ['--merge on customers', ['import', 'customers', 'x.csv', '--merge'], 'vk_x', /--merge is for scores/],
    [
      'a bad --batch-size',
      ['import', 'scores', 'x.csv', '--batch-size', '5000'],
      'vk_x',
      /--batch-size must be/,
    ],
  ];
  for (const [what, args, key, message] of cases) {
    test(`${what}: exit 2 with the reason`, async () => {
      const run = await vitals(key ?? '', args);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
    });
  }

  test('a server that is not there: where, why, and what to check, in one line; exit 1', async () => {
    // A port that was just free: nothing listens on it.
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as AddressInfo;
    probe.close();
    await once(probe, 'close');
    const url = `http://127.0.0.1:${port}`;
    for (const args of [
      ['import', 'customers', join(ROOT, 'examples', 'customers.csv')],
      ['export', 'customers', join(dir, 'unreached.csv')],
    ]) {
      const run = await runCli([...args, '--url', url], serverEnv({ VITALS_API_KEY: 'vk_x' }));
      assert.equal(run.code, 1, run.stderr);
      assert.equal(
        run.stderr,
        `vitals ${args[0]}: could not reach ${url} (connection refused) — is Vitals running there? Point --url at it.\n`,
      );
    }
  });

  test('an export counts rows, not refusals: its progress line has none', () => {
    const counts = { rows: 12_500, refused: 0 };
    assert.equal(
      plainLine('export customers', counts, 2500, false),
      'export customers: 12,500 rows, 2,500 rows/s\n',
    );
    assert.equal(
      plainLine('import customers', { ...counts, refused: 3 }, 2500, true, { percent: 40, eta: 30 }),
      'import customers: 12,500 rows (3 refused), 2,500 rows/s, 40% of the file, ETA 30 s\n',
    );
  });

  test('a wrong key: the server says 401, exit 1', async () => {
    const run = await vitals('vk_wrong', ['import', 'customers', join(ROOT, 'examples', 'customers.csv')]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^vitals import: the server refused it with 401 api_key_invalid: /);
  });
});
