// Mail to people (docs/operations.md, "Mail") on both backends, against a real SMTP server started
// here (smtp-server), every message parsed (mailparser) and read as a person would: a task assigned
// by another person, an API key or a playbook mails its assignee (the customer, the task, a link
// from VITALS_PUBLIC_URL); one assigned to oneself, or to someone who is no person of the account,
// mails nobody; a refusing or absent mail server never holds up the write, and the mail is retried
// until it is delivered, or given up after its last retry; the daily digest is claimed once per
// person and day by two processes racing for it; PATCH /api/me refuses bad input.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../../src/config.ts';
import { MAIL_BACKOFF_MS } from '../../src/domain/mail.ts';
import type { UserRole } from '../../src/domain/people.ts';
import { createUser } from '../../src/keys.ts';
import { DigestJob } from '../../src/mail/digest-job.ts';
import { MailSender } from '../../src/mail/sender-job.ts';
import type { Store } from '../../src/store/store.ts';
import { buildTestApp, type Response, type TestApp, TestClock } from '../helpers/app.ts';
import { MailCatcher } from '../helpers/smtp.ts';

const PASSWORD = 'a long enough password';
const PUBLIC_URL = 'https://vitals.example.com';
const clock = new TestClock('2026-11-01T06:00:00.000Z');
const smtp = new MailCatcher();
let t: TestApp;
let mail: Config['mail'];
const senders: MailSender[] = [];

/** A sender job as a process runs it (main.ts), on the app's store or another process's. */
function sender(store: Store = t.store): MailSender {
  const job = new MailSender({ store, mail, log: t.app.log, now: clock.now });
  senders.push(job);
  return job;
}

type Request = (method: string, url: string, body?: unknown) => Promise<Response>;

/** A session's requests, from the answer that signed the person in. */
function sessionOf(signed: Response): Request {
  assert.equal(signed.status, 200, signed.raw);
  const cookie = /vitals_session=[^;]+/.exec(String(signed.headers['set-cookie']))?.[0] as string;
  const csrf = signed.body.csrf_token as string;
  return (method, url, body) =>
    t.inject({
      method: method as 'GET',
      url,
      headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
}

/** A person of the default account, signed in through their one-time link. */
async function person(email: string, role: UserRole = 'editor'): Promise<{ request: Request; id: string }> {
  const made = await createUser(t.store, { email, accountName: 'default', role });
  assert.ok(made);
  const set = await t.inject({
    method: 'POST',
    url: '/auth/password',
    payload: { token: made.token, password: PASSWORD },
  });
  return { request: sessionOf(set), id: made.id };
}

/** Signs the person in again (a session ends after 12 hours without a request, on the app's clock). */
async function signIn(email: string): Promise<Request> {
  return sessionOf(
    await t.inject({ method: 'POST', url: '/auth/login', payload: { email, password: PASSWORD } }),
  );
}

const ok = async (r: Promise<Response>, status = 200) => {
  const got = await r;
  assert.equal(got.status, status, got.raw);
  return got.body;
};

let sam: Awaited<ReturnType<typeof person>>;
let ann: Awaited<ReturnType<typeof person>>;

before(async () => {
  await smtp.start();
  mail = { smtpUrl: smtp.url, from: 'Vitals <vitals@example.com>', publicUrl: PUBLIC_URL, digestHour: 8 };
  t = await buildTestApp({ now: clock.now });
  sam = await person('sam@example.com');
  ann = await person('ann@example.com');
  await ok(
    t.api.post('/api/customers', {
      customer_id: 'acme',
      name: 'Acme Corp',
      email: 'ops@acme.test',
      owner: 'sam@example.com',
    }),
    201,
  );
});
after(async () => {
  for (const job of senders) await job.stop();
  await t.close();
  await smtp.stop();
});

describe('mail when a task is assigned', () => {
  test('a task assigned by someone else mails the assignee: the customer, the task and a link to it', async () => {
    smtp.clear();
    const task = await ok(
      ann.request('POST', '/api/customers/acme/tasks', {
        title: 'Call about the renewal',
        body: 'They asked for a discount.',
        assignee: 'Sam@Example.com',
        due_at: '2026-11-03T09:00:00Z',
      }),
      201,
    );
    assert.deepEqual(await sender().runOnce(), { sent: 1, retrying: 0, failed: 0 });
    const [m, ...more] = smtp.messages;
    assert.deepEqual(more, []);
    assert.ok(m);
    assert.deepEqual(
      [m.to && !Array.isArray(m.to) ? m.to.text : m.to, m.from?.text, m.subject],
      ['sam@example.com', '"Vitals" <vitals@example.com>', 'Task for Acme Corp: Call about the renewal'],
    );
    const link = `${PUBLIC_URL}/customers/acme?task=${task.id}`;
    assert.equal(
      m.text?.trim(),
      [
        'ann@example.com assigned you a task on Acme Corp (acme).',
        '',
        'Call about the renewal',
        '',
        'They asked for a discount.',
        '',
        'Due: 2026-11-03 09:00 UTC',
        '',
        `Open it: ${link}`,
      ].join('\n'),
    );
    assert.ok(String(m.html).includes(`<a href="${link}">Open the task</a>`), String(m.html));
    assert.match(String(m.headers.get('x-vitals-mail-id')), /^mail_/);

    // An API key assigning is someone else too.
    smtp.clear();
    await ok(
      t.api.post('/api/customers/acme/tasks', { title: 'Send the deck', assignee: 'sam@example.com' }),
      201,
    );
    assert.deepEqual(await sender().runOnce(), { sent: 1, retrying: 0, failed: 0 });
    assert.match(smtp.to('sam@example.com')[0]?.text ?? '', /^vk_\w+… assigned you a task on Acme Corp/);
  });

  test("a playbook's task mails the customer's owner", async () => {
    smtp.clear();
    const pb = await ok(
      t.api.post('/api/playbooks', {
        name: 'Call critical',
        trigger: { type: 'status_entered', status: 'critical' },
        task: { title: 'Call them', due_in_days: 2 },
      }),
      201,
    );
    await ok(t.api.post('/api/customers/acme/health-score', { factors: { usage: 0.9 } }));
    await ok(t.api.post('/api/customers/acme/health-score', { factors: { usage: 0.1 } }));
    assert.deepEqual(await sender().runOnce(), { sent: 1, retrying: 0, failed: 0 });
    const [m] = smtp.to('sam@example.com');
    assert.equal(m?.subject, 'Task for Acme Corp: Call them');
    assert.match(m?.text ?? '', /^the playbook “Call critical” assigned you a task on Acme Corp \(acme\)\./);
    assert.match(m?.text ?? '', new RegExp(`Open it: ${PUBLIC_URL}/customers/acme\\?task=task_\\w+`));
    await ok(t.api.patch(`/api/playbooks/${pb.id}`, { enabled: false }));
  });

  test('a task one assigns to oneself mails nobody; reassigned by someone else, it mails the new assignee', async () => {
    smtp.clear();
    const own = await ok(
      sam.request('POST', '/api/customers/acme/tasks', {
        title: 'Note to self',
        assignee: 'sam@example.com',
      }),
      201,
    );
    assert.deepEqual(await sender().runOnce(), { sent: 0, retrying: 0, failed: 0 });
    // Sam hands it to Ann: Ann is mailed, by Sam.
    await ok(sam.request('PATCH', `/api/tasks/${own.id}`, { assignee: 'ann@example.com' }));
    assert.deepEqual(await sender().runOnce(), { sent: 1, retrying: 0, failed: 0 });
    assert.match(smtp.to('ann@example.com')[0]?.text ?? '', /^sam@example\.com assigned you a task/);
    // Ann's own changes, a retitle, and her taking back what is hers, mail nobody.
    smtp.clear();
    await ok(ann.request('PATCH', `/api/tasks/${own.id}`, { title: 'Note to Ann' }));
    await ok(ann.request('PATCH', `/api/tasks/${own.id}`, { assignee: 'sam@example.com' }));
    await ok(ann.request('PATCH', `/api/tasks/${own.id}`, { assignee: 'ann@example.com' }));
    assert.deepEqual(await sender().runOnce(), { sent: 1, retrying: 0, failed: 0 });
    assert.deepEqual(
      smtp.messages.map((m) => [m.to && !Array.isArray(m.to) ? m.to.text : '', m.subject]),
      [['sam@example.com', 'Task for Acme Corp: Note to Ann']],
      'only Sam, whom Ann handed it to',
    );
  });

  test('an assignee who is no person of the account gets no mail', async () => {
    smtp.clear();
    const other = await t.newAccount('other');
    assert.ok(await createUser(t.store, { email: 'zed@example.com', accountName: 'other', role: 'editor' }));
    await ok(
      other.post('/api/customers', { customer_id: 'acme', name: 'Other Acme', email: 'o@acme.test' }),
      201,
    );
    const connections = smtp.connections;
    await ok(
      t.api.post('/api/customers/acme/tasks', { title: 'Outsider', assignee: 'stranger@example.com' }),
      201,
    );
    await ok(
      t.api.post('/api/customers/acme/tasks', { title: 'Elsewhere', assignee: 'zed@example.com' }),
      201,
    );
    assert.deepEqual(await sender().runOnce(), { sent: 0, retrying: 0, failed: 0 });
    assert.equal(smtp.connections, connections, 'nothing to send: the mail server is not even called');
    assert.deepEqual(smtp.messages, []);
  });
});

describe('mail when the mail server fails', () => {
  test('the write is answered at once, and the mail is retried until the server takes it', async () => {
    smtp.clear();
    smtp.refusing = true;
    const connections = smtp.connections;
    const task = await ok(
      ann.request('POST', '/api/customers/acme/tasks', { title: 'Retry me', assignee: 'sam@example.com' }),
      201,
    );
    assert.equal(smtp.connections, connections, 'the write never talked to the mail server');
    const job = sender();
    assert.deepEqual(await job.runOnce(), { sent: 0, retrying: 1, failed: 0 }, 'refused: 451');
    assert.deepEqual(await job.runOnce(), { sent: 0, retrying: 0, failed: 0 }, 'not due again yet');
    await smtp.stop();
    clock.advance(MAIL_BACKOFF_MS[0] as number);
    assert.deepEqual(await job.runOnce(), { sent: 0, retrying: 1, failed: 0 }, 'down: connection refused');
    smtp.refusing = false;
    await smtp.start();
    clock.advance(MAIL_BACKOFF_MS[1] as number);
    // Another process's sender takes it as well as this one would.
    assert.deepEqual(await sender(t.openStore()).runOnce(), { sent: 1, retrying: 0, failed: 0 });
    assert.deepEqual(
      smtp.messages.map((m) => m.subject),
      ['Task for Acme Corp: Retry me'],
    );
    assert.match(smtp.messages[0]?.text ?? '', new RegExp(`task=${task.id}`));
    assert.deepEqual(await job.runOnce(), { sent: 0, retrying: 0, failed: 0 }, 'sent once');
  });

  test('a mail the server keeps refusing is given up after its last retry', async () => {
    smtp.clear();
    smtp.refusing = true;
    await ok(
      ann.request('POST', '/api/customers/acme/tasks', { title: 'Doomed', assignee: 'sam@example.com' }),
      201,
    );
    const job = sender();
    const seen = [];
    for (const delay of [...MAIL_BACKOFF_MS, 0]) {
      seen.push(await job.runOnce());
      clock.advance(delay);
    }
    const retrying = { sent: 0, retrying: 1, failed: 0 };
    assert.deepEqual(seen, [...MAIL_BACKOFF_MS.map(() => retrying), { sent: 0, retrying: 0, failed: 1 }]);
    smtp.refusing = false;
    clock.advance(86_400_000);
    assert.deepEqual(await job.runOnce(), { sent: 0, retrying: 0, failed: 0 });
    assert.deepEqual(smtp.messages, []);
  });
});

describe('the daily digest', () => {
  test('goes once a day after the hour to those who chose it, however many processes race for it', async () => {
    smtp.clear();
    clock.set('2026-11-03T06:00:00.000Z');
    const samNow = await signIn('sam@example.com');
    const annNow = await signIn('ann@example.com');
    const me = await ok(samNow('PATCH', '/api/me', { digest: 'daily' }));
    assert.deepEqual([me.email, me.digest], ['sam@example.com', 'daily']);
    assert.equal((await ok(samNow('GET', '/api/me'))).digest, 'daily');
    assert.equal((await ok(annNow('GET', '/api/me'))).digest, 'off', 'off unless chosen');

    // Sam's book: one customer that falls into critical, one that drops, a renewal and a task due.
    await ok(t.api.patch('/api/settings/health-score/alerts', { drop: { delta: 0.2, days: 7 } }));
    for (const [id, name] of [
      ['initech', 'Initech'],
      ['globex', 'Globex'],
    ] as const) {
      await ok(
        t.api.post('/api/customers', {
          customer_id: id,
          name,
          email: `ops@${id}.test`,
          owner: 'SAM@example.com',
          ...(id === 'globex' ? { renewal_at: '2026-11-20T00:00:00Z' } : {}),
        }),
        201,
      );
      await ok(t.api.post(`/api/customers/${id}/health-score`, { factors: { usage: 0.9 } }));
    }
    clock.set('2026-11-03T07:00:00.000Z');
    await ok(t.api.post('/api/customers/initech/health-score', { factors: { usage: 0.2 } }));
    await ok(t.api.post('/api/customers/globex/health-score', { factors: { usage: 0.6 } }));
    await ok(
      annNow('POST', '/api/customers/globex/tasks', {
        title: 'Plan the renewal',
        assignee: 'sam@example.com',
        due_at: '2026-11-03T18:00:00Z',
      }),
      201,
    );
    await sender().runOnce();
    smtp.clear();

    const digests = (store: Store) => new DigestJob({ store, hour: 8, log: t.app.log, now: clock.now });
    const here = digests(t.store);
    const there = digests(t.openStore());
    clock.set('2026-11-03T07:59:59.000Z');
    assert.deepEqual(await Promise.all([here.runOnce(), there.runOnce()]), [0, 0], 'not before the hour');

    clock.set('2026-11-03T08:30:00.000Z');
    const claimed = await Promise.all([here.runOnce(), there.runOnce()]);
    assert.equal(claimed[0] + claimed[1], 1, `one of the two claims it: ${claimed}`);
    const sent = await Promise.all([sender().runOnce(), sender(t.openStore()).runOnce()]);
    assert.equal(sent[0].sent + sent[1].sent, 1);
    assert.deepEqual(
      smtp.messages.map((m) => [m.to && !Array.isArray(m.to) ? m.to.text : '', m.subject]),
      [['sam@example.com', 'Your Vitals digest for 2026-11-03']],
    );
    const text = smtp.messages[0]?.text ?? '';
    for (const line of [
      'Entered critical',
      '- Initech (0.20)',
      'Dropped',
      '- Globex (now 0.60)',
      'Renewing within 30 days',
      '- Globex on 2026-11-20, at risk',
      'Tasks due',
      '- Plan the renewal — Globex, due 2026-11-03 18:00 UTC',
    ]) {
      assert.ok(text.includes(line), `${line} in:\n${text}`);
    }
    assert.ok(
      String(smtp.messages[0]?.html).includes(`<a href="${PUBLIC_URL}/customers/initech">Initech</a>`),
    );

    clock.set('2026-11-03T20:00:00.000Z');
    assert.deepEqual(await Promise.all([here.runOnce(), there.runOnce()]), [0, 0], 'once a day');
    clock.set('2026-11-04T08:00:00.000Z');
    const next = await Promise.all([here.runOnce(), there.runOnce()]);
    assert.equal(next[0] + next[1], 1, 'the next day, again');
    await ok((await signIn('sam@example.com'))('PATCH', '/api/me', { digest: 'off' }));
    clock.set('2026-11-05T08:00:00.000Z');
    assert.deepEqual(await Promise.all([here.runOnce(), there.runOnce()]), [0, 0], 'off: none');
  });

  test('PATCH /api/me: bad input is 400 naming the field, a key is refused, and nothing changes', async () => {
    const bea = await person('bea@example.com', 'viewer');
    for (const [body, code, param] of [
      [{ digest: 'weekly' }, 'parameter_invalid', 'digest'],
      [{ digest: null }, 'parameter_invalid', 'digest'],
      [{ digest: true }, 'parameter_invalid', 'digest'],
      [{}, 'parameter_missing', 'digest'],
      [{ digest: 'daily', email: 'x@example.com' }, 'parameter_unknown', 'email'],
    ] as const) {
      const res = await bea.request('PATCH', '/api/me', body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.raw}`);
      assert.deepEqual([res.body.error.code, res.body.error.param], [code, param], JSON.stringify(body));
    }
    const key = await t.api.patch('/api/me', { digest: 'daily' });
    assert.deepEqual([key.status, key.body.error.code], [403, 'permission_denied']);
    const me = await ok(bea.request('GET', '/api/me'));
    assert.deepEqual([me.email, me.role, me.digest], ['bea@example.com', 'viewer', 'off']);
    // A viewer may choose it: it is their own.
    assert.equal((await ok(bea.request('PATCH', '/api/me', { digest: 'daily' }))).digest, 'daily');
  });
});
