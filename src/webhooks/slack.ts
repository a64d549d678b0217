// Slack's shape for a webhook created with "format": "slack" (docs/webhooks.md, "Slack"): the
// body an incoming webhook of Slack takes, `text` (the notification's line) and `blocks` (the
// same line, the customer's name linked to its page when VITALS_PUBLIC_URL is set), one readable
// line per event, e.g. "Acme entered critical (0.41)". Pure: the dispatcher gives the customer's
// name, which events carry only as an id.
import type { EventType } from '../domain/events.ts';
import { customerLink, scoreText, statusWords } from '../domain/mail.ts';

/** What a line may name beside the event's data: the customer's name (null when it is gone). */
export interface SlackContext {
  customerName: string | null;
  publicUrl: string | undefined;
}

type Data = Record<string, unknown>;

/** The customer an event is about: `customer_id`, or a customer event's own `id`. */
export function customerIdOf(type: EventType, data: Data): string | null {
  const id = type.startsWith('customer.') ? (data.customer_id ?? data.id) : data.customer_id;
  return typeof id === 'string' ? id : null;
}

/** Slack's mrkdwn treats these three as control characters (https://api.slack.com/reference/surfaces/formatting). */
const mrkdwn = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const num = (v: unknown): string => (typeof v === 'number' ? scoreText(v) : '?');
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The line for one event, with `who` standing for the customer (plain or linked). */
function line(type: EventType, d: Data, who: string): string {
  switch (type) {
    case 'customer.created':
      return `${who} was added`;
    case 'customer.updated':
      return `${who} was updated`;
    case 'customer.deleted':
      return `${who} was deleted`;
    case 'customer.health_score.updated':
      return d.previous_score == null
        ? `${who} was scored ${num(d.health_score)} (${statusWords(str(d.status))})`
        : `${who}'s health score moved from ${num(d.previous_score)} to ${num(d.health_score)}`;
    case 'customer.status.changed':
      return `${who} entered ${statusWords(str(d.status))} (${num(d.health_score)})`;
    case 'customer.health_score.dropped':
      return `${who} dropped to ${num(d.health_score)} from a peak of ${num(d.peak_score)} in ${String(d.days)} days`;
    case 'task.created': {
      const to = d.assignee == null ? 'unassigned' : `for ${mrkdwn(str(d.assignee))}`;
      return `New task on ${who}: ${mrkdwn(str(d.title))} (${to})`;
    }
    case 'task.updated':
      return `Task on ${who} ${d.status === 'done' ? 'done' : 'updated'}: ${mrkdwn(str(d.title))}`;
    case 'webhook.test':
      return `Test event from Vitals for webhook ${mrkdwn(str(d.webhook_id))}`;
  }
}

/** The body of a Slack-format delivery, as JSON text. */
export function slackBody(type: EventType, data: Data, ctx: SlackContext): string {
  const id = customerIdOf(type, data);
  const name = mrkdwn(ctx.customerName ?? id ?? '');
  const link = id === null ? null : customerLink(ctx.publicUrl, id);
  const text = line(type, data, name);
  const linked = link === null ? text : line(type, data, `<${link}|${name}>`);
  return JSON.stringify({
    text,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: linked } }],
  });
}
