// Mail to people below HTTP (docs/operations.md, "Mail"). A write that assigns tasks puts their
// mails in the outbox in its own transaction (queueAssignmentMails), so a mail is never lost to a
// crash after the commit and never sent for a write that rolled back, and the write never waits
// for a mail server: the sender job sends them after the commit. The daily digest is claimed per
// (person, day) by a row of its own (queueDigest), in the transaction that puts it in the outbox,
// so whichever process claims it first sends it, once.
import { newId } from '../domain/ids.ts';
import { type DigestData, dayOf, digestIsEmpty, type TaskAssignedData } from '../domain/mail.ts';
import type { Actor, TaskRecord } from '../domain/tasks.ts';
import type { NewMail, Tx } from '../store/store.ts';
import { write } from '../store/write.ts';

/** A digest looks back this far for the customers that entered critical or dropped. */
const DIGEST_LOOKBACK_MS = 86_400_000;

/**
 * A mail for each task assigned to a person of the account by someone else (another person, a
 * key, a source) or by a playbook: `changedBy` when a change reassigned them, else who opened them. An assignee who is no person of the account gets none, and
 * neither does a person who assigned the task to themselves.
 */
export async function queueAssignmentMails(
  tx: Tx,
  accountId: string,
  tasks: readonly TaskRecord[],
  now: number,
  changedBy?: Actor,
): Promise<void> {
  // Who assigned each: whoever changed it, or else whoever (or whichever playbook) opened it.
  const byOf = (t: TaskRecord): Actor => changedBy ?? t.createdBy;
  const assigned = tasks.filter((t) => t.assignee !== null && t.status === 'open');
  if (assigned.length === 0) return;
  const emails = [...new Set(assigned.map((t) => (t.assignee as string).toLowerCase()))];
  const members = await tx.accountMembers(accountId, emails);
  const mailed = assigned.filter((t) => {
    const userId = members.get((t.assignee as string).toLowerCase());
    const by = byOf(t);
    return userId !== undefined && !(by.type === 'user' && by.id === userId);
  });
  if (mailed.length === 0) return;
  const names = await tx.customerNames(accountId, [...new Set(mailed.map((t) => t.customerId))]);
  const mails = mailed.map((t): NewMail => {
    const by = byOf(t);
    const data: TaskAssignedData = {
      task_id: t.id,
      title: t.title,
      body: t.body,
      due_at: t.dueAt,
      customer_id: t.customerId,
      customer_name: names.get(t.customerId) ?? t.customerId,
      by: by.label,
      by_type: by.type,
    };
    const recipient = (t.assignee as string).toLowerCase();
    return { id: newId.mail(), kind: 'task_assigned', recipient, data, createdAt: now };
  });
  await tx.insertMails(accountId, mails);
}

/**
 * The digest job's claim of one person's digest of `now`'s day: when nobody has claimed it and
 * the person still wants it, what it tells goes to the outbox (nothing when there is nothing to
 * tell). Answers whether this call claimed it.
 */
export const queueDigest = write(async function queueDigest(
  tx: Tx,
  accountId: string,
  userId: string,
  now: number,
): Promise<boolean> {
  const user = await tx.digestUser(accountId, userId);
  if (user === null || user.digest !== 'daily') return false;
  const day = dayOf(now);
  if (!(await tx.claimDigest(accountId, userId, day, now))) return false;
  const content = await tx.digestContent(accountId, user.email, now - DIGEST_LOOKBACK_MS, now);
  if (digestIsEmpty(content)) return true;
  const data: DigestData = { day, ...content };
  await tx.insertMails(accountId, [
    { id: newId.mail(), kind: 'digest', recipient: user.email, data, createdAt: now },
  ]);
  return true;
});
