// A webhook's actions (webhook.tsx): send a test event, disable or enable it, rotate its signing
// secret with an overlap (docs/webhooks.md, "Rotating the secret"), delete it; one at a time.
import { useState } from 'preact/hooks';
import { api, type Delivery, sendTestEvent, TEST_EVENT_TYPE, type Webhook, webhookPath } from '../api.ts';
import { count, when } from '../format.ts';
import { navigate, paths } from '../router.tsx';
import { ErrorMessage, LiveNotice, type Loaded } from '../ui.tsx';

const DAY_SECONDS = 86_400;
/** The overlaps a rotation offers; the API takes any from 0 to 7 days. */
const OVERLAPS = [
  { seconds: 0, label: 'no time: it stops at once' },
  { seconds: 3_600, label: '1 hour' },
  { seconds: DAY_SECONDS, label: '24 hours' },
  { seconds: 7 * DAY_SECONDS, label: '7 days' },
];

/** The actions' state: one runs at a time; its error or notice, a rotation's new secret, a test's delivery. */
export function useWebhookActions(id: string, loaded: Loaded<Webhook>) {
  const [secret, setSecret] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  /** How long the secret a rotation replaces keeps signing (docs/webhooks.md, "Rotating the secret"). */
  const [overlap, setOverlap] = useState(DAY_SECONDS);
  /** The delivery of the last test event sent from this page, for the log to show and follow. */
  const [sent, setSent] = useState<Delivery>();
  const webhook = loaded.data as Webhook;

  const act = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    setNotice(undefined);
    try {
      await what();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const toggle = () =>
    act(async () => {
      // The change's answer has no backlog: the one read last stays until the page is read again.
      loaded.set({
        ...webhook,
        ...(await api.patch<Webhook>(webhookPath(id), { enabled: !webhook.enabled })),
      });
      setNotice(webhook.enabled ? 'Disabled: no new deliveries go out.' : 'Enabled: deliveries resume.');
    });
  const rotate = () => {
    const keeps = OVERLAPS.find((o) => o.seconds === overlap)?.label ?? '';
    const ends = overlap === 0 ? 'stops working at once' : `keeps signing beside the new one for ${keeps}`;
    if (!confirm(`Rotate the signing secret? The current secret ${ends}.`)) return;
    act(async () => {
      const answer = await api.post<Webhook>(`${webhookPath(id)}/rotate-secret`, {
        expire_previous_in: overlap,
      });
      setSecret(answer.secret);
      const { secret: _, ...rest } = answer;
      loaded.set({ ...webhook, ...rest });
    });
  };
  const sendTest = () =>
    act(async () => {
      const delivery = await sendTestEvent(id);
      setSent(delivery);
      setNotice(
        `Test event sent: delivery ${delivery.id} is ${delivery.status}. Its outcome shows in the delivery log.`,
      );
    });
  const remove = () => {
    if (!confirm('Delete this webhook? Its pending deliveries are dropped.')) return;
    act(async () => {
      await api.delete(webhookPath(id));
      navigate(paths.webhooks);
    });
  };
  return {
    busy,
    error,
    notice,
    setNotice,
    secret,
    setSecret,
    sent,
    overlap,
    setOverlap,
    toggle,
    rotate,
    sendTest,
    remove,
  };
}
export type WebhookActions = ReturnType<typeof useWebhookActions>;

export function ActionsCard({ webhook, actions }: { webhook: Webhook; actions: WebhookActions }) {
  const { busy, overlap, setOverlap, sendTest, toggle, rotate, remove, error, notice } = actions;
  return (
    <section aria-labelledby="actions-title" class="card">
      <h2 id="actions-title">Actions</h2>
      <p>
        Status: <strong>{webhook.enabled ? 'enabled' : 'disabled'}</strong>
      </p>
      <Backlog webhook={webhook} />
      <ul class="hint">
        <li>
          A test event sends one <span class="mono">{TEST_EVENT_TYPE}</span> event to this endpoint alone,
          signed and retried like any other.
        </li>
        <li>Disabling stops new deliveries; pending ones wait until it is enabled again.</li>
        <li>
          Rotating makes a new signing secret, shown once. Until the overlap you choose ends, every delivery
          is signed with both, so the receiver keeps verifying while you give it the new secret.
        </li>
        <li>Deleting drops the webhook with its pending deliveries.</li>
      </ul>
      <div class="actions stacked">
        <button
          type="button"
          onClick={sendTest}
          disabled={busy || !webhook.enabled}
          aria-describedby={webhook.enabled ? undefined : 'test-disabled-hint'}
        >
          Send test event
        </button>
        {!webhook.enabled && (
          <p class="hint" id="test-disabled-hint">
            Enable the webhook to send a test event.
          </p>
        )}
        <button type="button" class="secondary" onClick={toggle} disabled={busy}>
          {webhook.enabled ? 'Disable' : 'Enable'}
        </button>
        <label class="inline-field">
          <span>The current secret keeps signing for</span>
          <select
            value={overlap}
            onChange={(e) => setOverlap(Number((e.target as HTMLSelectElement).value))}
            disabled={busy}
          >
            {OVERLAPS.map((o) => (
              <option key={o.seconds} value={o.seconds}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="secondary" onClick={rotate} disabled={busy}>
          Rotate secret
        </button>
        {webhook.previous_secret_expires_at && (
          <p class="hint" id="previous-secret">
            The previous secret also signs until {when(webhook.previous_secret_expires_at)}.
          </p>
        )}
        <button type="button" class="danger" onClick={remove} disabled={busy}>
          Delete webhook
        </button>
      </div>
      <ErrorMessage error={error} />
      <LiveNotice notice={notice} />
    </section>
  );
}

/** How far behind the webhook is: its deliveries not yet finished and how long the oldest has waited. */
function Backlog({ webhook }: { webhook: Webhook }) {
  if (webhook.pending === undefined) return null;
  if (webhook.pending === 0 || !webhook.oldest_pending_at) {
    return (
      <p>
        Backlog: <strong>nothing pending</strong>
      </p>
    );
  }
  return (
    <p>
      Backlog:{' '}
      <strong>
        {count(webhook.pending)}
        {webhook.pending_truncated ? '+' : ''} pending
      </strong>
      , the oldest waiting since {when(webhook.oldest_pending_at)}
    </p>
  );
}
