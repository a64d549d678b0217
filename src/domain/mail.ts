// Mail to people (docs/operations.md, "Mail"): what each mail says, when a failed one is tried
// again, and the day a digest belongs to. Pure: the outbox (src/store/mail.ts) keeps what a mail
// tells, and it is written out here when it is sent, with the links of that moment's
// VITALS_PUBLIC_URL.
import type { Status } from './scoring.ts';

/** What a task-assigned mail tells (kept in the outbox as JSON). */
export interface TaskAssignedData {
  task_id: string;
  title: string;
  body: string;
  due_at: number | null;
  customer_id: string;
  customer_name: string;
  /** Who assigned it: a person's email, a playbook's name, an API key's prefix. */
  by: string;
  by_type: 'user' | 'key' | 'source' | 'playbook';
}

/** What a digest tells (kept in the outbox as JSON): src/store/mail.ts's DigestContent, and its day. */
export interface DigestData {
  day: string;
  critical: { customerId: string; name: string; score: number; at: number }[];
  dropped: { customerId: string; name: string; score: number | null; at: number }[];
  renewals: { customerId: string; name: string; renewalAt: number; status: string | null }[];
  tasks: { id: string; customerId: string; customerName: string; title: string; dueAt: number }[];
}

export interface Message {
  subject: string;
  text: string;
  html: string;
}

/** Delays before retries 1, 2, 3…: a mail server away for an afternoon still gets the mail. */
export const MAIL_BACKOFF_MS = [60_000, 300_000, 900_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000];
/** A mail not sent within a day is given up: a task assigned yesterday is news no more. */
export const MAIL_MAX_AGE_MS = 86_400_000;

/** When attempt `attempt` (1 for the first) failed at `now`, when the next is due; null: give up. */
export function nextMailAttempt(attempt: number, createdAt: number, now: number): number | null {
  const delay = MAIL_BACKOFF_MS[attempt - 1];
  if (delay === undefined) return null;
  const at = now + delay;
  return at - createdAt > MAIL_MAX_AGE_MS ? null : at;
}

/** The UTC day of an instant, as YYYY-MM-DD: a digest's day. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Whether the digests of `now`'s day are due: from VITALS_DIGEST_HOUR (UTC) on, the rest of the day. */
export const digestsDueAt = (now: number, hour: number): boolean => new Date(now).getUTCHours() >= hour;

const STATUS_WORDS: Record<Status, string> = { healthy: 'healthy', at_risk: 'at risk', critical: 'critical' };
export const statusWords = (status: string | null): string =>
  status === null ? 'not scored' : (STATUS_WORDS[status as Status] ?? status);

/** A score as people read it: two decimals. */
export const scoreText = (score: number): string => score.toFixed(2);

const dateText = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const dateTimeText = (ms: number): string =>
  `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/** The dashboard's page of a customer (web/src/router.tsx), with a task to show when given. */
export function customerLink(base: string | undefined, customerId: string, taskId?: string): string | null {
  if (base === undefined) return null;
  const page = `${base}/customers/${encodeURIComponent(customerId)}`;
  return taskId === undefined ? page : `${page}?task=${encodeURIComponent(taskId)}`;
}

/** Subject lines stay on one line whatever a title holds. */
const oneLine = (s: string, max = 150): string => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export function taskAssignedMessage(d: TaskAssignedData, base: string | undefined): Message {
  const link = customerLink(base, d.customer_id, d.task_id);
  const by = d.by_type === 'playbook' ? `the playbook “${d.by}”` : d.by;
  const due = d.due_at === null ? null : `Due: ${dateTimeText(d.due_at)}`;
  const subject = oneLine(`Task for ${d.customer_name}: ${d.title}`);
  const text = [
    `${by} assigned you a task on ${d.customer_name} (${d.customer_id}).`,
    '',
    d.title,
    ...(d.body === '' ? [] : ['', d.body]),
    ...(due === null ? [] : ['', due]),
    ...(link === null ? [] : ['', `Open it: ${link}`]),
  ].join('\n');
  const html = [
    `<p>${escapeHtml(by)} assigned you a task on <b>${escapeHtml(d.customer_name)}</b> (${escapeHtml(d.customer_id)}).</p>`,
    `<p><b>${escapeHtml(d.title)}</b></p>`,
    d.body === '' ? '' : `<p style="white-space: pre-wrap">${escapeHtml(d.body)}</p>`,
    due === null ? '' : `<p>${escapeHtml(due)}</p>`,
    link === null ? '' : `<p><a href="${escapeHtml(link)}">Open the task</a></p>`,
  ].join('');
  return { subject, text, html };
}

/** Each part of a digest: its heading and one line per entry (text and HTML). */
function digestParts(d: DigestData, base: string | undefined) {
  const named = (name: string, id: string) => ({ text: name, html: linked(name, customerLink(base, id)) });
  const linked = (name: string, link: string | null) =>
    link === null ? escapeHtml(name) : `<a href="${escapeHtml(link)}">${escapeHtml(name)}</a>`;
  const line = (who: { text: string; html: string }, rest: string) => ({
    text: `${who.text} ${rest}`,
    html: `${who.html} ${escapeHtml(rest)}`,
  });
  return [
    {
      heading: 'Entered critical',
      lines: d.critical.map((c) => line(named(c.name, c.customerId), `(${scoreText(c.score)})`)),
    },
    {
      heading: 'Dropped',
      lines: d.dropped.map((c) =>
        line(named(c.name, c.customerId), c.score === null ? '' : `(now ${scoreText(c.score)})`),
      ),
    },
    {
      heading: 'Renewing within 30 days',
      lines: d.renewals.map((c) =>
        line(named(c.name, c.customerId), `on ${dateText(c.renewalAt)}, ${statusWords(c.status)}`),
      ),
    },
    {
      heading: 'Tasks due',
      lines: d.tasks.map((t) => ({
        text: `${t.title} — ${t.customerName}, due ${dateTimeText(t.dueAt)}`,
        html: `${linked(t.title, customerLink(base, t.customerId, t.id))} — ${escapeHtml(t.customerName)}, due ${escapeHtml(dateTimeText(t.dueAt))}`,
      })),
    },
  ].filter((p) => p.lines.length > 0);
}

/** Whether a digest has anything to tell: an empty one is not sent. */
export const digestIsEmpty = (d: Omit<DigestData, 'day'>): boolean =>
  d.critical.length + d.dropped.length + d.renewals.length + d.tasks.length === 0;

export function digestMessage(d: DigestData, base: string | undefined): Message {
  const parts = digestParts(d, base);
  const text = parts.flatMap((p) => [p.heading, ...p.lines.map((l) => `- ${l.text}`), '']);
  const html = parts.map(
    (p) => `<h3>${escapeHtml(p.heading)}</h3><ul>${p.lines.map((l) => `<li>${l.html}</li>`).join('')}</ul>`,
  );
  return {
    subject: `Your Vitals digest for ${d.day}`,
    text: [`Your customers and tasks on ${d.day}:`, '', ...text].join('\n'),
    html: `<p>Your customers and tasks on ${escapeHtml(d.day)}:</p>${html.join('')}`,
  };
}
