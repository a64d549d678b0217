// Playbooks (docs/playbooks.md) through real HTTP on both backends: each trigger opens its task for
// the customer's owner in the transaction of its cause, once while one is open; settings changes,
// churned customers and a playbook turned off open nothing; the rescore job finds what time brings
// within reach; a burst of writes into critical from two stores opens exactly one task; every
// refusal stores nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DAY_MS } from '../../src/domain/rules.ts';
import { createApiKey } from '../../src/keys.ts';
import { RescoreJob } from '../../src/rescore-job.ts';
import { applyFactorUpdates } from '../../src/writes/factor-updates.ts';
import { buildTestApp, type Client, type Response, type TestApp, TestClock } from '../helpers/app.ts';

const clock = new TestClock('2026-11-01T12:00:00.000Z');
let t: TestApp;
before(async () => {
  t = await buildTestApp({ now: clock.now });
});
after(() => t.close());

const ok = async (r: Promise<Response>, status = 200) => {
  const got = await r;
  assert.equal(got.status, status, got.raw);
  return got.body;
};

const account = (name: string): Promise<Client> => t.newAccount(name);

async function customer(a: Client, id: string, extra: Record<string, unknown> = {}) {
  await ok(
    a.post('/api/customers', {
      customer_id: id,
      name: id,
      email: `ops@${id}.test`,
      owner: 'sam@example.com',
      ...extra,
    }),
    201,
  );
}

const score = (a: Client, id: string, usage: number) =>
  ok(a.post(`/api/customers/${id}/health-score`, { factors: { usage } }));

async function tasks(a: Client, query = 'status=all&include_snoozed=true&limit=100') {
  return (await ok(a.get(`/api/tasks?${query}`))).data as {
    id: string;
    customer_id: string;
    title: string;
    assignee: string | null;
    playbook_id: string | null;
    due_at: string | null;
    status: string;
    created_by: { type: string; id: string; label: string };
  }[];
}

const playbook = (a: Client, body: Record<string, unknown>) =>
  ok(
    a.post('/api/playbooks', {
      name: 'Call critical',
      task: { title: 'Call them', due_in_days: 2 },
      ...body,
    }),
    201,
  );

describe('playbooks', () => {
  test('status_entered opens one task for the owner, due as the playbook says, once while it is open', async () => {
    const a = await account('pb-status');
    await customer(a, 'acme');
    const pb = await playbook(a, { trigger: { type: 'status_entered', status: 'critical' } });
    assert.deepEqual(pb.trigger, { type: 'status_entered', status: 'critical' });
    assert.equal(pb.assignee, 'owner');
    await score(a, 'acme', 0.9);
    assert.deepEqual(await tasks(a), [], 'healthy opens nothing');
    await score(a, 'acme', 0.1);
    const [task, ...rest] = await tasks(a);
    assert.deepEqual(rest, []);
    assert.ok(task);
    assert.deepEqual(
      [task.customer_id, task.title, task.assignee, task.playbook_id, task.status],
      ['acme', 'Call them', 'sam@example.com', pb.id, 'open'],
    );
    assert.equal(task.due_at, new Date(clock.ms + 2 * DAY_MS).toISOString());
    assert.deepEqual(task.created_by, { type: 'playbook', id: pb.id, label: 'Call critical' });
    // Out of critical and back while the task is open: nothing more.
    await score(a, 'acme', 0.9);
    await score(a, 'acme', 0.1);
    assert.equal((await tasks(a)).length, 1);
    // Done, then entering critical again: a new task.
    await ok(a.patch(`/api/tasks/${task.id}`, { status: 'done' }));
    await score(a, 'acme', 0.9);
    await score(a, 'acme', 0.1);
    assert.equal((await tasks(a, 'status=open')).length, 1);
    // A task.created event for each, in the same transaction as the score.
    const events = (await ok(a.get('/api/events?type=task.created&limit=100'))).data;
    assert.equal(events.length, 2);
    // Reopening the first while the second is open: 409.
    const reopen = await a.patch(`/api/tasks/${task.id}`, { status: 'open' });
    assert.deepEqual([reopen.status, reopen.body.error.code], [409, 'task_open_exists'], reopen.raw);
  });

  test('settings changes, churned customers and a disabled playbook open nothing', async () => {
    const a = await account('pb-quiet');
    await customer(a, 'steady');
    await customer(a, 'gone', { lifecycle: 'churned' });
    const pb = await playbook(a, { trigger: { type: 'status_entered', status: 'critical' } });
    await score(a, 'steady', 0.5);
    // The thresholds move 'steady' into critical: a settings change, not the customer.
    await ok(a.patch('/api/settings/health-score/thresholds', { healthy: 0.9, at_risk: 0.6 }));
    assert.equal((await ok(a.get('/api/customers/steady/health-score'))).status, 'critical');
    await score(a, 'gone', 0.1);
    await ok(a.patch(`/api/playbooks/${pb.id}`, { enabled: false }));
    await score(a, 'steady', 0.9);
    await score(a, 'steady', 0.1);
    assert.deepEqual(await tasks(a), []);
  });

  test('score_dropped opens a task when the drop alert fires', async () => {
    const a = await account('pb-drop');
    await customer(a, 'falling');
    await ok(a.patch('/api/settings/health-score/alerts', { drop: { delta: 0.2, days: 7 } }));
    await playbook(a, { name: 'Ask why', trigger: { type: 'score_dropped' }, assignee: 'lead@example.com' });
    await score(a, 'falling', 0.9);
    await score(a, 'falling', 0.8);
    assert.deepEqual(await tasks(a), []);
    await score(a, 'falling', 0.6);
    const [task] = await tasks(a);
    assert.equal(task?.assignee, 'lead@example.com');
  });

  test('renewal_approaching: one task per renewal date, on a score or book change and by the rescore job', async () => {
    const a = await account('pb-renewal');
    const soon = new Date(clock.ms + 60 * DAY_MS).toISOString();
    const later = new Date(clock.ms + 200 * DAY_MS).toISOString();
    await customer(a, 'renewing', { renewal_at: soon });
    await customer(a, 'not-yet', { renewal_at: later });
    await customer(a, 'quiet', { renewal_at: soon });
    await score(a, 'renewing', 0.5);
    await score(a, 'not-yet', 0.5);
    await score(a, 'quiet', 0.9);
    await playbook(a, {
      name: 'Plan the renewal',
      trigger: { type: 'renewal_approaching', days: 90, statuses: ['at_risk', 'critical'] },
      task: { title: 'Plan the renewal' },
    });
    await score(a, 'renewing', 0.45);
    let open = await tasks(a);
    assert.deepEqual(
      open.map((x) => x.customer_id),
      ['renewing'],
      'at risk and renewing in 60 days; healthy and a far renewal are not',
    );
    // Done; the same renewal date never opens another.
    await ok(a.patch(`/api/tasks/${open[0]?.id}`, { status: 'done' }));
    await score(a, 'renewing', 0.44);
    assert.equal((await tasks(a)).length, 1);
    // Time passes: 'not-yet' comes within 90 days; the rescore job opens its task.
    await score(a, 'quiet', 0.5);
    open = await tasks(a);
    assert.deepEqual(open.map((x) => x.customer_id).sort(), ['quiet', 'renewing']);
    clock.advance(120 * DAY_MS);
    const job = new RescoreJob({ store: t.store, intervalMs: 60_000, log: t.app.log, now: clock.now });
    assert.equal((await job.runOnce()).opened, 1);
    assert.equal((await job.runOnce()).opened, 0, 'a second pass opens nothing');
    assert.ok((await tasks(a)).some((x) => x.customer_id === 'not-yet'));
    clock.advance(-120 * DAY_MS);
  });

  test('metric_threshold opens a task when the aggregate starts to hold, not again while it holds', async () => {
    const a = await account('pb-metric');
    await customer(a, 'payer');
    await playbook(a, {
      name: 'Billing check',
      trigger: {
        type: 'metric_threshold',
        metric: 'payment_failed',
        aggregate: 'count',
        window_days: 7,
        op: 'gte',
        value: 1,
      },
      task: { title: 'Check billing' },
    });
    const failed = (at: number) =>
      ok(
        a.post('/api/customers/payer/metrics', {
          values: { payment_failed: 1 },
          at: new Date(at).toISOString(),
        }),
      );
    await failed(clock.ms - DAY_MS);
    const first = await tasks(a);
    assert.equal(first.length, 1);
    await ok(a.patch(`/api/tasks/${first[0]?.id}`, { status: 'done' }));
    await failed(clock.ms - 1000);
    assert.equal((await tasks(a)).length, 1, 'still holding: nothing new');
    // Ten days on, the job sees it stop holding; another failure then crosses again.
    clock.advance(10 * DAY_MS);
    const job = new RescoreJob({ store: t.store, intervalMs: 60_000, log: t.app.log, now: clock.now });
    await job.runOnce();
    await failed(clock.ms - 1000);
    assert.equal((await tasks(a, 'status=open')).length, 1);
    assert.equal((await tasks(a)).length, 2);
    clock.advance(-10 * DAY_MS);
  });

  test('a burst of 50 score writes into critical from two stores opens exactly one task', async () => {
    const a = await account('pb-burst');
    await customer(a, 'hot');
    await playbook(a, { trigger: { type: 'status_entered', status: 'critical' } });
    await score(a, 'hot', 0.9);
    // Half through HTTP, half through a second store on the same database, as a second process writes.
    const second = t.openStore();
    const { id: accountId } = await t.store.ensureAccount('pb-burst', clock.ms);
    const writes = Array.from({ length: 50 }, async (_, i) => {
      const usage = i % 2 === 0 ? 0.1 : 0.9;
      if (i % 4 < 2) return assert.equal((await score(a, 'hot', usage)).customer_id, 'hot');
      const [result] = await second.run(
        applyFactorUpdates,
        accountId,
        [{ customerId: 'hot', factors: { usage }, merge: false }],
        clock.ms,
      );
      assert.equal(result?.ok, true);
    });
    await Promise.all(writes);
    const open = await tasks(a, 'status=open');
    assert.equal(open.length, 1);
    const history = (await ok(a.get('/api/customers/hot/health-score/history?limit=100'))).data;
    assert.ok(
      history.filter((v: { status: string }) => v.status === 'critical').length > 1,
      'it entered critical many times',
    );
  });

  test('bad input is refused with its code and param, and stores nothing', async () => {
    const a = await account('pb-refusals');
    const base = { name: 'x', task: { title: 'x' } };
    const cases: [string, string, unknown, number, string, string | undefined][] = [
      [
        'POST',
        '/api/playbooks',
        { ...base, trigger: { type: 'moon_phase' } },
        400,
        'parameter_invalid',
        'trigger.type',
      ],
      [
        'POST',
        '/api/playbooks',
        { ...base, trigger: { type: 'score_dropped', days: 3 } },
        400,
        'parameter_unknown',
        'trigger.days',
      ],
      [
        'POST',
        '/api/playbooks',
        { ...base, trigger: { type: 'status_entered' } },
        400,
        'parameter_missing',
        'trigger.status',
      ],
      [
        'POST',
        '/api/playbooks',
        { ...base, trigger: { type: 'status_entered', status: 'sad' } },
        400,
        'parameter_invalid',
        'trigger.status',
      ],
      [
        'POST',
        '/api/playbooks',
        { ...base, trigger: { type: 'renewal_approaching', days: 0 } },
        400,
        'parameter_invalid',
        'trigger.days',
      ],
      [
        'POST',
        '/api/playbooks',
        { ...base, trigger: { type: 'renewal_approaching', days: 366 } },
        400,
        'parameter_invalid',
        'trigger.days',
      ],
      [
        'POST',
        '/api/playbooks',
        { ...base, trigger: { type: 'score_dropped' }, assignee: 'sam' },
        400,
        'parameter_invalid',
        'assignee',
      ],
      [
        'POST',
        '/api/playbooks',
        { ...base, trigger: { type: 'score_dropped' }, task: { title: '' } },
        400,
        'parameter_invalid',
        'task.title',
      ],
      [
        'POST',
        '/api/playbooks',
        { ...base, trigger: { type: 'score_dropped' }, task: { title: 'x', due_in_days: 400 } },
        400,
        'parameter_invalid',
        'task.due_in_days',
      ],
      [
        'POST',
        '/api/playbooks',
        { name: 'x', trigger: { type: 'score_dropped' } },
        400,
        'parameter_missing',
        'task',
      ],
      ['PATCH', '/api/playbooks/pb_nope', { enabled: false }, 404, 'playbook_not_found', undefined],
      ['DELETE', '/api/playbooks/pb_nope', undefined, 404, 'playbook_not_found', undefined],
      ['GET', '/api/playbooks/pb_nope', undefined, 404, 'playbook_not_found', undefined],
    ];
    for (const [method, url, body, status, code, param] of cases) {
      const r = await a.request(method, url, body);
      assert.equal(r.status, status, `${method} ${url} ${JSON.stringify(body)}: ${r.raw}`);
      assert.deepEqual(
        [r.body.error.code, r.body.error.param],
        [code, param],
        `${JSON.stringify(body)}: ${r.raw}`,
      );
    }
    assert.deepEqual((await ok(a.get('/api/playbooks'))).data, []);
    const mine = await playbook(a, { trigger: { type: 'score_dropped' } });
    const other = await account('pb-other');
    assert.equal((await other.get(`/api/playbooks/${mine.id}`)).status, 404);
    assert.equal((await other.patch(`/api/playbooks/${mine.id}`, { enabled: false })).status, 404);
    assert.equal((await other.delete(`/api/playbooks/${mine.id}`)).status, 404);
    assert.equal((await ok(a.get(`/api/playbooks/${mine.id}`))).enabled, true);
  });

  test('a read key reads playbooks and writes none; at most 50, under a parallel burst', async () => {
    const a = await account('pb-limit');
    const made = await Promise.all(
      Array.from({ length: 55 }, (_, i) =>
        a.post('/api/playbooks', { name: `p${i}`, trigger: { type: 'score_dropped' }, task: { title: 'x' } }),
      ),
    );
    assert.equal(made.filter((r) => r.status === 201).length, 50);
    for (const r of made.filter((x) => x.status !== 201))
      assert.equal(r.body.error.code, 'parameter_invalid');
    assert.equal((await ok(a.get('/api/playbooks'))).data.length, 50);
    const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
    const read = t.as(`Bearer ${key}`);
    assert.equal((await read.get('/api/playbooks')).status, 200);
    const refused = await read.post('/api/playbooks', {
      name: 'x',
      trigger: { type: 'score_dropped' },
      task: { title: 'x' },
    });
    assert.deepEqual([refused.status, refused.body.error.code], [403, 'permission_denied']);
  });
});
