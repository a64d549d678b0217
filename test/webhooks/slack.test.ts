// Slack-format webhooks (docs/webhooks.md, "Slack") on both backends: a receiver gets Slack's
// incoming-webhook JSON, one readable line per event naming the customer (linked to its page with
// VITALS_PUBLIC_URL, escaped for Slack's mrkdwn), signed as every delivery is; switched back to
// standard, it gets {type, data} again; an unknown format is refused and changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { verifyVitalsSignature } from '../../src/domain/signing.ts';
import { buildTestApp, type Client, type TestApp } from '../helpers/app.ts';
import { TestReceiver } from '../helpers/receiver.ts';

const PUBLIC_URL = 'https://vitals.example.com';
let t: TestApp;
const receivers: TestReceiver[] = [];
let accounts = 0;

before(async () => {
  t = await buildTestApp({ dispatcher: true, publicUrl: PUBLIC_URL });
});
after(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await t.close();
});

async function setup(events: string[]) {
  const api = await t.newAccount(`slack-${++accounts}`);
  const receiver = await TestReceiver.start();
  receivers.push(receiver);
  const res = await api.post('/api/webhooks', { url: `${receiver.url}/slack`, events, format: 'slack' });
  assert.equal(res.status, 201, res.raw);
  assert.equal(res.body.format, 'slack');
  return { api, receiver, webhook: res.body as { id: string; secret: string } };
}

const ok = async (r: ReturnType<Client['post']>, status = 200): Promise<any> => {
  const got = await r;
  assert.equal(got.status, status, got.raw);
  return got.body;
};

/** Slack's body for one line: `text` plain, the block's text with the customer linked. */
const slack = (text: string, linked = text) => ({
  text,
  blocks: [{ type: 'section', text: { type: 'mrkdwn', text: linked } }],
});

describe('Slack-format webhooks', () => {
  test('a receiver gets one readable line per event, signed as every delivery is', async () => {
    const { api, receiver, webhook } = await setup([
      'customer.created',
      'customer.status.changed',
      'customer.health_score.updated',
      'task.created',
    ]);
    await ok(api.post('/api/customers', { customer_id: 'acme', name: 'Acme', email: 'ops@acme.test' }), 201);
    await ok(api.post('/api/customers/acme/health-score', { factors: { usage: 0.35 } }));
    await ok(api.post('/api/customers/acme/tasks', { title: 'Call them', assignee: 'sam@example.com' }), 201);
    const got = await receiver.waitFor(4);
    const link = `<${PUBLIC_URL}/customers/acme|Acme>`;
    const byEvent = Object.fromEntries(
      got.map((r) => [String(r.headers['x-vitals-event']), JSON.parse(r.body)]),
    );
    assert.deepEqual(byEvent, {
      'customer.created': slack('Acme was added', `${link} was added`),
      'customer.health_score.updated': slack(
        'Acme was scored 0.35 (critical)',
        `${link} was scored 0.35 (critical)`,
      ),
      'customer.status.changed': slack('Acme entered critical (0.35)', `${link} entered critical (0.35)`),
      'task.created': slack(
        'New task on Acme: Call them (for sam@example.com)',
        `New task on ${link}: Call them (for sam@example.com)`,
      ),
    });
    for (const r of got) {
      assert.equal(r.headers['content-type'], 'application/json');
      assert.ok(verifyVitalsSignature(webhook.secret, r.body, String(r.headers['x-vitals-signature'])));
      new Webhook(webhook.secret.slice('whsec_'.length)).verify(r.body, r.headers as Record<string, string>);
    }
  });

  test("names are escaped for Slack's mrkdwn, and a score's move reads from → to", async () => {
    const { api, receiver } = await setup(['customer.created', 'customer.health_score.updated']);
    await ok(
      api.post('/api/customers', { customer_id: 'ab', name: 'A & B <Co>', email: 'ops@ab.test' }),
      201,
    );
    await ok(api.post('/api/customers/ab/health-score', { factors: { usage: 0.9 } }));
    await ok(api.post('/api/customers/ab/health-score', { factors: { usage: 0.5 } }));
    const got = (await receiver.waitFor(3)).map((r) => JSON.parse(r.body).text).sort();
    assert.deepEqual(got, [
      'A &amp; B &lt;Co&gt; was added',
      'A &amp; B &lt;Co&gt; was scored 0.90 (healthy)',
      "A &amp; B &lt;Co&gt;'s health score moved from 0.90 to 0.50",
    ]);
  });

  test('the test event reads as one line; switched back to standard, the body is {type, data} again', async () => {
    const { api, receiver, webhook } = await setup(['customer.deleted']);
    await ok(api.post(`/api/webhooks/${webhook.id}/test`));
    const [first] = await receiver.waitFor(1);
    assert.deepEqual(
      JSON.parse(first?.body ?? ''),
      slack(`Test event from Vitals for webhook ${webhook.id}`),
    );

    const changed = await ok(api.patch(`/api/webhooks/${webhook.id}`, { format: 'standard' }));
    assert.equal(changed.format, 'standard');
    await ok(api.post(`/api/webhooks/${webhook.id}/test`));
    const [, second] = await receiver.waitFor(2);
    assert.deepEqual(Object.keys(JSON.parse(second?.body ?? '')), ['type', 'data']);
  });

  test('an unknown format is 400 naming it, and nothing is stored', async () => {
    const api = await t.newAccount(`slack-${++accounts}`);
    const made = await api.post('/api/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: ['customer.created'],
      format: 'teams',
    });
    assert.equal(made.status, 400, made.raw);
    assert.deepEqual([made.body.error.code, made.body.error.param], ['parameter_invalid', 'format']);
    assert.deepEqual((await api.get('/api/webhooks')).body.webhooks, []);

    const kept = await ok(
      api.post('/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['customer.created'] }),
      201,
    );
    assert.equal(kept.format, 'standard', 'standard unless asked');
    for (const format of ['teams', null, 1, '']) {
      const res = await api.patch(`/api/webhooks/${kept.id}`, { format });
      assert.equal(res.status, 400, res.raw);
      assert.deepEqual(
        [res.body.error.code, res.body.error.param],
        ['parameter_invalid', 'format'],
        String(format),
      );
    }
    const { secret: _secret, ...shown } = kept;
    const now = await ok(api.get(`/api/webhooks/${kept.id}`));
    assert.deepEqual(
      { ...now, pending: undefined, pending_truncated: undefined, oldest_pending_at: undefined },
      {
        ...shown,
        pending: undefined,
        pending_truncated: undefined,
        oldest_pending_at: undefined,
      },
    );
  });
});
