// Tasks and notes (docs/api.md, "Tasks" and "Notes") through real HTTP on both backends: a task's
// life (open, snoozed, done, reopened), the inbox's order and paging, who may write what, every
// refusal with nothing stored, another account's ids, a customer's deletion taking them along,
// and the task events.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { UserRole } from '../../src/domain/people.ts';
import { createApiKey, createUser } from '../../src/keys.ts';
import { buildTestApp, type Client, type Response, type TestApp, TestClock } from '../helpers/app.ts';

const PASSWORD = 'a long enough password';
const clock = new TestClock('2026-11-01T12:00:00.000Z');
let t: TestApp;
let api: Client;
before(async () => {
  t = await buildTestApp({ now: clock.now });
  api = t.api;
  for (const id of ['acme', 'globex', 'initech']) {
    const made = await api.post('/api/customers', { customer_id: id, name: id, email: `ops@${id}.test` });
    assert.equal(made.status, 201, made.raw);
  }
});
after(() => t.close());

type Request = (method: string, url: string, body?: unknown) => Promise<Response>;

/** A person of the default account, signed in through their one-time link. */
async function person(email: string, role: UserRole): Promise<{ request: Request; id: string }> {
  const made = await createUser(t.store, { email, accountName: 'default', role });
  assert.ok(made);
  const set = await t.inject({
    method: 'POST',
    url: '/auth/password',
    payload: { token: made.token, password: PASSWORD },
  });
  assert.equal(set.status, 200, set.raw);
  const cookie = /vitals_session=[^;]+/.exec(String(set.headers['set-cookie']))?.[0] as string;
  const csrf = set.body.csrf_token as string;
  const request: Request = (method, url, body) =>
    t.inject({
      method: method as 'GET',
      url,
      headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  return { request, id: made.id };
}

const ids = (r: Response) => (r.body.data as { id: string }[]).map((x) => x.id);

async function allTasks(): Promise<unknown[]> {
  const r = await api.get('/api/tasks?status=all&include_snoozed=true&limit=100');
  assert.equal(r.status, 200, r.raw);
  return r.body.data;
}

describe('tasks', () => {
  test('a task is opened, read, snoozed out of the inbox, done and reopened; each change an event', async () => {
    const made = await api.post('/api/customers/acme/tasks', {
      title: 'Call about the renewal',
      body: 'They asked for a discount.',
      assignee: 'Sam@Example.com',
      due_at: '2026-11-03T09:00:00+01:00',
    });
    assert.equal(made.status, 201, made.raw);
    const task = made.body;
    assert.match(task.id, /^task_/);
    assert.deepEqual(
      { ...task, id: undefined, created_by: undefined },
      {
        id: undefined,
        customer_id: 'acme',
        title: 'Call about the renewal',
        body: 'They asked for a discount.',
        status: 'open',
        assignee: 'Sam@Example.com',
        due_at: '2026-11-03T08:00:00.000Z',
        snoozed_until: null,
        playbook_id: null,
        created_at: '2026-11-01T12:00:00.000Z',
        updated_at: '2026-11-01T12:00:00.000Z',
        done_at: null,
        created_by: undefined,
      },
    );
    assert.equal(task.created_by.type, 'key');
    assert.deepEqual((await api.get(`/api/tasks/${task.id}`)).body, task);

    // The assignee is compared ignoring case.
    assert.deepEqual(ids(await api.get('/api/tasks?assignee=sam@example.com')), [task.id]);

    clock.advance(60_000);
    const snoozed = await api.patch(`/api/tasks/${task.id}`, { snoozed_until: '2026-11-02T12:00:00Z' });
    assert.equal(snoozed.status, 200, snoozed.raw);
    assert.equal(snoozed.body.snoozed_until, '2026-11-02T12:00:00.000Z');
    assert.deepEqual(ids(await api.get('/api/tasks?assignee=sam@example.com')), []);
    assert.deepEqual(ids(await api.get('/api/tasks?assignee=sam@example.com&include_snoozed=true')), [
      task.id,
    ]);
    const other = await api.post('/api/customers/acme/tasks', {
      title: 'Not snoozed',
      assignee: 'sam@example.com',
    });
    assert.equal(other.status, 201, other.raw);
    assert.deepEqual(
      ids(await api.get('/api/tasks?assignee=sam@example.com&include_snoozed=only')),
      [task.id],
      "the dashboard's Snoozed tab: the snoozed ones alone",
    );
    clock.set('2026-11-02T12:00:00.000Z');
    assert.deepEqual(
      ids(await api.get('/api/tasks?assignee=sam@example.com')),
      [task.id, other.body.id],
      'back when the snooze ends',
    );
    assert.deepEqual(ids(await api.get('/api/tasks?assignee=sam@example.com&include_snoozed=only')), []);
    assert.equal((await api.delete(`/api/tasks/${other.body.id}`)).status, 200);

    const done = await api.patch(`/api/tasks/${task.id}`, { status: 'done' });
    assert.equal(done.status, 200, done.raw);
    assert.equal(done.body.done_at, '2026-11-02T12:00:00.000Z');
    assert.equal(done.body.snoozed_until, null);
    assert.deepEqual(ids(await api.get('/api/tasks?assignee=sam@example.com')), []);
    assert.deepEqual(ids(await api.get('/api/tasks?assignee=sam@example.com&status=done')), [task.id]);

    const reopened = await api.patch(`/api/tasks/${task.id}`, { status: 'open' });
    assert.equal(reopened.body.done_at, null);

    const events = await api.get('/api/events?limit=100');
    const mine = (events.body.data as { type: string; data: { id: string; status: string } }[]).filter(
      (e) => e.type.startsWith('task.') && e.data.id === task.id,
    );
    assert.deepEqual(mine.map((e) => [e.type, e.data.status]).reverse(), [
      ['task.created', 'open'],
      ['task.updated', 'open'],
      ['task.updated', 'done'],
      ['task.updated', 'open'],
    ]);
    assert.equal((await api.delete(`/api/tasks/${task.id}`)).status, 200);
    assert.equal((await api.get(`/api/tasks/${task.id}`)).status, 404);
  });

  test('the inbox: open tasks soonest due first, undated last, then done ones newest first, paged by cursor', async () => {
    const a = await t.newAccount('inbox-order');
    await a.post('/api/customers', { customer_id: 'c', name: 'C', email: 'c@c.test' });
    const titles = ['undated', 'due later', 'due soon', 'finished first', 'finished last'];
    const due: Record<string, string | null> = {
      undated: null,
      'due later': '2026-12-20T00:00:00Z',
      'due soon': '2026-12-01T00:00:00Z',
      'finished first': null,
      'finished last': null,
    };
    const made: Record<string, string> = {};
    for (const title of titles) {
      const r = await a.post('/api/customers/c/tasks', { title, due_at: due[title] });
      assert.equal(r.status, 201, r.raw);
      made[title] = r.body.id;
    }
    await a.patch(`/api/tasks/${made['finished first']}`, { status: 'done' });
    clock.advance(1000);
    await a.patch(`/api/tasks/${made['finished last']}`, { status: 'done' });
    const want = ['due soon', 'due later', 'undated', 'finished last', 'finished first'].map((x) => made[x]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: Response = await a.get(`/api/tasks?status=all&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(r.status, 200, r.raw);
      seen.push(...ids(r));
      cursor = r.body.next_cursor;
      assert.equal(r.body.has_more, cursor !== null);
    } while (cursor);
    assert.deepEqual(seen, want);
    assert.deepEqual(ids(await a.get('/api/tasks?due_before=2026-12-10T00:00:00Z')), [made['due soon']]);
    assert.deepEqual(ids(await a.get('/api/tasks?assignee=none')), want.slice(0, 3));
    assert.deepEqual(ids(await a.get('/api/tasks?customer_id=c&status=done')), want.slice(3));
  });

  test('bad input is refused with its code and param, and stores nothing', async () => {
    const before = await allTasks();
    const cases: [string, string, unknown, number, string, string | undefined][] = [
      ['POST', '/api/customers/acme/tasks', {}, 400, 'parameter_missing', 'title'],
      ['POST', '/api/customers/acme/tasks', { title: '' }, 400, 'parameter_invalid', 'title'],
      ['POST', '/api/customers/acme/tasks', { title: '   ' }, 400, 'parameter_invalid', 'title'],
      ['POST', '/api/customers/acme/tasks', { title: 'x'.repeat(201) }, 400, 'parameter_invalid', 'title'],
      [
        'POST',
        '/api/customers/acme/tasks',
        { title: 'x', body: 'y'.repeat(10_001) },
        400,
        'parameter_invalid',
        'body',
      ],
      [
        'POST',
        '/api/customers/acme/tasks',
        { title: 'x', assignee: 'sam' },
        400,
        'parameter_invalid',
        'assignee',
      ],
      [
        'POST',
        '/api/customers/acme/tasks',
        { title: 'x', due_at: 'soon' },
        400,
        'parameter_invalid',
        'due_at',
      ],
      [
        'POST',
        '/api/customers/acme/tasks',
        { title: 'x', colour: 'red' },
        400,
        'parameter_unknown',
        'colour',
      ],
      ['POST', '/api/customers/nobody/tasks', { title: 'x' }, 404, 'customer_not_found', undefined],
      ['GET', '/api/tasks?status=closed', undefined, 400, 'parameter_invalid', 'status'],
      ['GET', '/api/tasks?include_snoozed=yes', undefined, 400, 'parameter_invalid', 'include_snoozed'],
      ['GET', '/api/tasks?cursor=nonsense', undefined, 400, 'parameter_invalid', 'cursor'],
      ['GET', '/api/tasks?assignee=me', undefined, 400, 'parameter_invalid', 'assignee'],
      ['GET', '/api/tasks?due_before=tomorrow', undefined, 400, 'parameter_invalid', 'due_before'],
      ['GET', '/api/tasks/task_nope', undefined, 404, 'task_not_found', undefined],
      ['PATCH', '/api/tasks/task_nope', { status: 'done' }, 404, 'task_not_found', undefined],
      ['DELETE', '/api/tasks/task_nope', undefined, 404, 'task_not_found', undefined],
      ['POST', '/api/customers/acme/notes', { body: '' }, 400, 'parameter_invalid', 'body'],
      ['POST', '/api/customers/acme/notes', { body: 'n'.repeat(10_001) }, 400, 'parameter_invalid', 'body'],
      ['POST', '/api/customers/nobody/notes', { body: 'hi' }, 404, 'customer_not_found', undefined],
      ['GET', '/api/customers/nobody/notes', undefined, 404, 'customer_not_found', undefined],
      ['PATCH', '/api/notes/note_nope', { body: 'x' }, 404, 'note_not_found', undefined],
    ];
    for (const [method, url, body, status, code, param] of cases) {
      const r = await api.request(method, url, body);
      assert.equal(r.status, status, `${method} ${url} ${JSON.stringify(body)}: ${r.raw}`);
      assert.equal(r.body.error.code, code, `${method} ${url}: ${r.raw}`);
      assert.equal(r.body.error.param, param, `${method} ${url}: ${r.raw}`);
    }
    const task = (await api.post('/api/customers/acme/tasks', { title: 'Kept as it is' })).body;
    const patches: [unknown, number, string, string | undefined][] = [
      [{}, 400, 'parameter_missing', undefined],
      [{ status: 'closed' }, 400, 'parameter_invalid', 'status'],
      [{ title: '' }, 400, 'parameter_invalid', 'title'],
      [{ snoozed_until: 'later' }, 400, 'parameter_invalid', 'snoozed_until'],
      [{ status: 'done', snoozed_until: '2027-01-01T00:00:00Z' }, 400, 'parameter_invalid', 'snoozed_until'],
    ];
    for (const [body, status, code, param] of patches) {
      const r = await api.patch(`/api/tasks/${task.id}`, body);
      assert.equal(r.status, status, r.raw);
      assert.deepEqual([r.body.error.code, r.body.error.param], [code, param], r.raw);
    }
    await api.patch(`/api/tasks/${task.id}`, { status: 'done' });
    const doneSnooze = await api.patch(`/api/tasks/${task.id}`, { snoozed_until: '2027-01-01T00:00:00Z' });
    assert.deepEqual(
      [doneSnooze.status, doneSnooze.body.error.param],
      [400, 'snoozed_until'],
      doneSnooze.raw,
    );
    const stored = (await api.get(`/api/tasks/${task.id}`)).body;
    assert.equal(stored.title, 'Kept as it is');
    assert.equal(stored.snoozed_until, null);
    await api.delete(`/api/tasks/${task.id}`);
    assert.deepEqual(await allTasks(), before);
  });

  test("another account's tasks and notes are 404 to it, and not in its lists", async () => {
    const other = await t.newAccount('tasks-other');
    const task = (await api.post('/api/customers/globex/tasks', { title: 'Ours' })).body;
    const note = (await api.post('/api/customers/globex/notes', { body: 'Ours' })).body;
    assert.equal((await other.get(`/api/tasks/${task.id}`)).status, 404);
    assert.equal((await other.patch(`/api/tasks/${task.id}`, { status: 'done' })).status, 404);
    assert.equal((await other.delete(`/api/tasks/${task.id}`)).status, 404);
    assert.equal((await other.patch(`/api/notes/${note.id}`, { body: 'theirs' })).status, 404);
    assert.equal((await other.delete(`/api/notes/${note.id}`)).status, 404);
    assert.deepEqual(ids(await other.get('/api/tasks?status=all')), []);
    assert.equal((await api.get(`/api/tasks/${task.id}`)).body.status, 'open');
    assert.equal((await api.get('/api/customers/globex/notes')).body.data[0].body, 'Ours');
  });

  test("a customer's deletion takes its tasks and notes along", async () => {
    await api.post('/api/customers', { customer_id: 'leaving', name: 'Leaving', email: 'l@l.test' });
    const task = (await api.post('/api/customers/leaving/tasks', { title: 'Goodbye call' })).body;
    const note = (await api.post('/api/customers/leaving/notes', { body: 'Moving to a rival' })).body;
    assert.equal((await api.delete('/api/customers/leaving')).status, 200);
    assert.equal((await api.get(`/api/tasks/${task.id}`)).status, 404);
    assert.equal((await api.patch(`/api/notes/${note.id}`, { body: 'x' })).status, 404);
  });
});

describe('notes and who may write', () => {
  test('notes list newest first and page; only the author or an admin changes one', async () => {
    const editor = await person('ed@example.com', 'editor');
    const other = await person('olive@example.com', 'editor');
    const admin = await person('ada@example.com', 'admin');
    const viewer = await person('vic@example.com', 'viewer');
    const written: string[] = [];
    for (const body of ['first', 'second', 'third']) {
      const r = await editor.request('POST', '/api/customers/initech/notes', { body });
      assert.equal(r.status, 201, r.raw);
      assert.deepEqual(r.body.author, { type: 'user', id: editor.id, label: 'ed@example.com' });
      written.push(r.body.id);
    }
    const first = await viewer.request('GET', '/api/customers/initech/notes?limit=2');
    assert.deepEqual(ids(first), [written[2], written[1]]);
    assert.equal(first.body.has_more, true);
    const next = await viewer.request(
      'GET',
      `/api/customers/initech/notes?limit=2&starting_after=${written[1]}`,
    );
    assert.deepEqual(ids(next), [written[0]]);

    const theirs = await other.request('PATCH', `/api/notes/${written[0]}`, { body: 'rewritten' });
    assert.deepEqual([theirs.status, theirs.body.error.code], [403, 'permission_denied'], theirs.raw);
    assert.equal((await other.request('DELETE', `/api/notes/${written[0]}`)).status, 403);
    const own = await editor.request('PATCH', `/api/notes/${written[0]}`, { body: 'first, edited' });
    assert.equal(own.status, 200, own.raw);
    assert.equal(own.body.body, 'first, edited');
    assert.equal((await admin.request('DELETE', `/api/notes/${written[1]}`)).status, 200);
    assert.deepEqual(ids(await viewer.request('GET', '/api/customers/initech/notes')), [
      written[2],
      written[0],
    ]);

    // A viewer reads tasks and notes and writes neither.
    const denied = [
      await viewer.request('POST', '/api/customers/initech/tasks', { title: 'x' }),
      await viewer.request('POST', '/api/customers/initech/notes', { body: 'x' }),
    ];
    for (const r of denied)
      assert.deepEqual([r.status, r.body.error.code], [403, 'permission_denied'], r.raw);
    const mine = await editor.request('POST', '/api/customers/initech/tasks', {
      title: 'Mine',
      assignee: 'ed@example.com',
    });
    assert.equal(mine.status, 201, mine.raw);
    assert.deepEqual(ids(await editor.request('GET', '/api/tasks?assignee=me')), [mine.body.id]);
  });

  test('a read key reads tasks and notes and is refused every write', async () => {
    const { key } = await createApiKey(t.store, 'default', undefined, { scope: 'read' });
    const read = t.as(`Bearer ${key}`);
    assert.equal((await read.get('/api/tasks')).status, 200);
    assert.equal((await read.get('/api/customers/initech/notes')).status, 200);
    const before = await allTasks();
    for (const r of [
      await read.post('/api/customers/initech/tasks', { title: 'x' }),
      await read.post('/api/customers/initech/notes', { body: 'x' }),
    ]) {
      assert.deepEqual([r.status, r.body.error.code], [403, 'permission_denied'], r.raw);
    }
    assert.deepEqual(await allTasks(), before);
  });
});
