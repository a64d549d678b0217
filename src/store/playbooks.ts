// Playbooks (docs/playbooks.md), written once for both backends: the account's playbooks, what a
// playbook reads of the customers it acts on, and whether a metric trigger held when last looked
// at (so a task opens when it starts to hold, not again while it goes on holding).
import type { PlaybookRecord, PlaybookTarget } from '../domain/playbooks.ts';
import type { Status } from '../domain/scoring.ts';
import { type Driver, hasNul, Params, parsed, type Row } from './driver.ts';
import { statusOf } from './rows.ts';

export interface PlaybookReads {
  listPlaybooks(accountId: string): Promise<PlaybookRecord[]>;
  /** The accounts with an enabled playbook that time alone may trigger (a renewal's, a metric's): the rescore job's. */
  playbookAccounts(): Promise<string[]>;
  getPlaybook(accountId: string, id: string): Promise<PlaybookRecord | null>;
}

export interface PlaybookWrites {
  /** False (nothing written) when the account has `limit` playbooks already: counted under the account's lock. */
  insertPlaybook(accountId: string, p: PlaybookRecord, limit: number): Promise<boolean>;
  /** `triggerChanged`: what its metric trigger remembered is forgotten, as of a new trigger. */
  updatePlaybook(accountId: string, p: PlaybookRecord, triggerChanged: boolean): Promise<void>;
  /** With what it remembers of its metric trigger; its tasks stay. False when there was none. */
  deletePlaybook(accountId: string, id: string): Promise<boolean>;
  /** The account's enabled playbooks: every write that may trigger one reads them. */
  enabledPlaybooks(accountId: string): Promise<PlaybookRecord[]>;
  /** The owner, lifecycle, renewal and status of each of these customers that exists. */
  playbookTargets(accountId: string, ids: readonly string[]): Promise<Map<string, PlaybookTarget>>;
  /**
   * Active customers renewing in [from, until] (of these statuses; any when null) with no task of
   * this playbook for that renewal date yet, at most `limit`, soonest renewal first.
   */
  renewalsWithoutTask(
    accountId: string,
    playbookId: string,
    window: { from: number; until: number; statuses: readonly Status[] | null },
    limit: number,
  ): Promise<{ customerId: string; target: PlaybookTarget }[]>;
  /** Active customers after `after` (by id), at most `limit`: a metric trigger's walk as time passes. */
  activeCustomersAfter(accountId: string, after: string | null, limit: number): Promise<string[]>;
  /** Of these customers, those for which the playbook's metric trigger held when last looked at. */
  heldBefore(accountId: string, playbookId: string, ids: readonly string[]): Promise<Set<string>>;
  /** Records that the trigger now holds (`holds`) or no longer does for these customers. */
  setHeld(accountId: string, playbookId: string, ids: readonly string[], holds: boolean): Promise<void>;
}

const COLUMNS = 'id, name, enabled, trigger_json, task, assignee, created_at, updated_at';
const TARGET_COLUMNS = 'c.id, c.owner, c.lifecycle, c.renewal_at, s.band';
const TARGET_FROM = `customers c LEFT JOIN health_scores s
  ON s.account_id = c.account_id AND s.customer_id = c.id`;

const toPlaybook = (r: Row, db: Driver): PlaybookRecord => ({
  id: r.id as string,
  name: db.fromText(r.name as string),
  enabled: r.enabled === true || r.enabled === 1,
  trigger: parsed(r.trigger_json),
  task: parsed(db.fromText(r.task as string)),
  assignee: r.assignee == null ? null : db.fromText(r.assignee as string),
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

const toTarget = (r: Row, db: Driver): PlaybookTarget => ({
  owner: r.owner == null ? null : db.fromText(r.owner as string),
  lifecycle: r.lifecycle as string,
  renewalAt: r.renewal_at == null ? null : Number(r.renewal_at),
  status: r.band == null ? null : statusOf(Number(r.band)),
});

export async function listPlaybooks(db: Driver, accountId: string): Promise<PlaybookRecord[]> {
  const rows = await db.all(`SELECT ${COLUMNS} FROM playbooks WHERE account_id = $1 ORDER BY id`, [
    accountId,
  ]);
  return rows.map((r) => toPlaybook(r, db));
}

export async function playbookAccounts(db: Driver): Promise<string[]> {
  const rows = await db.all<{ account_id: string }>(
    `SELECT DISTINCT account_id FROM playbooks WHERE enabled = ${db.bool(true)}
       AND trigger_type IN ('renewal_approaching', 'metric_threshold') ORDER BY account_id`,
    [],
  );
  return rows.map((r) => r.account_id);
}

export async function enabledPlaybooks(db: Driver, accountId: string): Promise<PlaybookRecord[]> {
  const rows = await db.all(
    `SELECT ${COLUMNS} FROM playbooks WHERE account_id = $1 AND enabled = ${db.bool(true)} ORDER BY id`,
    [accountId],
  );
  return rows.map((r) => toPlaybook(r, db));
}

export async function getPlaybook(db: Driver, accountId: string, id: string): Promise<PlaybookRecord | null> {
  if (hasNul(id)) return null;
  const row = await db.get(`SELECT ${COLUMNS} FROM playbooks WHERE account_id = $1 AND id = $2`, [
    accountId,
    id,
  ]);
  return row ? toPlaybook(row, db) : null;
}

const values = (db: Driver, p: PlaybookRecord) => [
  db.text(p.name),
  db.bool(p.enabled),
  p.trigger.type,
  JSON.stringify(p.trigger),
  db.text(JSON.stringify(p.task)),
  db.textOrNull(p.assignee),
  p.updatedAt,
];

export async function insertPlaybook(db: Driver, accountId: string, p: PlaybookRecord, limit: number) {
  // The account's row, locked where writers run side by side: a burst of creates counts one at a time.
  await db.get(`SELECT id FROM accounts WHERE id = $1${db.forUpdate}`, [accountId]);
  const n = await db.get<{ n: number | string }>(
    'SELECT count(*) AS n FROM playbooks WHERE account_id = $1',
    [accountId],
  );
  if (Number(n?.n ?? 0) >= limit) return false;
  await db.run(
    `INSERT INTO playbooks (account_id, id, name, enabled, trigger_type, trigger_json, task, assignee, updated_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [accountId, p.id, ...values(db, p), p.createdAt],
  );
  return true;
}

export async function updatePlaybook(
  db: Driver,
  accountId: string,
  p: PlaybookRecord,
  triggerChanged: boolean,
): Promise<void> {
  if (triggerChanged) {
    await db.run('DELETE FROM playbook_states WHERE account_id = $1 AND playbook_id = $2', [accountId, p.id]);
  }
  await db.run(
    `UPDATE playbooks SET name = $3, enabled = $4, trigger_type = $5, trigger_json = $6, task = $7, assignee = $8,
       updated_at = $9
     WHERE account_id = $1 AND id = $2`,
    [accountId, p.id, ...values(db, p)],
  );
}

export async function deletePlaybook(db: Driver, accountId: string, id: string): Promise<boolean> {
  if (hasNul(id)) return false;
  await db.run('DELETE FROM playbook_states WHERE account_id = $1 AND playbook_id = $2', [accountId, id]);
  return (await db.run('DELETE FROM playbooks WHERE account_id = $1 AND id = $2', [accountId, id])) === 1;
}

export async function playbookTargets(
  db: Driver,
  accountId: string,
  ids: readonly string[],
): Promise<Map<string, PlaybookTarget>> {
  const found = new Map<string, PlaybookTarget>();
  if (ids.length === 0) return found;
  const p = new Params(accountId);
  const rows = await db.all(
    `SELECT ${TARGET_COLUMNS} FROM ${TARGET_FROM} WHERE c.account_id = $1 AND c.id ${db.inList(p, ids)}`,
    p.list,
  );
  for (const r of rows) found.set(r.id as string, toTarget(r, db));
  return found;
}

export async function renewalsWithoutTask(
  db: Driver,
  accountId: string,
  playbookId: string,
  window: { from: number; until: number; statuses: readonly Status[] | null },
  limit: number,
) {
  const p = new Params(accountId, playbookId, window.from, window.until);
  // The trigger key is the renewal instant as text, as writes/playbooks.ts writes it.
  let where = `c.account_id = $1 AND c.lifecycle = 'active' AND c.renewal_at >= $3 AND c.renewal_at <= $4
    AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.account_id = c.account_id AND t.playbook_id = $2
      AND t.customer_id = c.id AND t.trigger_key = CAST(c.renewal_at AS text))`;
  if (window.statuses !== null) {
    const bands = ['critical', 'at_risk', 'healthy'];
    where += ` AND s.band IN (${window.statuses.map((s) => p.add(bands.indexOf(s))).join(', ')})`;
  }
  const rows = await db.all(
    `SELECT ${TARGET_COLUMNS} FROM ${TARGET_FROM} WHERE ${where} ORDER BY c.renewal_at, c.id LIMIT ${p.add(limit)}`,
    p.list,
  );
  return rows.map((r) => ({ customerId: r.id as string, target: toTarget(r, db) }));
}

export async function activeCustomersAfter(
  db: Driver,
  accountId: string,
  after: string | null,
  limit: number,
): Promise<string[]> {
  const p = new Params(accountId);
  const from = after === null ? '' : ` AND id > ${p.add(after)}`;
  const rows = await db.all<{ id: string }>(
    `SELECT id FROM customers WHERE account_id = $1 AND lifecycle = 'active'${from} ORDER BY id LIMIT ${p.add(limit)}`,
    p.list,
  );
  return rows.map((r) => r.id);
}

export async function heldBefore(
  db: Driver,
  accountId: string,
  playbookId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const p = new Params(accountId, playbookId);
  const rows = await db.all<{ customer_id: string }>(
    `SELECT customer_id FROM playbook_states WHERE account_id = $1 AND playbook_id = $2
       AND customer_id ${db.inList(p, ids)}`,
    p.list,
  );
  return new Set(rows.map((r) => r.customer_id));
}

export async function setHeld(
  db: Driver,
  accountId: string,
  playbookId: string,
  ids: readonly string[],
  holds: boolean,
): Promise<void> {
  if (ids.length === 0) return;
  const p = new Params(accountId, playbookId);
  const list = db.inList(p, ids);
  if (!holds) {
    await db.run(
      `DELETE FROM playbook_states WHERE account_id = $1 AND playbook_id = $2 AND customer_id ${list}`,
      p.list,
    );
    return;
  }
  await db.runEach(
    `INSERT INTO playbook_states (account_id, playbook_id, customer_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    ids.map((id) => [accountId, playbookId, id]),
    ['text', 'text', 'text'],
  );
}
