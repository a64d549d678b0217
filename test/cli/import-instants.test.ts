// `vitals import` and dates that do not exist (docs/api.md, "Dates and times"; docs/cli.md, "Import
// and export"): a row whose `at` is February 30th or 24:00 is refused by itself, naming `at`, and
// is not rolled over into another day; the rows around it are imported. The real CLI in its own
// process against the real app on a real port.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { VitalsClient } from '../../src/client/index.ts';
import { all, type ClientApp, clientApp } from '../client/harness.ts';
import { tempDir } from '../helpers/app.ts';
import { runCli, serverEnv } from '../helpers/server.ts';

let app: ClientApp;
let dir: string;
before(async () => {
  app = await clientApp();
  dir = tempDir();
});
after(() => app.close());

const rejected = (path: string) =>
  readFileSync(`${path}.rejected.ndjson`, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

// Each a date or time that does not exist, which Date.parse would move to another, past, day.
const NOT_REAL = [
  '2026-02-31T00:00:00Z',
  '2025-02-29T12:00:00Z',
  '2026-04-01T24:00:00Z',
  '2026-04-31T00:00:00Z',
];

test('CSV metrics and NDJSON outcomes: each row with a date that does not exist is refused alone, naming at', async () => {
  const { key } = await app.t.newAccount('instants');
  const client = new VitalsClient({ url: app.url, key });
  await client.customers.create({ customer_id: 'acme', name: 'Acme', email: 'ops@acme.example' });
  const vitals = (args: string[]) => runCli([...args, '--url', app.url], serverEnv({ VITALS_API_KEY: key }));

  const metrics = join(dir, 'metrics.csv');
  writeFileSync(
    metrics,
    [
      'customer_id,at,logins',
      'acme,2024-02-29T00:00:00Z,1',
      ...NOT_REAL.map((at) => `acme,${at},2`),
      '',
    ].join('\n'),
  );
  const run = await vitals(['import', 'metrics', metrics]);
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /1 recorded, 4 refused/);
  assert.deepEqual(
    rejected(metrics).map((r) => [r.line, r.error.code, r.error.param]),
    NOT_REAL.map((_, i) => [i + 3, 'parameter_invalid', 'at']),
  );
  assert.deepEqual(
    (await all(client.metrics.list('acme'))).map((p) => [p.at, p.value]),
    [['2024-02-29T00:00:00.000Z', 1]],
    'only the real leap day is stored',
  );

  const outcomes = join(dir, 'outcomes.ndjson');
  writeFileSync(
    outcomes,
    [
      { customer_id: 'acme', outcome: 'retained', at: '2024-02-29T23:59:59.999+14:00' },
      ...NOT_REAL.map((at) => ({ customer_id: 'acme', outcome: 'churned', at })),
    ]
      .map((o) => JSON.stringify(o))
      .join('\n'),
  );
  const second = await vitals(['import', 'outcomes', outcomes]);
  assert.equal(second.code, 1, second.stderr);
  assert.match(second.stderr, /1 recorded, 4 refused/);
  assert.deepEqual(
    rejected(outcomes).map((r) => [r.line, r.error.code, r.error.param]),
    NOT_REAL.map((_, i) => [i + 2, 'parameter_invalid', 'at']),
  );
  assert.deepEqual(
    (await all(client.outcomes.list('acme'))).map((o) => [o.outcome, o.at]),
    [['retained', '2024-02-29T09:59:59.999Z']],
  );
});
