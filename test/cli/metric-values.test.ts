// `vitals import metrics` refuses a value beyond ±1e15 row by row, as the batch it sends does
// (docs/scoring.md, "Metric values"): the row is written to the rejected file naming the column,
// the other rows are recorded, and nothing of the refused row is stored.
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

test('a CSV with values beyond the bound: those rows refused (values.NAME), the others recorded', async () => {
  const { key } = await app.t.newAccount('metric values');
  const client = new VitalsClient({ url: app.url, key });
  await client.customers.create({ customer_id: 'acme', name: 'Acme', email: 'acme@example.com' });
  const day = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString();
  const path = join(dir, 'metrics.csv');
  writeFileSync(
    path,
    `customer_id,at,logins,seats\nacme,${day(3)},3,1\nacme,${day(2)},1.7e308,2\nacme,${day(1)},4,-2000000000000000\nacme,${day(0.5)},1000000000000000,1\n`,
  );
  const run = await runCli(['import', 'metrics', path, '--url', app.url], serverEnv({ VITALS_API_KEY: key }));
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /Imported metrics: 4 rows in .*: 2 recorded, 2 refused/);
  const rejected = readFileSync(`${path}.rejected.ndjson`, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.deepEqual(
    rejected.map((r) => [r.line, r.error.code, r.error.param]),
    [
      [3, 'parameter_invalid', 'values.logins'],
      [4, 'parameter_invalid', 'values.seats'],
    ],
  );
  const points = await all(client.metrics.list('acme'));
  assert.deepEqual(
    points.map((p) => [p.metric, p.value]),
    [
      ['logins', 1e15],
      ['seats', 1],
      ['logins', 3],
      ['seats', 1],
    ],
  );
});
