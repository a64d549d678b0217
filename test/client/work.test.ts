// client.tasks, client.notes and client.playbooks against the real app over HTTP (docs/client.md;
// docs/api.md, "Tasks", "Notes", "Playbooks"): a playbook opens a task the inbox lists, the task is
// snoozed and done, notes are kept and paged; each refusal a VitalsError with the server's status,
// code and param, and nothing stored.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { VitalsError } from '../../src/client/index.ts';
import { customerBody } from '../helpers/app.ts';
import { all, type ClientApp, clientApp } from './harness.ts';

let app: ClientApp;
before(async () => {
  app = await clientApp();
});
after(() => app.close());

test('a playbook opens a task the inbox lists; it is snoozed and done; notes page newest first', async () => {
  const client = await app.newClient('work');
  await client.customers.create({ ...customerBody('acme'), owner: 'sam@example.com' });
  const playbook = await client.playbooks.create({
    name: 'Critical: call',
    trigger: { type: 'status_entered', status: 'critical' },
    task: { title: 'Call them', due_in_days: 2 },
  });
  assert.deepEqual(
    (await client.playbooks.list()).map((p) => p.id),
    [playbook.id],
  );
  await client.healthScores.set('acme', { usage: 0.1 });
  const inbox = await all(client.tasks.list({ assignee: 'sam@example.com' }));
  assert.equal(inbox.length, 1);
  const [task] = inbox;
  assert.equal(task?.playbook_id, playbook.id);
  const later = new Date(Date.now() + 86_400_000).toISOString();
  assert.equal(
    (await client.tasks.update(task?.id as string, { snoozed_until: later })).snoozed_until,
    later,
  );
  assert.deepEqual(await all(client.tasks.list({ assignee: 'sam@example.com' })), []);
  assert.equal((await client.tasks.update(task?.id as string, { status: 'done' })).status, 'done');
  const made = await client.tasks.create('acme', { title: 'Send the deck' });
  assert.equal((await client.tasks.retrieve(made.id)).title, 'Send the deck');

  for (const body of ['one', 'two', 'three']) await client.notes.create('acme', body);
  assert.deepEqual(
    (await all(client.notes.list('acme', { limit: 2 }))).map((n) => n.body),
    ['three', 'two', 'one'],
  );
  await client.playbooks.update(playbook.id, { enabled: false });
  assert.equal((await client.playbooks.retrieve(playbook.id)).enabled, false);
  assert.deepEqual(await client.playbooks.delete(playbook.id), { id: playbook.id, deleted: true });
});

test('refusals are VitalsErrors with the code and param, and store nothing', async () => {
  const client = await app.newClient('work refusals');
  await client.customers.create(customerBody('acme'));
  await assert.rejects(
    client.playbooks.create({
      name: 'x',
      trigger: { type: 'renewal_approaching', days: 0 },
      task: { title: 'x' },
    }),
    (err) =>
      err instanceof VitalsError &&
      err.status === 400 &&
      err.code === 'parameter_invalid' &&
      err.param === 'trigger.days',
  );
  await assert.rejects(
    client.tasks.create('acme', { title: '' }),
    (err) => err instanceof VitalsError && err.code === 'parameter_invalid' && err.param === 'title',
  );
  await assert.rejects(
    client.tasks.retrieve('task_nope'),
    (err) => err instanceof VitalsError && err.status === 404 && err.code === 'task_not_found',
  );
  assert.deepEqual(await client.playbooks.list(), []);
  assert.deepEqual(await all(client.tasks.list({ status: 'all' })), []);
});
