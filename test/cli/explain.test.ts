// `vitals explain` (docs/cli.md, "Explain a score"): the real CLI in its own process, against the
// real app on a real port, reading the explanation through the typed client and printing it as a
// table; refusals go to stderr in the server's words with a non-zero exit status.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { VitalsClient } from '../../src/client/index.ts';
import { type ClientApp, clientApp } from '../client/harness.ts';
import { customerBody } from '../helpers/app.ts';
import { runCli, serverEnv } from '../helpers/server.ts';

const DAY = 86_400_000;

let app: ClientApp;
let key: string;
let client: VitalsClient;
/** The metric point's instant, and its date as the table shows it. */
let newest: string;

// One account: usage 0.5, support 0.3 and engagement 0.2 (derived from logins), and acme_corp
// scored four times: posted factors (v1), two logins (v2, v3), usage posted lower (v4).
before(async () => {
  app = await clientApp();
  ({ key } = await app.t.newAccount('explain'));
  client = new VitalsClient({ url: app.url, key });
  await client.settings.updateWeights({ usage: 0.5, support: 0.3, engagement: 0.2 });
  await client.settings.putFactorRule('engagement', {
    metric: 'logins',
    aggregate: 'sum',
    window_days: 30,
    scale: { type: 'linear', from: 0, to: 20 },
  });
  await client.customers.create(customerBody('acme_corp'));
  await client.customers.create(customerBody('unscored'));
  await client.healthScores.set('acme_corp', { usage: 0.9, support: 0.5 });
  await client.metrics.record('acme_corp', {
    values: { logins: 6 },
    at: new Date(Date.now() - 3 * DAY).toISOString(),
  });
  newest = new Date(Date.now() - DAY).toISOString();
  await client.metrics.record('acme_corp', { values: { logins: 4 }, at: newest });
  await client.healthScores.merge('acme_corp', { usage: 0.5 });
});
after(() => app.close());

/** `vitals ARGS --url …` with the key in VITALS_API_KEY. */
const vitals = (args: string[], env: Record<string, string> = { VITALS_API_KEY: key }) =>
  runCli([...args, '--url', app.url], serverEnv(env));

const updatedAt = async (version?: number) =>
  (await client.healthScores.explain('acme_corp', { version })).updated_at;

test('the current version: a row per factor, its metric, and what moved it from the version before', async () => {
  const run = await vitals(['explain', 'acme_corp']);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stderr, '');
  assert.equal(
    run.stdout,
    [
      `acme_corp  version 4 (factors_updated, ${await updatedAt()})`,
      'health score 0.5000 at_risk  (computed 0.5000)',
      '',
      'factor      score   weight  contribution  source',
      `engagement  0.5000  0.2000  0.1000        metric logins sum 30d = 10 (2 points, newest ${newest.slice(0, 10)})`,
      'support     0.5000  0.3000  0.1500        posted',
      'usage       0.5000  0.5000  0.2500        posted',
      '',
      'since version 3: 0.7000 → 0.5000 (−0.2000)',
      '  usage  contribution 0.4500 → 0.2500  (−0.2000)',
      '',
    ].join('\n'),
  );
});

test('--version N explains that version; version 1 has nothing before it', async () => {
  const third = await vitals(['explain', 'acme_corp', '--version', '3']);
  assert.equal(third.code, 0, third.stderr);
  const lines = third.stdout.split('\n');
  assert.equal(lines[0], `acme_corp  version 3 (metrics_updated, ${await updatedAt(3)})`);
  assert.ok(lines.includes('usage       0.9000  0.5000  0.4500        posted'), third.stdout);
  assert.ok(lines.includes('since version 2: 0.6600 → 0.7000 (+0.0400)'), third.stdout);
  assert.ok(lines.includes('  engagement  contribution 0.0600 → 0.1000  (+0.0400)'), third.stdout);

  const first = await vitals(['explain', 'acme_corp', '--version', '1']);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(
    first.stdout,
    [
      `acme_corp  version 1 (factors_updated, ${await updatedAt(1)})`,
      'health score 0.7500 healthy  (computed 0.7500)',
      '',
      'factor   score   weight  contribution  source',
      'support  0.5000  0.3750  0.1875        posted',
      'usage    0.9000  0.6250  0.5625        posted',
      '',
      'no version before this one',
      '',
    ].join('\n'),
  );
});

test('an override: its line under the score, and a version in which no factor moved', async () => {
  const set = await client.healthScores.setOverride('acme_corp', {
    health_score: 0.2,
    reason: 'Champion left',
  });
  try {
    const run = await vitals(['explain', 'acme_corp', '--key', key], {});
    assert.equal(run.code, 0, run.stderr);
    const o = set.override;
    assert.ok(o);
    assert.deepEqual(run.stdout.split('\n').slice(0, 3), [
      `acme_corp  version 5 (override_set, ${set.updated_at})`,
      'health score 0.2000 critical  (computed 0.5000)',
      `OVERRIDE 0.2000 until ${o.expires_at} by ${o.set_by} — "Champion left"`,
    ]);
    assert.match(
      run.stdout,
      /\nsince version 4: 0\.5000 → 0\.2000 \(−0\.3000\)\n {2}computed score unchanged at 0\.5000\n {2}no factor moved\n$/,
    );
  } finally {
    await client.healthScores.removeOverride('acme_corp');
  }
});

test("a metric's value rounds as the API's numbers do: 6 places at most, no float noise", async () => {
  const { key: avgKey } = await app.t.newAccount('explain-avg');
  const avg = new VitalsClient({ url: app.url, key: avgKey });
  await avg.settings.putFactorRule('adoption', {
    metric: 'ratio',
    aggregate: 'avg',
    window_days: 30,
    scale: { type: 'linear', from: 0, to: 1 },
  });
  await avg.customers.create(customerBody('averaged'));
  const values = [0.1, 0.2, 0.1402];
  for (const [i, ratio] of values.entries()) {
    const at = new Date(Date.now() - (3 - i) * DAY).toISOString();
    await avg.metrics.record('averaged', { values: { ratio }, at });
  }
  // The average is the float 0.4402 / 3 comes to (0.14673333333333335 or so); the table rounds it.
  const run = await vitals(['explain', 'averaged'], { VITALS_API_KEY: avgKey });
  assert.equal(run.code, 0, run.stderr);
  const row = run.stdout.split('\n').find((l) => l.startsWith('adoption'));
  assert.match(
    row ?? run.stdout,
    /^adoption {2}0\.1467 {2}1\.0000 {2}0\.1467 {8}metric ratio avg 30d = 0\.146733 \(3 points, newest /,
  );
});

test('refusals: the server’s message on stderr, exit 1; a usage mistake, exit 2; nothing on stdout', async () => {
  const cases: [string[], Record<string, string> | undefined, number, RegExp][] = [
    [
      ['explain', 'nobody'],
      undefined,
      1,
      /^vitals explain: the server refused it with 404 customer_not_found: No customer with id 'nobody'\. \(request req_\w+\)\n$/,
    ],
    [['explain', 'unscored'], undefined, 1, /404 health_score_not_found: /],
    [['explain', 'acme_corp', '--version', '99'], undefined, 1, /404 version_not_found: .*version 99/],
    [['explain', 'acme_corp', '--version', 'x'], undefined, 2, /--version must be a whole number/],
    [['explain', 'acme_corp', '--version', '1.5'], undefined, 2, /--version must be a whole number/],
    [['explain', 'acme_corp', '--version=-2147483649'], undefined, 2, /--version must be a whole number/],
    // Any integer names a version (a backfill numbers them below 1): asked of the server.
    [['explain', 'acme_corp', '--version', '0'], undefined, 1, /404 version_not_found: .*version 0/],
    [['explain', 'acme_corp', '--version=-3'], undefined, 1, /404 version_not_found: .*version -3/],
    [['explain', 'acme_corp'], {}, 2, /give an API key with --key or in VITALS_API_KEY/],
    [['explain', 'acme_corp', '--key', 'vk_wrong'], {}, 1, /401 api_key_invalid/],
    [['explain'], undefined, 2, /Usage: vitals/],
  ];
  for (const [args, env, code, stderr] of cases) {
    const run = await vitals(args, env);
    assert.equal(run.code, code, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, stderr);
    assert.equal(run.stdout, '');
  }
});
