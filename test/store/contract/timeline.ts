// A customer's timeline in the store (store/timeline.ts, migration 33), on every backend. The route's
// test proves the story the API tells (test/http/timeline.test.ts); this holds each method to its
// word: every source merged newest first, pages by an entry's position, the types filter, free text
// round-trips, the customer change trigger, the source activity pruned oldest first, an account's
// entries its own, and everything gone with its customer.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../../src/domain/ids.ts';
import type { TaskRecord } from '../../../src/domain/tasks.ts';
import { TIMELINE_TYPES, type TimelineType } from '../../../src/domain/timeline.ts';
import type { Store, TimelineEntry } from '../../../src/store/store.ts';
import { transaction } from '../../helpers/transaction.ts';
import { type ContractContext, customer, score, T0 } from './context.ts';

const key = { type: 'key' as const, id: 'key_1', label: 'vk_1…' };
const person = { type: 'user' as const, id: 'usr_1', label: 'eve@example.com' };
const ALL = new Set<TimelineType>(TIMELINE_TYPES);

const task = (customerId: string, extra: Partial<TaskRecord>): TaskRecord => ({
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
  createdBy: key,
  doneBy: null,
  ...extra,
});

/** One of each source for customer `id`, an instant apart: T0+1 … T0+8. */
async function story(store: Store, a: string, id: string): Promise<void> {
  await transaction(store, async (tx) => {
    await tx.insertCustomer(a, customer(id, { owner: 'ana@example.com' }));
    await tx.writeScores(a, [score(id, 0.9, 1, { updatedAt: T0 + 1 })], 'factors_updated');
    await tx.writeScores(a, [score(id, 0.3, 2, { updatedAt: T0 + 2 })], 'factors_updated');
    await tx.recordDropAlerts(a, [{ customerId: id, at: T0 + 2, from: 0.9, to: 0.3, peak: 0.9 }]);
    const override = {
      score: 0.8,
      reason: 'pinned \0 “why”',
      expiresAt: T0 + 99,
      setAt: T0 + 3,
      setBy: 'eve',
    };
    await tx.writeScores(
      a,
      [score(id, 0.8, 3, { updatedAt: T0 + 3, override, computed: 0.3, status: 'healthy' })],
      'override_set',
    );
    await tx.recordVersionActor(a, id, 3, person);
    await tx.insertOutcomes(a, [
      {
        id: newId.outcome(),
        customerId: id,
        outcome: 'retained',
        at: T0 + 4,
        note: null,
        createdAt: T0 + 4,
        createdBy: person,
      },
    ]);
    await tx.insertNote(a, {
      id: newId.note(),
      customerId: id,
      body: 'NUL \0 note',
      author: person,
      createdAt: T0 + 5,
      updatedAt: T0 + 5,
    });
    await tx.insertTask(a, task(id, { createdAt: T0 + 6, updatedAt: T0 + 6, title: 'Open one' }));
    await tx.insertTask(
      a,
      task(id, { createdAt: T0, status: 'done', doneAt: T0 + 7, doneBy: person, title: 'Closed one' }),
    );
    await tx.updateCustomer(a, customer(id, { owner: 'bob@example.com', arrCents: 150, updatedAt: T0 + 8 }));
    await tx.insertSourceActivity(a, { id: 'src_1', name: 'Feed \0', type: 'webhook' }, [
      { id: newId.sourceMessage(), customerId: id, at: T0 + 8, kind: 'webhook', summary: 'set owner \0' },
    ]);
  });
}

const read = (store: Store, a: string, id: string, types = ALL, limit = 100) =>
  store.customerTimeline(a, id, { types, after: null, limit });

async function walk(
  store: Store,
  a: string,
  id: string,
  limit: number,
  types = ALL,
): Promise<TimelineEntry[]> {
  const seen: TimelineEntry[] = [];
  for (let pages = 0; pages < 200; pages++) {
    const page = await store.customerTimeline(a, id, {
      types,
      after: seen.at(-1)?.position ?? null,
      limit,
    });
    seen.push(...page.data);
    if (!page.hasMore) return seen;
  }
  throw new Error('no last page');
}

export function timelineContract(c: ContractContext): void {
  describe('the timeline', () => {
    test('customerTimeline merges every source newest first, pages by position, keeps only the types asked for', async () => {
      const store = c.store();
      const a = await c.account();
      await story(store, a, 'tl');
      const page = await read(store, a, 'tl');
      assert.equal(page.hasMore, false);
      assert.deepEqual(
        page.data.map((e) => [e.at - T0, e.type, e.actor?.id ?? null]),
        [
          [8, 'customer_updated', null],
          [8, 'source_event', 'src_1'],
          [7, 'task_done', 'usr_1'],
          [6, 'task_created', 'key_1'],
          [5, 'note', 'usr_1'],
          [4, 'outcome', 'usr_1'],
          [3, 'status_changed', null],
          [3, 'score_changed', null],
          [3, 'override_set', 'usr_1'],
          [2, 'score_dropped', null],
          [2, 'status_changed', null],
          [2, 'score_changed', null],
          [1, 'status_changed', null],
          [1, 'score_changed', null],
          [0, 'task_created', 'key_1'],
        ],
      );
      const byType = (type: string) => page.data.find((e) => e.type === type) as TimelineEntry;
      assert.deepEqual(byType('customer_updated').data, {
        changes: { owner: { from: 'ana@example.com', to: 'bob@example.com' }, arr: { from: null, to: 1.5 } },
      });
      assert.equal(byType('source_event').summary, 'Webhook source “Feed \0” applied webhook: set owner \0');
      assert.equal(byType('note').data.body, 'NUL \0 note');
      assert.equal(byType('override_set').data.reason, 'pinned \0 “why”');
      assert.deepEqual(byType('score_dropped').data, { from: 0.9, to: 0.3, peak: 0.9 });
      for (const limit of [1, 2, 5]) {
        assert.deepEqual(
          (await walk(store, a, 'tl', limit)).map((e) => e.id),
          page.data.map((e) => e.id),
        );
      }
      const some = new Set<TimelineType>(['note', 'score_changed', 'source_event']);
      assert.deepEqual(
        (await walk(store, a, 'tl', 1, some)).map((e) => e.id),
        page.data.filter((e) => some.has(e.type)).map((e) => e.id),
      );
      assert.deepEqual((await read(store, a, 'tl', new Set())).data, []);
      assert.deepEqual((await read(store, await c.account(), 'tl')).data, [], "another account's");
      assert.deepEqual((await read(store, a, 't\0l')).data, []);
    });

    test('a version stamped before the one below it (a clock set back) is read once, where the first page put it', async () => {
      const store = c.store();
      const a = await c.account();
      await transaction(store, async (tx) => {
        await tx.insertCustomer(a, customer('skew'));
        for (const [version, at] of [
          [1, 1],
          [2, 5],
          [3, 3],
        ] as const) {
          await tx.writeScores(
            a,
            [score('skew', version / 10, version, { updatedAt: T0 + at })],
            'factors_updated',
          );
        }
        await tx.insertNote(a, {
          id: newId.note(),
          customerId: 'skew',
          body: 'between',
          author: key,
          createdAt: T0 + 4,
          updatedAt: T0 + 4,
        });
      });
      const all = (await read(store, a, 'skew')).data;
      // The history in its versions' order; the note where the merge met it.
      assert.deepEqual(
        all.map((e) => [e.type, e.at - T0]),
        [
          ['note', 4],
          ['score_changed', 3],
          ['score_changed', 5],
          ['status_changed', 1],
          ['score_changed', 1],
        ],
      );
      for (const limit of [1, 2, 3]) {
        assert.deepEqual(
          (await walk(store, a, 'skew', limit)).map((e) => e.id),
          all.map((e) => e.id),
          `pages of ${limit}`,
        );
      }
    });

    test('recordVersionActor keeps the last actor of a version; a customer change is kept by every write of the book fields', async () => {
      const store = c.store();
      const a = await c.account();
      await transaction(store, async (tx) => {
        await tx.insertCustomer(a, customer('ch'));
        await tx.writeScores(a, [score('ch', 0.5, 1, { updatedAt: T0 + 1 })], 'factors_updated');
        await tx.recordVersionActor(a, 'ch', 1, key);
        await tx.recordVersionActor(a, 'ch', 1, person);
        // Nothing of the book changed: no change kept.
        await tx.updateCustomer(a, customer('ch', { name: 'Renamed', updatedAt: T0 + 2 }));
        await tx.updateCustomer(
          a,
          customer('ch', {
            name: 'Renamed',
            lifecycle: 'churned',
            parentId: 'p',
            renewalAt: T0,
            updatedAt: T0 + 3,
          }),
        );
      });
      const page = await read(store, a, 'ch', new Set(['customer_updated']));
      assert.deepEqual(
        page.data.map((e) => [e.at - T0, e.data]),
        [
          [
            3,
            {
              changes: {
                renewal_at: { from: null, to: new Date(T0).toISOString() },
                lifecycle: { from: 'active', to: 'churned' },
                parent_id: { from: null, to: 'p' },
              },
            },
          ],
        ],
      );
      assert.deepEqual(
        (await read(store, a, 'ch', new Set(['score_changed']))).data.map((e) => e.actor),
        [null],
        'score versions carry no actor',
      );
    });

    test('pruneSourceActivity removes the oldest first, at most `limit`, before the instant; the rest goes with its customer', async (t) => {
      const { store, account } = await c.isolated(t);
      const a = await account();
      await transaction(store, async (tx) => {
        await tx.insertCustomer(a, customer('pr'));
        await tx.insertSourceActivity(
          a,
          { id: 'src_1', name: 'Feed', type: 'segment' },
          [0, 1, 2, 3, 4].map((i) => ({
            id: newId.sourceMessage(),
            customerId: 'pr',
            at: T0 + i,
            kind: 'track',
            summary: `message ${i}`,
          })),
        );
      });
      const left = async () => (await read(store, a, 'pr')).data.map((e) => e.data.summary);
      assert.equal(await store.pruneSourceActivity(T0 + 3, 2), 2);
      assert.deepEqual(await left(), ['message 4', 'message 3', 'message 2']);
      assert.equal(await store.pruneSourceActivity(T0 + 3, 2), 1);
      assert.equal(await store.pruneSourceActivity(T0 + 3, 2), 0);
      assert.deepEqual(await left(), ['message 4', 'message 3']);
      await story(store, a, 'all');
      await transaction(store, async (tx) => {
        await tx.deleteCustomer(a, 'pr');
        await tx.deleteCustomer(a, 'all');
      });
      await transaction(store, async (tx) => {
        await tx.insertCustomer(a, customer('pr'));
        await tx.insertCustomer(a, customer('all'));
      });
      assert.deepEqual((await read(store, a, 'pr')).data, []);
      assert.deepEqual((await read(store, a, 'all')).data, [], 'nothing of the first left behind');
    });
  });
}
