// A customer's timeline (docs/api.md, "Timeline"), written once for both backends: each source of it
// is a table Vitals keeps, read newest first on an index by customer and instant, at most the page's
// size plus one row at a time (`ORDER BY … DESC LIMIT n`), and the reads are merged in
// domain/timeline.ts (a k-way merge), rather than a UNION over everything the customer has. Also
// what the timeline keeps beside the tables other areas write (migration 33): who set or removed
// an override, and what each source message applied to a customer (pruned with the events).

import type { Override } from '../domain/health.ts';
import type { Status } from '../domain/scoring.ts';
import type { Actor } from '../domain/tasks.ts';
import {
  type ActivityRow,
  customerChangeEntry,
  dropEntry,
  type HistoryRow,
  historyEntries,
  mergeTimeline,
  noteEntry,
  outcomeEntry,
  type Position,
  SOURCES,
  type SourceRead,
  sourceEntry,
  type TimelineEntry,
  type TimelineSource,
  type TimelineType,
  TYPE_SOURCE,
  taskCreatedEntry,
  taskDoneEntry,
} from '../domain/timeline.ts';
import { type Driver, hasNul, Params, parsed, type Row } from './driver.ts';
import type { Page } from './rows.ts';
import { NOTE_COLUMNS, TASK_COLUMNS, toNote, toTask } from './tasks.ts';

export type { TimelineEntry } from '../domain/timeline.ts';

/** Which entries a timeline page reads. */
export interface TimelineQuery {
  types: ReadonlySet<TimelineType>;
  /** The position of the last entry of the page before (null: the newest first). */
  after: Position | null;
  limit: number;
}

/** A source message applied to a customer, as the customer's timeline keeps it. */
export interface SourceActivityRecord {
  /** The message's id in its source's log. */
  id: string;
  customerId: string;
  at: number;
  /** The Segment type, the Stripe event type, or `webhook`. */
  kind: string;
  /** What it changed, in words (`set owner to ana@example.com`); empty when nothing more is known. */
  summary: string;
}

export interface TimelineReads {
  /** A page of the customer's timeline, newest first, and whether more follow. */
  customerTimeline(accountId: string, customerId: string, q: TimelineQuery): Promise<Page<TimelineEntry>>;
}

export interface TimelineWrites {
  /** Who made this version of the customer's score (an override set or removed). */
  recordVersionActor(accountId: string, customerId: string, version: number, actor: Actor): Promise<void>;
  /** Keeps what these messages of the source applied to their customers (which exist). */
  insertSourceActivity(
    accountId: string,
    source: { id: string; name: string; type: string },
    messages: readonly SourceActivityRecord[],
  ): Promise<void>;
}

/**
 * The condition that keeps a source's rows after position `c`, for a source read by `at` then
 * `key` (both descending): rows of an earlier instant, and, at `c`'s instant, the rows of a source
 * shown below `c`'s, or of the same source with a lower key. `key` null: the instant alone tells
 * the rows apart.
 */
function after(
  p: Params,
  source: TimelineSource,
  c: Position | null,
  at: string,
  key: string | null,
): string {
  if (c === null) return '';
  const s = SOURCES[source];
  if (s < c.source) return ` AND ${at} <= ${p.add(c.at)}`;
  if (s > c.source || key === null) return ` AND ${at} < ${p.add(c.at)}`;
  return ` AND (${at}, ${key}) < (${p.add(c.at)}, ${p.add(c.key)})`;
}

/** Where a source's next read starts: after its last row, or null when it read fewer rows than asked. */
const nextOf = (rows: readonly Row[], limit: number, position: (r: Row) => Position): Position | null => {
  const last = rows[limit - 1];
  return rows.length >= limit && last ? position(last) : null;
};

const num = (v: unknown): number | null => (v == null ? null : Number(v));

/**
 * The score's versions, newest first by version (a version's `created_at` follows its number:
 * docs/api.md, "Health scores"), on the history's index by customer and version, each with the
 * version before it (one more row), and who set or removed an override by it. A read starts from a
 * version, never an instant, and a version's entries stand at the earliest instant of it and the
 * versions above it (HistoryRow.placedAt), so a version stamped before the one below it (a clock
 * set back) is still read once and the feed stays in order; an index by instant would cost every
 * score write one more.
 */
function historyRead(
  db: Driver,
  accountId: string,
  customerId: string,
  types: ReadonlySet<TimelineType>,
): SourceRead {
  return async (c, limit) => {
    const p = new Params(accountId, customerId);
    let bound = '';
    // The earliest instant of the versions above the first one read (none: the newest is read first).
    let above = 'NULL';
    if (c !== null) {
      if (c.source === SOURCES.history) {
        // From the version the last read stopped at (its entries already taken are left out below).
        const key = p.add(c.key);
        bound = ` AND h.version <= ${key}`;
        above = `(SELECT min(created_at) FROM score_history
          WHERE account_id = $1 AND customer_id = $2 AND version > ${key})`;
      } else {
        // From the newest version that stands after `c`: every version above it was stamped after.
        const before = after(p, 'history', c, 'created_at', null);
        bound = ` AND h.version <= (SELECT version FROM score_history WHERE account_id = $1 AND customer_id = $2${before}
          ORDER BY version DESC LIMIT 1)`;
      }
    }
    const rows = await db.all(
      `SELECT h.version, h.created_at, h.score, h.status, h.reason, h.override, a.actor, ${above} AS above
       FROM score_history h LEFT JOIN override_actors a
         ON a.account_id = h.account_id AND a.customer_id = h.customer_id AND a.version = h.version
       WHERE h.account_id = $1 AND h.customer_id = $2${bound}
       ORDER BY h.version DESC LIMIT ${p.add(limit + 1)}`,
      p.list,
    );
    let placedAt = rows[0]?.above == null ? Number.POSITIVE_INFINITY : Number(rows[0].above);
    const versions = rows.map((r): HistoryRow => {
      placedAt = Math.min(placedAt, Number(r.created_at));
      return {
        version: Number(r.version),
        at: Number(r.created_at),
        placedAt,
        score: Number(r.score),
        status: r.status as Status,
        reason: r.reason as string,
        override: r.override == null ? null : parsed<Override>(r.override),
        actor: r.actor == null ? null : (JSON.parse(db.fromText(r.actor as string)) as Actor),
      };
    });
    const entries: TimelineEntry[] = [];
    // Of the version the read starts at, only the entries after `c` (its first ones were taken).
    const taken = (e: TimelineEntry) =>
      c?.source === SOURCES.history && e.position.key === c.key && e.position.sub >= c.sub;
    for (const [i, v] of versions.slice(0, limit).entries()) {
      for (const e of historyEntries(v, versions[i + 1] ?? null)) {
        if (types.has(e.type) && !taken(e)) entries.push(e);
      }
    }
    const last = versions[limit - 1];
    const next =
      versions.length > limit && last
        ? { at: last.placedAt ?? last.at, source: SOURCES.history, key: last.version, sub: -1 }
        : null;
    return { entries, next };
  };
}

/** A source of one type, one entry per row, read by `at` and `key` descending. */
function simpleRead(
  db: Driver,
  source: TimelineSource,
  sql: (bound: string, limit: string) => string,
  columns: { at: string; key: string | null },
  toEntry: (r: Row) => TimelineEntry | null,
  first: Params,
): SourceRead {
  return async (c, limit) => {
    const p = new Params(...first.list);
    const bound = after(p, source, c, columns.at, columns.key);
    const rows = await db.all(sql(bound, p.add(limit)), p.list);
    const entries = rows.map(toEntry).filter((e): e is TimelineEntry => e !== null);
    return { entries, next: nextOf(rows, limit, (r) => positionOfRow(source, r, columns)) };
  };
}

/** The position of a row read by simpleRead: its instant and key as selected (as `at` and `k`). */
const positionOfRow = (source: TimelineSource, r: Row, columns: { key: string | null }): Position => ({
  at: Number(r.at),
  source: SOURCES[source],
  key: columns.key === null ? '' : typeof r.k === 'string' ? r.k : Number(r.k),
  sub: 0,
});

/**
 * Done tasks, newest done first, on the inbox's index (tasks_by_customer: a done task's `sort` is
 * minus the instant it was done, migration 30), so by id ascending within an instant.
 */
function doneRead(db: Driver, accountId: string, customerId: string): SourceRead {
  return async (c, limit) => {
    const p = new Params(accountId, customerId);
    let bound = '';
    if (c !== null) {
      const s = SOURCES.done;
      if (s < c.source) bound = ` AND sort >= ${p.add(-c.at)}`;
      else if (s > c.source) bound = ` AND sort > ${p.add(-c.at)}`;
      else bound = ` AND (sort, id) > (${p.add(-c.at)}, ${p.add(c.key)})`;
    }
    const rows = await db.all(
      `SELECT ${TASK_COLUMNS}, done_at AS at, id AS k FROM tasks
       WHERE account_id = $1 AND customer_id = $2 AND status = 'done'${bound}
       ORDER BY sort, id LIMIT ${p.add(limit)}`,
      p.list,
    );
    const entries = rows.map((r) => taskDoneEntry(toTask(r, db)));
    return { entries, next: nextOf(rows, limit, (r) => positionOfRow('done', r, { key: 'id' })) };
  };
}

/** The reads of the sources that hold at least one of `types`. */
function sourceReads(db: Driver, accountId: string, customerId: string, types: ReadonlySet<TimelineType>) {
  const wanted = new Set([...types].map((t) => TYPE_SOURCE[t].source));
  const first = new Params(accountId, customerId);
  const reads: SourceRead[] = [];
  if (wanted.has('history')) reads.push(historyRead(db, accountId, customerId, types));
  if (wanted.has('drops')) {
    reads.push(
      simpleRead(
        db,
        'drops',
        (bound, limit) => `SELECT at, from_score, to_score, peak FROM score_drops
          WHERE account_id = $1 AND customer_id = $2${bound} ORDER BY at DESC LIMIT ${limit}`,
        { at: 'at', key: null },
        (r) =>
          dropEntry({
            at: Number(r.at),
            from: num(r.from_score),
            to: Number(r.to_score),
            peak: Number(r.peak),
          }),
        first,
      ),
    );
  }
  if (wanted.has('outcomes')) {
    reads.push(
      simpleRead(
        db,
        'outcomes',
        (bound, limit) => `SELECT id, id AS k, outcome, at, note, created_by FROM outcomes
          WHERE account_id = $1 AND customer_id = $2${bound} ORDER BY at DESC, id DESC LIMIT ${limit}`,
        { at: 'at', key: 'id' },
        (r) =>
          outcomeEntry({
            id: r.id as string,
            outcome: r.outcome as string,
            at: Number(r.at),
            note: r.note == null ? null : db.fromText(r.note as string),
            actor: r.created_by == null ? null : (JSON.parse(db.fromText(r.created_by as string)) as Actor),
          }),
        first,
      ),
    );
  }
  if (wanted.has('notes')) {
    reads.push(
      simpleRead(
        db,
        'notes',
        (bound, limit) => `SELECT ${NOTE_COLUMNS}, created_at AS at, id AS k FROM notes
          WHERE account_id = $1 AND customer_id = $2${bound} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
        { at: 'created_at', key: 'id' },
        (r) => noteEntry(toNote(r, db)),
        first,
      ),
    );
  }
  if (wanted.has('created')) {
    reads.push(
      simpleRead(
        db,
        'created',
        (bound, limit) => `SELECT ${TASK_COLUMNS}, created_at AS at, id AS k FROM tasks
          WHERE account_id = $1 AND customer_id = $2${bound} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
        { at: 'created_at', key: 'id' },
        (r) => taskCreatedEntry(toTask(r, db)),
        first,
      ),
    );
  }
  if (wanted.has('done')) reads.push(doneRead(db, accountId, customerId));
  if (wanted.has('changes')) {
    const text = (v: unknown) => (v == null ? null : db.fromText(v as string));
    reads.push(
      simpleRead(
        db,
        'changes',
        (
          bound,
          limit,
        ) => `SELECT seq AS k, at, owner_from, owner_to, arr_from, arr_to, renewal_from, renewal_to,
            lifecycle_from, lifecycle_to, parent_from, parent_to FROM customer_changes
          WHERE account_id = $1 AND customer_id = $2${bound} ORDER BY at DESC, seq DESC LIMIT ${limit}`,
        { at: 'at', key: 'seq' },
        (r) =>
          customerChangeEntry({
            seq: Number(r.k),
            at: Number(r.at),
            owner: [text(r.owner_from), text(r.owner_to)],
            arrCents: [num(r.arr_from), num(r.arr_to)],
            renewalAt: [num(r.renewal_from), num(r.renewal_to)],
            lifecycle: [text(r.lifecycle_from), text(r.lifecycle_to)],
            parentId: [text(r.parent_from), text(r.parent_to)],
          }),
        first,
      ),
    );
  }
  if (wanted.has('activity')) {
    reads.push(
      simpleRead(
        db,
        'activity',
        (bound, limit) => `SELECT id, id AS k, at, source_id, source_name, source_type, kind, summary
          FROM source_activity
          WHERE account_id = $1 AND customer_id = $2${bound} ORDER BY at DESC, id DESC LIMIT ${limit}`,
        { at: 'at', key: 'id' },
        (r) =>
          sourceEntry({
            id: r.id as string,
            at: Number(r.at),
            sourceId: r.source_id as string,
            sourceName: db.fromText(r.source_name as string),
            sourceType: r.source_type as string,
            kind: db.fromText(r.kind as string),
            summary: db.fromText(r.summary as string),
          } satisfies ActivityRow),
        first,
      ),
    );
  }
  return reads;
}

export async function customerTimeline(
  db: Driver,
  accountId: string,
  customerId: string,
  q: TimelineQuery,
): Promise<Page<TimelineEntry>> {
  if (hasNul(customerId) || q.types.size === 0) return { data: [], hasMore: false };
  // The sources are read together, on one connection (Driver.oneConnection).
  return db.oneConnection((one) =>
    mergeTimeline(sourceReads(one, accountId, customerId, q.types), q.after, q.limit),
  );
}

export async function recordVersionActor(
  db: Driver,
  accountId: string,
  customerId: string,
  version: number,
  actor: Actor,
): Promise<void> {
  await db.run(
    `INSERT INTO override_actors (account_id, customer_id, version, actor) VALUES ($1, $2, $3, $4)
     ON CONFLICT (account_id, customer_id, version) DO UPDATE SET actor = excluded.actor`,
    [accountId, customerId, version, db.text(JSON.stringify(actor))],
  );
}

export async function insertSourceActivity(
  db: Driver,
  accountId: string,
  source: { id: string; name: string; type: string },
  messages: readonly SourceActivityRecord[],
): Promise<void> {
  if (messages.length === 0) return;
  await db.runEach(
    `INSERT INTO source_activity (account_id, customer_id, at, id, source_id, source_name, source_type, kind, summary)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
    messages.map((m) => [
      accountId,
      m.customerId,
      m.at,
      m.id,
      source.id,
      db.text(source.name),
      source.type,
      db.text(m.kind),
      db.text(m.summary),
    ]),
    ['text', 'text', 'int8', 'text', 'text', 'text', 'text', 'text', 'text'],
  );
}
