// A customer's timeline (docs/api.md, "Timeline"): one newest-first feed of what Vitals keeps about
// the customer — its score's versions, drops, overrides, outcomes, notes, tasks, changes and what its
// sources applied. What each entry says (its type, one readable sentence, its data), where it stands
// in the feed, its id (the page cursor), and the merge of the sources' newest-first reads. Pure: the
// store reads each source (store/timeline.ts) and builds its entries here.
import type { Override } from './health.ts';
import { scoreText, statusWords } from './mail.ts';
import type { Status } from './scoring.ts';
import type { Actor, NoteRecord, TaskRecord } from './tasks.ts';
import { iso } from './time.ts';

export const TIMELINE_TYPES = [
  'score_changed',
  'status_changed',
  'score_dropped',
  'override_set',
  'override_removed',
  'override_expired',
  'outcome',
  'note',
  'task_created',
  'task_done',
  'customer_updated',
  'source_event',
] as const;
export type TimelineType = (typeof TIMELINE_TYPES)[number];

export const TIMELINE_LIMIT_DEFAULT = 20;
export const TIMELINE_LIMIT_MAX = 100;

/**
 * The tables a timeline reads, each one read newest first on its own index. The number is the
 * source's place among entries of the same instant (the higher first): what a change caused shows
 * above the change (a playbook's task above the drop and the score that opened it, a customer
 * change above the source message that made it).
 */
const SOURCE_NAMES = [
  'activity',
  'changes',
  'history',
  'outcomes',
  'drops',
  'created',
  'done',
  'notes',
] as const;
export type TimelineSource = (typeof SOURCE_NAMES)[number];
export const SOURCES = Object.fromEntries(SOURCE_NAMES.map((s, i) => [s, i])) as Record<
  TimelineSource,
  number
>;

/** Each type's source, and its place among the entries one row of that source gives (the higher first). */
export const TYPE_SOURCE: Record<TimelineType, { source: TimelineSource; sub: number }> = {
  score_changed: { source: 'history', sub: 1 },
  status_changed: { source: 'history', sub: 2 },
  override_set: { source: 'history', sub: 0 },
  override_removed: { source: 'history', sub: 0 },
  override_expired: { source: 'history', sub: 0 },
  score_dropped: { source: 'drops', sub: 0 },
  outcome: { source: 'outcomes', sub: 0 },
  note: { source: 'notes', sub: 0 },
  task_created: { source: 'created', sub: 0 },
  task_done: { source: 'done', sub: 0 },
  customer_updated: { source: 'changes', sub: 0 },
  source_event: { source: 'activity', sub: 0 },
};

/** How each source's rows are told apart within one instant: a number (a version, a sequence), an id, or the instant alone. */
const KEY_KIND: Record<TimelineSource, 'number' | 'string' | 'none'> = {
  activity: 'string',
  changes: 'number',
  history: 'number',
  outcomes: 'string',
  drops: 'none',
  created: 'string',
  done: 'string',
  notes: 'string',
};

/**
 * Within one instant and source, rows come by key, the higher first, except a done task's: the
 * inbox's index (tasks_by_customer, migration 30) holds done tasks newest done first and then by
 * id ascending, and the timeline reads them in that order.
 */
const KEY_DIRECTION = (source: number): 1 | -1 => (SOURCE_NAMES[source] === 'done' ? -1 : 1);

/** Where an entry stands in the feed: newest `at` first, then by source, key and sub (each the higher first). */
export interface Position {
  at: number;
  source: number;
  key: string | number;
  sub: number;
}

/** Negative when `a` comes before `b` in the feed (newest first). */
export function comparePositions(a: Position, b: Position): number {
  if (a.at !== b.at) return b.at - a.at;
  if (a.source !== b.source) return b.source - a.source;
  if (a.key !== b.key) return (a.key > b.key ? -1 : 1) * KEY_DIRECTION(a.source);
  return b.sub - a.sub;
}

const ID_PREFIX = 'tl_';

/** An entry's id: its position, as opaque text (the same entry has the same id on every read). */
export const timelineId = (p: Position): string =>
  ID_PREFIX + Buffer.from(JSON.stringify([p.at, p.source, p.key, p.sub])).toString('base64url');

/** The position an id names, or null when the text is not an id of a timeline entry. */
export function positionOf(id: string): Position | null {
  if (!id.startsWith(ID_PREFIX) || id.length > 400) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(id.slice(ID_PREFIX.length), 'base64url').toString());
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 4) return null;
  const [at, source, key, sub] = value as unknown[];
  if (typeof at !== 'number' || !Number.isSafeInteger(at)) return null;
  const name = SOURCE_NAMES[source as number];
  if (typeof source !== 'number' || name === undefined) return null;
  const kind = KEY_KIND[name];
  const keyFits =
    kind === 'number'
      ? typeof key === 'number' && Number.isSafeInteger(key)
      : kind === 'string'
        ? typeof key === 'string' && key.length > 0 && key.length <= 255 && !key.includes('\0')
        : key === '';
  if (!keyFits) return null;
  const subs = Object.values(TYPE_SOURCE)
    .filter((t) => t.source === name)
    .map((t) => t.sub);
  if (typeof sub !== 'number' || !subs.includes(sub)) return null;
  return { at, source, key: key as string | number, sub };
}

export interface TimelineEntry {
  id: string;
  type: TimelineType;
  at: number;
  actor: Actor | null;
  summary: string;
  data: Record<string, unknown>;
  position: Position;
}

function entry(
  type: TimelineType,
  at: number,
  key: string | number,
  actor: Actor | null,
  summary: string,
  data: Record<string, unknown>,
): TimelineEntry {
  const { source, sub } = TYPE_SOURCE[type];
  const position = { at, source: SOURCES[source], key, sub };
  return { id: timelineId(position), type, at, actor, summary, data, position };
}

/** A reason or kind as words: `metrics_updated` → "metrics updated". */
const words = (code: string): string => code.replace(/_/g, ' ');
const quoted = (text: string, max = 80): string =>
  `“${text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text}”`;
const dateText = (ms: number): string => iso(ms).slice(0, 10);

/** One version of the score as the history keeps it, with who set or removed an override by it. */
export interface HistoryRow {
  version: number;
  at: number;
  score: number;
  status: Status;
  reason: string;
  override: Override | null;
  /** Who made the version, where Vitals keeps it (an override set or removed): else null. */
  actor: Actor | null;
  /**
   * The instant its entries stand at in the feed: the earliest of its own and every later
   * version's, so the history reads newest first by version and by instant alike. It is `at`
   * unless a later version was stamped before it (a clock set back).
   */
  placedAt?: number;
}

/** The entry placed at another instant of the feed (its id follows its place). */
function placed(e: TimelineEntry, at: number): TimelineEntry {
  const position = { ...e.position, at };
  return { ...e, id: timelineId(position), position };
}

/**
 * The entries one version gives, in feed order: its status change, its score change, and the
 * override it set, removed or ended. `before` is the version before it (null for the first).
 */
export function historyEntries(v: HistoryRow, before: HistoryRow | null): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  const k = v.version;
  if (before?.status !== v.status) {
    const summary =
      before === null
        ? `Entered ${statusWords(v.status)} with its first score`
        : `Moved into ${statusWords(v.status)} from ${statusWords(before.status)}`;
    out.push(
      entry('status_changed', v.at, k, null, summary, {
        version: k,
        from: before?.status ?? null,
        to: v.status,
        health_score: v.score,
      }),
    );
  }
  const why = ` (${words(v.reason)})`;
  const from = before?.score ?? null;
  const moved =
    from === null
      ? `First health score: ${scoreText(v.score)}`
      : v.score < from
        ? `Health score fell from ${scoreText(from)} to ${scoreText(v.score)}`
        : v.score > from
          ? `Health score rose from ${scoreText(from)} to ${scoreText(v.score)}`
          : `Health score stayed at ${scoreText(v.score)}`;
  out.push(
    entry('score_changed', v.at, k, null, moved + why, {
      version: k,
      reason: v.reason,
      from,
      to: v.score,
      status: v.status,
    }),
  );
  const ended = before?.override ?? null;
  if (v.reason === 'override_set' && v.override) {
    const o = v.override;
    out.push(
      entry(
        'override_set',
        v.at,
        k,
        v.actor,
        `Score overridden to ${scoreText(o.score)} until ${dateText(o.expiresAt)}: ${quoted(o.reason)}`,
        {
          version: k,
          health_score: o.score,
          reason: o.reason,
          expires_at: iso(o.expiresAt),
          set_by: o.setBy,
        },
      ),
    );
  } else if (v.reason === 'override_removed') {
    const of = ended ? `The override of ${scoreText(ended.score)} was removed` : 'The override was removed';
    out.push(
      entry('override_removed', v.at, k, v.actor, `${of}; the computed ${scoreText(v.score)} shows again`, {
        version: k,
        health_score: ended?.score ?? null,
        reason: ended?.reason ?? null,
        computed_score: v.score,
      }),
    );
  } else if (!v.override && (ended !== null || v.reason === 'override_expired')) {
    // An override ends with the first version after its end: the rescore job's, or any write's.
    const of = ended ? `The override of ${scoreText(ended.score)} expired` : 'The override expired';
    out.push(
      entry('override_expired', v.at, k, null, `${of}; the computed ${scoreText(v.score)} shows again`, {
        version: k,
        health_score: ended?.score ?? null,
        reason: ended?.reason ?? null,
        expires_at: ended ? iso(ended.expiresAt) : null,
        computed_score: v.score,
      }),
    );
  }
  const at = v.placedAt ?? v.at;
  return at === v.at ? out : out.map((e) => placed(e, at));
}

/** A drop alert as score_drops keeps it. */
export interface DropRow {
  at: number;
  from: number | null;
  to: number;
  peak: number;
}

export function dropEntry(d: DropRow): TimelineEntry {
  const below = scoreText(Math.round((d.peak - d.to) * 1e6) / 1e6);
  return entry(
    'score_dropped',
    d.at,
    '',
    null,
    `Health score dropped to ${scoreText(d.to)}, ${below} below its recent peak of ${scoreText(d.peak)}`,
    { from: d.from, to: d.to, peak: d.peak },
  );
}

export interface OutcomeRow {
  id: string;
  outcome: string;
  at: number;
  note: string | null;
  /** Who recorded it (null: not kept, before migration 33). */
  actor: Actor | null;
}

export function outcomeEntry(o: OutcomeRow): TimelineEntry {
  const note = o.note ? `: ${quoted(o.note)}` : '';
  return entry('outcome', o.at, o.id, o.actor, `Outcome recorded: ${words(o.outcome)}${note}`, {
    outcome_id: o.id,
    outcome: o.outcome,
    note: o.note,
  });
}

export function noteEntry(n: NoteRecord): TimelineEntry {
  return entry('note', n.createdAt, n.id, n.author, `Note by ${n.author.label}: ${quoted(n.body)}`, {
    note_id: n.id,
    body: n.body,
    updated_at: iso(n.updatedAt),
  });
}

const by = (a: Actor): string => (a.type === 'playbook' ? `playbook ${a.label}` : a.label);

export function taskCreatedEntry(t: TaskRecord): TimelineEntry {
  const to = t.assignee === null ? 'unassigned' : `assigned to ${t.assignee}`;
  const due = t.dueAt === null ? '' : `, due ${dateText(t.dueAt)}`;
  return entry(
    'task_created',
    t.createdAt,
    t.id,
    t.createdBy,
    `Task ${quoted(t.title, 200)} opened by ${by(t.createdBy)}, ${to}${due}`,
    {
      task_id: t.id,
      title: t.title,
      assignee: t.assignee,
      due_at: t.dueAt === null ? null : iso(t.dueAt),
      playbook_id: t.playbookId,
    },
  );
}

/** A done task (its doneAt set). */
export function taskDoneEntry(t: TaskRecord): TimelineEntry {
  const who = t.doneBy ? ` by ${by(t.doneBy)}` : '';
  return entry('task_done', t.doneAt as number, t.id, t.doneBy, `Task ${quoted(t.title, 200)} done${who}`, {
    task_id: t.id,
    title: t.title,
    assignee: t.assignee,
  });
}

/** One change of a customer's book as customer_changes keeps it: each field's value before and after (ARR in cents). */
export interface ChangeRow {
  seq: number;
  at: number;
  owner: [string | null, string | null];
  arrCents: [number | null, number | null];
  renewalAt: [number | null, number | null];
  lifecycle: [string | null, string | null];
  parentId: [string | null, string | null];
}

const FIELD_WORDS = {
  owner: 'owner',
  arr: 'ARR',
  renewal_at: 'renewal date',
  lifecycle: 'lifecycle',
  parent_id: 'parent',
} as const;
type BookField = keyof typeof FIELD_WORDS;

const money = (v: number): string =>
  v.toLocaleString('en-US', { minimumFractionDigits: 0, maximumFractionDigits: 2 });

/** A customer change: the fields that changed, with their values before and after as the API shows them. */
export function customerChangeEntry(c: ChangeRow): TimelineEntry | null {
  const changes: Partial<Record<BookField, { from: unknown; to: unknown }>> = {};
  const parts: string[] = [];
  const add = <T>(field: BookField, [from, to]: [T | null, T | null], shown: (v: T) => string) => {
    if (from === to) return;
    const name = FIELD_WORDS[field];
    parts.push(
      from === null
        ? `${name} set to ${shown(to as T)}`
        : to === null
          ? `${name} ${shown(from)} cleared`
          : `${name} changed from ${shown(from)} to ${shown(to)}`,
    );
  };
  const api = <T, U>([from, to]: [T | null, T | null], f: (v: T) => U): { from: U | null; to: U | null } => ({
    from: from === null ? null : f(from),
    to: to === null ? null : f(to),
  });
  const same = <T>(v: T) => v;
  add('owner', c.owner, same);
  add('arr', c.arrCents, (v) => money(v / 100));
  add('renewal_at', c.renewalAt, dateText);
  add('lifecycle', c.lifecycle, same);
  add('parent_id', c.parentId, same);
  if (c.owner[0] !== c.owner[1]) changes.owner = api(c.owner, same);
  if (c.arrCents[0] !== c.arrCents[1]) changes.arr = api(c.arrCents, (v) => v / 100);
  if (c.renewalAt[0] !== c.renewalAt[1]) changes.renewal_at = api(c.renewalAt, iso);
  if (c.lifecycle[0] !== c.lifecycle[1]) changes.lifecycle = api(c.lifecycle, same);
  if (c.parentId[0] !== c.parentId[1]) changes.parent_id = api(c.parentId, same);
  if (parts.length === 0) return null;
  const sentence = parts.join('; ');
  return entry(
    'customer_updated',
    c.at,
    c.seq,
    null,
    `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}`,
    {
      changes,
    },
  );
}

const SOURCE_WORDS: Record<string, string> = { segment: 'Segment', stripe: 'Stripe', webhook: 'Webhook' };

/** A source message applied to the customer, as source_activity keeps it. */
export interface ActivityRow {
  id: string;
  at: number;
  sourceId: string;
  sourceName: string;
  sourceType: string;
  kind: string;
  /** What it changed, in words (`set owner to …`); empty when not known. */
  summary: string;
}

export function sourceEntry(a: ActivityRow): TimelineEntry {
  const what = a.summary === '' ? '' : `: ${a.summary}`;
  const type = SOURCE_WORDS[a.sourceType] ?? a.sourceType;
  return entry(
    'source_event',
    a.at,
    a.id,
    { type: 'source', id: a.sourceId, label: a.sourceName },
    `${type} source ${quoted(a.sourceName)} applied ${a.kind}${what}`,
    {
      source_id: a.sourceId,
      source_name: a.sourceName,
      source_type: a.sourceType,
      kind: a.kind,
      summary: a.summary,
    },
  );
}

/**
 * One source read newest first from a position on (exclusive: only entries after it), at most
 * `limit` of its rows: the entries they give (of the types asked for) and where the next read
 * starts, null when the source has no more.
 */
export type SourceRead = (
  after: Position | null,
  limit: number,
) => Promise<{ entries: TimelineEntry[]; next: Position | null }>;

/** The most rows one read of a source takes, however sparse the types asked for are in it. */
const MAX_READ = 1000;

/**
 * The first `limit` entries after `after` (null: from the newest) across the sources, and whether
 * more follow: a k-way merge of the sources' reads, each bounded (limit + 1 rows on its index)
 * and read again, more at a time, only while its entries are what the page takes next.
 */
export async function mergeTimeline(
  sources: readonly SourceRead[],
  after: Position | null,
  limit: number,
): Promise<{ data: TimelineEntry[]; hasMore: boolean }> {
  const streams = sources.map((read) => ({
    read,
    buffer: [] as TimelineEntry[],
    next: after as Position | null,
    size: limit + 1,
    done: false,
  }));
  type Stream = (typeof streams)[number];
  const fill = async (s: Stream): Promise<void> => {
    while (s.buffer.length === 0 && !s.done) {
      const { entries, next } = await s.read(s.next, s.size);
      s.buffer = entries;
      s.next = next;
      s.done = next === null;
      s.size = Math.min(s.size * 4, MAX_READ);
    }
  };
  await Promise.all(streams.map(fill));
  const out: TimelineEntry[] = [];
  while (out.length <= limit) {
    let best: Stream | null = null;
    for (const s of streams) {
      const head = s.buffer[0];
      if (
        head &&
        (!best || comparePositions(head.position, (best.buffer[0] as TimelineEntry).position) < 0)
      ) {
        best = s;
      }
    }
    if (!best) break;
    out.push(best.buffer.shift() as TimelineEntry);
    if (best.buffer.length === 0) await fill(best);
  }
  return { data: out.slice(0, limit), hasMore: out.length > limit };
}
