// Acting on it, end to end (docs/playbooks.md): four playbooks, one per kind of cause, in an account
// of three people. A status change, a drop, an approaching renewal and a Stripe payment failure each
// open the right task for the right person (the customer's owner, or the playbook's email), who gets a
// mail through a real SMTP server (smtp-server, read back with mailparser) and finds it in their own
// inbox (`assignee=me`, signed in), and nobody else's. Both backends (VITALS_TEST_BACKEND).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Stripe from 'stripe';
import type { UserRole } from '../../src/domain/people.ts';
import { DAY_MS } from '../../src/domain/rules.ts';
import { createUser } from '../../src/keys.ts';
import { MailSender } from '../../src/mail/sender-job.ts';
import { buildTestApp, type Response, type TestApp, TestClock } from '../helpers/app.ts';
import { MailCatcher } from '../helpers/smtp.ts';

const PASSWORD = 'a long enough password';
const PUBLIC_URL = 'https://vitals.example.com';
const STRIPE_SECRET = 'whsec_actingonit0123456789abcdefghijklmn';
const clock = new TestClock('2026-06-01T12:00:00.000Z');
const smtp = new MailCatcher();
let t: TestApp;
let sender: MailSender;

type Request = (method: string, url: string, body?: unknown) => Promise<Response>;

const ok = async (r: Promise<Response>, status = 200) => {
  const got = await r;
  assert.equal(got.status, status, got.raw);
  return got.body;
};

/** A person of the default account, signed in through their one-time link. */
async function person(email: string, role: UserRole = 'editor'): Promise<Request> {
  const made = await createUser(t.store, { email, accountName: 'default', role });
  assert.ok(made);
  const set = await t.inject({
    method: 'POST',
    url: '/auth/password',
    payload: { token: made.token, password: PASSWORD },
  });
  assert.equal(set.status, 200, set.raw);
  const cookie = /vitals_session=[^;]+/.exec(String(set.headers['set-cookie']))?.[0] as string;
  const csrf = set.body.csrf_token as string;
  return (method, url, body) =>
    t.inject({
      method: method as 'GET',
      url,
      headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
}

interface Task {
  id: string;
  customer_id: string;
  title: string;
  assignee: string | null;
  playbook_id: string | null;
  due_at: string | null;
  created_by: { type: string; label: string };
}

/** A person's inbox as the dashboard asks for it. */
const inbox = async (as: Request): Promise<Task[]> =>
  (await ok(as('GET', '/api/tasks?assignee=me'))).data as Task[];

const iso = (ms: number) => new Date(ms).toISOString();
const score = (id: string, usage: number) =>
  ok(t.api.post(`/api/customers/${id}/health-score`, { factors: { usage } }));

let sam: Request;
let ann: Request;
let lead: Request;
const playbooks: Record<string, string> = {};

before(async () => {
  await smtp.start();
  t = await buildTestApp({ now: clock.now });
  sender = new MailSender({
    store: t.store,
    mail: { smtpUrl: smtp.url, from: 'Vitals <vitals@example.com>', publicUrl: PUBLIC_URL, digestHour: 8 },
    log: t.app.log,
    now: clock.now,
  });
  sam = await person('sam@example.com');
  ann = await person('ann@example.com');
  lead = await person('lead@example.com', 'admin');
  await ok(t.api.patch('/api/settings/health-score/alerts', { drop: { delta: 0.2, days: 7 } }));
  // Each starts where its one cause, later, moves it by less than the drop alert's 0.2 (but globex's).
  const book = [
    { customer_id: 'acme', owner: 'sam@example.com', start: 0.45 },
    { customer_id: 'globex', owner: 'ann@example.com', start: 0.9 },
    {
      customer_id: 'initech',
      owner: 'ann@example.com',
      renewal_at: iso(clock.ms + 60 * DAY_MS),
      start: 0.75,
    },
    {
      customer_id: 'umbrella',
      owner: 'sam@example.com',
      metadata: { stripe_customer_id: 'cus_umbrella' },
      start: 0.9,
    },
  ];
  for (const { start, ...c } of book) {
    await ok(
      t.api.post('/api/customers', { name: c.customer_id, email: `ops@${c.customer_id}.test`, ...c }),
      201,
    );
    await score(c.customer_id, start);
  }
  const made = [
    {
      name: 'Critical → call',
      trigger: { type: 'status_entered', status: 'critical' },
      title: 'Call them',
      due: 2,
    },
    {
      name: 'Dropped → ask why',
      trigger: { type: 'score_dropped' },
      title: 'Ask what changed',
      assignee: 'lead@example.com',
    },
    {
      name: 'Renewal at risk → plan',
      trigger: { type: 'renewal_approaching', days: 90, statuses: ['at_risk', 'critical'] },
      title: 'Plan the renewal',
      due: 7,
    },
    {
      name: 'Payment failed → billing',
      trigger: {
        type: 'metric_threshold',
        metric: 'stripe_payment_failed',
        aggregate: 'count',
        window_days: 7,
        op: 'gte',
        value: 1,
      },
      title: 'Check the failed payment',
      due: 1,
    },
  ];
  for (const p of made) {
    const body = await ok(
      lead('POST', '/api/playbooks', {
        name: p.name,
        trigger: p.trigger,
        task: { title: p.title, ...(p.due === undefined ? {} : { due_in_days: p.due }) },
        ...(p.assignee === undefined ? {} : { assignee: p.assignee }),
      }),
      201,
    );
    playbooks[p.title] = body.id;
  }
  assert.deepEqual(await sender.runOnce(), { sent: 0, retrying: 0, failed: 0 }, 'nothing opened yet');
});
after(async () => {
  await sender.stop();
  await t.close();
  await smtp.stop();
});

/** The one task the cause opened, its mail to `to`, and the inboxes after it. */
async function opened(title: string, customer: string, to: string): Promise<Task> {
  const tasks = (
    (await ok(t.api.get(`/api/tasks?customer_id=${customer}&assignee=${encodeURIComponent(to)}`)))
      .data as Task[]
  ).filter((x) => x.title === title);
  assert.equal(tasks.length, 1, `${title} for ${customer}`);
  const task = tasks[0] as Task;
  assert.equal(task.playbook_id, playbooks[title]);
  assert.equal(task.created_by.type, 'playbook');
  const before = smtp.messages.length;
  assert.deepEqual(await sender.runOnce(), { sent: 1, retrying: 0, failed: 0 }, `one mail for ${title}`);
  const [mail, ...more] = smtp.messages.slice(before);
  assert.deepEqual(more, []);
  assert.equal(mail?.to && !Array.isArray(mail.to) ? mail.to.text : undefined, to);
  assert.equal(mail?.subject, `Task for ${customer}: ${title}`);
  assert.ok(mail?.text?.includes(`Open it: ${PUBLIC_URL}/customers/${customer}?task=${task.id}`), mail?.text);
  return task;
}

test('a status change opens a call for the owner, who is mailed and finds it in their inbox', async () => {
  await score('acme', 0.35);
  const task = await opened('Call them', 'acme', 'sam@example.com');
  assert.equal(task.due_at, iso(clock.ms + 2 * DAY_MS));
  assert.deepEqual(
    (await inbox(sam)).map((x) => x.id),
    [task.id],
  );
  assert.deepEqual(await inbox(ann), [], "not in another person's inbox");
});

test("a drop opens a task for the playbook's person, not the owner", async () => {
  await score('globex', 0.6);
  const task = await opened('Ask what changed', 'globex', 'lead@example.com');
  assert.equal(task.assignee, 'lead@example.com');
  assert.deepEqual(
    (await inbox(lead)).map((x) => x.title),
    ['Ask what changed'],
  );
  assert.deepEqual(await inbox(ann), [], 'the owner of globex was not given it');
});

test('a renewal within reach while at risk opens the plan for its owner', async () => {
  await score('initech', 0.6);
  const task = await opened('Plan the renewal', 'initech', 'ann@example.com');
  assert.equal(task.due_at, iso(clock.ms + 7 * DAY_MS));
  assert.deepEqual(
    (await inbox(ann)).map((x) => x.customer_id),
    ['initech'],
  );
});

test('a payment failure from Stripe opens the billing check for the owner', async () => {
  const source = await ok(
    lead('POST', '/api/sources', { type: 'stripe', name: 'Stripe', signing_secret: STRIPE_SECRET }),
    201,
  );
  const created = Math.floor(clock.ms / 1000) - 60;
  const payload = JSON.stringify({
    id: 'evt_failed_1',
    object: 'event',
    api_version: '2025-03-31.basil',
    created,
    type: 'invoice.payment_failed',
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: {
      object: {
        id: 'in_1',
        object: 'invoice',
        customer: 'cus_umbrella',
        amount_due: 4900,
        currency: 'usd',
        created,
      },
    },
  });
  const delivered = await t.inject({
    method: 'POST',
    url: `/ingest/stripe/${source.id}`,
    headers: {
      'content-type': 'application/json',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({
        payload,
        secret: STRIPE_SECRET,
        timestamp: Math.floor(clock.ms / 1000),
      }),
    },
    payload,
  });
  assert.equal(delivered.status, 200, delivered.raw);
  const task = await opened('Check the failed payment', 'umbrella', 'sam@example.com');
  assert.equal(task.due_at, iso(clock.ms + DAY_MS));
  assert.deepEqual((await inbox(sam)).map((x) => x.customer_id).sort(), ['acme', 'umbrella']);
});

test('each cause opened exactly its one task, and a second round of the same causes opens nothing', async () => {
  await score('acme', 0.3);
  await score('globex', 0.55);
  await score('initech', 0.58);
  const all = (await ok(t.api.get('/api/tasks?status=all&limit=100'))).data as Task[];
  assert.deepEqual(all.map((x) => `${x.customer_id}: ${x.title} → ${x.assignee}`).sort(), [
    'acme: Call them → sam@example.com',
    'globex: Ask what changed → lead@example.com',
    'initech: Plan the renewal → ann@example.com',
    'umbrella: Check the failed payment → sam@example.com',
  ]);
  assert.deepEqual(await sender.runOnce(), { sent: 0, retrying: 0, failed: 0 });
});
