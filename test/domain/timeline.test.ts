// The timeline's pure parts (src/domain/timeline.ts): an entry's id is its position and reads back
// as it, anything else is refused; the merge of sources, each read newest first a few rows at a
// time, gives every entry once in feed order, whatever the page size and the types' sparseness.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  comparePositions,
  mergeTimeline,
  noteEntry,
  type Position,
  positionOf,
  SOURCES,
  type SourceRead,
  type TimelineEntry,
  timelineId,
} from '../../src/domain/timeline.ts';

const author = { type: 'key' as const, id: 'key_1', label: 'vk_1…' };
const note = (id: string, at: number): TimelineEntry =>
  noteEntry({ id, customerId: 'c', body: id, author, createdAt: at, updatedAt: at });

test('an id reads back as the position it was made of; other text is no position', () => {
  const positions: Position[] = [
    { at: 1_700_000_000_000, source: SOURCES.notes, key: 'note_0abc', sub: 0 },
    { at: 0, source: SOURCES.history, key: -3, sub: 2 },
    { at: 5, source: SOURCES.drops, key: '', sub: 0 },
  ];
  for (const p of positions) {
    const id = timelineId(p);
    assert.match(id, /^tl_[A-Za-z0-9_-]+$/);
    assert.deepEqual(positionOf(id), p);
  }
  const bad = (value: unknown) => `tl_${Buffer.from(JSON.stringify(value)).toString('base64url')}`;
  for (const text of [
    '',
    'tl_',
    'note_1',
    'tl_%%%',
    bad({ at: 1 }),
    bad([1.5, SOURCES.notes, 'n', 0]),
    bad([1, 99, 'n', 0]),
    bad([1, SOURCES.notes, 7, 0]),
    bad([1, SOURCES.history, 'v', 1]),
    bad([1, SOURCES.history, 3, 9]),
    bad([1, SOURCES.drops, 'x', 0]),
    bad([1, SOURCES.notes, 'a\0b', 0]),
    bad([1, SOURCES.notes, '', 0]),
  ]) {
    assert.equal(positionOf(text), null, text);
  }
});

test('positions order newest first, then by source, key and sub, the higher first (a done task’s key the lower first)', () => {
  const a = { at: 2, source: SOURCES.notes, key: 'a', sub: 0 };
  assert.ok(comparePositions(a, { ...a, at: 1 }) < 0);
  assert.ok(
    comparePositions({ ...a, source: SOURCES.history, key: 1 }, { ...a, source: SOURCES.drops, key: '' }) > 0,
  );
  assert.ok(comparePositions(a, { ...a, key: 'b' }) > 0);
  assert.ok(comparePositions({ ...a, source: SOURCES.done }, { ...a, source: SOURCES.done, key: 'b' }) < 0);
  assert.ok(
    comparePositions(
      { ...a, source: SOURCES.history, key: 4, sub: 2 },
      { ...a, source: SOURCES.history, key: 4, sub: 1 },
    ) < 0,
  );
  assert.equal(comparePositions(a, { ...a }), 0);
});

/** A source over entries held here (newest first), read as the store reads a table: after a position, `limit` at a time. */
function held(entries: TimelineEntry[], reads: number[]): SourceRead {
  const sorted = [...entries].sort((x, y) => comparePositions(x.position, y.position));
  return async (after, limit) => {
    reads.push(limit);
    const rest = after ? sorted.filter((e) => comparePositions(e.position, after) > 0) : sorted;
    const rows = rest.slice(0, limit);
    return { entries: rows, next: rest.length > limit ? (rows.at(-1)?.position ?? null) : null };
  };
}

test('the merge gives every entry once, in order, for any page size, reading each source a bounded number of rows', async () => {
  // Three sources whose instants interleave, share some, and one much longer than the others.
  const sources = [
    Array.from({ length: 40 }, (_, i) => note(`note_a${String(i).padStart(2, '0')}`, 1000 + i * 3)),
    Array.from({ length: 5 }, (_, i) => note(`note_b${i}`, 1000 + i * 30)),
    Array.from({ length: 3 }, (_, i) => note(`note_c${i}`, 1000 + i * 3)),
  ];
  const all = sources.flat().sort((x, y) => comparePositions(x.position, y.position));
  for (const limit of [1, 2, 7, 20, 100]) {
    const seen: TimelineEntry[] = [];
    let after: Position | null = null;
    for (;;) {
      const reads: number[] = [];
      const page = await mergeTimeline(
        sources.map((s) => held(s, reads)),
        after,
        limit,
      );
      assert.ok(
        reads.every((n) => n <= Math.max(limit + 1, 4 * (limit + 1))),
        `reads of ${reads}`,
      );
      seen.push(...page.data);
      if (!page.hasMore) break;
      after = page.data.at(-1)?.position ?? null;
    }
    assert.deepEqual(
      seen.map((e) => e.id),
      all.map((e) => e.id),
      `pages of ${limit}`,
    );
  }
  const first = await mergeTimeline(
    sources.map((s) => held(s, [])),
    null,
    20,
  );
  assert.equal(first.data.length, 20);
  assert.equal(first.hasMore, true);
  assert.deepEqual(await mergeTimeline([], null, 20), { data: [], hasMore: false });
});

test('a source with nothing of the page for many rows is read again, more rows at a time', async () => {
  // A read that finds rows but no entry of the types asked for (status changes among versions).
  const sizes: number[] = [];
  const sparse: SourceRead = async (after, limit) => {
    sizes.push(limit);
    const start = after ? Number(after.key) : 10_000;
    const end = Math.max(start - limit, 0);
    const entries = start > 100 && end <= 100 ? [note('note_x', 100)] : [];
    return { entries, next: end === 0 ? null : { at: end, source: SOURCES.notes, key: String(end), sub: 0 } };
  };
  const page = await mergeTimeline([sparse], null, 5);
  assert.deepEqual(
    page.data.map((e) => e.id),
    [note('note_x', 100).id],
  );
  // limit + 1 rows first, then four times more each time, never more than 1,000 at once.
  assert.deepEqual(sizes, [6, 24, 96, 384, ...Array(10).fill(1000)].slice(0, sizes.length));
  assert.equal(sizes.length, 14);
});
