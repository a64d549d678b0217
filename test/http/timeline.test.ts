// A customer's timeline (docs/api.md, "Timeline") through real HTTP on both backends: one customer's
// story told by every type, each with its sentence and its actor, newest first (what a change caused
// above it); pages of every size across types with nothing repeated or missed; the types filter;
// every refusal with the timeline unchanged; who may read it; another account's customer; a
// customer's deletion taking its timeline along; source activity kept as long as events are.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import { createApiKey, createUser } from '../../src/keys.ts';
import { RetentionJob } from '../../src/retention.ts';
import { buildTestApp, type Client, type Response, type TestApp, TestClock } from '../helpers/app.ts';

const PASSWORD = 'a long enough password';
const START = '2026-03-02T09:00:00.000Z';
const clock = new TestClock(START);
const MINUTE = 60_000;
const DAY = 86_400_000;
/** The instant `n` minutes after the start, as the API writes it. */
const at = (n: number) => new Date(Date.parse(START) + n * MINUTE).toISOString();
const quiet = { info: () => {}, error: () => {} };

let t: TestApp;
let api: Client;
/** The key of `api`, as the audit log names it. */
let keyActor: { type: string; id: string; label: string };
/** An editor of the default account, signed in. */
let editor: { request: (method: string, url: string, body?: unknown) => Promise<Response>; actor: unknown };

type Entry = { id: string; type: string; at: string; actor: unknown; summary: string; data: any };

async function timeline(customer: string, query = '', client: Client = api): Promise<Entry[]> {
  const r = await client.get(`/api/customers/${customer}/timeline?limit=100${query}`);
  assert.equal(r.status, 200, r.raw);
  assert.equal(r.body.has_more, false);
  return r.body.data;
}

/** Every entry, page by page of `limit`, following starting_after. */
async function walk(customer: string, limit: number, query = ''): Promise<Entry[]> {
  const seen: Entry[] = [];
  for (let pages = 0; pages < 100; pages++) {
    const after = seen.length === 0 ? '' : `&starting_after=${seen.at(-1)?.id}`;
    const r = await api.get(`/api/customers/${customer}/timeline?limit=${limit}${query}${after}`);
    assert.equal(r.status, 200, r.raw);
    assert.ok(r.body.data.length <= limit);
    seen.push(...r.body.data);
    if (!r.body.has_more) return seen;
    assert.equal(r.body.data.length, limit, 'a page with more after it is full');
  }
  throw new Error('no last page');
}

async function send(key: string, ...batch: Record<string, unknown>[]): Promise<void> {
  const res = await t.inject({
    method: 'POST',
    url: '/v1/batch',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
    },
    payload: JSON.stringify({ batch }),
  });
  assert.equal(res.status, 200, res.raw);
}

const ok = async (pending: Promise<Response>, status = 200): Promise<Response> => {
  const r = await pending;
  assert.equal(r.status, status, r.raw);
  return r;
};

/** acme's story, one step a minute (docs/api.md, "Timeline", has the same customer's first page). */
async function tellAcmesStory(): Promise<void> {
  await ok(api.patch('/api/settings/health-score/alerts', { drop: { delta: 0.3, days: 30 } }));
  await ok(
    api.post('/api/playbooks', {
      name: 'Critical → call',
      trigger: { type: 'status_entered', status: 'critical' },
      task: { title: 'Call within 2 days', due_in_days: 2 },
      assignee: 'owner',
    }),
    201,
  );
  await ok(
    api.post('/api/customers', {
      customer_id: 'acme',
      name: 'Acme',
      email: 'ops@acme.test',
      owner: 'ana@example.com',
      arr: 12000,
    }),
    201,
  );
  const step = async (n: number, act: () => Promise<unknown>) => {
    clock.set(at(n));
    await act();
  };
  await step(1, () => ok(api.post('/api/customers/acme/health-score', { factors: { usage: 0.9 } })));
  await step(2, () => ok(api.post('/api/customers/acme/health-score', { factors: { usage: 0.5 } })));
  await step(3, () => ok(api.post('/api/customers/acme/health-score', { factors: { usage: 0.2 } })));
  await step(4, () =>
    ok(
      editor.request('POST', '/api/customers/acme/notes', {
        body: 'Called Ana: they are trialling a competitor.',
      }),
      201,
    ),
  );
  await step(5, async () => {
    const task = (await api.get('/api/tasks?customer_id=acme')).body.data[0];
    await ok(editor.request('PATCH', `/api/tasks/${task.id}`, { status: 'done' }));
  });
  await step(6, () =>
    ok(
      api.patch('/api/customers/acme', {
        owner: 'bob@example.com',
        arr: 24000,
        renewal_at: '2026-09-01T00:00:00Z',
      }),
    ),
  );
  await step(7, () =>
    ok(
      api.request('PUT', '/api/customers/acme/health-score/override', {
        health_score: 0.6,
        reason: 'Exec sponsor engaged',
        expires_at: at(67),
      }),
    ),
  );
  await step(8, () => ok(editor.request('DELETE', '/api/customers/acme/health-score/override')));
  await step(9, () =>
    ok(
      api.request('PUT', '/api/customers/acme/health-score/override', {
        health_score: 0.7,
        reason: 'Renewal call booked',
        expires_at: at(69),
      }),
    ),
  );
  // Past its end: the next write records that it ended.
  await step(130, () => ok(api.post('/api/customers/acme/health-score', { factors: { usage: 0.25 } })));
  await step(131, () =>
    ok(api.post('/api/customers/acme/outcomes', { outcome: 'retained', note: 'Renewed for a year' }), 201),
  );
  await step(132, async () => {
    const source = await ok(
      api.post('/api/sources', { type: 'segment', name: 'Backend', trusted: true }),
      201,
    );
    await send(
      source.body.write_key,
      { type: 'group', groupId: 'acme', traits: { owner: 'cara@example.com' } },
      { type: 'track', context: { groupId: 'acme' }, event: 'Report Exported' },
    );
  });
}

before(async () => {
  t = await buildTestApp({ now: clock.now });
  api = t.api;
  const made = await createUser(t.store, {
    email: 'eve@example.com',
    accountName: 'default',
    role: 'editor',
  });
  assert.ok(made);
  const set = await t.inject({
    method: 'POST',
    url: '/auth/password',
    payload: { token: made.token, password: PASSWORD },
  });
  assert.equal(set.status, 200, set.raw);
  const cookie = /vitals_session=[^;]+/.exec(String(set.headers['set-cookie']))?.[0] as string;
  const csrf = set.body.csrf_token as string;
  editor = {
    request: (method, url, body) =>
      t.inject({
        method: method as 'GET',
        url,
        headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      }),
    actor: { type: 'user', id: made.id, label: 'eve@example.com' },
  };
  const probe = await ok(
    api.post('/api/customers', { customer_id: 'probe', name: 'Probe', email: 'p@probe.test' }),
    201,
  );
  assert.ok(probe);
  keyActor = (await ok(api.post('/api/customers/probe/notes', { body: 'who am I' }), 201)).body.author;
  await tellAcmesStory();
});
after(() => t.close());

describe('the timeline', () => {
  test('tells the story newest first: every type, its sentence and who did it (null: the system)', async () => {
    const entries = await timeline('acme');
    const playbook = (await api.get('/api/playbooks')).body.data[0];
    const pb = { type: 'playbook', id: playbook.id, label: 'Critical → call' };
    const source = (await api.get('/api/sources')).body.data[0];
    const src = { type: 'source', id: source.id, label: 'Backend' };
    assert.deepEqual(
      entries.map((e) => [e.at, e.type, e.summary, e.actor]),
      [
        [at(132), 'customer_updated', 'Owner changed from bob@example.com to cara@example.com', null],
        [
          at(132),
          'source_event',
          'Segment source “Backend” applied track: counted Report Exported in report_exported',
          src,
        ],
        [
          at(132),
          'source_event',
          'Segment source “Backend” applied group: set owner to cara@example.com',
          src,
        ],
        [at(131), 'outcome', 'Outcome recorded: retained: “Renewed for a year”', keyActor],
        [at(130), 'status_changed', 'Moved into critical from healthy', null],
        [at(130), 'score_changed', 'Health score fell from 0.70 to 0.25 (factors updated)', null],
        [at(130), 'override_expired', 'The override of 0.70 expired; the computed 0.25 shows again', null],
        [at(9), 'status_changed', 'Moved into healthy from critical', null],
        [at(9), 'score_changed', 'Health score rose from 0.20 to 0.70 (override set)', null],
        [at(9), 'override_set', 'Score overridden to 0.70 until 2026-03-02: “Renewal call booked”', keyActor],
        [
          at(8),
          'task_created',
          'Task “Call within 2 days” opened by playbook Critical → call, assigned to bob@example.com, due 2026-03-04',
          pb,
        ],
        [at(8), 'status_changed', 'Moved into critical from at risk', null],
        [at(8), 'score_changed', 'Health score fell from 0.60 to 0.20 (override removed)', null],
        [
          at(8),
          'override_removed',
          'The override of 0.60 was removed; the computed 0.20 shows again',
          editor.actor,
        ],
        [at(7), 'status_changed', 'Moved into at risk from critical', null],
        [at(7), 'score_changed', 'Health score rose from 0.20 to 0.60 (override set)', null],
        [
          at(7),
          'override_set',
          'Score overridden to 0.60 until 2026-03-02: “Exec sponsor engaged”',
          keyActor,
        ],
        [
          at(6),
          'customer_updated',
          'Owner changed from ana@example.com to bob@example.com; ARR changed from 12,000 to 24,000; renewal date set to 2026-09-01',
          null,
        ],
        [at(5), 'task_done', 'Task “Call within 2 days” done by eve@example.com', editor.actor],
        [
          at(4),
          'note',
          'Note by eve@example.com: “Called Ana: they are trialling a competitor.”',
          editor.actor,
        ],
        [
          at(3),
          'task_created',
          'Task “Call within 2 days” opened by playbook Critical → call, assigned to ana@example.com, due 2026-03-04',
          pb,
        ],
        [at(3), 'status_changed', 'Moved into critical from at risk', null],
        [at(3), 'score_changed', 'Health score fell from 0.50 to 0.20 (factors updated)', null],
        [at(2), 'score_dropped', 'Health score dropped to 0.50, 0.40 below its recent peak of 0.90', null],
        [at(2), 'status_changed', 'Moved into at risk from healthy', null],
        [at(2), 'score_changed', 'Health score fell from 0.90 to 0.50 (factors updated)', null],
        [at(1), 'status_changed', 'Entered healthy with its first score', null],
        [at(1), 'score_changed', 'First health score: 0.90 (factors updated)', null],
      ],
    );
    const byType = (type: string) => entries.filter((e) => e.type === type);
    assert.deepEqual(byType('score_dropped')[0]?.data, { from: 0.9, to: 0.5, peak: 0.9 });
    assert.deepEqual(byType('score_changed').at(-2)?.data, {
      version: 2,
      reason: 'factors_updated',
      from: 0.9,
      to: 0.5,
      status: 'at_risk',
    });
    assert.deepEqual(byType('status_changed').at(-1)?.data, {
      version: 1,
      from: null,
      to: 'healthy',
      health_score: 0.9,
    });
    assert.deepEqual(byType('override_set')[1]?.data, {
      version: 4,
      health_score: 0.6,
      reason: 'Exec sponsor engaged',
      expires_at: at(67),
      set_by: keyActor.label,
    });
    assert.deepEqual(byType('override_removed')[0]?.data, {
      version: 5,
      health_score: 0.6,
      reason: 'Exec sponsor engaged',
      computed_score: 0.2,
    });
    assert.deepEqual(byType('override_expired')[0]?.data, {
      version: 7,
      health_score: 0.7,
      reason: 'Renewal call booked',
      expires_at: at(69),
      computed_score: 0.25,
    });
    assert.deepEqual(byType('customer_updated')[1]?.data, {
      changes: {
        owner: { from: 'ana@example.com', to: 'bob@example.com' },
        arr: { from: 12000, to: 24000 },
        renewal_at: { from: null, to: '2026-09-01T00:00:00.000Z' },
      },
    });
    const tasks = (await api.get('/api/tasks?customer_id=acme&status=all')).body.data;
    const first = tasks.find((x: { status: string }) => x.status === 'done');
    assert.deepEqual(byType('task_done')[0]?.data, {
      task_id: first.id,
      title: 'Call within 2 days',
      assignee: 'ana@example.com',
    });
    assert.deepEqual(byType('task_created')[1]?.data, {
      task_id: first.id,
      title: 'Call within 2 days',
      assignee: 'ana@example.com',
      due_at: new Date(Date.parse(at(3)) + 2 * DAY).toISOString(),
      playbook_id: playbook.id,
    });
    const note = (await api.get('/api/customers/acme/notes')).body.data[0];
    assert.deepEqual(byType('note')[0]?.data, {
      note_id: note.id,
      body: 'Called Ana: they are trialling a competitor.',
      updated_at: at(4),
    });
    const outcome = (await api.get('/api/customers/acme/outcomes')).body.data[0];
    assert.deepEqual(byType('outcome')[0]?.data, {
      outcome_id: outcome.id,
      outcome: 'retained',
      note: 'Renewed for a year',
    });
    assert.deepEqual(byType('source_event')[1]?.data, {
      source_id: source.id,
      source_name: 'Backend',
      source_type: 'segment',
      kind: 'group',
      summary: 'set owner to cara@example.com',
    });
    assert.equal(new Set(entries.map((e) => e.id)).size, entries.length, 'ids are unique');
    for (const e of entries) assert.match(e.id, /^tl_[A-Za-z0-9_-]+$/);
    assert.deepEqual(await timeline('acme'), entries, 'the same entries, ids and all, on every read');
    assert.deepEqual(await timeline('probe', '&types=note'), [
      {
        ...(await timeline('probe'))[0],
        type: 'note',
        actor: keyActor,
        summary: `Note by ${keyActor.label}: “who am I”`,
      },
    ]);
  });

  test('pages of any size, across types, give every entry once, in order', async () => {
    const all = await timeline('acme');
    for (const limit of [1, 2, 3, 5, 7, 20]) {
      assert.deepEqual(
        (await walk('acme', limit)).map((e) => e.id),
        all.map((e) => e.id),
        `pages of ${limit}`,
      );
    }
    const first = await api.get('/api/customers/acme/timeline');
    assert.equal(first.body.data.length, 20, 'the default page is 20');
    assert.equal(first.body.has_more, true);
    // A page may start after an entry that is no longer there (a note deleted meanwhile).
    const note = (await api.get('/api/customers/probe/notes')).body.data[0];
    const gone = (await timeline('probe'))[0] as Entry;
    await ok(api.delete(`/api/notes/${note.id}`));
    const afterGone = await api.get(`/api/customers/probe/timeline?starting_after=${gone.id}`);
    assert.deepEqual(afterGone.body, { data: [], has_more: false });
    await ok(api.post('/api/customers/probe/notes', { body: 'who am I' }), 201);
  });

  test('types keeps only those types, in the same order, paged alike', async () => {
    const all = await timeline('acme');
    for (const types of [
      ['note', 'task_done'],
      ['status_changed'],
      ['override_set', 'override_removed', 'override_expired'],
      ['source_event', 'customer_updated', 'score_dropped', 'outcome', 'task_created'],
    ]) {
      const kept = all.filter((e) => types.includes(e.type));
      assert.ok(kept.length > 0);
      const query = `&types=${types.join(',')}`;
      assert.deepEqual(await timeline('acme', query), kept, types.join(','));
      assert.deepEqual(
        (await walk('acme', 1, query)).map((e) => e.id),
        kept.map((e) => e.id),
      );
    }
    assert.deepEqual(
      await timeline('acme', '&types=%20note%20,task_done'),
      await timeline('acme', '&types=note,task_done'),
    );
    // An entry's id pages the unfiltered timeline too.
    const note = all.findIndex((e) => e.type === 'note');
    assert.deepEqual(
      (await api.get(`/api/customers/acme/timeline?limit=100&starting_after=${all[note]?.id}`)).body.data,
      all.slice(note + 1),
    );
  });

  test('bad input answers 400 or 404 naming it, and the timeline stays as it was', async () => {
    const before = await timeline('acme');
    const cases: [string, number, string, string | undefined][] = [
      ['types=bogus', 400, 'parameter_invalid', 'types'],
      ['types=note,bogus', 400, 'parameter_invalid', 'types'],
      ['types=', 400, 'parameter_invalid', 'types'],
      ['types=note,,task_done', 400, 'parameter_invalid', 'types'],
      ['types=Note', 400, 'parameter_invalid', 'types'],
      ['starting_after=nope', 400, 'parameter_invalid', 'starting_after'],
      ['starting_after=tl_', 400, 'parameter_invalid', 'starting_after'],
      ['starting_after=tl_!!!', 400, 'parameter_invalid', 'starting_after'],
      [
        `starting_after=tl_${Buffer.from('[1,2,3]').toString('base64url')}`,
        400,
        'parameter_invalid',
        'starting_after',
      ],
      [
        `starting_after=tl_${Buffer.from('[1,9,"x",0]').toString('base64url')}`,
        400,
        'parameter_invalid',
        'starting_after',
      ],
      [
        `starting_after=tl_${Buffer.from('[1,2,"v",0]').toString('base64url')}`,
        400,
        'parameter_invalid',
        'starting_after',
      ],
      [
        `starting_after=tl_${Buffer.from('[1,7,"note_x",5]').toString('base64url')}`,
        400,
        'parameter_invalid',
        'starting_after',
      ],
      [`starting_after=${'x'.repeat(513)}`, 400, 'parameter_invalid', 'starting_after'],
      ['limit=0', 400, 'parameter_invalid', 'limit'],
      ['limit=101', 400, 'parameter_invalid', 'limit'],
      ['limit=ten', 400, 'parameter_invalid', 'limit'],
      ['cursor=x', 400, 'parameter_unknown', 'cursor'],
    ];
    for (const [query, status, code, param] of cases) {
      const r = await api.get(`/api/customers/acme/timeline?${query}`);
      assert.equal(r.status, status, `${query}: ${r.raw}`);
      assert.equal(r.body.error.code, code, query);
      assert.equal(r.body.error.param, param, query);
    }
    const missing = await api.get('/api/customers/nobody/timeline');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'customer_not_found');
    assert.deepEqual(await timeline('acme'), before);
  });

  test("read keys and viewers read it; another account's customer is not found", async () => {
    const expected = await timeline('acme');
    const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
    assert.deepEqual(await timeline('acme', '', t.as(`Bearer ${key}`)), expected);
    const viewer = await createUser(t.store, {
      email: 'vic@example.com',
      accountName: 'default',
      role: 'viewer',
    });
    assert.ok(viewer);
    const set = await t.inject({
      method: 'POST',
      url: '/auth/password',
      payload: { token: viewer.token, password: PASSWORD },
    });
    const cookie = /vitals_session=[^;]+/.exec(String(set.headers['set-cookie']))?.[0] as string;
    const read = await t.inject({
      method: 'GET',
      url: '/api/customers/acme/timeline?limit=100',
      headers: { cookie },
    });
    assert.equal(read.status, 200, read.raw);
    assert.deepEqual(read.body.data, expected);

    const other = await t.newAccount('timeline-other');
    const theirs = await other.get('/api/customers/acme/timeline');
    assert.equal(theirs.status, 404);
    assert.equal(theirs.body.error.code, 'customer_not_found');
    // Their own acme has a story of its own.
    await ok(
      other.post('/api/customers', { customer_id: 'acme', name: 'Their Acme', email: 'x@acme.test' }),
      201,
    );
    assert.deepEqual(await timeline('acme', '', other), []);
    await ok(other.post('/api/customers/acme/notes', { body: 'Theirs' }), 201);
    assert.deepEqual(
      (await timeline('acme', '', other)).map((e) => e.summary),
      [`Note by ${(await other.get('/api/customers/acme/notes')).body.data[0].author.label}: “Theirs”`],
    );
    assert.deepEqual(await timeline('acme'), expected, 'ours unchanged');
  });

  test('source activity is kept as long as events are: the retention job prunes it with them', async () => {
    const before = await timeline('acme');
    const job = (days: number) =>
      new RetentionJob({ store: t.store, keepMs: 30 * DAY, log: quiet, now: () => clock.now() + days * DAY });
    assert.equal((await job(29).runOnce()).sourceActivity, 0);
    assert.deepEqual(await timeline('acme'), before);
    assert.equal((await job(31).runOnce()).sourceActivity, 2);
    assert.deepEqual(
      await timeline('acme'),
      before.filter((e) => e.type !== 'source_event'),
      'only the source events go',
    );
  });

  test("a customer's deletion takes its whole timeline with it", async () => {
    await ok(
      api.post('/api/customers', {
        customer_id: 'gone',
        name: 'Gone',
        email: 'g@gone.test',
        owner: 'a@x.test',
      }),
      201,
    );
    clock.advance(MINUTE);
    await ok(api.post('/api/customers/gone/health-score', { factors: { usage: 0.9 } }));
    clock.advance(MINUTE);
    await ok(api.post('/api/customers/gone/health-score', { factors: { usage: 0.1 } }));
    await ok(api.post('/api/customers/gone/notes', { body: 'Bye' }), 201);
    await ok(
      api.request('PUT', '/api/customers/gone/health-score/override', {
        health_score: 0.5,
        reason: 'Why not',
      }),
    );
    await ok(api.post('/api/customers/gone/outcomes', { outcome: 'churned' }), 201);
    await ok(api.patch('/api/customers/gone', { owner: 'b@x.test' }));
    const task = (await api.get('/api/tasks?customer_id=gone')).body.data[0];
    await ok(api.patch(`/api/tasks/${task.id}`, { status: 'done' }));
    const feed = await ok(api.post('/api/sources', { type: 'segment', name: 'Feed', trusted: true }), 201);
    await send(feed.body.write_key, { type: 'track', context: { groupId: 'gone' }, event: 'Login' });
    const types = new Set((await timeline('gone')).map((e) => e.type));
    for (const type of [
      'score_changed',
      'status_changed',
      'score_dropped',
      'task_created',
      'task_done',
      'note',
      'override_set',
      'outcome',
      'customer_updated',
      'source_event',
    ]) {
      assert.ok(types.has(type), type);
    }
    await ok(api.delete('/api/customers/gone'));
    assert.equal((await api.get('/api/customers/gone/timeline')).status, 404);
    // The same id made again starts with nothing: no row of the first was left behind.
    await ok(api.post('/api/customers', { customer_id: 'gone', name: 'Gone', email: 'g@gone.test' }), 201);
    assert.deepEqual(await timeline('gone'), []);
  });
});

test('a long history: the first page is its newest versions, in order', async () => {
  // The bench (bench/timeline.ts) measures a first page over 1,000 versions, 200 notes and 100 tasks.
  await ok(api.post('/api/customers', { customer_id: 'busy', name: 'Busy', email: 'b@busy.test' }), 201);
  const items = Array.from({ length: 300 }, (_, i) => ({
    customer_id: 'busy',
    factors: { usage: (i % 10) / 10 },
  }));
  for (let i = 0; i < items.length; i += 100) {
    clock.advance(MINUTE);
    for (const item of items.slice(i, i + 100)) {
      clock.advance(1);
      await ok(api.post('/api/customers/busy/health-score', { factors: item.factors }));
    }
  }
  const page = await api.get('/api/customers/busy/timeline?types=score_changed');
  assert.equal(page.status, 200);
  assert.deepEqual(
    page.body.data.map((e: Entry) => e.data.version),
    Array.from({ length: 20 }, (_, i) => 300 - i),
  );
});

test('what a Stripe or a webhook source applied, in words, with the source as the actor', async () => {
  // On a whole second: a Stripe event's `created` (whole seconds) is then the instant of what it changed.
  clock.set('2026-04-01T00:00:00.000Z');
  await ok(
    api.post('/api/customers', {
      customer_id: 'globex',
      name: 'Globex',
      email: 'ops@globex.test',
      metadata: { stripe_customer_id: 'cus_G' },
    }),
    201,
  );
  const secret = 'whsec_timeline0123456789abcdefghijklmnop';
  const stripe = await ok(
    api.post('/api/sources', { type: 'stripe', name: 'Billing', signing_secret: secret }),
    201,
  );
  const seconds = () => Math.floor(clock.ms / 1000);
  const periodEnd = seconds() + 30 * 86_400;
  let seq = 0;
  const deliver = async (type: string, object: Record<string, unknown>) => {
    clock.advance(MINUTE);
    const payload = JSON.stringify({
      id: `evt_tl_${++seq}`,
      object: 'event',
      created: seconds(),
      data: { object },
      type,
    });
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: seconds() });
    const res = await t.inject({
      method: 'POST',
      url: `/ingest/stripe/${stripe.body.id}`,
      headers: { 'content-type': 'application/json', 'stripe-signature': header },
      payload,
    });
    assert.equal(res.status, 200, res.raw);
  };
  const sub = (status: string) => ({
    id: 'sub_1',
    object: 'subscription',
    customer: 'cus_G',
    status,
    items: {
      object: 'list',
      data: [
        {
          id: 'si_1',
          current_period_end: periodEnd,
          quantity: 1,
          price: {
            unit_amount: 4900,
            unit_amount_decimal: '4900',
            currency: 'usd',
            recurring: { interval: 'month', interval_count: 1 },
          },
        },
      ],
    },
  });
  await deliver('customer.subscription.created', sub('active'));
  await deliver('invoice.payment_failed', { id: 'in_1', object: 'invoice', customer: 'cus_G' });
  await deliver('customer.subscription.deleted', sub('canceled'));
  const hook = await ok(
    api.post('/api/sources', {
      type: 'webhook',
      name: 'Helpdesk',
      mapping: {
        customer_id: 'body.account',
        metrics: '{"csat": body.csat}',
        counts: '{"tickets": 1}',
        customer: '{"owner": body.owner}',
      },
    }),
    201,
  );
  clock.advance(MINUTE);
  const delivered = await t.inject({
    method: 'POST',
    url: new URL(hook.body.ingest_url).pathname,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ account: 'globex', csat: 4, owner: 'dee@example.com' }),
  });
  assert.equal(delivered.status, 202, delivered.raw);

  const billing = { type: 'source', id: stripe.body.id, label: 'Billing' };
  const helpdesk = { type: 'source', id: hook.body.id, label: 'Helpdesk' };
  const renewal = new Date(periodEnd * 1000).toISOString();
  assert.deepEqual(
    (await timeline('globex', '&types=source_event')).map((e) => [e.summary, e.actor]),
    [
      [
        'Webhook source “Helpdesk” applied webhook: set owner to dee@example.com, recorded csat 4 and counted tickets 1',
        helpdesk,
      ],
      [
        'Stripe source “Billing” applied customer.subscription.deleted: subscription sub_1 canceled: set arr to 0, lifecycle to churned and metadata stripe_subscription_status; recorded a churned outcome; recorded mrr 0',
        billing,
      ],
      [
        'Stripe source “Billing” applied invoice.payment_failed: counted invoice.payment_failed in stripe_payment_failed',
        billing,
      ],
      [
        `Stripe source “Billing” applied customer.subscription.created: subscription sub_1 active: set arr to 588, renewal_at to ${renewal} and metadata stripe_subscription_status; recorded mrr 49`,
        billing,
      ],
    ],
  );
  const [churn] = await timeline('globex', '&types=outcome');
  assert.deepEqual(churn?.actor, billing, 'the churn recorded by the source');
  // What the sources changed shows as the customer's own changes too, and the churn as an outcome.
  assert.deepEqual(
    (await timeline('globex', '&types=customer_updated,outcome')).map((e) => e.summary),
    [
      'Owner set to dee@example.com',
      // A note is cut to 80 characters in the sentence (data.note has it whole).
      'Outcome recorded: churned: “Stripe subscription sub_1 ended (customer.subscription.deleted); no live subscr…”',
      'ARR changed from 588 to 0; lifecycle changed from active to churned',
      `ARR set to 588; renewal date set to ${renewal.slice(0, 10)}`,
    ],
  );
});
