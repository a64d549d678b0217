// Sources (docs/api.md, "Sources"): the records, their logs, and what an intake remembers (the
// message ids applied, a Segment user's group), written once for both backends. The writes run in
// the writes of src/writes/sources.ts; what a source's messages change goes through the same writes
// as the API's.
import type {
  SourceConfig,
  SourceLogEntry,
  SourceResult,
  SourceStats,
  SourceType,
} from '../domain/sources.ts';
import { beforeNul, type Driver, hasNul, Params } from './driver.ts';
import type { MetricPointRecord } from './metrics.ts';
import type { Page } from './rows.ts';

export interface SourceRecord {
  id: string;
  type: SourceType;
  name: string;
  enabled: boolean;
  config: SourceConfig;
  /** The hash of the key (Segment) or URL token (a webhook without a signature) that finds it; null: none. */
  keyHash: string | null;
  /** What its signatures are checked with (Stripe's signing secret, a webhook's HMAC secret); null: none. */
  secret: string | null;
  stats: SourceStats;
  createdAt: number;
  updatedAt: number;
}

/** A log entry about one customer, with the source that received it. */
export interface SourceActivityEntry extends SourceLogEntry {
  sourceId: string;
  sourceName: string;
}

export interface SourceReads {
  getSource(accountId: string, id: string): Promise<SourceRecord | null>;
  /** The account's sources, oldest first. */
  listSources(accountId: string): Promise<SourceRecord[]>;
  /** The source's log, newest first, after (older than) `startingAfter`. */
  sourceLog(
    accountId: string,
    sourceId: string,
    opts: { startingAfter?: string | undefined; limit: number },
  ): Promise<Page<SourceLogEntry>>;
  /**
   * The customer's last `limit` entries in any source's log, newest first, each with its source's
   * name; `applied`: only the messages that changed it.
   */
  customerSourceActivity(
    accountId: string,
    customerId: string,
    opts: { limit: number; applied?: boolean },
  ): Promise<SourceActivityEntry[]>;
  /** The source a key or token hash names, with its account: how an ingest request finds its source. */
  sourceByKey(keyHash: string): Promise<{ accountId: string; source: SourceRecord } | null>;
  /**
   * The source with this id, with its account: an ingest URL names its source by id alone
   * (`/ingest/stripe/{id}`, `/ingest/webhook/{id}`), and the request's signature or token then proves the sender.
   */
  sourceById(id: string): Promise<{ accountId: string; source: SourceRecord } | null>;
}

export interface SourceWrites {
  /** The source, locked for this transaction where writers run side by side. */
  getSourceForUpdate(accountId: string, id: string): Promise<SourceRecord | null>;
  /** Inserts the source when the account has fewer than `limit` (checked and inserted as one step); false when full. */
  insertSource(accountId: string, source: SourceRecord, limit: number): Promise<boolean>;
  /** Writes its name, enabled, settings, key and secret (not its counters). */
  updateSource(accountId: string, source: SourceRecord): Promise<void>;
  /** Deletes it with its log and what its intake remembers; false when there was none. */
  deleteSource(accountId: string, id: string): Promise<boolean>;
  /**
   * Appends messages to the source's log (keeping its last SOURCE_LOG_KEEP) and counts them in its
   * stats, all received at `at`.
   */
  logSourceMessages(
    accountId: string,
    sourceId: string,
    entries: readonly SourceLogEntry[],
    keep: number,
  ): Promise<void>;
  /**
   * Claims these message ids for this transaction, as applied at `at`: the ones no request of the
   * source claimed since `since`. Where requests run side by side, a claim another transaction
   * holds waits for it, so no two apply one message; what is claimed and then not applied is
   * released (`releaseMessages`).
   */
  claimMessages(
    accountId: string,
    sourceId: string,
    ids: readonly string[],
    since: number,
    at: number,
  ): Promise<Set<string>>;
  /** Forgets these claimed message ids: they were not applied, so a retry may apply them. */
  releaseMessages(accountId: string, sourceId: string, ids: readonly string[]): Promise<void>;
  /** The groups these Segment users were linked to by this source (a user without one is absent). */
  sourceUserGroups(
    accountId: string,
    sourceId: string,
    userIds: readonly string[],
  ): Promise<Map<string, string>>;
  /** Links each user to its group (the last link of a user wins). */
  linkSourceUsers(
    accountId: string,
    sourceId: string,
    links: readonly { userId: string; groupId: string }[],
  ): Promise<void>;
  /**
   * Adds each count to the customer's stored point of that metric at that instant (a point of 0
   * when there is none): a day's count of a Segment event, however many requests carried it.
   */
  addMetricCounts(accountId: string, counts: readonly MetricPointRecord[]): Promise<void>;
}

const COLUMNS = `id, type, name, enabled, config, key_hash, secret, received, applied, ignored, refused,
  last_received_at, created_at, updated_at`;

type SourceRow = Record<string, unknown>;

const toSource = (r: SourceRow): SourceRecord => {
  const config = JSON.parse(r.config as string) as Record<string, unknown>;
  return {
    id: r.id as string,
    type: r.type as SourceType,
    name: r.name as string,
    enabled: r.enabled === true || r.enabled === 1,
    config: { type: r.type, ...config } as SourceConfig,
    keyHash: (r.key_hash as string | null) ?? null,
    secret: (r.secret as string | null) ?? null,
    stats: {
      received: Number(r.received),
      applied: Number(r.applied),
      ignored: Number(r.ignored),
      refused: Number(r.refused),
      lastReceivedAt: r.last_received_at === null ? null : Number(r.last_received_at),
    },
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
};

/** The settings as stored: without the type, which has a column of its own. */
const configText = (config: SourceConfig): string => {
  const { type: _type, ...rest } = config;
  return JSON.stringify(rest);
};

export async function getSource(
  db: Driver,
  accountId: string,
  id: string,
  lock = '',
): Promise<SourceRecord | null> {
  if (hasNul(id)) return null;
  const row = await db.get<SourceRow>(
    `SELECT ${COLUMNS} FROM sources WHERE account_id = $1 AND id = $2${lock}`,
    [accountId, id],
  );
  return row ? toSource(row) : null;
}

export async function listSources(db: Driver, accountId: string): Promise<SourceRecord[]> {
  const rows = await db.all<SourceRow>(
    `SELECT ${COLUMNS} FROM sources WHERE account_id = $1 ORDER BY created_at, id`,
    [accountId],
  );
  return rows.map(toSource);
}

export async function sourceByKey(db: Driver, keyHash: string) {
  const row = await db.get<SourceRow & { account_id: string }>(
    `SELECT account_id, ${COLUMNS} FROM sources WHERE key_hash = $1`,
    [keyHash],
  );
  return row ? { accountId: row.account_id, source: toSource(row) } : null;
}

export async function sourceById(db: Driver, id: string) {
  if (hasNul(id)) return null;
  // sources_by_id (migration 31): an id names one source across accounts.
  const row = await db.get<SourceRow & { account_id: string }>(
    `SELECT account_id, ${COLUMNS} FROM sources WHERE id = $1`,
    [id],
  );
  return row ? { accountId: row.account_id, source: toSource(row) } : null;
}

export async function sourceLog(
  db: Driver,
  accountId: string,
  sourceId: string,
  opts: { startingAfter?: string | undefined; limit: number },
): Promise<Page<SourceLogEntry>> {
  if (hasNul(sourceId)) return { data: [], hasMore: false };
  const p = new Params(accountId, sourceId);
  const after = opts.startingAfter === undefined ? '' : ` AND id < ${p.add(beforeNul(opts.startingAfter))}`;
  const rows = await db.all<Record<string, unknown>>(
    `SELECT id, received_at, kind, customer_id, result, reason FROM source_log
     WHERE account_id = $1 AND source_id = $2${after} ORDER BY id DESC LIMIT ${p.add(opts.limit + 1)}`,
    p.list,
  );
  const data = rows.slice(0, opts.limit).map(toLogEntry);
  return { data, hasMore: rows.length > opts.limit };
}

const toLogEntry = (r: Record<string, unknown>): SourceLogEntry => ({
  id: r.id as string,
  receivedAt: Number(r.received_at),
  kind: r.kind as string,
  customerId: (r.customer_id as string | null) ?? null,
  result: r.result as SourceResult,
  reason: (r.reason as string | null) ?? null,
});

export async function customerSourceActivity(
  db: Driver,
  accountId: string,
  customerId: string,
  opts: { limit: number; applied?: boolean },
): Promise<SourceActivityEntry[]> {
  if (hasNul(customerId)) return [];
  // No index on the customer: an account's logs hold at most MAX_SOURCES × SOURCE_LOG_KEEP
  // entries (20,000), which the primary key's account prefix reads in about 4 ms, while an index
  // would cost every message of the intake, the hot path, one more write (docs/sources.md,
  // "In the dashboard").
  const rows = await db.all<Record<string, unknown>>(
    `SELECT l.id, l.received_at, l.kind, l.customer_id, l.result, l.reason, l.source_id, s.name AS source_name
     FROM source_log l JOIN sources s ON s.account_id = l.account_id AND s.id = l.source_id
     WHERE l.account_id = $1 AND l.customer_id = $2${opts.applied ? " AND l.result = 'applied'" : ''}
     ORDER BY l.received_at DESC, l.id DESC LIMIT $3`,
    [accountId, customerId, opts.limit],
  );
  return rows.map((r) => ({
    ...toLogEntry(r),
    sourceId: r.source_id as string,
    sourceName: r.source_name as string,
  }));
}

export async function insertSource(
  db: Driver,
  accountId: string,
  s: SourceRecord,
  limit: number,
): Promise<boolean> {
  // The account's row, locked where writers run side by side: a burst of creates counts one at a time.
  await db.get(`SELECT id FROM accounts WHERE id = $1${db.forUpdate}`, [accountId]);
  const n = await db.get<{ n: number | string }>('SELECT count(*) AS n FROM sources WHERE account_id = $1', [
    accountId,
  ]);
  if (Number(n?.n ?? 0) >= limit) return false;
  await db.run(
    `INSERT INTO sources (account_id, id, type, name, enabled, config, key_hash, secret, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      accountId,
      s.id,
      s.type,
      db.text(s.name),
      db.bool(s.enabled),
      configText(s.config),
      s.keyHash,
      s.secret,
      s.createdAt,
      s.updatedAt,
    ],
  );
  return true;
}

export async function updateSource(db: Driver, accountId: string, s: SourceRecord): Promise<void> {
  await db.run(
    `UPDATE sources SET name = $3, enabled = $4, config = $5, key_hash = $6, secret = $7, updated_at = $8
     WHERE account_id = $1 AND id = $2`,
    [
      accountId,
      s.id,
      db.text(s.name),
      db.bool(s.enabled),
      configText(s.config),
      s.keyHash,
      s.secret,
      s.updatedAt,
    ],
  );
}

export async function deleteSource(db: Driver, accountId: string, id: string): Promise<boolean> {
  if (hasNul(id)) return false;
  for (const table of ['source_log', 'source_messages', 'source_users']) {
    await db.run(`DELETE FROM ${table} WHERE account_id = $1 AND source_id = $2`, [accountId, id]);
  }
  return (await db.run('DELETE FROM sources WHERE account_id = $1 AND id = $2', [accountId, id])) === 1;
}

export async function logSourceMessages(
  db: Driver,
  accountId: string,
  sourceId: string,
  entries: readonly SourceLogEntry[],
  keep: number,
): Promise<void> {
  if (entries.length === 0) return;
  const count = (result: SourceResult) => entries.filter((e) => e.result === result).length;
  const last = Math.max(...entries.map((e) => e.receivedAt));
  // Sent together, run in this order on the transaction's connection: the entries, then the
  // counters (the first statement to lock the source's row, so requests of one source running side
  // by side hold it only from here to their commit), then the trim.
  await Promise.all([
    db.runEach(
      `INSERT INTO source_log (account_id, source_id, id, received_at, kind, customer_id, result, reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      entries.map((e) => [
        accountId,
        sourceId,
        e.id,
        e.receivedAt,
        db.text(e.kind),
        e.customerId === null ? null : db.text(e.customerId),
        e.result,
        e.reason === null ? null : db.text(e.reason),
      ]),
      ['text', 'text', 'text', 'int8', 'text', 'text', 'text', 'text'],
    ),
    db.run(
      `UPDATE sources SET received = received + $3, applied = applied + $4, ignored = ignored + $5,
         refused = refused + $6, last_received_at = $7
       WHERE account_id = $1 AND id = $2`,
      [accountId, sourceId, entries.length, count('applied'), count('ignored'), count('refused'), last],
    ),
    // The oldest beyond `keep` leave: the log is the debugger's window, not an archive.
    db.run(
      `DELETE FROM source_log WHERE account_id = $1 AND source_id = $2 AND id < (
         SELECT id FROM source_log WHERE account_id = $1 AND source_id = $2 ORDER BY id DESC LIMIT 1 OFFSET $3)`,
      [accountId, sourceId, keep - 1],
    ),
  ]);
}

export async function claimMessages(
  db: Driver,
  accountId: string,
  sourceId: string,
  ids: readonly string[],
  since: number,
  at: number,
): Promise<Set<string>> {
  // An id PostgreSQL cannot store (a \u0000 in it) is never remembered, so always its own to apply.
  const unstorable = ids.filter(hasNul);
  const wanted = [...new Set(ids.filter((id) => !hasNul(id)))].sort();
  if (wanted.length === 0) return new Set(unstorable);
  const p = new Params(accountId, sourceId, at, since);
  // In one order, so two requests claiming the same ids wait for each other rather than deadlock;
  // a request claiming an id another has claimed waits for it to commit (then finds it claimed)
  // or roll back (then claims it). `WHERE true` tells SQLite's parser the ON is the upsert's.
  const rows = await db.all<{ message_id: string }>(
    `INSERT INTO source_messages (account_id, source_id, message_id, received_at)
     SELECT $1, $2, id, CAST($3 AS BIGINT) FROM ${db.ids(p, wanted)} WHERE true ORDER BY id
     ON CONFLICT (account_id, source_id, message_id) DO UPDATE SET received_at = excluded.received_at
       WHERE source_messages.received_at < $4
     RETURNING message_id`,
    p.list,
  );
  return new Set([...rows.map((r) => r.message_id), ...unstorable]);
}

export async function releaseMessages(
  db: Driver,
  accountId: string,
  sourceId: string,
  ids: readonly string[],
): Promise<void> {
  const stored = ids.filter((id) => !hasNul(id));
  if (stored.length === 0) return;
  const p = new Params(accountId, sourceId);
  await db.run(
    `DELETE FROM source_messages WHERE account_id = $1 AND source_id = $2 AND message_id ${db.inList(p, stored)}`,
    p.list,
  );
}

export async function sourceUserGroups(
  db: Driver,
  accountId: string,
  sourceId: string,
  userIds: readonly string[],
): Promise<Map<string, string>> {
  const wanted = [...new Set(userIds.filter((id) => !hasNul(id)))];
  if (wanted.length === 0) return new Map();
  const p = new Params(accountId, sourceId);
  const rows = await db.all<{ user_id: string; group_id: string }>(
    `SELECT user_id, group_id FROM source_users
     WHERE account_id = $1 AND source_id = $2 AND user_id ${db.inList(p, wanted)}`,
    p.list,
  );
  return new Map(rows.map((r) => [r.user_id, r.group_id]));
}

export async function linkSourceUsers(
  db: Driver,
  accountId: string,
  sourceId: string,
  links: readonly { userId: string; groupId: string }[],
): Promise<void> {
  // One row per user, the last link given: a statement may not change a row twice.
  const last = new Map<string, string>();
  for (const l of links) last.set(l.userId, l.groupId);
  await db.runEach(
    `INSERT INTO source_users (account_id, source_id, user_id, group_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT (account_id, source_id, user_id) DO UPDATE SET group_id = excluded.group_id`,
    [...last].map(([userId, groupId]) => [accountId, sourceId, db.text(userId), db.text(groupId)]),
    ['text', 'text', 'text', 'text'],
  );
}

export async function addMetricCounts(
  db: Driver,
  accountId: string,
  counts: readonly MetricPointRecord[],
): Promise<void> {
  // One row per (customer, metric, instant), the counts summed: a statement may not change a row twice.
  const summed = new Map<string, MetricPointRecord>();
  for (const c of counts) {
    const key = JSON.stringify([c.customerId, c.metric, c.at]);
    const before = summed.get(key);
    summed.set(key, before ? { ...before, value: before.value + c.value } : c);
  }
  // In key order: two requests adding to the same points lock them in one order, so they wait for
  // each other rather than deadlock.
  const rows = [...summed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, point]) => point);
  await db.runEach(
    `INSERT INTO metric_points (account_id, customer_id, metric, at, value) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (account_id, customer_id, metric, at) DO UPDATE SET value = metric_points.value + excluded.value`,
    rows.map((p) => [accountId, p.customerId, p.metric, p.at, p.value]),
    ['text', 'text', 'text', 'int8', 'float8'],
  );
}
