// Acting on a score in the dashboard (issue 54; docs/dashboard.md, "Inbox", "Playbooks" and
// "Customer"), in Chromium against the real server, on SQLite or on PostgreSQL
// (VITALS_TEST_BACKEND=postgres): an admin creates a playbook on the settings page (a refusal shown
// at its field, nothing stored); a score write that moves a customer into critical opens its task,
// which appears in the owner's inbox with the count in the navigation; Done, Snooze and Reassign each
// take one click from the team's list, and the lists and the count follow; Reopen brings a done task
// back; on the customer page a task is opened (a refused assignee named at its field) and a note
// added and edited; a viewer sees every list without a write control, and chooses the daily digest;
// the team's list pages by the API's cursor.
// Each view is saved at desktop and phone widths as test-artifacts/inbox-*.png and checked by
// axe-core (Dashboard.shoot). What was stored is checked through the API.
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { tempDir } from '../helpers/app.ts';
import { runCli, serverEnv } from '../helpers/server.ts';
import { appBackend, createTestDatabase, type TestDatabase } from '../helpers/stores.ts';
import { chromiumSkip, type Dashboard, DESKTOP, openDashboard, PHONE } from './browser.ts';

const PASSWORD = 'a long enough password';
const DAY = 86_400_000;
const PLAYBOOK = 'Critical: call within 2 days';
const CALL = 'Call: the account went critical';
const text = async (locator: Locator) => ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
const inDays = (n: number) => new Date(Date.now() + n * DAY).toISOString();
/** A date as the dashboard writes it for a person (format.ts, date), in this machine's time zone. */
const spoken = (iso: string) =>
  new Intl.DateTimeFormat('en-US', { dateStyle: 'medium' }).format(new Date(iso));

describe('the inbox, playbooks, tasks and notes in Chromium', {
  skip: chromiumSkip(),
  timeout: 300_000,
}, () => {
  let dashboard: Dashboard;
  let page: Page;
  let db: TestDatabase | undefined;
  const dataDir = tempDir();
  const links: Record<string, string> = {};
  const passwordSet = new Set<string>();
  /** The playbook's task on Acme (the second test opens it). */
  let callId = '';

  const nav = (name: string) =>
    page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: false });
  const count = () => page.getByTestId('inbox-count');
  const task = (title: string) => page.getByTestId('task').filter({ hasText: title });
  const tab = (name: string) =>
    page.getByRole('navigation', { name: 'Inbox tabs' }).getByRole('link', { name });
  /** The tasks the list shows now, once it has loaded. */
  const titles = async () => {
    await page.locator('.task-list .loading').waitFor({ state: 'detached' });
    await page.locator('ul.tasks[aria-busy="true"]').waitFor({ state: 'detached' });
    return page.locator('li.task .task-title > span:first-child').allTextContents();
  };
  /** Opens an inbox tab and waits for its list. */
  const openTab = async (name: string) => {
    await tab(name).click();
    await page.locator('nav.tabs a[aria-current="page"]').filter({ hasText: name }).waitFor();
    await page.locator('.task-list .loading').waitFor({ state: 'detached' });
  };

  before(async () => {
    db = appBackend() === 'postgres' ? await createTestDatabase('postgres') : undefined;
    const env = { VITALS_DATA_DIR: dataDir, ...(db?.url ? { DATABASE_URL: db.url } : {}) };
    dashboard = await openDashboard(env);
    page = dashboard.page;
    assert.equal(existsSync(join(dataDir, 'vitals.db')), db === undefined, 'the backend asked for serves');
    for (const [who, role] of [
      ['admin', 'admin'],
      ['sam', 'editor'],
      ['vic', 'viewer'],
    ] as const) {
      const out = await runCli(
        ['users', 'create', `${who}@example.com`, '--role', role, '--url', dashboard.base],
        serverEnv(env),
      );
      assert.equal(out.code, 0, out.stderr);
      links[who] = out.stdout.trim();
    }
    await dashboard.call('POST', '/api/customers/batch', {
      customers: [
        { customer_id: 'acme', name: 'Acme', email: 'ops@acme.example', owner: 'sam@example.com' },
        { customer_id: 'globex', name: 'Globex', email: 'ops@globex.example', owner: 'sam@example.com' },
      ],
    });
  });

  after(async () => {
    await dashboard?.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Signs `who` in: with their one-time link the first time, with their password after. */
  async function signInAs(who: string): Promise<void> {
    if (await page.getByRole('button', { name: 'Sign out' }).isVisible()) {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in with email' }).waitFor();
    }
    if (passwordSet.has(who)) {
      await page.goto(`${dashboard.base}/sign-in`);
      await page.locator('#email').fill(`${who}@example.com`);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in with email' }).click();
    } else {
      await page.goto(links[who] as string);
      await page.getByLabel('New password').fill(PASSWORD);
      await page.getByLabel('The same again').fill(PASSWORD);
      await page.getByRole('button', { name: 'Set password and sign in' }).click();
      passwordSet.add(who);
    }
    await page
      .getByTestId('who')
      .filter({ hasText: `${who}@example.com` })
      .waitFor();
  }

  test('an admin creates a playbook on the settings page; a refusal is shown at its field and stores nothing', async () => {
    await signInAs('admin');
    await nav('Scoring').click();
    const card = page.locator('section#playbooks');
    await card.getByTestId('no-playbooks').waitFor();
    await card.getByLabel('Name').fill(PLAYBOOK);
    await card.getByLabel('Trigger').selectOption('renewal_approaching');
    await card.getByLabel('Days before the renewal').fill('400');
    await card.getByLabel('Title').fill(CALL);
    await card.getByRole('button', { name: 'Create playbook' }).click();
    const refusal = card.locator('#pb-days-error');
    await refusal.waitFor();
    assert.match(await text(refusal), /365/, 'the API says the bound');
    assert.equal(await card.getByLabel('Days before the renewal').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.evaluate('document.activeElement.id'), 'pb-days', 'focus moves to the field');
    assert.deepEqual((await dashboard.call('GET', '/api/playbooks')).data, [], 'nothing stored');

    await card.getByLabel('Trigger').selectOption('status_entered');
    await card.getByLabel('Band').selectOption('critical');
    await card.getByLabel('Due in (days, optional)').fill('2');
    await card.getByRole('button', { name: 'Create playbook' }).click();
    const item = card.getByTestId('playbook').filter({ hasText: PLAYBOOK });
    await item.waitFor();
    assert.equal(
      await text(item.locator('.sub')),
      `When a customer enters critical: opens “${CALL}”, due in 2 days, for the customer's owner.`,
    );
    const [stored] = (await dashboard.call('GET', '/api/playbooks')).data;
    assert.deepEqual(
      {
        name: stored.name,
        enabled: stored.enabled,
        trigger: stored.trigger,
        task: stored.task,
        assignee: stored.assignee,
      },
      {
        name: PLAYBOOK,
        enabled: true,
        trigger: { type: 'status_entered', status: 'critical' },
        task: { title: CALL, body: '', due_in_days: 2 },
        assignee: 'owner',
      },
    );

    // Another, made by a script, is switched off, edited and deleted from the list.
    const other = await dashboard.call('POST', '/api/playbooks', {
      name: 'Billing check',
      trigger: {
        type: 'metric_threshold',
        metric: 'payment_failed',
        aggregate: 'count',
        window_days: 7,
        op: 'gte',
        value: 1,
      },
      task: { title: 'Check the failed payment', due_in_days: 1 },
      assignee: 'billing@example.com',
    });
    await page.reload();
    const billing = card.getByTestId('playbook').filter({ hasText: 'Billing check' });
    assert.equal(
      await text(billing.locator('.sub')),
      'When payment_failed (count of points over 7 days) is at least 1: opens “Check the failed payment”, due in 1 day, for billing@example.com.',
    );
    await billing.getByRole('checkbox').uncheck();
    await card.getByRole('status').filter({ hasText: 'Billing check is off.' }).waitFor();
    assert.equal((await dashboard.call('GET', `/api/playbooks/${other.id}`)).enabled, false);
    await billing.getByRole('button', { name: 'Edit the playbook Billing check' }).click();
    await card.getByRole('heading', { name: 'Edit Billing check' }).waitFor();
    assert.equal(await card.getByLabel('Metric').inputValue(), 'payment_failed');
    assert.equal(await card.getByLabel('Their email').inputValue(), 'billing@example.com');
    await card.getByLabel('Value').fill('2');
    await dashboard.shoot('inbox-playbooks');
    await card.getByRole('button', { name: 'Save playbook' }).click();
    await card.getByRole('status').filter({ hasText: 'Billing check is saved.' }).waitFor();
    assert.equal((await dashboard.call('GET', `/api/playbooks/${other.id}`)).trigger.value, 2);
    page.once('dialog', (d) => d.accept());
    await billing.getByRole('button', { name: 'Delete the playbook Billing check' }).click();
    await billing.waitFor({ state: 'detached' });
    assert.equal((await dashboard.request('GET', `/api/playbooks/${other.id}`)).status, 404);
  });

  test("a score write moving a customer into critical opens a task in its owner's inbox, counted in the navigation", async () => {
    await dashboard.call('POST', '/api/customers/acme/health-score', { factors: { usage: 0.1 } });
    const opened = (await dashboard.call('GET', '/api/tasks?assignee=sam@example.com')).data;
    assert.equal(opened.length, 1);
    assert.equal(opened[0].title, CALL);
    callId = opened[0].id;

    await signInAs('sam');
    await count().waitFor();
    assert.equal(await text(count()), '1');
    assert.match(await text(nav('Inbox')), /^Inbox 1, 1 open task$/, "the count's words for a screen reader");
    await nav('Inbox').click();
    await page.getByRole('heading', { name: 'Inbox', level: 1 }).waitFor();
    assert.equal(await tab('Mine').getAttribute('aria-current'), 'page');
    const row = task(CALL);
    // The customer is named once its name is read (the id until then).
    await row.getByRole('link', { name: 'Acme', exact: true }).waitFor();
    assert.equal(
      await text(row.locator('.task-meta')),
      `Acme · Due ${spoken(opened[0].due_at)} · Assigned to you`,
    );
    // And the playbook once the playbooks are read.
    await row.locator('.tag.playbook').filter({ hasText: PLAYBOOK }).waitFor();
    assert.equal(
      await row.getByRole('link', { name: 'Acme', exact: true }).getAttribute('href'),
      '/customers/acme',
    );
    await dashboard.shoot('inbox-mine');
  });

  test("Done, Snooze and Reassign each take one click from the team's list; the lists and the count follow", async () => {
    const quote = await dashboard.call('POST', '/api/customers/globex/tasks', {
      title: 'Send the renewal quote',
      assignee: 'sam@example.com',
      due_at: inDays(-1),
    });
    const qbr = await dashboard.call('POST', '/api/customers/globex/tasks', {
      title: 'Plan the QBR',
      assignee: 'sam@example.com',
    });
    const payment = await dashboard.call('POST', '/api/customers/globex/tasks', {
      title: 'Check the failed payment',
      due_at: inDays(5),
    });
    await openTab('Team');
    assert.deepEqual(await titles(), [
      'Send the renewal quote',
      CALL,
      'Check the failed payment',
      'Plan the QBR',
    ]);
    await count().filter({ hasText: /^3$/ }).waitFor(); // three of the team's four are Sam's
    assert.match((await count().getAttribute('class')) ?? '', /overdue/);
    const overdue = task('Send the renewal quote').getByTestId('due');
    assert.equal(await text(overdue), `Overdue: due ${spoken(quote.due_at)}`);
    assert.equal(await overdue.getAttribute('class'), 'overdue');
    await dashboard.shoot('inbox-team');

    await task('Send the renewal quote').getByRole('button', { name: /^Done/ }).click();
    await page.getByRole('status').filter({ hasText: 'Done: “Send the renewal quote”.' }).waitFor();
    assert.deepEqual(await titles(), [CALL, 'Check the failed payment', 'Plan the QBR']);
    assert.equal((await dashboard.call('GET', `/api/tasks/${quote.id}`)).status, 'done');
    await count().filter({ hasText: /^2$/ }).waitFor();
    assert.doesNotMatch((await count().getAttribute('class')) ?? '', /overdue/, 'nothing overdue any more');

    await task('Plan the QBR').getByRole('button', { name: 'Snooze 3 days' }).click();
    await page.getByRole('status').filter({ hasText: 'Snoozed “Plan the QBR” for 3 days.' }).waitFor();
    assert.deepEqual(await titles(), [CALL, 'Check the failed payment']);
    const snoozed = await dashboard.call('GET', `/api/tasks/${qbr.id}`);
    assert.ok(
      Math.abs(Date.parse(snoozed.snoozed_until) - Date.now() - 3 * DAY) < 60_000,
      snoozed.snoozed_until,
    );
    await count().filter({ hasText: /^1$/ }).waitFor();

    // An editor is not shown the account's people (the people API is an admin's): an email, then.
    const call = task(CALL);
    await call.getByRole('button', { name: /^Reassign/ }).click();
    const to = call.getByLabel('Assign to');
    assert.equal(await to.evaluate((e) => e.tagName), 'INPUT');
    await to.fill('not an email');
    await call.getByRole('button', { name: 'Assign', exact: true }).click();
    await call.locator('.field-error').waitFor();
    assert.equal(await to.getAttribute('aria-invalid'), 'true');
    assert.equal(
      (await dashboard.call('GET', `/api/tasks/${callId}`)).assignee,
      'sam@example.com',
      'unchanged',
    );
    await to.fill('admin@example.com');
    await call.getByRole('button', { name: 'Assign', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Reassigned “${CALL}” to admin@example.com.` })
      .waitFor();
    await call.locator('.task-meta').filter({ hasText: 'Assigned to admin@example.com' }).waitFor();
    await count().waitFor({ state: 'detached' });
    assert.match(await text(nav('Inbox')), /^Inbox$/, 'no open task is Sam’s: no count');

    await openTab('Mine');
    await page.getByTestId('no-tasks').waitFor();
    await openTab('Snoozed');
    assert.deepEqual(await titles(), ['Plan the QBR']);
    assert.match(await text(task('Plan the QBR').locator('.task-meta')), /Snoozed until /);
    await dashboard.shoot('inbox-snoozed');
    await task('Plan the QBR')
      .getByRole('button', { name: /^Back now/ })
      .click();
    await page.getByTestId('no-tasks').waitFor();
    await count().filter({ hasText: /^1$/ }).waitFor();

    await openTab('Done');
    assert.deepEqual(await titles(), ['Send the renewal quote']);
    await task('Send the renewal quote')
      .getByRole('button', { name: /^Reopen/ })
      .click();
    await page.getByTestId('no-tasks').waitFor();
    await count().filter({ hasText: /^2$/ }).waitFor();
    assert.equal((await dashboard.call('GET', `/api/tasks/${quote.id}`)).status, 'open');

    // An admin picks from the account's people.
    await signInAs('admin');
    await count().filter({ hasText: /^1$/ }).waitFor();
    await nav('Inbox').click();
    await openTab('Team');
    const check = task('Check the failed payment');
    await check.getByRole('button', { name: /^Reassign/ }).click();
    const people = check.getByLabel('Assign to');
    assert.deepEqual(await people.locator('option').allTextContents(), [
      'admin@example.com',
      'sam@example.com',
      'vic@example.com',
      'Nobody',
    ]);
    await people.selectOption('vic@example.com');
    await dashboard.shoot('inbox-reassign');
    await check.getByRole('button', { name: 'Assign', exact: true }).click();
    await check.locator('.task-meta').filter({ hasText: 'Assigned to vic@example.com' }).waitFor();
    assert.equal((await dashboard.call('GET', `/api/tasks/${payment.id}`)).assignee, 'vic@example.com');
  });

  test('on the customer page a task is opened (a refused assignee shown at its field) and a note added and edited', async () => {
    await signInAs('sam');
    const byKey = await dashboard.call('POST', '/api/customers/globex/notes', {
      body: 'Renewal owner is Dana.',
    });
    await page.goto(`${dashboard.base}/customers/globex`);
    const tasks = page.getByTestId('customer-tasks');
    const notes = page.getByTestId('customer-notes');
    await tasks.getByTestId('task').first().waitFor();
    assert.deepEqual(await tasks.locator('li.task .task-title > span:first-child').allTextContents(), [
      'Send the renewal quote',
      'Check the failed payment',
      'Plan the QBR',
    ]);

    await tasks.getByLabel('Title').fill('Book the exec sponsor call');
    const due = inDays(4).slice(0, 10);
    await tasks.getByLabel('Due (optional)').fill(due);
    const forWhom = tasks.getByLabel('For');
    assert.equal(await forWhom.inputValue(), 'sam@example.com', 'mine unless changed');
    await forWhom.fill('sam at example');
    await tasks.getByRole('button', { name: 'Open task' }).click();
    await tasks.locator('#new-task-assignee-error').waitFor();
    assert.equal(await page.evaluate('document.activeElement.id'), 'new-task-assignee');
    assert.equal(
      (await dashboard.call('GET', '/api/tasks?customer_id=globex&include_snoozed=true')).data.length,
      3,
      'nothing opened',
    );
    await forWhom.fill('sam@example.com');
    await tasks.getByRole('button', { name: 'Open task' }).click();
    await task('Book the exec sponsor call').waitFor();
    const made = (await dashboard.call('GET', '/api/tasks?customer_id=globex')).data.find(
      (t: { title: string }) => t.title === 'Book the exec sponsor call',
    );
    assert.equal(made.assignee, 'sam@example.com');
    assert.equal(spoken(made.due_at), spoken(`${due}T12:00:00`), 'due on the day chosen');

    await notes.getByLabel('Add a note').fill('The champion left in March; the new sponsor is Lee.');
    await notes.getByRole('button', { name: 'Add note' }).click();
    const mine = notes.getByTestId('note').filter({ hasText: 'the new sponsor is Lee.' });
    await mine.waitFor();
    assert.deepEqual(
      await notes.locator('.note-body').allTextContents(),
      ['The champion left in March; the new sponsor is Lee.', 'Renewal owner is Dana.'],
      'newest first',
    );
    assert.match(await text(mine.locator('.note-by')), /^sam@example\.com · /);
    const theirs = notes.getByTestId('note').filter({ hasText: 'Renewal owner is Dana.' });
    assert.equal(await theirs.getByRole('button').count(), 0, 'an editor changes their own notes only');

    await mine.getByRole('button', { name: /^Edit/ }).click();
    // Being edited, the note's text is in the field (no longer the item's text): the newest item.
    const editing = notes.getByTestId('note').first();
    const editor = editing.getByLabel('Edit the note');
    await page.waitForFunction(`document.activeElement?.id === '${await editor.getAttribute('id')}'`);
    await editor.fill('The champion left in March; the new sponsor is Lee Park, CFO.');
    await editing.getByRole('button', { name: 'Save note' }).click();
    await notes.getByRole('status').filter({ hasText: 'Note saved.' }).waitFor();
    await notes.locator('.note-body').filter({ hasText: 'Lee Park, CFO.' }).waitFor();
    assert.match(await text(notes.getByTestId('note').first().locator('.note-by')), / · edited /);
    const stored = (await dashboard.call('GET', '/api/customers/globex/notes')).data;
    assert.deepEqual(
      stored.map((n: { body: string }) => n.body),
      ['The champion left in March; the new sponsor is Lee Park, CFO.', byKey.body],
    );
    await dashboard.shoot('inbox-customer');
  });

  test("the customer's timeline tells its story newest first, narrows to one kind, and takes a new note on top", async () => {
    await dashboard.call('PATCH', '/api/customers/globex', { owner: 'admin@example.com' });
    // At risk, not critical: the playbook opens nothing, and the last test counts the tasks there are.
    await dashboard.call('POST', '/api/customers/globex/health-score', { factors: { usage: 0.55 } });
    await page.goto(`${dashboard.base}/customers/globex`);
    const timeline = page.getByTestId('customer-timeline');
    const entries = timeline.locator('li.timeline-entry');
    await entries.first().waitFor();
    const stored = (await dashboard.call('GET', '/api/customers/globex/timeline?limit=20')).data as {
      type: string;
      summary: string;
    }[];
    assert.deepEqual(
      await timeline.locator('.timeline-summary').allTextContents(),
      stored.map((e) => e.summary),
      "the API's sentences, in its order",
    );
    const types = stored.map((e) => e.type);
    for (const type of ['score_changed', 'customer_updated', 'note', 'task_created']) {
      assert.ok(types.includes(type), `${type} in ${types.join(', ')}`);
    }
    assert.ok(
      stored.some((e) => e.summary.includes('admin@example.com')),
      'the owner change names the new owner',
    );

    await timeline.getByLabel('Show').selectOption({ label: 'Tasks and notes' });
    await timeline.locator('li.timeline-entry[data-type="score_changed"]').waitFor({ state: 'detached' });
    const kinds = await timeline
      .locator('li.timeline-entry')
      .evaluateAll((els) => els.map((el) => el.getAttribute('data-type')));
    assert.ok(kinds.length > 0);
    assert.ok(
      kinds.every((k) => ['note', 'task_created', 'task_done'].includes(k ?? '')),
      kinds.join(', '),
    );

    const notes = page.getByTestId('customer-notes');
    await notes.getByLabel('Add a note').fill('Lee wants a roadmap call before the renewal.');
    await notes.getByRole('button', { name: 'Add note' }).click();
    await timeline
      .locator('li.timeline-entry')
      .first()
      .filter({ hasText: 'Lee wants a roadmap call before the renewal.' })
      .waitFor();
    assert.equal(
      await text(timeline.locator('.timeline-summary').first()),
      'Note by sam@example.com: “Lee wants a roadmap call before the renewal.”',
    );
    await dashboard.shoot('inbox-timeline');
    // The card alone at a phone's width, to be read (the whole page is too tall to).
    await page.setViewportSize(PHONE);
    await timeline.screenshot({ path: 'test-artifacts/inbox-timeline-card-phone.png' });
    await page.setViewportSize(DESKTOP);
    await dashboard.call('PATCH', '/api/customers/globex', { owner: 'sam@example.com' });
  });

  test('a viewer sees the lists without a write control, and chooses the daily digest', async () => {
    await signInAs('vic');
    await count().filter({ hasText: /^1$/ }).waitFor();
    await nav('Inbox').click();
    await task('Check the failed payment').waitFor();
    await openTab('Team');
    await task('Plan the QBR').waitFor();
    const writes = page
      .locator('main')
      .getByRole('button', { name: /^(Done|Snooze|Reassign|Reopen|Back now)/ });
    assert.equal(await writes.count(), 0, 'no task action');
    await dashboard.shoot('inbox-viewer');

    await page.goto(`${dashboard.base}/customers/globex`);
    await page.getByTestId('customer-notes').getByTestId('note').first().waitFor();
    await page.getByTestId('customer-tasks').getByTestId('task').first().waitFor();
    assert.equal(await page.getByRole('button', { name: 'Open task' }).count(), 0);
    assert.equal(await page.getByLabel('Add a note').count(), 0);
    assert.equal(await page.getByTestId('customer-notes').getByRole('button').count(), 0);
    assert.equal(await page.getByTestId('customer-tasks').getByRole('button').count(), 0);

    await page.goto(`${dashboard.base}/settings#playbooks`);
    const card = page.locator('section#playbooks');
    await card.getByTestId('playbook').filter({ hasText: PLAYBOOK }).waitFor();
    assert.equal(await card.getByRole('button').count(), 0);
    assert.equal(await card.getByRole('checkbox').count(), 0);
    await card.getByText('Changing playbooks takes an admin.').waitFor();

    // The digest is a person's own choice, a viewer's too (PATCH /api/me).
    await page.getByTestId('who').locator('summary').click();
    const digest = page.getByRole('checkbox', { name: 'Daily digest by mail' });
    await digest.check();
    await page.getByText('The digest will come once a day.').waitFor();
    const me = async () => page.evaluate<{ digest: string }>("fetch('/api/me').then((r) => r.json())");
    assert.equal((await me()).digest, 'daily');
    await dashboard.shoot('inbox-digest');
    await page.reload();
    await page.getByTestId('who').locator('summary').click();
    assert.equal(await digest.isChecked(), true, 'kept');
    await digest.uncheck();
    await page.getByText('No more digest.').waitFor();
    assert.equal((await me()).digest, 'off');
  });

  test("the team's list goes 25 tasks a page, by the API's cursor", async () => {
    // Five are open already (one undated, last); 25 more, due after the four dated ones, make two pages.
    for (let i = 0; i < 25; i++) {
      await dashboard.call('POST', '/api/customers/acme/tasks', {
        title: `Follow-up ${String(i + 1).padStart(2, '0')}`,
        due_at: inDays(30 + i),
      });
    }
    await nav('Inbox').click();
    await openTab('Team');
    const first = await titles();
    assert.equal(first.length, 25);
    assert.equal(first.at(-1), 'Follow-up 21');
    const pager = page.getByRole('navigation', { name: "Pages of the team's open tasks" });
    assert.equal(await pager.getByRole('button', { name: '← Previous' }).isDisabled(), true);
    await pager.getByRole('button', { name: 'Next →' }).click();
    await pager.getByText('Page 2').waitFor();
    assert.deepEqual(await titles(), [
      'Follow-up 22',
      'Follow-up 23',
      'Follow-up 24',
      'Follow-up 25',
      'Plan the QBR',
    ]);
    assert.equal(await pager.getByRole('button', { name: 'Next →' }).isDisabled(), true);
    await pager.getByRole('button', { name: '← Previous' }).click();
    await pager.getByText('Page 1').waitFor();
    assert.deepEqual(await titles(), first);
    assert.deepEqual(dashboard.pageErrors, []);
  });
});
