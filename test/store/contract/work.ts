// Tasks, notes, playbooks and the intake's own writes in the store (store/tasks.ts, playbooks.ts,
// sources.ts), on every backend. The routes' tests prove the rules (test/http/tasks.test.ts,
// playbooks.test.ts, segment.test.ts); this holds each method to its word: free text round-trips,
// the inbox order, the unique indexes that keep one open task per playbook, counts added to a day's
// point, a user's last group winning, and everything gone with its customer.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import type { PlaybookRecord } from '../../../src/domain/playbooks.ts';
import type { TaskRecord } from '../../../src/domain/tasks.ts';
import type { Store } from '../../../src/store/store.ts';
import { transaction } from '../../helpers/transaction.ts';
import { type ContractContext, customer, T0 } from './context.ts';

const actor = { type: 'key' as const, id: 'key_1', label: 'vk_1…' };

const task = (customerId: string, extra: Partial<TaskRecord> = {}): TaskRecord => ({
  id: newId.task(),
  customerId,
  title: 'Call',
  body: '',
  status: 'open',
  assignee: null,
  dueAt: null,
  snoozedUntil: null,
  playbookId: null,
  triggerKey: null,
  createdAt: T0,
  updatedAt: T0,
  doneAt: null,
  createdBy: actor,
  doneBy: null,
  ...extra,
});

const playbook = (name: string): PlaybookRecord => ({
  id: newId.playbook(),
  name,
  enabled: true,
  trigger: { type: 'renewal_approaching', days: 90, statuses: ['at_risk'] },
  task: { title: 'Plan', body: 'NUL \0 and "quotes"', dueInDays: 3 },
  assignee: 'owner',
  createdAt: T0,
  updatedAt: T0,
});

const query = { status: 'all' as const, includeSnoozed: true, now: T0, limit: 100 };

async function withCustomers(store: Store, a: string, ids: string[]): Promise<void> {
  await transaction(store, async (tx) => {
    for (const id of ids) await tx.insertCustomer(a, customer(id));
  });
}

export function workContract(c: ContractContext): void {
  describe('tasks, notes, playbooks and the intake', () => {
    test('tasks round-trip and list in inbox order; a playbook has one open task per customer and one per trigger key', async () => {
      const store = c.store();
      const a = await c.account();
      await withCustomers(store, a, ['acme', 'globex']);
      const pb = newId.playbook();
      const odd = task('acme', {
        title: 'NUL \0 ünïcode "quoted"',
        assignee: 'Sam@Example.com',
        dueAt: T0 + 5,
      });
      const undated = task('acme');
      const done = task('globex', { status: 'done', doneAt: T0 + 9 });
      const first = task('globex', { playbookId: pb });
      await transaction(store, async (tx) => {
        for (const t of [odd, undated, done, first]) assert.equal(await tx.insertTask(a, t), true);
        assert.equal(await tx.insertTask(a, task('globex', { playbookId: pb })), false, 'a second open one');
        assert.equal(
          await tx.insertTask(a, task('globex', { playbookId: pb, status: 'done', doneAt: T0 })),
          true,
        );
        assert.equal(await tx.insertTask(a, task('acme', { playbookId: pb, triggerKey: '123' })), true);
        await tx.updateTask(a, { ...((await tx.getTask(a, done.id)) as TaskRecord) });
      });
      assert.deepEqual(await store.getTask(a, odd.id), odd);
      const listed = await store.listTasks(a, query);
      assert.deepEqual(
        listed.data.slice(0, 2).map((t) => t.id),
        [odd.id, undated.id],
      );
      assert.equal(listed.data.at(-1)?.status, 'done');
      assert.deepEqual(
        (await store.listTasks(a, { ...query, assignee: 'sam@example.COM' })).data.map((t) => t.id),
        [odd.id],
      );
      // Done, the playbook's task lets another open; done again with the same trigger key, no second.
      await transaction(store, async (tx) => {
        await tx.updateTask(a, { ...first, status: 'done', doneAt: T0 + 1 });
        assert.equal(await tx.openTaskOf(a, pb, 'globex', first.id), null);
        assert.equal(await tx.insertTask(a, task('globex', { playbookId: pb })), true);
        assert.equal(
          await tx.insertTask(a, task('acme', { playbookId: pb, triggerKey: '123', status: 'done' })),
          false,
        );
      });
      assert.deepEqual((await store.listTasks(await c.account(), query)).data, []);
      await transaction(store, (tx) => tx.deleteCustomer(a, 'acme'));
      assert.equal(await store.getTask(a, odd.id), null, 'gone with its customer');
    });

    test('snoozed tasks: left out until their snooze ends, or listed alone (onlySnoozed)', async () => {
      const store = c.store();
      const a = await c.account();
      await withCustomers(store, a, ['s1']);
      const awake = task('s1');
      const asleep = task('s1', { snoozedUntil: T0 + 60_000 });
      await transaction(store, async (tx) => {
        for (const t of [awake, asleep]) assert.equal(await tx.insertTask(a, t), true);
      });
      const open = { status: 'open' as const, includeSnoozed: false, now: T0, limit: 10 };
      const listed = async (q: Partial<typeof open> & { onlySnoozed?: boolean }) =>
        (await store.listTasks(a, { ...open, ...q })).data.map((t) => t.id);
      assert.deepEqual(await listed({}), [awake.id]);
      assert.deepEqual(await listed({ includeSnoozed: true }), [awake.id, asleep.id]);
      assert.deepEqual(await listed({ includeSnoozed: true, onlySnoozed: true }), [asleep.id]);
      assert.deepEqual(await listed({ includeSnoozed: true, onlySnoozed: true, now: T0 + 60_000 }), []);
    });

    test('notes round-trip newest first and go with their customer', async () => {
      const store = c.store();
      const a = await c.account();
      await withCustomers(store, a, ['n1']);
      const notes = [1, 2, 3].map((i) => ({
        id: newId.note(),
        customerId: 'n1',
        body: `note ${i} \0 “typographic”`,
        author: actor,
        createdAt: T0 + i,
        updatedAt: T0 + i,
      }));
      await transaction(store, async (tx) => {
        for (const n of notes) await tx.insertNote(a, n);
        await tx.updateNote(a, { ...(notes[0] as (typeof notes)[0]), body: 'edited', updatedAt: T0 + 9 });
      });
      const page = await store.listNotes(a, 'n1', { limit: 2 });
      assert.deepEqual(
        page.data.map((n) => n.body),
        [notes[2]?.body, notes[1]?.body],
      );
      assert.equal(page.hasMore, true);
      assert.equal((await store.getNote(a, notes[0]?.id as string))?.body, 'edited');
      await transaction(store, (tx) => tx.deleteCustomer(a, 'n1'));
      assert.deepEqual((await store.listNotes(a, 'n1', { limit: 10 })).data, []);
    });

    test('playbooks: the limit counted with the insert, free text round-trips, the metric states remembered and forgotten', async () => {
      const store = c.store();
      const a = await c.account();
      await withCustomers(store, a, ['p1', 'p2']);
      const one = playbook('One \0');
      await transaction(store, async (tx) => {
        assert.equal(await tx.insertPlaybook(a, one, 2), true);
        assert.equal(await tx.insertPlaybook(a, playbook('Two'), 2), true);
        assert.equal(await tx.insertPlaybook(a, playbook('Three'), 2), false);
        await tx.setHeld(a, one.id, ['p1', 'p2'], true);
        await tx.setHeld(a, one.id, ['p2'], false);
        assert.deepEqual([...(await tx.heldBefore(a, one.id, ['p1', 'p2']))], ['p1']);
        await tx.updatePlaybook(a, { ...one, enabled: false }, true);
        assert.deepEqual([...(await tx.heldBefore(a, one.id, ['p1', 'p2']))], [], 'a new trigger forgets');
      });
      assert.deepEqual(await store.getPlaybook(a, one.id), { ...one, enabled: false });
      assert.equal((await store.listPlaybooks(a)).length, 2);
      assert.deepEqual(
        (await transaction(store, (tx) => tx.enabledPlaybooks(a))).map((p) => p.name),
        ['Two'],
      );
      assert.equal(await transaction(store, (tx) => tx.deletePlaybook(a, one.id)), true);
      assert.equal(await transaction(store, (tx) => tx.deletePlaybook(a, one.id)), false);
    });

    test("the intake's counts add to a day's point; a user's last group wins (a NUL id never matches); another source's links are its own", async () => {
      const store = c.store();
      const a = await c.account();
      await withCustomers(store, a, ['g1', 'g2']);
      const day = T0 - (T0 % 86_400_000);
      await transaction(store, async (tx) => {
        await tx.addMetricCounts(a, [
          { customerId: 'g1', metric: 'exports', at: day, value: 1 },
          { customerId: 'g1', metric: 'exports', at: day, value: 2 },
        ]);
        await tx.addMetricCounts(a, [{ customerId: 'g1', metric: 'exports', at: day, value: 4 }]);
        await tx.linkSourceUsers(a, 'src_a', [
          { userId: 'u1', groupId: 'g1' },
          { userId: 'u1', groupId: 'g2' },
          { userId: 'u\0', groupId: 'g1' },
        ]);
        await tx.linkSourceUsers(a, 'src_b', [{ userId: 'u1', groupId: 'g1' }]);
      });
      const points = await store.listMetricPoints(a, 'g1', { metric: 'exports', limit: 10 });
      assert.deepEqual(
        points.data.map((p) => [p.at, p.value]),
        [[day, 7]],
      );
      const groups = await transaction(store, (tx) =>
        tx.sourceUserGroups(a, 'src_a', ['u1', 'u\0', 'nobody']),
      );
      // A user id holding NUL is never matched (PostgreSQL text cannot hold it): the same everywhere.
      assert.deepEqual(Object.fromEntries(groups), { u1: 'g2' });
      const other = await transaction(store, (tx) => tx.sourceUserGroups(a, 'src_b', ['u1']));
      assert.deepEqual(Object.fromEntries(other), { u1: 'g1' });
    });

    test('message ids: claimed once within the window, again after it or once released; a NUL id is always its own', async () => {
      const store = c.store();
      const a = await c.account();
      const DAY = 86_400_000;
      const claim = (ids: string[], since: number, at: number) =>
        transaction(store, async (tx) => [...(await tx.claimMessages(a, 'src_a', ids, since, at))].sort());
      assert.deepEqual(await claim(['m2', 'm1', 'm1', 'n\0'], T0 - DAY, T0), ['m1', 'm2', 'n\0']);
      // Within the window: m1 and m2 are taken; the NUL id cannot be kept, so it is claimed again.
      assert.deepEqual(await claim(['m1', 'm2', 'm3', 'n\0'], T0 - DAY, T0 + 1), ['m3', 'n\0']);
      // Another source's ids are its own.
      const other = await transaction(store, async (tx) => [
        ...(await tx.claimMessages(a, 'src_b', ['m1'], T0, T0)),
      ]);
      assert.deepEqual(other, ['m1']);
      // Once the window has passed m1's claim (at T0), it is claimed again, stamped anew.
      assert.deepEqual(await claim(['m1'], T0 + 1, T0 + 2), ['m1']);
      assert.deepEqual(await claim(['m1'], T0 + 1, T0 + 3), []);
      await transaction(store, (tx) => tx.releaseMessages(a, 'src_a', ['m2', 'n\0']));
      assert.deepEqual(await claim(['m2', 'm3'], T0 - DAY, T0 + 4), ['m2']);
      // A claim rolled back with its transaction was never made.
      await assert.rejects(
        transaction(store, async (tx) => {
          await tx.claimMessages(a, 'src_a', ['m4'], T0 - DAY, T0);
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      assert.deepEqual(await claim(['m4'], T0 - DAY, T0 + 5), ['m4']);
    });
  });
}
