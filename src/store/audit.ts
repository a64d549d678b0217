// The audit log (docs/people.md, "Audit log"): who changed what, recorded with the change it
// describes (appendAudits, in the change's transaction) or on its own (appendAudit), written once.
import { type Driver, hasNul } from './driver.ts';
import { type Page, page } from './rows.ts';

/** One change in the audit log (docs/people.md, "Audit log"): ids and names, never a secret. */
export interface AuditEntry {
  id: string;
  actor: { type: 'key' | 'user' | 'source'; id: string; label: string };
  action: string;
  objectId: string | null;
  at: number;
  requestId: string;
}

export interface AuditLog {
  appendAudit(accountId: string, entry: AuditEntry): Promise<void>;
  /** Removes up to `limit` entries older than `before` (any account); answers how many. */
  pruneAudit(before: number, limit: number): Promise<number>;
  /** Newest first; `startingAfter` an entry id. */
  listAudit(
    accountId: string,
    opts: { startingAfter?: string | undefined; limit: number },
  ): Promise<Page<AuditEntry>>;
}

export interface AuditWrites {
  /** Audit entries recorded with the change they describe (the score writes, docs/people.md). */
  appendAudits(accountId: string, entries: readonly AuditEntry[]): Promise<void>;
}

const SQL = {
  appendAudit: `INSERT INTO audit_log (account_id, id, actor_type, actor_id, actor_label, action, object_id, at, request_id)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  /** Up to $2 entries older than $1, any account: retention's batch. */
  pruneAudit: `DELETE FROM audit_log WHERE (account_id, id) IN
    (SELECT account_id, id FROM audit_log WHERE at < $1 LIMIT $2)`,
  /** Newest first; $2 an exclusive upper bound on the id ('' for none), $3 the limit. */
  listAudit: `SELECT id, actor_type, actor_id, actor_label, action, object_id, at, request_id FROM audit_log
    WHERE account_id = $1 AND ($2 = '' OR id < $2) ORDER BY id DESC LIMIT $3`,
} as const;

interface AuditRow {
  id: string;
  actor_type: 'key' | 'user' | 'source';
  actor_id: string;
  actor_label: string;
  action: string;
  object_id: string | null;
  at: number;
  request_id: string;
}

const toAudit = (r: AuditRow): AuditEntry => ({
  id: r.id,
  actor: { type: r.actor_type, id: r.actor_id, label: r.actor_label },
  action: r.action,
  objectId: r.object_id ?? null,
  at: Number(r.at),
  requestId: r.request_id,
});

/** appendAudit's parameters, in order. */
const auditParams = (accountId: string, e: AuditEntry) =>
  [
    accountId,
    e.id,
    e.actor.type,
    e.actor.id,
    e.actor.label,
    e.action,
    e.objectId,
    e.at,
    e.requestId,
  ] as const;

export async function appendAudit(db: Driver, accountId: string, e: AuditEntry) {
  await db.run(SQL.appendAudit, [...auditParams(accountId, e)]);
}

export async function appendAudits(db: Driver, accountId: string, entries: readonly AuditEntry[]) {
  await db.runEach(
    SQL.appendAudit,
    entries.map((e) => [...auditParams(accountId, e)]),
    ['text', 'text', 'text', 'text', 'text', 'text', 'text', 'int8', 'text'],
  );
}

export const pruneAudit = (db: Driver, before: number, limit: number) =>
  db.run(SQL.pruneAudit, [before, limit]);

export async function listAudit(
  db: Driver,
  accountId: string,
  opts: { startingAfter?: string | undefined; limit: number },
): Promise<Page<AuditEntry>> {
  if (opts.startingAfter !== undefined && hasNul(opts.startingAfter)) return { data: [], hasMore: false };
  const rows = await db.all<AuditRow>(SQL.listAudit, [accountId, opts.startingAfter ?? '', opts.limit + 1]);
  return page(rows, opts.limit, toAudit);
}
